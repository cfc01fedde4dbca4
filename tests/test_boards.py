"""Boards, fit, deploy and the virtual boards (issue 7).

What is proven here:
- boards/*.json are complete and agree with the rest of kilobit; device/kbit/package.json lists
  every module (it is generated: `kilobit board manifest`).
- `kilobit fit` refuses a model that does not fit the ATtiny2313 with the reason, accepts one
  that does; the MicroPython RAM accounting bounds what MicroPython 1.27 really allocates.
- every `--dry-run` command in the README prints exactly the README's lines.
- the real mpremote (PyPI) deploys kbit (mpy-cross, mip) and a model to the virtual board and
  the board verifies itself; `mpremote run` of the examples prints the host's predictions;
  `kilobit golden check --runtime virtual-board` passes; file commands, soft reset, errno, the
  socket transport and ampy work.
- the streaming client learns Banana through the simulated Uno's UART pty with the host integer
  reference's predictions; `kilobit board sim/virtual` serve and stop without leaking processes.
"""
import json
import os
import re
import select
import shlex
import signal
import subprocess
import sys
import time

import numpy as np
import pytest

from conftest import need
from kilobit.cli import main
from kilobit.core.errors import KilobitError
from kilobit.models.rkp.model import RKPInt, power_table
from kilobit.runtimes import REPO, boards
from kilobit.runtimes.boards import deploy
from kilobit.runtimes.micropython.kbit_wasm import missing_wasm, mpy_cross

README = os.path.join(REPO, "README.md")
BANANA = os.path.join(REPO, "build", "banana.kb")  # the README's model
GOLDEN = os.path.join(REPO, "tests", "golden", "rkp-laplace-b4-t62-m2-a-6-s1.json")
TIMEOUT = 120


def kilobit(*args, timeout=TIMEOUT, **kw):
    return subprocess.run([sys.executable, "-m", "kilobit.cli", *args], capture_output=True,
                          text=True, timeout=timeout, cwd=REPO, stdin=subprocess.DEVNULL, **kw)


def mpremote(port, *args, timeout=TIMEOUT):
    p = subprocess.run(deploy.tool_argv(["mpremote", "connect", port, *args]),
                       capture_output=True, text=True, timeout=timeout, cwd=REPO,
                       stdin=subprocess.DEVNULL)
    return p.returncode, p.stdout.replace("\r\n", "\n"), p.stderr


@pytest.fixture(scope="module")
def banana():
    """build/banana.kb as the README makes it (deterministic: the same bytes every time)."""
    os.makedirs(os.path.dirname(BANANA), exist_ok=True)
    assert main(["train", "rkp", "--data", "banana", "--bits", "4", "--budget", "62",
                 "--width", "-6", "--seed", "0", "-o", BANANA]) == 0
    with open(BANANA, "rb") as f:
        return f.read()


def need_virtual():
    need(missing_wasm())
    need(None if mpy_cross() else "mpy-cross (pip install mpy-cross)")
    try:
        import mpremote  # noqa: F401
    except ImportError:
        need("mpremote (pip install mpremote)")


def need_avr():
    from kilobit.runtimes.avr import kb_sim
    need(kb_sim.missing())


# --- board files and the manifest ------------------------------------------------------------

def test_board_files_are_complete_and_consistent():
    from kilobit.runtimes.avr import firmware, kb_sim
    bs = boards.load_all()
    assert {"rp2040", "esp32", "attiny2313", "uno", "attiny4313"} <= set(bs)
    assert set(firmware.boards()) == {n for n, b in bs.items() if b["runtime"] == "c"}
    for name, b in bs.items():
        assert boards.check(b) is None, name
        if b["runtime"] == "c":  # the simulator's facts are the board file's
            assert kb_sim.MCU_FLASH[b["mcu"]] == b["flash_bytes"], name
            assert kb_sim.MCU_RAM[b["mcu"]] == b["ram_bytes"], name
            assert kb_sim.DEFAULT_FREQ[b["mcu"]] == b["clock_hz"], name
        else:
            assert b["mpy_cross_arch"] in ("armv6m", "xtensawin"), name
    assert bs["uno"]["bootloader_bytes"] == 512 and bs["attiny2313"]["ram_bytes"] == 128
    broken = dict(bs["rp2040"], heap_bytes="lots")
    assert "heap_bytes" in boards.check(broken)
    assert "runtime" in boards.check(dict(bs["uno"], runtime="basic"))


def test_mip_manifest_is_generated_from_the_package(tmp_path):
    """device/kbit/package.json lists every module of device/kbit (not the tests): a module
    added without `kilobit board manifest` fails here."""
    assert boards.manifest_problem() is None, boards.manifest_problem()
    with open(os.path.join(boards.KBIT_DIR, "package.json")) as f:
        assert json.load(f) == boards.manifest()
    mods = boards.package_modules()
    assert "rkp.py" in mods and "__init__.py" in mods and not any(m.startswith("test_")
                                                                   for m in mods)
    # the check sees a missing module
    stale = dict(boards.manifest())
    stale["urls"] = stale["urls"][1:]
    path = tmp_path / "package.json"
    path.write_text(json.dumps(stale))
    real = boards.KBIT_DIR
    try:
        boards.KBIT_DIR = str(tmp_path)
        os.symlink(os.path.join(real, "__init__.py"), tmp_path / "__init__.py")
        for m in mods[1:]:
            os.symlink(os.path.join(real, m), tmp_path / m)
        assert "missing" in boards.manifest_problem()
    finally:
        boards.KBIT_DIR = real


