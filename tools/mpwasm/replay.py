# Replay a golden sequence on kbit under MicroPython (run by tools/mpwasm/run.mjs):
#
#   replay.py MODEL STEPS MEMOUT
#
# The model's type (byte 5 of the file) picks the learner: kbit.rkp.RKP or kbit.ckp.CKP; both
# have the same learn / score / predict / count / memory / mistake.
#
# STEPS holds one step a line: "L y c0 .. cM-1" (learn) or "Q c0 .. cM-1" (score only).
# Each line is parsed first; then the step runs under micropython.heap_lock(), so a replay also
# proves that score/predict/learn allocate nothing (an allocation raises MemoryError).
# Per step it prints "score pred mistake count"; after a mistake, and once at the end, it
# appends the support-vector memory to MEMOUT (binary: far cheaper than printing it).
import sys

import micropython

from kbit.ckp import CKP
from kbit.rkp import RKP

model_path, steps_path, mem_path = sys.argv[1:4]

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
u = bytearray(m.dims)
M = m.dims
lock = micropython.heap_lock
unlock = micropython.heap_unlock
s = p = mistake = 0
with open(mem_path, "wb") as out:
    with open(steps_path) as steps:
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
                    s = m.learn(u, y)
                    mistake = m.mistake
                    p = 1 if s > 0 else 0
                else:
                    s = m.score(u)
                    p = m.predict(u)
                    mistake = False
            finally:
                unlock()
            print(s, p, 1 if mistake else 0, m.count)
            if mistake:
                out.write(m.memory)
    out.write(m.memory)
