"""The native integer quantizer (firmware_c/natmod/quant.c, _kb_quant.mpy; issue 28) on the
unix port, and the native glue refusing what the bytecode refuses (a str is not codes).

Native and bytecode quantize the same readings to the same codes (random bounds and readings,
the edges of contract 1.1, int16 and int32 arrays, rounding, ckp's floor and assoc's signed
values), m.quantize(raw, out) runs natively with the heap locked, and every call the kernel does
not take (a list, no out, a wrong length or type, a reading outside -2^30 .. 2^30-1, a str)
raises the bytecode's exception type, nothing written."""
import numpy as np
import pytest

from conftest import need
from kilobit.runtimes.micropython import kbit_unix, natmod, rp2040_sim
from test_quant_c import MODELS, base_payload, frame, n_inputs, quant_section


@pytest.fixture(scope="module", params=["x64", "armv6m"])
def port(request):
    """The unix port with the x64 modules, and the emulated Pico with the armv6m ones, whose
    quantizer loops are kern_quant.c's assembly: (runtime, module files)."""
    if request.param == "x64":
        need(kbit_unix.missing() or natmod.missing("x64"))
        return kbit_unix, natmod.files("x64")
    need(rp2040_sim.missing() or natmod.missing("armv6m"))
    return rp2040_sim, natmod.files("armv6m")


def mp(tmp_path, code, port, models):
    """The output lines of a snippet on port (the fixture's); `models` ((board path, host path)
    each) are its arguments, sys.argv[1:]."""
    runtime, files = port
    script = tmp_path / "snippet.py"
    script.write_text(code)
    p = runtime.run([str(script)] + [at for at, _ in models], files=list(files) + models,
                    timeout=300)
    assert p.returncode == 0, p.stdout[-3000:] + p.stderr[-3000:]
    return p.stdout.splitlines()


def golden_model(name):
    """The host's model of the golden file of `name`."""
    return base_payload(name)[1]


def with_quantizer(name, lo, hi):
    """The golden model of `name` with an integer quantizer of bounds lo, hi (contract 4.1)."""
    mtype, _, payload = base_payload(name)
    return frame(mtype, payload + b"\x02" + quant_section(lo, hi))


def _rows(rng, lo, hi, k=40):
    n = len(lo)
    rows = [[int(rng.integers(lo[j] - 300, hi[j] + 300)) for j in range(n)] for _ in range(k)]
    rows.append(list(lo))
    rows.append(list(hi))
    rows.append([v + 1 for v in lo])
    rows.append([v - 1 for v in hi])
    return rows


SAME = r"""
import sys, micropython
from array import array
import kbit
from kbit import quant
assert quant.NATIVE_WHY is None, quant.NATIVE_WHY
for i, rows in enumerate(CASES):
    path = sys.argv[1 + i]
    m = kbit.load(path)
    q = m.quantizer
    n = q.n
    for tc in "hi":
        for row in rows:
            if tc == "h" and (min(row) < -32768 or max(row) > 32767):
                continue
            raw = array(tc, row)
            outs = []
            for native in (True, False):
                quant.use_native(native)
                out = array("b", bytes(n)) if q.off else bytearray(n)
                if native:
                    micropython.heap_lock()
                    try:
                        m.quantize(raw, out)
                        q.quantize(raw, out)
                    finally:
                        micropython.heap_unlock()
                else:
                    m.quantize(raw, out)
                outs.append(list(out))
            assert outs[0] == outs[1], (path, tc, row, outs)
            print(tc, " ".join(str(c) for c in outs[0]))
    quant.use_native(True)
print("done")
"""


def test_native_quantize_equals_bytecode_and_the_contract(port, tmp_path):
    from kilobit.core import quant as hq
    rng = np.random.default_rng(28)
    files, cases, want = [], [], []
    for name in sorted(MODELS):
        m = golden_model(name)
        n_in = n_inputs(m)
        bits = getattr(m, "bits", None) or m.in_bits
        lo = [int(v) for v in rng.integers(-20000, 20000, size=n_in)]
        hi = [v + int(s) for v, s in zip(lo, rng.integers(0, 9000, size=n_in))]
        hi[0] = lo[0]  # a constant feature
        path = tmp_path / ("%s.kb" % name)
        path.write_bytes(with_quantizer(name, lo, hi))
        files.append(("/%s.kb" % name, str(path)))
        rows = _rows(rng, lo, hi)
        cases.append(rows)
        q = hq.IntQuantizer(bits, floor=(name == "ckp"))
        assert q.set_bounds(lo, hi) is None
        codes = q.codes(np.array(rows))
        if name == "assoc":
            codes = codes - (1 << (bits - 1))
        for tc in "hi":
            for row, c in zip(rows, codes):
                if tc == "h" and (min(row) < -32768 or max(row) > 32767):
                    continue
                want.append("%s %s" % (tc, " ".join(str(int(v)) for v in c)))
    lines = mp(tmp_path, "CASES = %r\n" % cases + SAME, port, files)
    assert lines[-1] == "done"
    assert lines[:-1] == want