# --- fit ----------------------------------------------------------------------------------------

def test_fit_refuses_what_does_not_fit_the_attiny2313_and_accepts_what_does(banana, tmp_path):
    need_avr()
    p = kilobit("fit", BANANA, "--board", "attiny2313")
    assert p.returncode == 0, p.stderr
    assert "fits attiny2313" in p.stdout
    flash, ram = [re.search(r"%s\s+(\d+) B of\s+(\d+) B" % w, p.stdout).groups()
                  for w in ("flash", "RAM")]
    assert int(flash[0]) <= int(flash[1]) == 2048 and int(ram[0]) <= int(ram[1]) == 128
    big = tmp_path / "big.kb"
    big.write_bytes(RKPInt("laplace", 4, 2, 120, -6, 255, seed=0).to_bytes())  # 135 B memory
    p = kilobit("fit", str(big), "--board", "attiny2313")
    assert p.returncode == 2 and "fits" not in p.stdout
    assert re.search(r"kilobit: error: .*big.kb does not fit attiny2313: static RAM \d+ B \+ "
                     r"stack reserve 40 B = \d+ B > 128 B RAM", p.stderr), p.stderr
    # the same model fits the Uno; a model whose arrays cannot even be built does not
    assert kilobit("fit", str(big), "--board", "uno").returncode == 0
    huge = tmp_path / "huge.kb"
    huge.write_bytes(RKPInt("laplace", 8, 64, 2000, -6, 255, seed=0).to_bytes())
    p = kilobit("fit", str(huge), "--board", "uno")
    assert p.returncode == 2 and "does not fit uno" in p.stderr, p.stderr
    p = kilobit("fit", str(tmp_path / "nope.kb"), "--board", "uno")
    assert p.returncode == 2 and "cannot read model file" in p.stderr


def test_fit_on_micropython_boards(banana, tmp_path):
    need(None if mpy_cross() else "mpy-cross")
    p = kilobit("fit", BANANA, "--board", "esp32")
    assert p.returncode == 0 and "fits esp32" in p.stdout and "xtensawin" in p.stdout, p.stderr
    huge = tmp_path / "huge.kb"  # 128 KB of memory: more than the ESP32's heap
    huge.write_bytes(RKPInt("laplace", 8, 64, 2000, -6, 255, seed=0).to_bytes())
    p = kilobit("fit", str(huge), "--board", "esp32")
    assert p.returncode == 2 and re.search(r"does not fit esp32: RAM \d+ B > 112640 B", p.stderr)
    assert kilobit("fit", str(huge), "--board", "rp2040").returncode == 0  # 192 KiB heap


RAM_SCRIPT = """
import gc
from kbit import kbfile, rng
keep = []
gc.collect()
#mpwasm: top-level
a = gc.mem_alloc()
import kbit.rkp
#mpwasm: top-level
gc.collect()
#mpwasm: top-level
code = gc.mem_alloc() - a
res = []
def load(p):
    with open(p, "rb") as f:
        return kbit.rkp.RKP.load(f)
load(PATHS[0])
gc.collect()
"""
RAM_STEP = ("#mpwasm: top-level\na = gc.mem_alloc()\nkeep.append(load(PATHS[%d]))\ngc.collect()\n"
            "#mpwasm: top-level\nres.append(gc.mem_alloc() - a)\ngc.collect()\n")


def test_micropython_ram_accounting_bounds_what_micropython_allocates(tmp_path):
    """fit's RAM figures against MicroPython 1.27 (WebAssembly, 32-bit like the boards): the
    model estimate is at least the measured growth and at most 64 B above it; the bytecode
    estimate (2 x .mpy) is at least what importing kbit.rkp (and what it imports) takes."""
    need(missing_wasm())
    need(None if mpy_cross() else "mpy-cross")
    from kilobit.runtimes.micropython.kbit_wasm import run
    cfgs = [("laplace", 4, 2, 62, -6), ("laplace", 4, 2, 62, -2), ("rbf", 8, 64, 200, 4),
            ("laplace", 3, 10, 100, 0)]
    files, paths, est = [], [], []
    for i, c in enumerate(cfgs):
        blob = RKPInt(*c, 255, seed=i).to_bytes()
        host = tmp_path / ("m%d.kb" % i)
        host.write_bytes(blob)
        files.append(("/m%d.kb" % i, str(host)))
        paths.append("/m%d.kb" % i)
        est.append(boards.object_ram(boards.load_kbit(blob)[1]))
    script = tmp_path / "ram.py"
    script.write_text("PATHS = %r\n" % paths + RAM_SCRIPT + "".join(RAM_STEP % i for i in
                                                                    range(len(cfgs)))
                      + "#mpwasm: top-level\nprint(code, res)\n")
    p = run([str(script)], files=files, mpy=True, timeout=TIMEOUT)
    assert p.returncode == 0, p.stderr
    code, res = p.stdout.split(" ", 1)
    res = [int(x) for x in res.strip(" []\n").split(",")]
    for c, got, e in zip(cfgs, res, est):
        assert got <= e <= got + 64, (c, got, e)
    _, _, used = boards.load_kbit(RKPInt(*cfgs[0], 255).to_bytes())
    sizes = boards.mpy_sizes("armv6m")
    assert int(code) <= boards.CODE_RAM_FACTOR * sum(sizes[m] for m in used), (code, sizes)


