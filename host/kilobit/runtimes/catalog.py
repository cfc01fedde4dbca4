"""The table of runtimes by name (`kilobit golden check --runtime NAME`), and BOARD@PORT for a
real board.

A runtime module defines a subclass of kilobit.runtimes.base.Runtime and is listed in ALL
(name -> import path).
"""
import importlib

from kilobit.core.errors import KilobitError

ALL = {
    "host": "kilobit.runtimes.host:HostRuntime",
    "kbit-cpython": "kilobit.runtimes.micropython.kbit_cpython:KbitCPythonRuntime",
    "kbit-micropython": "kilobit.runtimes.micropython.kbit_wasm:MicroPythonRuntime",
    "kbit-unix": "kilobit.runtimes.micropython.kbit_unix:KbitUnixRuntime",
    "kbit-unix-bytecode": "kilobit.runtimes.micropython.kbit_unix:KbitUnixBytecodeRuntime",
    "rp2040-sim": "kilobit.runtimes.micropython.rp2040_sim:RP2040SimRuntime",
    "rp2040-sim-bytecode": "kilobit.runtimes.micropython.rp2040_sim:RP2040SimBytecodeRuntime",
    "c-host": "kilobit.runtimes.c.c_host:CHostRuntime",
    "rp2040-c": "kilobit.runtimes.c.rp2040_floor:RP2040FloorRuntime",
    "attiny2313-sim": "kilobit.runtimes.avr.sim_runtimes:Attiny2313SimRuntime",
    "uno-sim": "kilobit.runtimes.avr.sim_runtimes:UnoSimRuntime",
    "virtual-board": "kilobit.runtimes.boards.remote:VirtualBoardRuntime",
    "uno-sim-uart": "kilobit.runtimes.boards.remote:UnoSimUartRuntime",
}


def get(name):
    if "@" in name:  # BOARD@PORT: a real board (kilobit.runtimes.boards.remote)
        from kilobit.runtimes.boards.remote import on_port
        return on_port(name)
    if name not in ALL:
        raise KilobitError("unknown runtime %r (known: %s)" % (name, ", ".join(ALL)))
    mod, cls = ALL[name].split(":")
    return getattr(importlib.import_module(mod), cls)()
