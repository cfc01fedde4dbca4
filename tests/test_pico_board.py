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
- `kilobit deploy MODEL.kb --board rp2040 --port PTY` verifies a model of each of the five types
  on the board (a golden file of its type replayed, then the deployed model's answers checked
  against the host's), under the name the deploy was given; a name that is not a plain NAME.kb
  is refused and the board left as it was.
- `kilobit golden check --runtime rp2040@PTY` and `kilobit predict --runtime rp2040@PTY` run in
  a private folder on the board and remove it, also after a failure: a user's own /model.kb and
  /steps.txt keep their bytes and nothing is left behind.
"""
import os
import re
import subprocess

import pytest

from conftest import need
from kilobit.runtimes import REPO
from kilobit.runtimes.base import RuntimeFailure
from kilobit.runtimes.micropython import rp2040_sim
from test_boards import (  # noqa: F401
    BANANA,
    banana,
    children,
    deploy_and_run_examples,
    kilobit,
    mpremote,
    need_virtual,
    serve,
    stop,
)
from test_deploy_verify import train, verified_line


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


# --- deploy of every model type; the board's own files ---------------------------------------

def board_files(port):
    """The board's root folder as mpremote lists it (sizes and names, hidden ones included)."""
    code, out, err = mpremote(port, "ls", ":")
    assert code == 0, err
    return sorted(out.splitlines()[1:])


def board_bytes(port, name, tmp_path):
    copy = tmp_path / ("copy-" + name.replace("/", "-"))
    code, _, err = mpremote(port, "cp", ":" + name, str(copy))
    assert code == 0, err
    return copy.read_bytes()


def test_deploy_verifies_every_model_type_on_the_board(pico, tmp_path):
    """Five deploys to one virtual Pico, a model of each type trained here: each ends with the
    board's verification of a golden file of the type (rkp with --golden: a short one) and of
    the deployed model against the host. The assoc model comes from a file called main.py,
    stored as --as gesture.kb: the board's main.py is not touched."""
    from kilobit.core import goldenfile
    from kilobit.models import registry
    from kilobit.runtimes.boards import deploy
    short = os.path.join(REPO, "tests", "golden", "rkp-laplace-b1-t1-m1-a0-s5.json")
    for name in registry.NAMES:
        model = train(tmp_path, name)
        path = tmp_path / ("main.py" if name == "assoc" else name + ".kb")
        path.write_bytes(model)
        on_board = "gesture.kb" if name == "assoc" else name + ".kb"
        args = ["--golden", short] if name == "rkp" else []
        args += ["--as", on_board] if name == "assoc" else []
        p = kilobit("deploy", str(path), "--board", "rp2040", "--port", pico.port, *args,
                    timeout=300)
        assert p.returncode == 0, p.stdout + p.stderr
        golden = short if name == "rkp" else deploy.pick_golden(name)
        doc = goldenfile.load(golden)
        assert doc["model"] == name
        m, _ = registry.get(name).load(model)
        assert "\nkbit verified: %d steps of %s bit for bit\nmodel %s loaded: %s, %d inputs\n" \
               "%s\n" % (len(doc["steps"]), os.path.basename(golden), on_board, name, m.dims,
                         verified_line(on_board, model)) in p.stdout, p.stdout
        assert board_bytes(pico.port, on_board, tmp_path) == model
    listed = " ".join(board_files(pico.port))
    assert " main.py" not in listed and " gesture.kb" in listed


def test_a_refused_model_name_leaves_the_board_as_it_was(pico, tmp_path):
    before = board_files(pico.port)
    model = tmp_path / "main.py"
    model.write_bytes(train(tmp_path, "rkp"))
    for args in ([], ["--as", "lib"], ["--as", "boot.py"]):
        p = kilobit("deploy", str(model), "--board", "rp2040", "--port", pico.port, *args)
        assert p.returncode == 2 and p.stderr.startswith("kilobit: error: cannot store the "
                                                         "model on the board as "), p.stderr
    assert board_files(pico.port) == before


def kbit_on(port):
    """kbit installed on the board (deployed already by an earlier test, else now)."""
    from kilobit.runtimes import boards
    from kilobit.runtimes.boards import deploy
    if mpremote(port, "exec", "import kbit.rkp")[0] != 0:
        deploy.execute(deploy.kbit_steps(boards.get("rp2040"), port), quiet=True)


def test_remote_runs_keep_the_users_files_and_leave_nothing(pico, tmp_path):
    """The user's /model.kb and /steps.txt (random bytes) survive golden checks of every kind
    (learner, predictor, class learner), a predict and a replay the board refuses, byte for
    byte; the private folders are gone after each."""
    import numpy as np

    from kilobit.runtimes.boards.remote import PRIVATE, MpremoteRuntime
    kbit_on(pico.port)
    rng = np.random.default_rng(28)
    mine = {"model.kb": rng.bytes(300), "steps.txt": rng.bytes(200)}
    for name, data in mine.items():
        (tmp_path / name).write_bytes(data)
        assert mpremote(pico.port, "cp", str(tmp_path / name), ":" + name)[0] == 0
    before = board_files(pico.port)
    golden = [os.path.join(REPO, "tests", "golden", g) for g in (
        "rkp-laplace-b1-t1-m1-a0-s5.json",
        "bonsai-classes2-depth0-dims5-in_bits1-proj1-seed104-steps30-tenc0-wbits16-zenc0-"
        "zero_bias1.json",
        "assoc-P1-R1-approachI-I-bits2-cap1-d1-kt1-seed50-steps40.json")]
    runtime = "rp2040@" + pico.port
    p = kilobit("golden", "check", *golden, "--runtime", runtime, timeout=300)
    assert p.returncode == 0 and "3 of 3 golden files agree" in p.stdout, p.stdout + p.stderr
    model = tmp_path / "bonsai.kb"
    model.write_bytes(train(tmp_path, "bonsai"))
    p = kilobit("predict", str(model), "--data", "banana", "--limit", "6", "--runtime", runtime,
                timeout=300)
    assert p.returncode == 0 and "agrees with the host integer reference on 6 of 6 rows" \
        in p.stderr, p.stdout + p.stderr  # the summary: stderr, beside the predictions' CSV
    corrupt = bytearray(model.read_bytes())
    corrupt[-1] ^= 1  # its CRC-32: kbit refuses it on the board
    with pytest.raises(RuntimeFailure, match="CRC"):
        MpremoteRuntime(pico.port).replay(bytes(corrupt), [("P", None, [0, 0])])
    after = board_files(pico.port)
    assert after == before and not any(PRIVATE[1:] in line for line in after), after
    for name, data in mine.items():
        assert board_bytes(pico.port, name, tmp_path) == data
