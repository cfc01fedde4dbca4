"""The native window features (firmware_c/natmod/features.c, _kb_features.mpy; issue 29) on the
unix port (x64) and on the emulated Pico (armv6m).

kbit.features.features(window, axes, out) and Extractor.run(window) run natively with the heap
locked and give the bytecode's integers, which are the host's (kilobit.core.features): seeded
random windows and the edges of contract 12 (constant, +/-32768 extremes, spikes, N = 1, N =
256), for the time domain and for selections with FFT bands. The fallback hooks are replaced by
a function that raises while the native path is timed, so a call the kernel silently handed back
to the bytecode fails the test. Every call the kernel does not take (a list, an array("i"), a
wrong length or type, a bool for axes, keywords) raises the bytecode's exception type, with
nothing written."""
import numpy as np
import pytest

from conftest import need
from kilobit.core import features as hf
from kilobit.runtimes.micropython import kbit_unix, natmod, rp2040_sim


@pytest.fixture(scope="module", params=["x64", "armv6m"])
def port(request):
    """(runtime, module files): the unix port with the x64 modules, the emulated Pico with the
    armv6m ones."""
    if request.param == "x64":
        need(kbit_unix.missing() or natmod.missing("x64"))
        return kbit_unix, natmod.files("x64")
    need(rp2040_sim.missing() or natmod.missing("armv6m"))
    return rp2040_sim, natmod.files("armv6m")


def mp(tmp_path, code, port, cases=None):
    """The output lines of a snippet on port; `cases`, when given, go to the board as the module
    cases.py (CASES), which the snippet imports after kbit: the Pico's 192 KiB heap then holds
    the native module before the windows."""
    runtime, files = port
    script = tmp_path / "snippet.py"
    script.write_text(code)
    files = list(files)
    if cases is not None:
        (tmp_path / "cases.py").write_text("CASES = %r\n" % (cases,))
        files.append(("/cases.py", str(tmp_path / "cases.py")))
    p = runtime.run([str(script)], files=files, timeout=600)
    assert p.returncode == 0, p.stdout[-3000:] + p.stderr[-3000:]
    return p.stdout.splitlines()


