"""The runtimes a golden file is replayed on. Each one answers the same question: given a model
file and a list of steps, what score, prediction, mistake flag, count and memory does it produce?

A runtime module defines a subclass of `Runtime` and is listed in `ALL` (name -> import path).
"""
import importlib
import os

from kilobit.core.errors import KilobitError
from kilobit.core.paths import REPO  # noqa: F401 (runtimes and their callers use it)

ALL = {
    "host": "kilobit.runtimes.host:HostRuntime",
    "kbit-cpython": "kilobit.runtimes.kbit_cpython:KbitCPythonRuntime",
    "kbit-micropython": "kilobit.runtimes.micropython:MicroPythonRuntime",
    "c-host": "kilobit.runtimes.c_host:CHostRuntime",
    "attiny2313-sim": "kilobit.runtimes.avr_sim:Attiny2313SimRuntime",
    "uno-sim": "kilobit.runtimes.avr_sim:UnoSimRuntime",
    "virtual-board": "kilobit.runtimes.board:VirtualBoardRuntime",
    "uno-sim-uart": "kilobit.runtimes.board:UnoSimUartRuntime",
}



class RuntimeFailure(KilobitError):
    """The runtime could not run (toolchain missing, crashed, or refused the model file)."""


class Runtime:
    """Base class. `replay(model, steps)` returns one tuple per step:

        (score, pred, mistake, count, mem)

    `model` is the model file's bytes; `steps` a list of (op, y, codes) with op "L" (learn, y in
    {0, 1}) or "Q" (score only, y None) and codes a list of ints. `mem` is the support-vector
    memory as bytes after that step, or None where the runtime reports it unchanged; it must be
    reported after every mistake and after the last step. A model the runtime refuses raises
    RuntimeFailure whose message carries the runtime's own error text.
    """

    name = "?"

    def missing(self):
        """None when usable here, else a short text naming what is missing."""
        return None

    def replay(self, model, steps):
        raise NotImplementedError


def get(name):
    if "@" in name:  # BOARD@PORT: a real board (kilobit.runtimes.board)
        from kilobit.runtimes.board import on_port
        return on_port(name)
    if name not in ALL:
        raise KilobitError("unknown runtime %r (known: %s)" % (name, ", ".join(ALL)))
    mod, cls = ALL[name].split(":")
    return getattr(importlib.import_module(mod), cls)()