# --- the README's dry runs ----------------------------------------------------------------------

def readme_dry_runs():
    """(command args, expected lines) of every `$ kilobit ... --dry-run` in the README."""
    with open(README) as f:
        lines = f.read().splitlines()
    out, cur = [], None
    for ln in lines:
        if ln.startswith("$ kilobit ") and "--dry-run" in ln:
            cur = (shlex.split(ln[2:].split("  #")[0])[1:], [])
            out.append(cur)
        elif cur is not None and (ln.startswith("$ ") or ln.startswith("```")):
            cur = None
        elif cur is not None:
            cur[1].append(ln)
    return out


def expand(expected):
    """A line naming MODULE stands for one line per module of device/kbit."""
    out = []
    for ln in expected:
        if "MODULE" in ln:
            out += [ln.replace("MODULE", m[:-3]) for m in boards.package_modules()]
        else:
            out.append(ln)
    return out


def test_readme_dry_runs_print_exactly_the_documented_commands(banana, monkeypatch, capsys):
    runs = readme_dry_runs()
    boards_seen = {a[a.index("--board") + 1] for a, _ in runs}
    assert {"rp2040", "esp32", "uno", "attiny2313"} <= boards_seen
    assert {a[0] for a, _ in runs} == {"deploy", "run", "flash-firmware"}
    assert any("circuitpython" in a for a, _ in runs)
    monkeypatch.chdir(REPO)
    for args, expected in runs:
        capsys.readouterr()
        assert main(args) == 0, args
        got = capsys.readouterr().out.splitlines()
        assert got == expand(expected), "kilobit %s" % " ".join(args)
    # nothing was run or written by a dry run
    assert not os.path.exists(os.path.join(REPO, "build", "deploy", "attiny2313"))


def test_readme_fit_examples(banana):
    """The README's fit session: the same verdicts (the byte counts follow the firmware)."""
    with open(README) as f:
        text = f.read()
    i = text.index("$ kilobit fit ")
    block = text[text.rindex("```console", 0, i):text.index("```", i)].splitlines()[1:]
    cmds = [(ln[2:], []) for ln in block if ln.startswith("$ ")]
    k = -1
    for ln in block:
        if ln.startswith("$ "):
            k += 1
        else:
            cmds[k][1].append(ln)
    fits = 0
    for cmd, want in cmds:
        args = shlex.split(cmd)[1:]
        p = kilobit(*args)
        if args[0] == "train":
            assert p.returncode == 0, p.stderr
            continue
        verdict = want[-1]
        if verdict.startswith("kilobit: error:"):
            assert p.returncode == 2 and p.stderr.strip().split(":")[:3] == \
                verdict.split(":")[:3], (p.stderr, verdict)
            assert p.stderr.strip().split(" = ")[0].rsplit(" static RAM", 1)[0] == \
                verdict.split(" = ")[0].rsplit(" static RAM", 1)[0]
        else:
            fits += 1
            assert p.returncode == 0 and p.stdout.splitlines()[-1] == verdict
        assert p.stdout.splitlines()[:2] == want[:2]
    assert fits == 1 and len(cmds) == 4


def test_dry_run_refusals(banana):
    p = kilobit("deploy", BANANA, "--board", "rp2040", "--dry-run")
    assert p.returncode == 2 and "needs --port" in p.stderr
    p = kilobit("deploy", BANANA, "--board", "uno", "--runtime", "micropython", "--dry-run")
    assert p.returncode == 2 and "C firmware" in p.stderr
    p = kilobit("flash-firmware", "--board", "uno", "--port", "x", "fw.bin", "--dry-run")
    assert p.returncode == 2 and "no firmware tool" in p.stderr
    p = kilobit("run", "examples/rkp_codes.py", "--board", "attiny2313", "--port", "x")
    assert p.returncode == 2


# --- the virtual MicroPython board ----------------------------------------------------------------

@pytest.fixture(scope="module")
def vboard():
    need_virtual()
    from kilobit.runtimes.boards.virtual import VirtualBoard
    vb = VirtualBoard().start()
    try:
        yield vb
    finally:
        vb.close()
    assert vb.proc.poll() is not None  # node ended