def windows(rng, axes, n, count):
    """count windows of axes x n readings, interleaved: the edges first, then random ones of
    random amplitude (a sensor's readings rarely span the whole int16 range)."""
    size = axes * n
    rows = [[0] * size, [-32768] * size, [32767] * size,
            [(-32768, 32767)[i % 2] for i in range(size)],
            [5000 if i == size // 2 else -3 for i in range(size)]]
    while len(rows) < count:
        amp = int(rng.choice([2, 300, 9000, 32767]))
        w = rng.integers(-amp, amp + 1, size=size)
        rows.append([int(max(-32768, min(32767, v))) for v in w])
    return rows


#: (axes, n, selection text): the time domain, subsets, and bands of every FFT size
CASES = [(1, 1, "time"), (3, 100, "time"), (2, 256, "time"), (4, 37, "time"),
         (3, 100, "mean,energy,cross"), (3, 64, "fft64:8"), (3, 100, "time,fft64:8"),
         (3, 128, "mad,fft128:8"), (2, 256, "fft256:16"), (1, 32, "max,fft32:1")]

SAME = r"""
import micropython
from array import array
from kbit import features as kf
from cases import CASES

assert kf.NATIVE_WHY is None, kf.NATIVE_WHY
nat = kf._nat
run_py, features_py = nat.run_py, nat.features_py


def boom(*a, **k):
    raise RuntimeError("the native kernel handed this call to the bytecode")


def call(native, e, w, t):
    # the native path with the heap locked and no way back to the bytecode; the bytecode's
    # own argument checks allocate (it locks the heap around its loops only). Called without
    # *args: unpacking them allocates.
    kf.use_native(native)
    if not native:
        return list(e.run(w) if t is None else kf.features(w, e.axes, t))
    nat.run_py = nat.features_py = boom
    micropython.heap_lock()
    try:
        if t is None:
            r = e.run(w)
        else:
            r = kf.features(w, e.axes, t)
    finally:
        micropython.heap_unlock()
        nat.run_py, nat.features_py = run_py, features_py
    return list(r)


for axes, n, mask, p, bands, rows in CASES:
    e = kf.Extractor(axes, n, mask, p, bands)
    t = array("i", bytes(28 * axes))
    for row in rows:
        w = array("h", row)
        got = []
        for native in (True, False):
            got.append(call(native, e, w, None))
            if mask == 0x7F and p == 0:
                got.append(call(native, e, w, t))
        assert all(g == got[0] for g in got), (axes, n, row, got)
        print(" ".join(str(v) for v in got[0]))
kf.use_native(True)
print("done")
"""


def test_native_equals_bytecode_and_the_host(port, tmp_path):
    rng = np.random.default_rng(29)
    cases, want = [], []
    for axes, n, text in CASES:
        spec = hf.Spec.parse(text)
        rows = windows(rng, axes, n, 7)
        cases.append((axes, n, spec.mask, spec.p, spec.bands, rows))
        for v in hf.extract(np.array(rows), axes, spec):
            want.append(" ".join(str(int(x)) for x in v))
    lines = mp(tmp_path, SAME, port, cases)
    assert lines[-1] == "done"
    assert lines[:-1] == want


REFUSED = r"""
from array import array
from kbit import features as kf

e = kf.Extractor(3, 10)
good = array("h", range(30))


def outcome(f, *a, **k):
    out = e.out
    before = list(out)
    try:
        r = f(*a, **k)
    except Exception as x:
        assert list(out) == before, "written before refusing"
        return type(x).__name__
    return "ok " + " ".join(str(v) for v in r)


t = array("i", bytes(84))
calls = [
    ("list", lambda: e.run(list(range(30)))),
    ("int32 window", lambda: e.run(array("i", range(30)))),
    ("int32 beyond int16", lambda: e.run(array("i", [40000] + [0] * 29))),
    ("short", lambda: e.run(array("h", range(29)))),
    ("bytes", lambda: e.run(bytes(30))),
    ("str", lambda: e.run("a" * 30)),
    ("unsigned", lambda: e.run(array("H", [65535] * 30))),
    ("no window", lambda: e.run()),
    ("keyword", lambda: e.run(window=good)),
    ("two windows", lambda: e.run(good, good)),
    ("features list", lambda: kf.features(list(range(30)), 3, t)),
    ("features int32", lambda: kf.features(array("i", range(30)), 3, t)),
    ("features bool axes", lambda: kf.features(array("h", range(30)), True, t)),
    ("features 0 axes", lambda: kf.features(array("h", range(30)), 0, t)),
    ("features ragged", lambda: kf.features(array("h", range(31)), 3, t)),
    ("features short out", lambda: kf.features(good, 3, array("i", bytes(80)))),
    ("features out h", lambda: kf.features(good, 3, array("h", bytes(42)))),
    ("features out list", lambda: kf.features(good, 3, [0] * 21)),
    ("features 257", lambda: kf.features(array("h", bytes(514)), 1, array("i", bytes(28)))),
]
for native in (True, False):
    print("native", kf.use_native(native))
    for what, f in calls:
        print("%s: %s" % (what, outcome(f)))
kf.use_native(True)
# the context follows the extractor: a new out is written, a selection the contract refuses
# is a ValueError at the next call
e.out = array("i", bytes(84))
print("new out", e.run(good) is e.out, e.out[0])
e.mask = 0x80
print("bad mask", outcome(e.run, good))
"""


def test_native_calls_refuse_what_bytecode_refuses(port, tmp_path):
    lines = mp(tmp_path, REFUSED, port)
    assert lines[0] == "native True", lines
    k = lines.index("native False")
    native, byte = lines[1:k], lines[k + 1:2 * k]
    assert native == byte
    said = dict(line.split(": ", 1) for line in byte)
    # what the kernel hands back and the bytecode takes: the same features
    assert said["list"].startswith("ok ")
    assert said["list"] == said["int32 window"] == said["features list"] == \
        said["features int32"] == said["keyword"]
    for what in ("int32 beyond int16", "short", "features bool axes", "features 0 axes",
                 "features ragged", "features short out", "features 257"):
        assert said[what] == "ValueError", (what, said[what])
    for what in ("str", "features out h", "features out list", "no window", "two windows"):
        assert said[what] == "TypeError", (what, said[what])
    assert lines[2 * k:] == ["new out True 14", "bad mask ValueError"], lines
