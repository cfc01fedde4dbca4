# Replay a features golden file's windows on kbit (docs/contract.md 12, 12.1, 13), on every
# MicroPython runtime (tools/mpwasm/run.mjs, the unix port, the emulated Pico's tools/pico/run.mjs):
#
#   replay_features.py SELECTIONS WINDOWS [TIMES]
#
# SELECTIONS holds a line "axes n mask p bands count" per golden file (the runtimes' replay
# scripts all take a model file first: here the selections stand in its place, several files
# in one run, as a board's start-up costs more than a file's windows); WINDOWS holds their
# windows one a line, axes*n readings, file after file. One kbit.features.Extractor is made per
# selection; each window is parsed into one preallocated array("h") and Extractor.run runs under
# micropython.heap_lock(), so a replay also proves that extracting allocates nothing. Per window
# it prints the features. The first line says which path ran: "path native" or "path bytecode:
# why". With TIMES, each window's clock ticks go there as in replay.py.
import sys
from array import array

import micropython

from kbit import features
from kbit.compat import elapsed, overhead, ticks

args = sys.argv[1:]
times = [] if len(args) > 2 else None
with open(args[0]) as f:
    jobs = [[int(v) for v in line.split()] for line in f if line.strip()]
print("path", "native" if getattr(features, "native", False) else
      "bytecode: %s" % (getattr(features, "NATIVE_WHY", None) or "no native features module"))


def replay(ex, lines, count, times):
    """`count` windows of `lines` through `ex`; in a function, so its names are cheap locals."""
    size = ex.axes * ex.n
    w = array("h", bytes(2 * size))
    run = ex.run
    lock = micropython.heap_lock
    unlock = micropython.heap_unlock
    for _ in range(count):
        f = lines.readline().split()
        if len(f) != size:
            raise ValueError("a window of %d readings, expected %d" % (len(f), size))
        for j in range(size):
            w[j] = int(f[j])
        lock()
        try:
            t0 = ticks()
            out = run(w)
            dt = elapsed(t0)
        finally:
            unlock()
        if times is not None:
            times.append(dt)
        print(" ".join(str(v) for v in out))


with open(args[1]) as f:
    for axes, n, mask, p, bands, count in jobs:
        replay(features.Extractor(axes, n, mask, p, bands), f, count, times)
if times is not None:
    with open(args[2], "w") as f:
        f.write("overhead %d\n%s\n" % (overhead(), "\n".join(map(str, times))))
