"""kbit: kilobit's integer-only runtime for MicroPython (and CPython).

    from kbit.rkp import RKP
    m = RKP.load(open("model.kb", "rb"))
    m.learn(codes, 1); m.predict(codes)

The contract every runtime follows is docs/contract.md in the kilobit repository.
"""
__version__ = "0.1.0"
