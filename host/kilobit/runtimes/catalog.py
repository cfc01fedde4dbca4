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

#: what each runtime is, in a line: the help of every --runtime option is made from it
ABOUT = {
    "host": "the host's integer reference (kilobit.models)",
    "kbit-cpython": "device/kbit under CPython",
    "kbit-micropython": "device/kbit under MicroPython 1.27 (WebAssembly, node)",
    "kbit-unix": "device/kbit under MicroPython's unix port, with its x64 native modules",
    "kbit-unix-bytecode": "the same without the native modules",
    "rp2040-sim": "device/kbit on an emulated Raspberry Pi Pico, with armv6m native modules",
    "rp2040-sim-bytecode": "the same without the native modules",
    "c-host": "firmware_c built with gcc for the host",
    "rp2040-c": "firmware_c as bare C on the emulated RP2040",
    "attiny2313-sim": "the AVR firmware on a simulated ATtiny2313 (128 B of RAM)",
    "uno-sim": "the AVR firmware on a simulated Arduino Uno (ATmega328P)",
    "virtual-board": "kbit deployed to a virtual MicroPython board, driven by mpremote",
    "uno-sim-uart": "the AVR firmware on a simulated Uno, frames through its UART pty",
}
assert set(ABOUT) == set(ALL)
#: a real board: BOARD@PORT (kilobit.runtimes.boards.remote.on_port)
ON_PORT = ("BOARD@PORT", "a real board: rp2040@/dev/ttyACM0 (kbit deployed, mpremote), "
                         "uno@/dev/ttyACM0 (the model's firmware flashed)")


def help_text(default=None):
    """The runtimes a --runtime option takes, one per line, for its help (`default`: the
    names run when none is given)."""
    lines = ["%s: %s%s" % (n, ABOUT[n], " (default)" if default and n in default else "")
             for n in ALL]
    return "; ".join(lines + ["%s: %s" % ON_PORT])


def get(name):
    if "@" in name:  # BOARD@PORT: a real board (kilobit.runtimes.boards.remote)
        from kilobit.runtimes.boards.remote import on_port
        return on_port(name)
    if name not in ALL:
        raise KilobitError("unknown runtime %r (known: %s)" % (name, ", ".join(ALL)))
    mod, cls = ALL[name].split(":")
    return getattr(importlib.import_module(mod), cls)()