def host_rkp_codes(model):
    """examples/rkp_codes.py's output lines, computed with the host integer reference."""
    src = open(os.path.join(REPO, "examples", "rkp_codes.py")).read()
    stream = bytes.fromhex("".join(re.findall(r'"([0-9a-f]+)"', src.split("STREAM =")[1]
                                              .split(")")[0])))
    m, _ = RKPInt.from_bytes(model)
    out, right, mistakes = [], 0, 0
    for n, i in enumerate(range(0, len(stream), 1 + m.dims)):
        y, codes = stream[i], list(stream[i + 1:i + 1 + m.dims])
        pred = int(m.score(codes) > 0)
        _, mistake = m.learn(codes, y)
        right += pred == y
        mistakes += mistake
        out.append("%2d codes %s -> %d (true %d)" % (n, " ".join("%2d" % c for c in codes),
                                                     pred, y))
    out.append("accuracy %d/%d, %d mistakes learnt, %d support vectors"
               % (right, len(out), mistakes, m.count))
    out.append("checkpoint banana-learnt.kb written")
    return out, stream


def host_basicmotions():
    """examples/basicmotions_online.py's output lines, from the host integer reference."""
    classes = ("Standing", "Walking", "Running", "Badminton")
    with open(os.path.join(REPO, "examples", "data", "basicmotions_acc.bin"), "rb") as f:
        data = np.frombuffer(f.read(), dtype=np.uint8).reshape(-1, 301)
    ms = [RKPInt("laplace", 4, 6, 8, -2, 255, seed=k + 1) for k in range(4)]

    def code(v):
        return min(15, 2 * int(v).bit_length())

    out, right = [], 0
    for n, rec in enumerate(data):
        y = int(rec[0])
        acc = rec[1:].view(np.int8).astype(np.int64).reshape(3, 100)
        u = [code(np.abs(a).sum() // 100) for a in acc]
        u += [code(np.abs(np.diff(a)).sum() // 99) for a in acc]
        scores = [m.learn(u, int(k == y))[0] for k, m in enumerate(ms)]
        best = int(np.argmax(scores))  # the first of equal scores, as the board's strict >
        right += best == y
        out.append("%2d %-9s -> %-9s" % (n, classes[y], classes[best]))
    out.append("prequential accuracy: %d/%d" % (right, len(data)))
    return out


def test_examples_data_and_constants_are_what_they_say():
    """The examples' constants come from where their comments say."""
    from kilobit import data
    from kilobit.core.quant import quantize
    src = open(os.path.join(REPO, "examples", "basicmotions_online.py")).read()
    table = re.search(r'TABLE = bytes.fromhex\("([0-9a-f]+)"\)', src).group(1)
    assert bytes.fromhex(table) == bytes(power_table("laplace", 4, -2))
    _, stream = host_rkp_codes(RKPInt("laplace", 4, 2, 62, -6, 255).to_bytes())
    split = data.load("banana", seed=0)
    _, _, Xte = data.scale(split)
    want = bytearray()
    for c, y in zip(quantize(Xte, 4)[:60], split.y_test[:60]):
        want += bytes([int(y)] + [int(v) for v in c])
    assert stream == bytes(want)
    size = os.path.getsize(os.path.join(REPO, "examples", "data", "basicmotions_acc.bin"))
    assert size == 80 * 301


def test_deploy_to_the_virtual_board_then_run_the_examples(vboard, banana):
    """The README's path on the virtual board with the real mpremote: deploy (mpy-cross armv6m,
    mip install, cp, verify.py replays a golden file on the board), then `mpremote run` of both
    examples prints exactly what the host computes. The WebAssembly board runs no native code:
    the armv6m native modules deploy puts beside kbit are refused in one line each, and the
    bytecode runs."""
    deploy_and_run_examples(vboard.port, banana, native=False)


def deploy_and_run_examples(port, banana, native):
    """Deploy build/banana.kb to the board on `port` as for a Pico, check what is on it and
    which path kbit takes there, run both examples."""
    from kilobit.runtimes.micropython import natmod
    p = kilobit("deploy", BANANA, "--board", "rp2040", "--port", port)
    assert p.returncode == 0, p.stdout + p.stderr
    assert "kbit verified: 400 steps of rkp-laplace-b4-t62-m2-a-6-s1.json bit for bit" in p.stdout
    assert "model banana.kb loaded: rkp, 2 inputs" in p.stdout
    code, out, err = mpremote(port, "ls", ":lib/kbit")
    listed = sorted(re.findall(r"(\S+\.mpy)", out))
    assert code == 0 and listed == sorted([m[:-3] + ".mpy" for m in boards.package_modules()]
                                          + ["_kb_%s.mpy" % m for m in natmod.MODELS])
    code, out, err = mpremote(port, "exec", "import kbit.rkp; print(kbit.rkp.__file__); "
                                            "print(kbit.rkp.NATIVE_WHY)")
    lines = out.strip().splitlines()
    refused = [ln for ln in lines if "native module refused, running bytecode" in ln]
    rest = [ln for ln in lines if ln not in refused]
    assert rest[0] == "/lib/kbit/rkp.mpy", out + err  # the mpy-cross build, not sources
    if native:
        assert not refused and rest[1:] == ["None"], out
    else:  # refused before MicroPython sees it, in one line, and the bytecode runs
        assert len(refused) == 1 and "built for armv6m" in refused[0] \
            and "built for armv6m" in rest[1], out

    want, _ = host_rkp_codes(banana)
    code, out, err = mpremote(port, "run", "examples/rkp_codes.py")
    assert code == 0, err + out
    assert [ln for ln in out.splitlines() if "native module refused" not in ln] == want
    # run again: it resumes from its checkpoint and goes on exactly as the host model that
    # learnt the stream once already
    m, _ = RKPInt.from_bytes(banana)
    _, stream = host_rkp_codes(banana)
    for i in range(0, len(stream), 1 + m.dims):
        m.learn(list(stream[i + 1:i + 1 + m.dims]), stream[i])
    again, _ = host_rkp_codes(m.to_bytes())
    code, out, err = mpremote(port, "run", "examples/rkp_codes.py")
    assert code == 0, err + out
    assert [ln for ln in out.splitlines() if "native module refused" not in ln] == [
        "resumed from banana-learnt.kb: 62 support vectors"] + again

    code, out, err = mpremote(port, "cp", "examples/data/basicmotions_acc.bin", ":", "+",
                              "run", "examples/basicmotions_online.py")
    assert code == 0, err + out
    lines = [ln for ln in out.splitlines() if not ln.startswith("cp ")
             and "native module refused" not in ln]
    want = host_basicmotions()
    assert lines == want
    assert want[-1] == "prequential accuracy: 76/80"
    assert all(a.split("->")[0].split()[1] == a.split("->")[1].strip() for a in want[40:80])


def readme_repl_session():
    """[(typed line, expected output lines)] of the README's session at the board's prompt."""
    with open(README) as f:
        text = f.read()
    block = text.split("At the board's REPL", 1)[1].split("```python\n", 1)[1].split("```")[0]
    session = []
    for ln in block.splitlines():
        if ln.startswith(">>> "):
            session.append((ln[4:], []))
        else:
            session[-1][1].append(ln)
    return session


def test_readme_repl_session_on_the_virtual_board(vboard, banana):
    """The README's REPL session, typed at the virtual board's friendly REPL over its serial
    port, prints what the README shows."""
    import serial
    code, out, _ = mpremote(vboard.port, "exec", "import kbit.rkp")
    if code != 0:
        deploy.execute(deploy.kbit_steps(boards.get("rp2040"), vboard.port), quiet=True)
    assert mpremote(vboard.port, "cp", BANANA, ":banana.kb")[0] == 0
    session = readme_repl_session()
    assert len(session) >= 6
    ser = serial.serial_for_url(vboard.port, baudrate=115200, timeout=10)
    try:
        def until(end):
            data = b""
            deadline = time.time() + 20
            while not data.endswith(end) and time.time() < deadline:
                data += ser.read(1)
            assert data.endswith(end), data
            return data.decode()

        ser.write(b"\r\x02")  # friendly REPL
        until(b">>> ")
        time.sleep(0.5)
        ser.reset_input_buffer()
        ser.write(b"\x04")  # soft reset: a fresh interpreter, as after plugging the board in
        until(b"MPY: soft reboot\r\n")
        until(b">>> ")
        for typed, want in session:
            ser.write(typed.encode() + b"\r")
            got = until(b">>> ").split("\r\n")
            assert got[0] == typed  # the echo
            # the armv6m native modules deploy put there are refused here, in a line each
            got = [ln for ln in got if "native module refused" not in ln]
            assert got[1:-1] == want, (typed, got)
    finally:
        ser.close()


def test_virtual_board_behaves_like_a_board(vboard):
    """Files survive a soft reset, variables do not; OSErrors carry MicroPython's errno numbers
    (ENOENT 2), which mpremote turns into its own messages; eval, mkdir, rm, df work."""
    code, out, _ = mpremote(vboard.port, "exec", "x = 41\nopen('keep.txt', 'w').write('kept')",
                            "+", "exec", "print(x + 1)")
    assert code == 0 and out.strip() == "42"  # one session: no reset between commands
    code, out, err = mpremote(vboard.port, "exec", "print(open('keep.txt').read()); print(x)")
    assert code == 1 and out.startswith("kept\n") and "NameError" in out + err  # reset: x gone
    code, out, err = mpremote(vboard.port, "cat", ":nope.txt")
    assert code == 1 and "No such file or directory" in err, (out, err)
    code, out, _ = mpremote(vboard.port, "exec",
                            "import os, errno\ntry:\n os.stat('/nope')\nexcept OSError as e:\n"
                            " print(e.errno == errno.ENOENT)\ntry:\n os.mkdir('/lib')\n"
                            "except OSError as e:\n print(e.errno == errno.EEXIST)")
    assert out.split() == ["True", "True"]
    assert mpremote(vboard.port, "mkdir", ":d")[0] == 0
    assert mpremote(vboard.port, "cp", "README.md", ":d/r.md")[0] == 0
    code, out, _ = mpremote(vboard.port, "ls", ":d")
    assert re.search(r"\s%d r.md" % os.path.getsize(README), out), out
    assert mpremote(vboard.port, "rm", "-r", ":d")[0] == 0
    code, out, _ = mpremote(vboard.port, "eval", "1 + 2")
    assert out.strip() == "3"
    code, out, _ = mpremote(vboard.port, "ls")
    assert code == 0 and "dev/" not in out and "keep.txt" in out


def test_raw_paste_protocol(vboard):
    """Raw paste as MicroPython's docs give it: R\x01 + window, window acks, Ctrl-D ack, then the
    output of a raw REPL command (no OK)."""
    import serial
    ser = serial.serial_for_url(vboard.port, baudrate=115200, timeout=10)
    try:
        def until(end):
            data = b""
            deadline = time.time() + 20
            while not data.endswith(end) and time.time() < deadline:
                data += ser.read(1)
            assert data.endswith(end), data
            return data

        ser.write(b"\r\x03\r\x01")
        until(b"raw REPL; CTRL-B to exit\r\n>")
        ser.write(b"\x05A\x01")
        head = ser.read(4)
        assert head[:2] == b"R\x01", head
        window = head[2] | head[3] << 8
        code = ("s = 0\n" + "s += 7\n" * 900 + "print(s)\n").encode()
        assert len(code) > 2 * window  # several windows
        sent = acks = 0
        room = window
        while sent < len(code):
            if room == 0:
                assert ser.read(1) == b"\x01"
                acks += 1
                room += window
            n = min(room, len(code) - sent)
            ser.write(code[sent:sent + n])
            sent += n
            room -= n
        ser.write(b"\x04")
        assert until(b"\x04") == b"\x01" * (len(code) // window - acks) + b"\x04"
        assert until(b"\x04>") == b"6300\r\n\x04\x04>"
        ser.write(b"\r\x02")
    finally:
        ser.close()


def test_golden_check_on_the_virtual_board():
    need_virtual()
    p = kilobit("golden", "check", GOLDEN, "--runtime", "virtual-board", timeout=300)
    assert p.returncode == 0, p.stdout + p.stderr
    assert "virtual-board      ok       400 steps bit for bit" in p.stdout


def test_virtual_board_over_a_socket():
    need_virtual()
    from kilobit.runtimes.boards.virtual import VirtualBoard
    with VirtualBoard(tcp_port=0) as vb:
        assert vb.port.startswith("socket://127.0.0.1:")
        code, out, err = mpremote(vb.port, "exec", "import sys; print(sys.implementation.name)")
        assert code == 0 and out.strip() == "micropython", err
        code, out, err = mpremote(vb.port, "cp", "examples/rkp_codes.py", ":x.py", "+", "ls")
        assert code == 0 and "x.py" in out, err
        # the repository's own mip manifest, as a user installs kbit from a clone
        code, out, err = mpremote(vb.port, "mip", "install", "device/kbit/package.json")
        assert code == 0 and out.count("Installing: /lib/kbit/") == len(
            boards.package_modules()), out + err
        code, out, err = mpremote(vb.port, "exec", "import kbit.rkp; print(kbit.rkp.__file__)")
        assert out.strip() == "/lib/kbit/rkp.py", out + err


def test_ampy_on_the_virtual_board(vboard):
    """ampy (the CircuitPython deploy tool) against the board: mkdir --exists-okay relies on
    errno EEXIST being 17, put and run."""
    need(None if deploy.shutil.which("ampy") or os.path.exists(
        os.path.join(os.path.dirname(sys.executable), "ampy")) else "ampy (adafruit-ampy)")
    ampy = deploy.tool_argv(["ampy", "--port", vboard.port])

    def run(*args):
        return subprocess.run(ampy + list(args), capture_output=True, text=True, cwd=REPO,
                              timeout=TIMEOUT, stdin=subprocess.DEVNULL)

    for _ in range(2):
        p = run("mkdir", "--exists-okay", "/amp")
        assert p.returncode == 0, p.stderr
    p = run("put", "device/kbit/rng.py", "/amp/rng.py")
    assert p.returncode == 0, p.stderr
    p = run("ls", "/amp")
    assert p.returncode == 0 and p.stdout.split() == ["/amp/rng.py"], p.stdout + p.stderr


# --- command-line servers: kilobit board virtual / sim --------------------------------------------

def serve(args, timeout=60):
    """Start `kilobit board ...`; return (process, port) once it printed its port."""
    p = subprocess.Popen([sys.executable, "-m", "kilobit.cli", "board"] + args, cwd=REPO,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         stdin=subprocess.DEVNULL)
    deadline = time.time() + timeout
    line = ""
    while time.time() < deadline:
        r, _, _ = select.select([p.stdout], [], [], 1.0)
        if r:
            line = p.stdout.readline()
            m = re.search(r" on (\S+)$", line.strip()) or re.search(r"UART on (\S+);", line)
            if m:
                return p, m.group(1)
            if not line:
                break
    p.kill()
    p.wait()
    pytest.fail("kilobit board %s printed no port: %r %s" % (args, line, p.stderr.read()))


def children(pid):
    out = []
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                with open("/proc/%s/stat" % d) as f:
                    if int(f.read().rsplit(")", 1)[1].split()[1]) == pid:
                        out.append(int(d))
            except (OSError, ValueError, IndexError):
                pass
    return out


def stop(p, kids):
    p.send_signal(signal.SIGTERM)
    try:
        p.wait(timeout=20)
    except subprocess.TimeoutExpired:
        p.kill()
        p.wait()
        pytest.fail("the server did not stop on SIGTERM")
    for k in kids:  # no leaked child: node / kb_sim ended with it
        for _ in range(50):
            if not os.path.exists("/proc/%d" % k):
                break
            with open("/proc/%d/stat" % k) as f:
                if f.read().rsplit(")", 1)[1].split()[0] == "Z":
                    break
            time.sleep(0.1)
        else:
            os.kill(k, signal.SIGKILL)
            pytest.fail("child %d outlived the server" % k)


def test_kilobit_board_virtual_serves_mpremote_and_stops(tmp_path):
    need_virtual()
    link = str(tmp_path / "board")
    p, port = serve(["virtual", "--link", link])
    kids = children(p.pid)
    try:
        assert port == link and os.path.islink(link)
        code, out, err = mpremote(port, "exec", "print(6 * 7)")
        assert code == 0 and out.strip() == "42", err
    finally:
        stop(p, kids)
    assert kids and not os.path.exists(link)


def test_stream_banana_through_the_simulated_uno_uart_pty(banana, capsys):
    """`kilobit board sim` + `kilobit stream --port PTY`: the real serial client (pyserial,
    lock-step frames) learns all of Banana on the simulated Uno with the host integer
    reference's predictions, frame for frame; and again after the port is opened anew."""
    need_avr()
    p, port = serve(["sim", "--board", "uno", "--model", BANANA])
    kids = children(p.pid)
    try:
        assert port.startswith("/dev/pts/")
        q = kilobit("stream", "--board", "uno", "--port", port, "--model", BANANA, "--data",
                    "banana", timeout=300)
        assert q.returncode == 0, q.stdout + q.stderr
        assert "agreement with the host integer reference: 5300/5300 frames identical " \
               "(100.00%), final memory identical" in q.stdout
        assert "uno on %s" % port in q.stdout
        # opening the port again resets the chip, as DTR resets an Uno (issue 24): the second
        # stream starts from the model file's state again instead of "reset the board"
        q = kilobit("stream", "--board", "uno", "--port", port, "--model", BANANA, "--data",
                    "banana", "--limit", "200", timeout=300)
        assert q.returncode == 0, q.stdout + q.stderr
        assert "700/700 frames identical (100.00%), final memory identical" in q.stdout
    finally:
        stop(p, kids)
    assert kids


def test_golden_check_through_the_uno_uart_pty():
    need_avr()
    p = kilobit("golden", "check", GOLDEN, "--runtime", "uno-sim-uart", timeout=300)
    assert p.returncode == 0, p.stdout + p.stderr
    assert "uno-sim-uart       ok       400 steps bit for bit" in p.stdout


def test_sim_board_refuses_a_model_that_does_not_fit(tmp_path):
    need_avr()
    big = tmp_path / "big.kb"
    big.write_bytes(RKPInt("laplace", 4, 2, 120, -6, 255, seed=0).to_bytes())
    p = kilobit("board", "sim", "--board", "attiny2313", "--model", str(big))
    assert p.returncode == 2 and "does not fit attiny2313" in p.stderr


# --- attached boards, firmware files --------------------------------------------------------------

def test_board_at_port_runtimes():
    from kilobit.cli import DEMO_RUNTIMES
    from kilobit.runtimes import catalog as rt
    from kilobit.runtimes.boards.remote import AvrUartRuntime, MpremoteRuntime, attached
    assert "virtual-board" in DEMO_RUNTIMES and "uno-sim-uart" in DEMO_RUNTIMES
    r = rt.get("rp2040@/dev/null")  # a port that is a path must exist (issue 23)
    assert isinstance(r, MpremoteRuntime) and r.port == "/dev/null"
    r = rt.get("uno@socket://127.0.0.1:9")
    assert isinstance(r, AvrUartRuntime) and (r.board, r.port) == ("uno", "socket://127.0.0.1:9")
    with pytest.raises(KilobitError, match="no serial port /dev/nosuch"):
        rt.get("rp2040@/dev/nosuch")
    names = attached(list(DEMO_RUNTIMES), "esp32", "/dev/ttyUSB0")
    assert "esp32@/dev/ttyUSB0" in names and "virtual-board" not in names
    names = attached(list(DEMO_RUNTIMES), "uno", "/dev/ttyACM0")
    assert "uno@/dev/ttyACM0" in names and "uno-sim-uart" not in names


def test_demo_with_attached_boards(banana, tmp_path):
    """`kilobit demo --board NAME --port PORT` with the virtual boards standing in for attached
    ones: the Uno's firmware of the demo's model on a pty (the AVR serial path), and a
    MicroPython board with kbit deployed (the mpremote path)."""
    need_avr()
    need_virtual()
    demo_model = tmp_path / "demo.kb"
    p, port = serve(["sim", "--board", "uno", "--model", BANANA])
    kids = children(p.pid)
    try:
        q = kilobit("demo", "--runtime", "host", "--board", "uno", "--port", port,
                    "-o", str(demo_model), timeout=300)
        assert q.returncode == 0, q.stdout + q.stderr
        assert re.search(r"uno@%s\s+prequential accuracy [\d.]+%%.*bit-exact with host"
                         % re.escape(port), q.stdout), q.stdout
        assert demo_model.read_bytes() == banana  # the demo's model is the README's
    finally:
        stop(p, kids)
    from kilobit.runtimes.boards.virtual import VirtualBoard
    with VirtualBoard() as vb:
        deploy.execute(deploy.kbit_steps(boards.get("rp2040"), vb.port), quiet=True)
        q = kilobit("demo", "--runtime", "host", "--board", "rp2040", "--port", vb.port,
                    "-o", str(demo_model), timeout=300)
        assert q.returncode == 0, q.stdout + q.stderr
        assert "rp2040@%s" % vb.port in q.stdout and "bit-exact with host" in q.stdout


def test_avr_deploy_builds_the_hex_it_would_flash(banana):
    """Every step of the Uno deploy but avrdude itself (no board here): the Intel hex holds
    exactly the firmware's program bytes."""
    need_avr()
    from kilobit.runtimes.avr import firmware
    steps = deploy.plan_deploy(BANANA, boards.get("uno"), "/dev/null")
    assert steps[-1].argv[0] == "avrdude"
    deploy.execute(steps[:-1], quiet=True)
    hexfile = os.path.join(REPO, "build", "deploy", "uno", "firmware.hex")
    n = 0
    with open(hexfile) as f:
        for line in f:
            count, rtype = int(line[1:3], 16), int(line[7:9], 16)
            assert sum(bytes.fromhex(line.strip()[1:])) % 256 == 0  # record checksum
            if rtype == 0:
                n += count
    _, sizes = firmware.build(banana, "uno")
    assert n == sizes["flash"]


def test_avr_deploy_with_checkpoints(banana):
    """--checkpoint-every builds the checkpointing firmware (its flash is what the hex holds)
    and says what happens to the EEPROM; MicroPython boards refuse the option."""
    need_avr()
    from kilobit.runtimes.avr import firmware
    steps = deploy.plan_deploy(BANANA, boards.get("uno"), "/dev/null", checkpoint_every=1)
    assert "checkpointing to EEPROM every 1 learning steps" in steps[0].note
    assert "leaves the EEPROM as it is" in steps[-1].note  # the Uno's bootloader: -D
    deploy.execute([s for s in steps if s.argv is None or s.argv[0] != "avrdude"], quiet=True)
    hexfile = os.path.join(REPO, "build", "deploy", "uno", "firmware.hex")
    with open(hexfile) as f:
        n = sum(int(ln[1:3], 16) for ln in f if int(ln[7:9], 16) == 0)
    _, sizes = firmware.build(banana, "uno", checkpoint_every=1)
    assert n == sizes["flash"] and sizes["checkpoint"]["scheme"] == "slots"
    tiny = deploy.plan_deploy(BANANA, boards.get("attiny4313"), None, checkpoint_every=1)
    assert "unless the EESAVE fuse is programmed" in tiny[-1].note
    with pytest.raises(KilobitError, match="does not fit attiny2313"):  # as its build would
        deploy.plan_deploy(BANANA, boards.get("attiny2313"), None, checkpoint_every=1)
    with pytest.raises(KilobitError, match="--checkpoint-every is for AVR boards"):
        deploy.plan_deploy(BANANA, boards.get("rp2040"), "/dev/null", checkpoint_every=1)


def test_flash_firmware_to_an_rp2040_drive(tmp_path):
    """The RP2040 takes MicroPython as a .uf2 copied onto its boot drive (what else is refused:
    tests/test_bad_input_outputs.py)."""
    from kilobit.bench.badinput import boot_drive, uf2
    fw = tmp_path / "RPI_PICO.uf2"
    fw.write_bytes(uf2(bytes(range(256)) * 4))
    drive = boot_drive(tmp_path / "RPI-RP2")
    p = kilobit("flash-firmware", "--board", "rp2040", "--port", str(drive), str(fw))
    assert p.returncode == 0, p.stderr
    assert (drive / "RPI_PICO.uf2").read_bytes() == fw.read_bytes()
    p = kilobit("flash-firmware", "--board", "esp32", "--port", "/dev/null", str(tmp_path / "x"))
    assert p.returncode == 2 and "no firmware file" in p.stderr
