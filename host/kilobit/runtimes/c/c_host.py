"""The C runtime (firmware_c/kb_rkp.h) compiled for the host and driven through kb_replay.

The same header runs on the AVR chips; replaying it here checks its arithmetic against the
integer reference at host speed, on any configuration, without a board.
"""
import os
import shutil
import subprocess
import tempfile

from kilobit.runtimes import kinds
from kilobit.runtimes.base import Runtime, RuntimeFailure
from kilobit.runtimes.c.build import BUILD, FIRMWARE, build  # noqa: F401


def format_steps(steps):
    lines = []
    for op, y, codes in steps:
        head = "L %d" % y if op == "L" else "Q"
        lines.append(" ".join([head] + [str(int(c)) for c in codes]))
    return "".join(line + "\n" for line in lines)


def parse_output(text, nsteps):
    """kb_replay's stdout -> the Runtime tuples (score, pred, mistake, count, mem or None)."""
    lines = text.splitlines()
    if len(lines) != nsteps + 1 or not lines[-1].startswith("END "):
        raise RuntimeFailure("kb_replay printed %d lines for %d steps" % (len(lines), nsteps))
    out = []
    for i, line in enumerate(lines[:-1]):
        f = line.split()
        if len(f) not in (4, 5):
            raise RuntimeFailure("kb_replay step %d: cannot parse %r" % (i + 1, line[:80]))
        mem = bytes.fromhex(f[4]) if len(f) == 5 else None
        out.append((int(f[0]), int(f[1]), int(f[2]), int(f[3]), mem))
    if out:
        out[-1] = out[-1][:4] + (bytes.fromhex(lines[-1][4:]),)
    return out


class CHostRuntime(Runtime):
    name = "c-host"
    program = "kb_replay"
    raw = False
    replays_raw = True  # the tools' -r: golden steps of raw readings, quantized in C
    replays_raw = True

    def missing(self):
        absent = [tool for tool in ("gcc", "make") if shutil.which(tool) is None]
        return "%s not found" % " and ".join(absent) if absent else None

    def replay(self, model, steps, raw=False):
        """`raw`: each step's values are raw integer readings (a golden case with "raw": true),
        which the tools quantize with the model's own integer quantizer first (their -r)."""
        self.raw = raw
        return super().replay(model, steps)

    def replay_predictor(self, model, steps):
        return kinds.c_predictor(model, kinds.predictor_inputs(steps), self.raw)

    def replay_features(self, windows, axes, n, mask, p, bands):
        return kinds.c_features(windows, (axes, n, mask, p, bands))

    def replay_classes(self, model, steps):
        return kinds.c_classes(model, steps, self.raw)

    def replay_learner(self, model, steps):
        exe = os.path.join(build(), self.program)
        fd, path = tempfile.mkstemp(suffix=".kb", prefix="kilobit-")
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(bytes(model))
            r = subprocess.run([exe] + ["-r"] * self.raw + [path], input=format_steps(steps),
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               universal_newlines=True)
        finally:
            os.unlink(path)
        if r.returncode != 0:
            err = r.stderr.strip()
            if err.startswith("error: "):
                err = err[len("error: "):]
            raise RuntimeFailure(err or "%s exited with status %d" % (self.program,
                                                                       r.returncode))
        return parse_output(r.stdout, len(steps))


class CHostConstRuntime(CHostRuntime):
    """kb_replay built with the compile-time parameters of firmware_c/avr/rkp_check_config.h
    (the ATtiny2313 code path); refuses every model of other parameters."""

    name = "c-host-const"
    program = "kb_replay_const"
