"""What kbit needs from `micropython`, with stand-ins where it is missing.

`const`: MicroPython's compiler folds `X = const(1)` by the name alone, so importing it from here
keeps the folding; CPython gets the identity function. `lock`/`unlock`: `micropython.heap_lock`
and `heap_unlock` where the port has them (not CPython, not CircuitPython), else no-ops. The hot
paths of every model lock the heap around themselves: see docs/toolchain-notes.md for why.
"""
try:
    from micropython import const
except ImportError:  # CPython

    def const(x):
        return x


try:
    from micropython import heap_lock as lock, heap_unlock as unlock
except ImportError:  # CPython, CircuitPython

    def lock():
        pass

    unlock = lock


# `ticks()` and `elapsed(t0)`: a clock for timing a step, allocation-free (small ints). On the
# emulated Pico (tools/pico) the core's cycle counter (kbemu.cycles(), 30 bits); elsewhere
# microseconds. TICKS names the unit.
try:
    from kbemu import cycles as ticks

    TICKS = "cycles"

    def elapsed(t0):
        return (ticks() - t0) & 0x3FFFFFFF

except ImportError:
    try:
        from time import ticks_us as ticks, ticks_diff

        TICKS = "us"

        def elapsed(t0):
            return ticks_diff(ticks(), t0)

    except ImportError:  # CPython
        from time import perf_counter_ns

        TICKS = "us"

        def ticks():
            return perf_counter_ns() // 1000

        def elapsed(t0):
            return ticks() - t0


def overhead():
    """What `elapsed(ticks())` reads with nothing between: subtract it from a timed step."""
    best = 1 << 29
    for _ in range(8):
        t0 = ticks()
        dt = elapsed(t0)
        if dt < best:
            best = dt
    return best
