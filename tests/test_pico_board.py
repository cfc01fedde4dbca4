"""The emulated Pico as a board (issue 19): MicroPython 1.23's core on kilobit's minimal RP2040
port (tools/pico), under rp2040js, behind a pty, driven by the real mpremote.

What is proven here:
- `kilobit deploy --board rp2040` to it installs kbit as armv6m .mpy with its armv6m native
  modules, and verifies itself on the board (a golden replay); kbit runs the native kernel
  there; `mpremote run` of both examples prints exactly what the host computes.
- mpremote's file commands (cp, ls, rm, mkdir) and soft reset work as on a board: files survive a
  soft reset, variables do not; the banner says what the board is.
- `kilobit board virtual --board rp2040` serves it and stops without leaking node.
- a firmware that hangs is stopped by a timeout; a missing emulator, core or compiler is named.
"""
import os
import re
import subprocess

import pytest

from conftest import need
from test_boards import (BANANA, banana, children, deploy_and_run_examples, mpremote,  # noqa: F401
                         need_virtual, serve, stop)

from kilobit.runtimes import REPO
from kilobit.runtimes.base import RuntimeFailure
from kilobit.runtimes.micropython import rp2040_sim


def need_pico():
    need_virtual()
    need(rp2040_sim.missing())


@pytest.fixture(scope="module")
def pico():
    need_pico()
    from kilobit.runtimes.boards.virtual import VirtualBoard
    vb = VirtualBoard(board="rp2040").start()
    try:
        yield vb
    finally:
        vb.close()
    assert vb.proc.poll() is not None  # node ended


def test_deploy_to_the_virtual_pico_then_run_the_examples(pico, banana):  # noqa: F811
    deploy_and_run_examples(pico.port, banana, native=True)


def test_the_virtual_pico_says_what_it_is_and_behaves_like_a_board(pico):
    code, out, err = mpremote(pico.port, "exec", "import sys; print(sys.implementation._machine);"
                                                 " print(sys.platform, sys.implementation._mpy)")
    assert code == 0, err
    machine, plat = out.strip().splitlines()
    assert "kilobit minimal RP2040 port" in machine and "not the official rp2 firmware" in machine
    assert plat == "rp2 %d" % (6 | 3 << 8 | 4 << 10)  # .mpy 6.3, armv6m native code
    code, out, _ = mpremote(pico.port, "exec", "x = 41\nopen('keep.txt', 'w').write('kept')",
                            "+", "exec", "print(x + 1)")
    assert code == 0 and out.strip() == "42"
    code, out, err = mpremote(pico.port, "exec", "print(open('keep.txt').read()); print(x)")
    assert code == 1 and out.startswith("kept\n") and "NameError" in out + err  # reset: x gone
    assert mpremote(pico.port, "mkdir", ":d")[0] == 0
    assert mpremote(pico.port, "cp", "examples/rkp_codes.py", ":d/r.py")[0] == 0
    code, out, _ = mpremote(pico.port, "ls", ":d")
    size = os.path.getsize(os.path.join(REPO, "examples", "rkp_codes.py"))
    assert code == 0 and re.search(r"\s%d r.py" % size, out), out
    code, out, _ = mpremote(pico.port, "cat", ":d/r.py")
    with open(os.path.join(REPO, "examples", "rkp_codes.py")) as f:
        assert out == f.read()
    code, out, err = mpremote(pico.port, "cat", ":nope.txt")
    assert code == 1 and "No such file or directory" in err, (out, err)
    assert mpremote(pico.port, "rm", "-r", ":d", "+", "rm", ":keep.txt")[0] == 0
    code, out, _ = mpremote(pico.port, "ls")
    assert code == 0 and "keep.txt" not in out and "d/" not in out
    code, out, _ = mpremote(pico.port, "exec", "import gc; gc.collect(); "
                                               "print(gc.mem_free() + gc.mem_alloc())")
    assert int(out) == 192064  # the 192 KiB heap less the GC's own tables (tools/pico/README.md)


def test_kilobit_board_virtual_rp2040_serves_mpremote_and_stops(tmp_path):
    need_pico()
    link = str(tmp_path / "pico")
    p, port = serve(["virtual", "--board", "rp2040", "--link", link])
    kids = children(p.pid)
    try:
        assert port == link and os.path.islink(link)
        code, out, err = mpremote(port, "exec", "print(6 * 7)")
        assert code == 0 and out.strip() == "42", err
    finally:
        stop(p, kids)
    assert kids and not os.path.exists(link)


def test_a_hung_firmware_is_stopped_by_the_timeout(tmp_path):
    """run.mjs stops a firmware that never returns (status 124, TimeoutExpired here); a replay
    that hangs so becomes a runtime failure, never a hung CI."""
    need_pico()
    script = tmp_path / "hang.py"
    script.write_text("while True:\n    pass\n")
    with pytest.raises(subprocess.TimeoutExpired):
        rp2040_sim.run([str(script)], mpy=False, timeout=2)
    r = rp2040_sim.RP2040SimRuntime()
    r.run = lambda args, **kw: rp2040_sim.run([str(script)] + args[1:], timeout=2, **kw)
    with pytest.raises(RuntimeFailure, match="timed out after 2s"):
        r.replay(bytes.fromhex(_golden_model()), [("Q", None, [1, 2])])


def _golden_model():
    from kilobit import golden
    return golden.load(os.path.join(REPO, "tests", "golden",
                                    "rkp-laplace-b4-t62-m2-a-6-s1.json"))["model_file"]


@pytest.mark.parametrize("what, attr, value, named", [
    ("rp2040js", "EMULATOR", "/nonexistent/rp2040js/package.json", "npm package rp2040js"),
    ("the core", "CORE", "/nonexistent/micropython-1.23", "mpy-cross-v6-3==1.1.1"),
])
def test_a_missing_piece_is_named(monkeypatch, what, attr, value, named):
    monkeypatch.setattr(rp2040_sim, attr, value)
    miss = rp2040_sim.missing()
    assert miss and named in miss and "setup.sh" in miss, (what, miss)
    with pytest.raises(RuntimeFailure, match=re.escape(named)):
        rp2040_sim.run(["x.py"])


def test_no_node_is_named(monkeypatch):
    monkeypatch.setattr(rp2040_sim, "node", lambda: None)
    assert "node" in rp2040_sim.missing()
