# Replay a golden sequence on kbit.assoc under MicroPython, on every MicroPython runtime
# (tools/mpwasm/run.mjs, the unix port, the emulated Pico's tools/pico/run.mjs):
#
#   replay_assoc.py MODEL STEPS MEMOUT [TIMES]
#
# STEPS holds one step a line: "L y v0 .. vT-1" (learn label y) or "Q v0 .. vT-1" (predict),
# the values int8. Each line is parsed first; then the step runs under micropython.heap_lock(),
# so a replay also proves that predict/learn allocate nothing (an allocation raises MemoryError).
# Per step it prints "pred count classes anchors learnt"; after a learning step, and once at the
# end, it appends the memory (labels, na, anchors, connections) to MEMOUT, in binary.
# The first line printed says which path runs: "path native" or "path bytecode: why".
# With TIMES, each step's clock ticks go there as in replay.py (kilobit bench rp2040).
import sys
from array import array

import micropython

from kbit.assoc import Assoc
from kbit.compat import elapsed, overhead, path, ticks

model_path, steps_path, mem_path = sys.argv[1:4]
times = [] if len(sys.argv) > 4 else None

# The lock must really lock, or the replay would prove nothing. `locked` exists before the lock:
# binding a new global under the lock grows the globals dict, and this build then hangs.
locked = False
micropython.heap_lock()
try:
    bytearray(1)
except MemoryError:
    locked = True
micropython.heap_unlock()
if not locked:
    raise SystemExit("micropython.heap_lock() does not stop allocations")

with open(model_path, "rb") as f:
    m = Assoc.load(f)
print("path", path(m, "assoc"))
def replay(m, steps, out, times):
    """Every step under the heap lock; the clock (with TIMES) around the kbit call alone; in a
    function, so the replay's own names are cheap locals."""
    T = m.T
    u = array("b", bytes(T))
    lock = micropython.heap_lock
    unlock = micropython.heap_unlock
    for line in steps:
        f = line.split()
        if not f:
            continue
        learn = f[0] == "L"
        y = int(f[1]) if learn else 0
        k = 2 if learn else 1
        if len(f) != k + T:
            raise ValueError("step %r: expected %d values" % (line, T))
        for j in range(T):
            u[j] = int(f[k + j])
        if learn and m.slot(y) < 0 and m.nc == m.cap:
            raise ValueError("class capacity full")
        lock()
        try:
            t0 = ticks()
            if learn:
                pred = m._learn(u, y)
            else:
                pred = m._predict(u)
            dt = elapsed(t0)
        finally:
            unlock()
        if times is not None:
            times.append(dt)
        print(pred, m.count, m.nc, m.stored(), 1 if learn else 0)
        if learn:
            dump(m, out)
    dump(m, out)


def dump(m, out):
    out.write(m.labels)
    out.write(m.nf)
    out.write(m.anchors)
    out.write(m.conn)


with open(mem_path, "wb") as out:
    with open(steps_path) as steps:
        replay(m, steps, out, times)
if times is not None:
    with open(sys.argv[4], "w") as f:
        f.write("overhead %d\n%s\n" % (overhead(), "\n".join(map(str, times))))
