"""Bad inputs end cleanly (issue 23): every case of kilobit.bench.badinput.CASES (the inputs the
issue found mishandled among them) exits with status 2 and `kilobit: error: ...` naming the
input, writes and leaves nothing behind, replaces no device node; a few of them also in a fresh
process. Then one way to write an output (kilobit.core.outfile) under failures and interrupts,
and where `bench --quick` writes."""
import contextlib
import io
import os
import stat

import pytest

from conftest import need
from kilobit.bench import badinput
from kilobit.cli import main


def _avr_missing():
    from kilobit.runtimes.avr import kb_sim
    return kb_sim.missing()


NEEDS = {"avr": _avr_missing}


def in_process(args):
    """(exit status, stdout, stderr) of kilobit.cli.main(args)."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(list(args))
    return code, out.getvalue(), err.getvalue()


@pytest.fixture
def no_bench_work(monkeypatch):
    """Every bench case is refused before its work: a regression must not run a benchmark."""
    import kilobit.cli as cli

    def started(a):
        raise AssertionError("bench %s started its work" % a.name)

    monkeypatch.setattr(cli, "cmd_bench", started)


def _ids():
    return ["%d-%s" % (i, "_".join(c.args[:2])) for i, c in enumerate(badinput.CASES)]


@pytest.mark.parametrize("c", badinput.CASES, ids=_ids())
def test_bad_input_is_handled_cleanly(c, tmp_path, no_bench_work):
    if c.needs:
        need(NEEDS[c.needs]())
    paths = badinput.prepare(str(tmp_path))
    before = badinput.snapshot(str(tmp_path))
    code, out, err = in_process(badinput.argv(c, paths))
    assert badinput.verdict(c, code, out, err, before,
                            badinput.snapshot(str(tmp_path))) is None


# one case of each family in a fresh process: no traceback, exit 2, the message last
FRESH = [i for i, c in enumerate(badinput.CASES) if c.args[:2] in (
    ("train", "rkp"), ("golden", "check"), ("train", "ckp"), ("board", "virtual"))][::6]


@pytest.mark.parametrize("i", FRESH)
def test_bad_input_in_a_fresh_process(i, tmp_path):
    c = badinput.CASES[i]
    paths = badinput.prepare(str(tmp_path))
    before = badinput.snapshot(str(tmp_path))
    code, out, err = badinput.in_fresh_process(badinput.argv(c, paths), timeout=120)
    assert badinput.verdict(c, code, out, err, before,
                            badinput.snapshot(str(tmp_path))) is None


def test_every_family_and_the_issues_regressions_are_cases():
    shown = {badinput.shown(c) for c in badinput.CASES}
    for text in ("--A inf", "--A 1e999", "--A nan", "--gamma inf", "--steps 0", "--reps 0",
                 "--steps 10000000", "rp2040@/dev/nosuch", "--port /dev/nosuch", "--tcp 70000",
                 "--tcp -1", "-o {null}", "-o {full}", "-o {csv}", " -o {dir}"):
        assert any(text in s for s in shown), text
    assert {c.family for c in badinput.CASES} == {badinput.OUT, badinput.GOLDEN, badinput.NUM,
                                                  badinput.BOARD, badinput.DATA,
                                                  badinput.BUILDS}
    # issue 30's, one of each of its areas: pipes and endless files, folders and drives,
    # --name and fit's sentence
    for text in ("/dev/zero", "--name NULL", "flash-firmware"):
        assert any(text in s for s in shown), text
    # issue 24's: inspect and predict refuse as everything else does; a missing path, a foreign
    # separator, a dimension mismatch, each in one wording
    for text in ("inspect {tmp}/nosuch.kb", "inspect {csv}", "predict {model} --data nosuch",
                 "--data {tmp}/nosuch.csv", "--data {pipecsv}", "--data {spacecsv}",
                 "--data {deccsv}", "predict {model} --data pendigits",
                 "eval {model} --data pendigits", "--plot {dir}"):
        assert any(text in s for s in shown), text


# --- kilobit.core.outfile ---------------------------------------------------------------------

def test_an_interrupted_write_leaves_the_old_file_and_nothing_else(tmp_path):
    from kilobit.core import outfile
    path = tmp_path / "m.kb"
    path.write_text("old")
    for exc in (KeyboardInterrupt, RuntimeError):
        with pytest.raises(exc):
            with outfile.open(str(path), "w") as f:
                f.write("half of the new")
                raise exc()
        assert path.read_text() == "old" and os.listdir(tmp_path) == ["m.kb"]
    outfile.write(str(path), b"new")
    assert path.read_bytes() == b"new" and os.listdir(tmp_path) == ["m.kb"]


def test_sigterm_mid_write_leaves_the_old_file_and_nothing_else(tmp_path):
    """kill (SIGTERM), as a CI's timeout sends it, while the CLI writes an output: the write
    cleans up as for Ctrl-C and the status is 128 + 15."""
    import subprocess
    import sys
    path = tmp_path / "m.kb"
    path.write_text("old")
    code = ("import os, signal\n"
            "from kilobit import cli\n"
            "from kilobit.core import outfile\n"
            "def run(a):\n"
            "    with outfile.open(%r, 'w') as f:\n"
            "        f.write('half of the new')\n"
            "        os.kill(os.getpid(), signal.SIGTERM)\n"
            "        f.write('never')\n"
            "    return 0\n"
            "cli.cmd_eval = run\n"
            "raise SystemExit(cli.main(['eval', 'x.kb', '--data', 'banana']))\n" % str(path))
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert r.returncode == 143, r.stderr
    assert "Traceback" not in r.stderr
    assert path.read_text() == "old" and os.listdir(tmp_path) == ["m.kb"]


def test_a_replaced_file_keeps_its_mode_and_a_new_one_gets_the_umask(tmp_path):
    from kilobit.core import outfile
    old = tmp_path / "old"
    old.write_text("x")
    os.chmod(old, 0o640)
    outfile.write(str(old), "y")
    assert stat.S_IMODE(os.stat(old).st_mode) == 0o640
    umask = os.umask(0o022)
    try:
        outfile.write(str(tmp_path / "new"), "z")
    finally:
        os.umask(umask)
    assert stat.S_IMODE(os.stat(tmp_path / "new").st_mode) == 0o644


def test_a_fifo_is_written_in_place(tmp_path):
    import threading

    from kilobit.core import outfile
    fifo = str(tmp_path / "pipe")
    os.mkfifo(fifo)
    got = []
    reader = threading.Thread(target=lambda: got.append(open(fifo).read()))
    reader.start()
    outfile.write(fifo, "through the pipe")
    reader.join(10)
    assert got == ["through the pipe"] and stat.S_ISFIFO(os.lstat(fifo).st_mode)


# --- item 5: --quick and -o never touch the committed pages ------------------------------------

@pytest.mark.parametrize("args,where", [
    (["bench", "ckp", "--quick"], os.path.join("build", "benchmarks", "ckp.md")),
    (["bench", "faults", "--quick"], os.path.join("build", "benchmarks", "faults.md")),
    (["bench", "rkp"], os.path.join("docs", "benchmarks", "rkp.md")),
    (["bench", "assoc", "--quick", "-o", "{tmp}/a.md"], "{tmp}/a.md"),
])
def test_where_bench_writes(args, where, tmp_path, monkeypatch, capsys):
    import kilobit.cli as cli
    monkeypatch.chdir(tmp_path)
    os.makedirs("docs/benchmarks")
    seen = []
    monkeypatch.setattr(cli, "cmd_bench", lambda a: seen.append(a.output) or 0)
    assert main([a.format(tmp=tmp_path) for a in args]) == 0
    assert seen == [where.format(tmp=tmp_path)]
    if "--quick" in args and "-o" not in args:
        assert "--quick: writing %s" % where in capsys.readouterr().out
