# Replay a predictor's golden steps on kbit under MicroPython (run by tools/mpwasm/run.mjs):
#
#   replay_predict.py MODEL STEPS
#
# STEPS holds one step a line: "P x0 .. xD-1". Each line is parsed first; then the D updates and
# the prediction run under micropython.heap_lock(), so a replay also proves that update and
# predict allocate nothing (an allocation raises MemoryError). Per step it prints the golden
# fields: for Bonsai P[0..d-1], leaf, scores[0..L-1], prediction.
import sys

import micropython

from kbit.bonsai import Bonsai

model_path, steps_path = sys.argv[1:3]

locked = False
micropython.heap_lock()
try:
    [0]  # (a bytearray here can hang this WebAssembly build while the heap is locked)
except MemoryError:
    locked = True
micropython.heap_unlock()
if not locked:
    raise SystemExit("micropython.heap_lock() does not stop allocations")

with open(model_path, "rb") as f:
    m = Bonsai.load(f)
D = m.dims
u = bytearray(D)
lock = micropython.heap_lock
unlock = micropython.heap_unlock
p = 0
with open(steps_path) as steps:
    for line in steps:
        f = line.split()
        if not f:
            continue
        if f[0] != "P" or len(f) != D + 1:
            raise ValueError("step %r: expected P and %d codes" % (line, D))
        for j in range(D):
            u[j] = int(f[1 + j])
        lock()
        try:
            for j in range(D):
                m.update(j, u[j])
            p = m.predict()
        finally:
            unlock()
        print(" ".join(str(v) for v in m.P), m.leaf, " ".join(str(v) for v in m.scores), p)
