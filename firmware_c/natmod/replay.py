# Replay a golden file's steps on kbit under MicroPython, through the native kernels or the
# bytecode (the variant of tools/replay/replay*.py that tests/test_natmod.py runs):
#
#   replay.py MODEL STEPS MEMOUT [bytecode] [time]
#
# `bytecode` sets kbit.compat.NATIVE = False before kbit's model modules are imported, so the
# same port runs both paths. The first output line is "path native" or "path bytecode <why>",
# from the model (`native`) and its module (NATIVE_WHY; "(this model)" when only this model runs
# bytecode: a Bonsai of more classes than the native kernel holds). Then one line per step, the
# golden fields: a learner (rkp, ckp; steps "L y c.." / "Q c..") prints "score pred mistake
# count", a predictor (bonsai, protonn; "P c..") its kbit_fields and the prediction, assoc
# ("L y v.." / "Q v..") "pred count classes anchors". After every step of a learner or assoc,
# MEMOUT gets its memory (as the golden files lay it out), so the test checks every step's CRC.
# Each step -- the updates and predict of a predictor included -- runs under
# micropython.heap_lock(): an allocation raises MemoryError. With `time`, each line ends with
# the step's time in microseconds (time.ticks_us around the locked call).
import sys
from array import array

import micropython
import time

LEARNER, PREDICTOR, CLASSES = 0, 1, 2


def lock_is_real():
    micropython.heap_lock()
    try:
        [0]
        ok = False
    except MemoryError:
        ok = True
    micropython.heap_unlock()
    return ok


def main(model_path, steps_path, mem_path, flags):
    if not lock_is_real():
        raise SystemExit("micropython.heap_lock() does not stop allocations")
    if "bytecode" in flags:
        import kbit.compat
        kbit.compat.NATIVE = False
    timed = "time" in flags
    with open(model_path, "rb") as f:
        mtype = f.read(6)[5]
    if mtype == 1:
        import kbit.rkp as mod
        cls, kind = mod.RKP, LEARNER
    elif mtype == 2:
        import kbit.ckp as mod
        cls, kind = mod.CKP, LEARNER
    elif mtype == 3:
        import kbit.bonsai as mod
        cls, kind = mod.Bonsai, PREDICTOR
    elif mtype == 4:
        import kbit.protonn as mod
        cls, kind = mod.ProtoNN, PREDICTOR
    else:
        import kbit.assoc as mod
        cls, kind = mod.Assoc, CLASSES
    with open(model_path, "rb") as f:
        m = cls.load(f)
    print("path native" if m.native else "path bytecode %s" % (mod.NATIVE_WHY or "(this model)"))
    if kind == CLASSES:
        n = m.T
        u = array("b", bytes(n))
    else:
        n = m.dims
        u = bytearray(n)
    if kind == PREDICTOR:
        fields = [m.P, m.D, m.k, m.scores] if mtype == 4 else [m.P, 0, m.scores]
    lock = micropython.heap_lock
    unlock = micropython.heap_unlock
    ticks = time.ticks_us
    diff = time.ticks_diff
    r = 0
    mistake = False
    out = open(mem_path, "wb")
    with open(steps_path) as steps:
        for line in steps:
            f = line.split()
            if not f:
                continue
            learn = f[0] == "L"
            y = int(f[1]) if learn else 0
            k = 2 if learn else 1
            if len(f) != k + n:
                raise ValueError("step %r: expected %d values" % (line, n))
            for j in range(n):
                u[j] = int(f[k + j])
            if kind == CLASSES and learn and m.slot(y) < 0 and m.nc == m.cap:
                raise ValueError("class capacity full")
            t0 = ticks()
            lock()
            try:
                if kind == PREDICTOR:
                    for j in range(n):
                        m.update(j, u[j])
                    r = m.predict()
                elif kind == CLASSES:
                    r = m.learn(u, y) if learn else m.predict(u)
                elif learn:
                    r = m.learn(u, y)
                    mistake = m.mistake
                else:
                    r = m.score(u)
                    mistake = False
            finally:
                unlock()
            dt = diff(ticks(), t0)
            if kind == PREDICTOR:
                if mtype != 4:
                    fields[1] = m.leaf
                row = " ".join(str(v) if isinstance(v, int) else " ".join(str(x) for x in v)
                               for v in fields) + " %d" % r
            elif kind == CLASSES:
                row = "%d %d %d %d" % (r, m.count, m.nc, m.stored())
                out.write(m.labels)
                out.write(m.nf)
                out.write(m.anchors)
                out.write(m.conn)
            else:
                row = "%d %d %d %d" % (r, 1 if r > 0 else 0, 1 if mistake else 0, m.count)
                out.write(m.memory)
            print(row + (" %d" % dt if timed else ""))
    out.close()


main(sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:])
