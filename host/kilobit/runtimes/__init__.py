"""The runtimes a model runs on, one adapter each (kilobit.runtimes.base.Runtime), named in one
table (catalog), and what they need, one folder per target family:

    base, catalog, host, kinds   what an adapter is, the table of runtimes, the host reference,
                                 the per-kind replays the kbit and C adapters share
    micropython/                 device/kbit under CPython, MicroPython WebAssembly, the unix port
    c/                           firmware_c built for the host (c-host)
    avr/                         AVR firmware builds, simavr (kb_sim), the UART protocol and the
                                 firmwares' dialogs, mutated frames, power cuts
    boards/                      boards/*.json and fit, boards on a serial port (real or
                                 virtual), deploy, ports

    from kilobit.runtimes.catalog import get
    get("c-host").replay(model_bytes, steps)
"""
from kilobit.runtimes.base import REPO, Runtime, RuntimeFailure  # noqa: F401
