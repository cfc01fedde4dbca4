# Time m.quantize(raw, out) on kbit (the emulated Pico: cycles; elsewhere microseconds):
#
#   time_quant.py MODEL REPEAT
#
# MODEL has an integer quantizer; raw is an array("h") of its n readings spread over its bounds,
# out a preallocated bytearray (assoc: array("b")). Each call runs under micropython.heap_lock()
# (it must not allocate), natively and in bytecode (kbit.quant.use_native). Prints, per path,
# "codes ..." of the last call (both paths give the same, or the script stops), then
# "<path> m.quantize <unit> mean median max bound <...> q.quantize <...>".
import sys
from array import array

import micropython

import kbit
from kbit import quant
from kbit.compat import TICKS, elapsed, overhead, ticks

m = kbit.load(sys.argv[1])
repeat = int(sys.argv[2])
q = m.quantizer
n = q.n
raw = array("h", bytes(2 * n))
for j in range(n):
    lo, hi = q.t[3 * j], q.hi[j]  # t: lo, up, M of each feature in turn
    v = lo + (hi - lo) * ((j * 37) % 101) // 100 - 3 + j % 7
    raw[j] = max(-32768, min(32767, v))
out = array("b", bytes(n)) if q.off else bytearray(n)
base = overhead()


def timed(call):
    """The clock ticks of each of `repeat` calls, heap locked: call(raw, out), or with call None
    m.quantize(raw, out) as a user writes it (the method looked up on the model each call)."""
    times = []
    for _ in range(repeat):
        micropython.heap_lock()
        try:
            if call is None:
                t0 = ticks()
                m.quantize(raw, out)
                dt = elapsed(t0)
            else:
                t0 = ticks()
                call(raw, out)
                dt = elapsed(t0)
        finally:
            micropython.heap_unlock()
        times.append(max(0, dt - base))
    times.sort()
    return "%s %d %d %d" % (TICKS, sum(times) // len(times), times[len(times) // 2], times[-1])


seen = None
for native in (True, False):
    if quant.use_native(native) != native:
        print("bytecode only: %s" % quant.NATIVE_WHY)
        continue
    # m.quantize as a user writes it, the same bound once (f = m.quantize), and the
    # quantizer's own method
    line = ("native" if native else "bytecode", timed(None), timed(m.quantize),
            timed(q.quantize))
    codes = list(out)
    if seen is not None and codes != seen:
        raise SystemExit("native and bytecode codes differ: %r %r" % (seen, codes))
    seen = codes
    print("codes", " ".join(str(c) for c in codes))
    print("%s m.quantize %s bound %s q.quantize %s" % line)
quant.use_native(True)