REFUSED = r"""
import sys
from array import array
import kbit
from kbit import quant, rkp, bonsai
m = kbit.load(sys.argv[1])
q = m.quantizer
n = q.n
good = array("h", [1] * n)


def outcome(f, *a):
    try:
        r = f(*a)
    except Exception as e:
        return type(e).__name__
    return "ok" if r is None or not isinstance(r, (bytes, bytearray, array)) else "ok " + \
        " ".join(str(c) for c in r)


def swapped(other):
    # m.quantize with m.quantizer replaced by other (m's own method, native, binds again)
    m.quantizer = other
    try:
        return m.quantize(array("h", range(n)), bytearray(n))
    finally:
        m.quantizer = q


calls = [
    ("list", lambda: m.quantize([1] * n, bytearray(n))),
    ("no out", lambda: m.quantize(good)),
    ("str raw", lambda: m.quantize("a" * n, bytearray(n))),
    ("bytes raw", lambda: m.quantize(b"\x01" * n, bytearray(n))),
    ("short raw", lambda: m.quantize(array("h", [1] * (n - 1)), bytearray(n))),
    ("short out", lambda: m.quantize(good, bytearray(n - 1))),
    ("bytes out", lambda: m.quantize(good, bytes(n))),
    ("signed out", lambda: m.quantize(good, array("b", bytes(n)))),
    # float(1), not a literal: the Pico's MicroPython has no floats (a NameError both ways)
    ("float raw", lambda: m.quantize(array("f", [float(1)] * n), bytearray(n))),
    ("wide", lambda: m.quantize(array("i", [1 << 30] + [0] * (n - 1)), bytearray(n))),
    ("wide low", lambda: m.quantize(array("i", [-(1 << 30) - 1] + [0] * (n - 1)), bytearray(n))),
    ("quantizer list", lambda: q.quantize([1] * n, bytearray(n))),
    ("out keyword", lambda: m.quantize(good, out=bytearray(n))),
    ("three args", lambda: m.quantize(good, bytearray(n), 1)),
    ("other quantizer", lambda: swapped(quant.Quantizer([0] * n, [9] * n, q.bits))),
    ("no quantizer", lambda: swapped(None)),
    ("quantizer str", lambda: q.quantize("a" * n, bytearray(n))),
    ("rkp learn str", lambda: m.learn("a" * m.dims, 1)),
    ("rkp score str", lambda: m.score("a" * m.dims)),
    ("rkp predict str", lambda: m.predict("a" * m.dims)),
]
b = kbit.load(sys.argv[2])
calls.append(("bonsai update_run str", lambda: b.update_run(0, "z" * b.dims)))
a = kbit.load(sys.argv[3])
calls.append(("assoc predict str", lambda: a.predict("a" * a.T)))
for native in (True, False):
    print("native", quant.use_native(native), rkp.use_native(native),
          bonsai.use_native(native))
    before = bytes(m.memory)
    for what, f in calls:
        out = outcome(f)
        print(what, out)
    assert bytes(m.memory) == before
    b.reset()
"""


def test_native_calls_refuse_what_bytecode_refuses(port, tmp_path):
    """Each call once natively, once in bytecode: the same outcome (exception type, or the same
    codes), the model unchanged; a str is never taken as codes (RKP.learn("a", 1) used to learn
    code 97 natively)."""
    files = []
    for name in ("rkp", "bonsai", "assoc"):
        n = n_inputs(golden_model(name))
        path = tmp_path / ("%s.kb" % name)
        path.write_bytes(with_quantizer(name, [-100] * n, [100] * n))
        files.append(("/%s.kb" % name, str(path)))
    lines = mp(tmp_path, REFUSED, port, files)
    half = len(lines) // 2
    native, byte = lines[:half], lines[half:]
    assert native[0] == "native True True True" and byte[0] == "native False False False"
    native, byte = native[1:], byte[1:]
    assert native == byte
    for what in ("str raw", "quantizer str", "rkp learn str", "rkp score str",
                 "rkp predict str", "bonsai update_run str", "assoc predict str"):
        assert what + " TypeError" in native, (what, native)
    for what in ("wide", "wide low", "short raw", "short out", "bytes out", "signed out"):
        assert what + " ValueError" in native, (what, native)
    assert "three args TypeError" in native and "no quantizer ValueError" in native
    assert any(line.startswith("other quantizer ok ") for line in native)
    assert any(line.startswith("list ok ") for line in native)
    assert any(line.startswith("no out ok ") for line in native)
