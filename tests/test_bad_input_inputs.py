"""Issue 30, inputs: every input is read once, whole, through kilobit.core.inputs, whatever the
path names: a FIFO (made with os.mkfifo, one writer thread that writes it once: a second open
would wait for ever, so a command that reads twice times out), a pipe as /dev/stdin, an endless
device (capped, before memory runs out), a JSON document nested too deep. A float scaler that
holds inf or NaN under a valid CRC is a bad trailer on the host, in kbit and in firmware_c
alike. The command-line cases that fit kilobit.bench.badinput's table are in its inputs block
(tests/test_bad_input.py runs them)."""
import os
import resource
import subprocess
import sys
import threading

import numpy as np
import pytest

from conftest import need
from kilobit.core import inputs, kbfile
from kilobit.core.errors import KilobitError
from kilobit.models import registry

TIMEOUT = 300  # a command that opens its FIFO a second time waits for ever: the test fails


def kilobit(args, cwd, stdin=None, limit_memory=False):
    """(exit status, stdout, stderr) of `python -m kilobit.cli ARGS` in a fresh process."""
    def cap():
        resource.setrlimit(resource.RLIMIT_AS, (1536 << 20, 1536 << 20))

    p = subprocess.run([sys.executable, "-m", "kilobit.cli"] + [str(a) for a in args],
                       cwd=cwd, input=stdin, capture_output=True, timeout=TIMEOUT,
                       stdin=None if stdin is not None else subprocess.DEVNULL,
                       preexec_fn=cap if limit_memory else None)
    return p.returncode, p.stdout.decode(), p.stderr.decode()


class Fifo:
    """A FIFO at `path` whose one writer thread writes `data` once to the first reader."""

    def __init__(self, path, data):
        self.path = str(path)
        os.mkfifo(self.path)
        self.thread = threading.Thread(target=self._write, args=(data,), daemon=True)
        self.thread.start()

    def _write(self, data):
        try:
            with open(self.path, "wb") as f:
                f.write(data)
        except BrokenPipeError:  # the reader stopped at its cap
            pass

    def done(self):
        self.thread.join(timeout=TIMEOUT)
        return not self.thread.is_alive()


@pytest.fixture
def files(tmp_path):
    """A small CSV (2 features, binary labels; seeded) and an rkp model trained on it."""
    rs = np.random.default_rng(30)
    X = rs.integers(0, 100, (60, 2))
    rows = "".join("%d,%d,%d\n" % (a, b, int(a > b)) for a, b in X)
    (tmp_path / "plain").mkdir()
    (tmp_path / "piped").mkdir()
    csv = tmp_path / "plain" / "d.csv"
    csv.write_text("x1,x2,label\n" + rows)
    model = tmp_path / "m.kb"
    code, _, err = kilobit(["train", "rkp", "--data", csv, "--quiet", "-o", model], tmp_path)
    assert code == 0, err
    return tmp_path, csv, model


def test_data_through_a_fifo_gives_what_the_file_gives(files):
    """predict, eval, train and golden make --model --data read a FIFO once and answer as for
    the regular file with the same name (before: `underlying stream is not seekable`)."""
    tmp, csv, model = files
    fifo = tmp / "piped" / "d.csv"
    for args, out in ((["predict", model, "--data"], None), (["eval", model, "--data"], None),
                      (["train", "ckp", "--quiet", "-o", "{out}", "--data"], "c.kb"),
                      (["golden", "make", "--model", model, "-o", "{out}", "--data"], "g.json")):
        got = []
        for where, path in (("plain", csv), ("piped", fifo)):
            w = Fifo(fifo, csv.read_bytes()) if where == "piped" else None
            o = tmp / where / out if out else None
            code, stdout, err = kilobit([str(o) if a == "{out}" else a for a in args] + [path],
                                        tmp)
            assert code == 0, (args, err)
            assert w is None or w.done()
            got.append((stdout.replace(str(tmp / where), "DIR"),
                        o.read_bytes().replace(str(tmp / where).encode(), b"DIR") if o else None))
            if w:
                os.unlink(fifo)
        assert got[0] == got[1], args


def test_data_through_dev_stdin(files):
    """A pipe as /dev/stdin: the same predictions as the file; a model trained from it equal
    to the file's."""
    tmp, csv, model = files
    text = csv.read_bytes()
    code, want, err = kilobit(["predict", model, "--data", csv], tmp)
    assert code == 0, err
    code, got, err = kilobit(["predict", model, "--data", "/dev/stdin"], tmp, stdin=text)
    assert code == 0 and got == want, err
    for src, out in ((csv, "a.kb"), ("/dev/stdin", "b.kb")):
        code, _, err = kilobit(["train", "rkp", "--quiet", "--data", src, "-o", out], tmp,
                               stdin=text if src == "/dev/stdin" else None)
        assert code == 0, err
    assert (tmp / "a.kb").read_bytes() == (tmp / "b.kb").read_bytes()


