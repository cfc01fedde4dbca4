# Time kbit.features on kbit (the emulated Pico: cycles; elsewhere microseconds):
#
#   time_features.py REPEAT          with bench_cases.py beside it: CASES, a list of
#                                    (label, axes, n, mask, p, bands, window), and PEERS, a list
#                                    of (P, bands, window, m, tab) for emlearn's FFT
#
# For each case, Extractor(axes, n, mask, p, bands).run(window) (an array("h")) natively, then in
# bytecode (kbit.features.use_native); the time-domain selection (mask 0x7F, p 0) also
# features(window, axes, out), as a user of the plain function calls it. The native calls run
# under micropython.heap_lock() (they must not allocate); the bytecode checks its arguments
# before locking the heap itself. Prints "path <native|bytecode: why>", then per case and call
# "<label> <call> out <features...>" once and "<label> <call> <path> <unit> mean median max";
# stops when the two paths' features differ.
#
# PEERS (when the native module _eml_fft, tools/pico/eml_natmod, is installed): one axis of P
# readings, kbit's Extractor(1, P, 0, p, bands).run natively beside _eml_fft.bands(window, m,
# tab, re, im, out) (emlearn's float FFT and band powers; tab its float32 twiddles as bytes),
# both under heap_lock: "peer <P> kbit out ...", "peer <P> eml out <float32 bits...>", then
# "peer <P> <kbit|eml> <unit> mean median max".
import sys
from array import array

import micropython
from bench_cases import CASES, PEERS

from kbit import features as kf
from kbit.compat import TICKS, elapsed, overhead, ticks

repeat = int(sys.argv[1])
base = overhead()
print("path %s" % ("native" if kf.NATIVE_WHY is None else "bytecode: %s" % kf.NATIVE_WHY))


def timed(native, e, w, t):
    """mean, median and max ticks of `repeat` calls: e.run(w), or features(w, axes, t)."""
    times = []
    for _ in range(repeat):
        if native:
            micropython.heap_lock()
        try:
            if t is None:
                t0 = ticks()
                e.run(w)
                dt = elapsed(t0)
            else:
                t0 = ticks()
                kf.features(w, e.axes, t)
                dt = elapsed(t0)
        finally:
            if native:
                micropython.heap_unlock()
        times.append(max(0, dt - base))
    times.sort()
    return "%s %d %d %d" % (TICKS, sum(times) // len(times), times[len(times) // 2], times[-1])


for label, axes, n, mask, p, bands, window in CASES:
    e = kf.Extractor(axes, n, mask, p, bands)
    w = array("h", window)
    t = array("i", bytes(28 * axes))
    calls = (("run", None), ("features", t)) if mask == 0x7F and not p else (("run", None),)
    for call, out in calls:
        seen = None
        for native in (True, False):
            if kf.use_native(native) != native:
                continue
            line = timed(native, e, w, out)
            got = list(e.out if out is None else out)
            if seen is None:
                print("%s %s out %s" % (label, call, " ".join(str(v) for v in got)))
            elif got != seen:
                raise SystemExit("%s: native and bytecode features differ" % label)
            seen = got
            print("%s %s %s %s" % (label, call, "native" if native else "bytecode", line))
kf.use_native(True)

try:
    import _eml_fft
except ImportError:
    _eml_fft = None
for P, bands, window, m, tab in PEERS if _eml_fft else ():
    p = 0
    while 1 << p < P:
        p += 1
    e = kf.Extractor(1, P, 0, p, bands)
    w = array("h", window)
    re = bytearray(4 * P)
    im = bytearray(4 * P)
    out = array("i", bytes(4 * bands))
    for who in ("kbit", "eml"):
        times = []
        for _ in range(repeat):
            micropython.heap_lock()
            try:
                if who == "kbit":
                    t0 = ticks()
                    e.run(w)
                    dt = elapsed(t0)
                else:
                    t0 = ticks()
                    _eml_fft.bands(w, m, tab, re, im, out)
                    dt = elapsed(t0)
            finally:
                micropython.heap_unlock()
            times.append(max(0, dt - base))
        times.sort()
        got = e.out if who == "kbit" else out
        print("peer %d %s out %s" % (P, who, " ".join(str(v) for v in got)))
        print("peer %d %s %s %d %d %d" % (P, who, TICKS, sum(times) // len(times),
                                          times[len(times) // 2], times[-1]))
