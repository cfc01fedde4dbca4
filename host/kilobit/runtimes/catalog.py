"""The table of runtimes by name (`kilobit golden check --runtime NAME`), and BOARD@PORT for a
real board.

A runtime module defines a subclass of kilobit.runtimes.base.Runtime and is listed in ALL
(name -> import path).
"""
import importlib

from kilobit.core.errors import KilobitError

ALL = {
    "host": "kilobit.runtimes.host:HostRuntime",
    "kbit-cpython": "kilobit.runtimes.kbit_cpython:KbitCPythonRuntime",
    "kbit-micropython": "kilobit.runtimes.micropython:MicroPythonRuntime",
    "kbit-unix": "kilobit.runtimes.unix:KbitUnixRuntime",
    "c-host": "kilobit.runtimes.c_host:CHostRuntime",
    "attiny2313-sim": "kilobit.runtimes.avr_sim:Attiny2313SimRuntime",
    "uno-sim": "kilobit.runtimes.avr_sim:UnoSimRuntime",
    "virtual-board": "kilobit.runtimes.board:VirtualBoardRuntime",
    "uno-sim-uart": "kilobit.runtimes.board:UnoSimUartRuntime",
}


def get(name):
    if "@" in name:  # BOARD@PORT: a real board (kilobit.runtimes.board)
        from kilobit.runtimes.board import on_port
        return on_port(name)
    if name not in ALL:
        raise KilobitError("unknown runtime %r (known: %s)" % (name, ", ".join(ALL)))
    mod, cls = ALL[name].split(":")
    return getattr(importlib.import_module(mod), cls)()
