"""kbit: kilobit's integer-only runtime for MicroPython (and CPython).

    from kbit.rkp import RKP
    m = RKP.load(open("model.kb", "rb"))
    m.learn(codes, 1); m.predict(codes)

The contract every runtime follows is docs/contract.md in the kilobit repository.

Native kernels: with firmware_c's C code built as native modules for the board's architecture
(/lib/kbit/_kb_<model>.mpy, see kbit.compat.native), the models' hot paths run natively; `m.native`
tells which path a model runs, kbit.compat.NATIVE_STATUS why a kernel is not native.
"""
__version__ = "0.1.0"
