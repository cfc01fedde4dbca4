# Replay a golden sequence on kbit under MicroPython, on every MicroPython runtime
# (tools/mpwasm/run.mjs, the unix port, the emulated Pico's tools/pico/run.mjs):
#
#   replay.py MODEL STEPS MEMOUT [TIMES]
#
# The model's type (byte 5 of the file) picks the learner: kbit.rkp.RKP or kbit.ckp.CKP; both
# have the same learn / score / predict / count / memory / mistake.
#
# STEPS holds one step a line: "L y c0 .. cM-1" (learn) or "Q c0 .. cM-1" (score only).
# Each line is parsed first; then the step runs under micropython.heap_lock(), so a replay also
# proves that score/predict/learn allocate nothing (an allocation raises MemoryError).
# Per step it prints "score pred mistake count"; after a mistake, and once at the end, it
# appends the support-vector memory to MEMOUT (binary: far cheaper than printing it).
# The first line printed says which path runs: "path native" or "path bytecode: why".
# With TIMES, each step's clock ticks (kbit.compat: cycles on the emulated Pico, else
# microseconds) go there, a line each, after a line "overhead N" (what the clock itself reads):
# around the learn or score call alone (a query's predict runs after the clock stops).
import sys

import micropython

from kbit.ckp import CKP
from kbit.compat import elapsed, overhead, path, ticks
from kbit.rkp import RKP

model_path, steps_path, mem_path = sys.argv[1:4]
times = [] if len(sys.argv) > 4 else None

# the lock must really lock, or the replay would prove nothing (the global exists before the
# lock: adding a name to the module's dict under the lock may need to grow it)
locked = False
micropython.heap_lock()
try:
    bytearray(1)
    locked = False
except MemoryError:
    locked = True
micropython.heap_unlock()
if not locked:
    raise SystemExit("micropython.heap_lock() does not stop allocations")

with open(model_path, "rb") as f:
    head = f.read(6)
Model = CKP if len(head) == 6 and head[5] == 2 else RKP
with open(model_path, "rb") as f:
    m = Model.load(f)
print("path", path(m, "ckp" if Model is CKP else "rkp"))
def replay(m, steps, out, times):
    """Every step under the heap lock; the clock (with TIMES) around the kbit call alone. In a
    function: its names are locals, so the replay's own code costs little beside the step."""
    u = bytearray(m.dims)
    M = m.dims
    multi = hasattr(m, "last_class")  # one-vs-rest (kbit.ovr): the class of the largest score
    lock = micropython.heap_lock
    unlock = micropython.heap_unlock
    for line in steps:
        f = line.split()
        if not f:
            continue
        learn = f[0] == "L"
        y = int(f[1]) if learn else 0
        k = 2 if learn else 1
        if len(f) != k + M:
            raise ValueError("step %r: expected %d codes" % (line, M))
        for j in range(M):
            u[j] = int(f[k + j])
        lock()
        try:
            if learn:
                t0 = ticks()
                s = m.learn(u, y)
                dt = elapsed(t0)
                mistake = m.mistake
                p = m.last_class if multi else 1 if s > 0 else 0
            else:
                t0 = ticks()
                s = m.score(u)
                dt = elapsed(t0)
                p = m.last_class if multi else 1 if s > 0 else 0  # the id, not a label
                mistake = False
        finally:
            unlock()
        if times is not None:
            times.append(dt)
        print(s, p, 1 if mistake else 0, m.count)
        if mistake:
            out.write(m.memory)
    out.write(m.memory)


with open(mem_path, "wb") as out:
    with open(steps_path) as steps:
        replay(m, steps, out, times)
if times is not None:
    with open(sys.argv[4], "w") as f:
        f.write("overhead %d\n%s\n" % (overhead(), "\n".join(map(str, times))))
