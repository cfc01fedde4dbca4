# Replay a predictor's golden steps on kbit under MicroPython, on every MicroPython runtime
# (tools/mpwasm/run.mjs, the unix port, the emulated Pico's tools/pico/run.mjs):
#
#   replay_predict.py [--each] MODEL STEPS [TIMES]
#
# STEPS holds one step a line: "P x0 .. xD-1". Each line is parsed first; then the input goes in
# with one m.update_run(0, codes) (--each: D calls m.update(j, c), a feature at a time) and the
# prediction runs, both under micropython.heap_lock(), so a replay also proves that update_run
# (update) and predict allocate nothing (an allocation raises MemoryError). Per step it prints
# the golden fields: Bonsai P[0..d-1], leaf, scores[0..L-1], prediction; ProtoNN P, D[0..m-1],
# k[0..m-1], scores, prediction (the registry's kbit_fields, kilobit.models.<name>).
# The first line printed says which path runs: "path native" or "path bytecode: why".
# With TIMES, each step's clock ticks go there as in replay.py (kilobit bench rp2040).
import sys

import micropython

from kbit.bonsai import Bonsai
from kbit.compat import elapsed, overhead, path, ticks
from kbit.protonn import ProtoNN

args = sys.argv[1:]
each = args[:1] == ["--each"]
if each:
    args = args[1:]
model_path, steps_path = args[:2]
times = [] if len(args) > 2 else None

locked = False
micropython.heap_lock()
try:
    # the list is the probe, kept for its allocation alone (a bytearray here can hang this
    # WebAssembly build while the heap is locked)
    [0]  # noqa: B018
except MemoryError:
    locked = True
micropython.heap_unlock()
if not locked:
    raise SystemExit("micropython.heap_lock() does not stop allocations")

with open(model_path, "rb") as f:
    mtype = f.read(6)[5]
with open(model_path, "rb") as f:
    m = (ProtoNN if mtype == 4 else Bonsai).load(f)
print("path", path(m, "protonn" if mtype == 4 else "bonsai"))
def replay(m, steps, times, each):
    """Every input under the heap lock; the clock (with TIMES) around its updates and the
    prediction; in a function, so the replay's own names are cheap locals."""
    fields = [m.P, m.D, m.k, m.scores] if mtype == 4 else [m.P, m.leaf, m.scores]
    D = m.dims
    u = bytearray(D)
    lock = micropython.heap_lock
    unlock = micropython.heap_unlock
    update = m.update
    update_run = m.update_run
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
            t0 = ticks()
            if each:
                for j in range(D):
                    update(j, u[j])
            else:
                update_run(0, u)
            p = m._predict_id()  # the class id: predict() answers the file's label
            dt = elapsed(t0)
        finally:
            unlock()
        if times is not None:
            times.append(dt)
        if mtype != 4:
            fields[1] = m.leaf
        print(" ".join(str(v) if isinstance(v, int) else " ".join(str(x) for x in v)
                       for v in fields), p)


with open(steps_path) as steps:
    replay(m, steps, times, each)
if times is not None:
    with open(args[2], "w") as f:
        f.write("overhead %d\n%s\n" % (overhead(), "\n".join(map(str, times))))
