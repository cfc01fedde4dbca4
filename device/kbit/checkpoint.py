"""Checkpoints of an on-device learner that survive resets and power cuts (issue 15).

    from kbit.checkpoint import Checkpoint
    from kbit.rkp import RKP
    cp = Checkpoint(RKP, "/banana.kb", every=10)   # also saves after every 10th mistake
    m = cp.load()                                   # the newest complete checkpoint
    cp.learn(x, 1)                                  # m.learn, counting mistakes
    cp.save()                                       # on demand

A save writes the whole model file (its CRC-32 covers everything) to PATH.new, closes it, then
renames it over PATH: on littlefs (the rp2 and esp32 filesystems) and POSIX the rename is atomic,
so a power cut at any moment leaves PATH as it was (old state) or as the new file, and at worst
a PATH.new that is partial (its CRC fails) or complete (it is the newest). Loading takes PATH.new
when it is a valid model file and PATH otherwise; a corrupt or half-written file is never loaded.
Where rename cannot replace an existing file (FAT), PATH is removed first: then only PATH.new
holds the newest state for an instant, and the loader takes it.

`fs` is where the files live: an object with open(path, mode), rename(a, b) and remove(path);
by default the built-in open and os, and a stand-in in the fault-injection tests, which cut a save
at every write.
"""
from .kbfile import ModelFileError

_ENOENT = 2  # errno's ENOENT on MicroPython's ports and on POSIX


class _OS:
    """The real filesystem."""

    def open(self, path, mode):
        return open(path, mode)

    def rename(self, a, b):
        import os
        try:
            os.rename(a, b)
        except OSError:  # FAT: rename does not replace; the loader takes PATH.new meanwhile
            os.remove(b)
            os.rename(a, b)

    def remove(self, path):
        import os
        os.remove(path)


class Checkpoint:
    def __init__(self, cls, path, every=0, fs=None):
        """every: save after every `every`-th learnt mistake (0: only on demand); ValueError
        when it is not an int >= 0."""
        if type(every) is not int or every < 0:
            raise ValueError("every must be an int >= 0 (0: save on demand only), not %r"
                             % (every,))
        self.cls, self.path, self.every = cls, path, every
        self.fs = fs if fs is not None else _OS()
        self.model = None
        self.mistakes = 0  # learnt mistakes since the last save

    def load(self):
        """The newest complete checkpoint (PATH.new, else PATH) as a model of `cls`; OSError
        (ENOENT) naming PATH when neither exists, ModelFileError when no file there is a valid
        model file (the error of PATH's when it exists)."""
        err = None
        for p in (self.path + ".new", self.path):
            try:
                f = self.fs.open(p, "rb")
            except OSError:
                continue
            try:
                self.model = self.cls.load(f)
                return self.model
            except ModelFileError as e:
                err = ModelFileError("%s: %s" % (p, e))
            finally:
                f.close()
        if err is None:
            raise OSError(_ENOENT, "no checkpoint %s" % self.path)
        raise err

    def save(self, model=None):
        """Write the model (default: the loaded one) as the new checkpoint; a model given here
        is the one learn() then trains."""
        if model is not None:
            self.model = model
        m = self.model
        new = self.path + ".new"
        f = self.fs.open(new, "wb")
        try:
            m.save(f)
        finally:
            f.close()
        self.fs.rename(new, self.path)
        self.mistakes = 0

    def learn(self, x, y):
        """The model's learn(x, y); saves after every `every`-th learnt mistake when every > 0 (a
        model without a mistake flag, assoc, counts every learning step)."""
        m = self.model
        r = m.learn(x, y)
        if getattr(m, "mistake", True):
            self.mistakes += 1
            if self.every and self.mistakes >= self.every:
                self.save()
        return r
