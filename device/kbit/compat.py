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