def test_a_model_read_twice_by_its_command_is_read_once(files):
    """eval --plot read the model file twice and hung on a FIFO; now the second read gets the
    bytes the first one read."""
    tmp, csv, model = files
    code, want, err = kilobit(["eval", model, "--data", csv], tmp)
    assert code == 0, err
    w = Fifo(tmp / "mfifo", model.read_bytes())
    code, got, err = kilobit(["eval", "mfifo", "--data", csv, "--plot", "c.png"], tmp)
    assert code == 0 and w.done(), err
    assert got.splitlines()[0] == want.splitlines()[0].replace(str(model), "mfifo")
    assert (tmp / "c.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_stream_reads_a_fifo_model_and_fifo_data_once(files):
    """stream --model FIFO read the model twice (and hung); --data FIFO could not seek."""
    from kilobit.runtimes.avr import kb_sim
    need(kb_sim.missing())
    tmp, csv, model = files
    base = ["stream", "--board", "uno", "--port", "sim", "--limit", "20", "--quiet"]
    code, want, err = kilobit(base + ["--model", model, "--data", csv], tmp)
    assert code == 0, err
    wm = Fifo(tmp / "mfifo", model.read_bytes())
    wd = Fifo(tmp / "piped" / "d.csv", csv.read_bytes())
    code, got, err = kilobit(base + ["--model", "mfifo", "--data", tmp / "piped" / "d.csv"],
                             tmp)
    assert code == 0 and wm.done() and wd.done(), err
    assert got.replace(str(tmp / "piped"), "D") == \
        want.replace(str(tmp / "plain"), "D").replace(str(model), "mfifo")


def test_an_endless_device_as_a_model_in_bounded_memory(files):
    """/dev/zero as a model read until memory ran out (MemoryError); under a 1.5 GiB address
    space limit the command now ends at the cap, in kilobit's words."""
    tmp, csv, _ = files
    for args, says in ((["inspect", "/dev/zero"], "past the 64 MiB a model file may be"),
                       (["golden", "check", "--runtime", "host", "/dev/zero"],
                        "past the 160 MiB a golden file may be")):
        code, _, err = kilobit(args, tmp, limit_memory=True)
        assert code == 2 and "Traceback" not in err, err
        assert err.strip().splitlines()[-1].startswith("kilobit: error: ") and says in err


def test_the_reader_caps_regular_files_and_pipes(tmp_path):
    big = tmp_path / "big"
    big.write_bytes(b"x" * 1000)
    assert inputs.read(str(big), "model file", 1000) == b"x" * 1000
    with pytest.raises(KilobitError, match="larger than the 999 bytes a model file may be"):
        inputs.read(str(big), "model file", 999)
    w = Fifo(tmp_path / "f", b"y" * 5000)
    with pytest.raises(KilobitError, match="goes on past the 4096 bytes a data file may be"):
        inputs.read(str(tmp_path / "f"), "data file", 4096)
    w.thread.join(timeout=1)  # its write ends with a broken pipe once the reader gave up
    for path, says in ((tmp_path, "it is a directory"), (tmp_path / "nosuch", "No such file")):
        with pytest.raises(KilobitError, match=says):
            inputs.read(str(path), "model file", 10)


def test_a_fifo_is_read_once_and_kept(tmp_path):
    w = Fifo(tmp_path / "f", b"KBIT once")
    first = inputs.read(str(tmp_path / "f"), "model file", 100)
    assert w.done()
    # a second open would wait for a writer that is gone: the bytes kept are answered
    assert inputs.read(str(tmp_path / "f"), "model file", 100) == first == b"KBIT once"


def test_json_nesting_is_bounded(tmp_path):
    ok = "[" * inputs.MAX_DEPTH + "]" * inputs.MAX_DEPTH
    deep = "[" * (inputs.MAX_DEPTH + 1) + "]" * (inputs.MAX_DEPTH + 1)
    assert inputs.depth(ok) == inputs.MAX_DEPTH and inputs.depth(deep) > inputs.MAX_DEPTH
    assert inputs.depth('{"a": "[[[[{{{{\\"[[["}') == 1  # brackets in strings do not nest
    path = tmp_path / "g.json"
    path.write_text(ok)
    want = []
    for _ in range(inputs.MAX_DEPTH - 1):
        want = [want]
    assert inputs.json_document(str(path), "golden file", 1 << 20) == want
    for text in (deep, '{"a": ' * 200000 + "1" + "}" * 200000):
        path.write_text(text)
        with pytest.raises(KilobitError, match="JSON nested deeper than %d" % inputs.MAX_DEPTH):
            inputs.json_document(str(path), "golden file", 1 << 30)


def _with_scaler(blob, lo, hi):
    """The model file `blob` (its trailer empty) with a float scaler (lo, hi) instead."""
    name, payload = kbfile.unpack(blob)
    assert payload[-1] == 0
    extra = np.asarray(lo, "<f4").tobytes() + np.asarray(hi, "<f4").tobytes()
    return kbfile.pack(name, payload[:-1] + b"\x01" + extra)


@pytest.mark.parametrize("name", registry.NAMES)
def test_a_non_finite_scaler_is_a_bad_trailer_on_every_runtime(name):
    """The host, kbit and firmware_c refuse a float scaler bound that is +inf, -inf or NaN
    (contract 4.1), and all three take the same file with finite bounds."""
    from kilobit.runtimes import catalog
    c = catalog.get("c-host")
    need(c.missing())
    spec = registry.get(name)
    doc = spec.golden.make(**spec.golden.random_params(7, 12))
    blob = bytes.fromhex(doc["model_file"])
    steps = spec.golden.doc_steps(doc)
    n = spec.load(blob)[0].dims
    lo = np.zeros(n, np.float32)
    finite = _with_scaler(blob, lo, np.ones(n, np.float32))
    answers = [catalog.get(r).replay(finite, steps) for r in ("host", "kbit-cpython", "c-host")]
    assert answers[0] == answers[1] == answers[2]
    for bad in (np.inf, -np.inf, np.nan):
        hi = np.ones(n, np.float32)
        hi[n - 1] = bad
        for which in ((lo, hi), (hi, lo)):
            broken = _with_scaler(blob, *which)
            kbfile.unpack(broken)  # its CRC is valid
            with pytest.raises(KilobitError, match="bad %s trailer" % name):
                spec.load(broken)
            for r in ("kbit-cpython", "c-host"):
                with pytest.raises(Exception, match="bad %s trailer" % name):
                    catalog.get(r).replay(broken, steps)


def test_golden_make_honours_or_refuses_every_parameter(tmp_path):
    """Each option of `golden make` given for each model type ends in a case that has the value
    given or in a refusal: --C was dropped (rkp's make() has a default the draw did not
    know), a negative --pretrain made no steps."""
    import contextlib
    import io
    import json

    from kilobit.cli import golden as golden_cli, main
    out = tmp_path / "g.json"
    for spec in registry.REGISTRY:
        for pname in sorted(set(golden_cli.params_of(spec)) - {"seed", "steps"}):
            value = spec.golden.random_params(5, 12).get(pname, golden_cli.params_of(spec)[pname])
            if not isinstance(value, int) or isinstance(value, bool):
                continue  # a name (kernel, approach) or norm's None: not a count
            for v in (999, 0, -5):
                if out.exists():
                    out.unlink()
                err = io.StringIO()
                with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err):
                    code = main(["golden", "make", spec.name, "--seed", "5", "--steps", "12",
                                 "--" + pname, str(v), "-o", str(out)])
                if code == 0:
                    params = json.loads(out.read_text())["params"]
                    assert params.get(pname, golden_cli.params_of(spec)[pname]) == v, \
                        (spec.name, pname, v)
                else:
                    assert code == 2 and "kilobit: error: " in err.getvalue(), err.getvalue()


def test_deploy_hands_mpremote_the_model_it_read_from_a_fifo(files):
    """deploy read the model, then had mpremote copy the path, which a FIFO cannot give twice:
    the copy now comes from the bytes read, written under build/ first."""
    from kilobit.runtimes import boards
    from kilobit.runtimes.boards import deploy
    tmp, _, model = files
    w = Fifo(tmp / "mfifo", model.read_bytes())
    steps = deploy.plan_micropython(str(tmp / "mfifo"), boards.get("rp2040"), "/dev/null",
                                    name="fifo-test.kb")
    assert w.done()
    cp = next(s.argv for s in steps if s.argv and "cp" in s.argv)
    src = cp[cp.index("cp") + 1]
    assert src != str(tmp / "mfifo") and cp[-1] == ":fifo-test.kb"
    for s in steps[:[s.argv for s in steps].index(cp)]:
        if s.prepare and s.argv is None and "as read from" in s.note:
            s.prepare()
    with open(src, "rb") as f:
        assert f.read() == model.read_bytes()
    os.unlink(src)
