# Time a learner's learning steps on kbit under MicroPython, native kernel or bytecode:
#
#   bench.py MODEL STEPS [bytecode] [REPS]
#
# MODEL is an rkp or ckp .kb file, STEPS a golden file's steps ("L y c.." / "Q c.."; only the
# "L" steps run). Each of REPS rounds (default 20) loads the model afresh and runs every
# learning step, under micropython.heap_lock() as a whole; the line printed is
# "<path> <steps> <best round's microseconds>", path being "native" or "bytecode".
import sys
import time

import micropython


def main(model_path, steps_path, flags):
    if "bytecode" in flags:
        import kbit.compat
        kbit.compat.NATIVE = False
    reps = int(flags[-1]) if flags and flags[-1].isdigit() else 20
    with open(model_path, "rb") as f:
        data = f.read()
    if data[5] == 2:
        from kbit.ckp import CKP as cls
    else:
        from kbit.rkp import RKP as cls
    steps = []
    with open(steps_path) as f:
        for line in f:
            w = line.split()
            if w and w[0] == "L":
                steps.append((int(w[1]), bytearray(int(x) for x in w[2:])))
    best = 0
    native = False
    for _ in range(reps):
        m = cls.load(data)
        native = m.native
        t0 = time.ticks_us()
        micropython.heap_lock()
        for y, u in steps:
            m.learn(u, y)
        micropython.heap_unlock()
        dt = time.ticks_diff(time.ticks_us(), t0)
        if not best or dt < best:
            best = dt
    print("native" if native else "bytecode", len(steps), best)


main(sys.argv[1], sys.argv[2], sys.argv[3:])
