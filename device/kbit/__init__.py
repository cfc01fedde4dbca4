"""kbit: kilobit's integer-only runtime for MicroPython (and CPython).

    import kbit
    m = kbit.load("model.kb")          # any model type: a path, bytes or a stream
    codes = m.quantize(raw)            # raw integer readings -> codes (the file's quantizer)
    m.predict(codes)                   # the class: the user's label when the file has labels
    m.learn(codes, "walk")             # the learners (rkp, ckp, assoc): a class id or a label

The contract every runtime follows is docs/contract.md in the kilobit repository.

Native kernels: with firmware_c's C code built as native modules for the board's architecture
(/lib/kbit/_kb_<model>.mpy, see kbit.compat.native), the models' hot paths run natively; `m.native`
tells which path a model runs, kbit.compat.NATIVE_STATUS why a kernel is not native.
"""
__version__ = "0.1.0"


def load(src):
    """The model a .kb file holds, of whichever of the five types it is: src is a path, bytes
    or a stream with readinto(). Only that model's module is imported (the board's heap).
    Errors are kbit.kbfile.ModelFileError.

        m = kbit.load("gesture.kb")
        m.predict(m.quantize(raw))     # the user's label
    """
    from .kbfile import load_any
    return load_any(src)
