"""Checkpoints of an on-device learner that survive resets and power cuts (issues 15 and 28).

    from kbit.checkpoint import Checkpoint
    cp = Checkpoint(None, "/banana-learnt.kb", every=10, initial="/banana.kb")
    m = cp.load()        # the newest complete checkpoint, else the deployed model
    cp.learn(x, 1)       # m.learn, counting mistakes (a save after every 10th)
    cp.save()            # on demand

The first argument is the learner's class (RKP, CKP, Assoc: only a file of that type loads) or
None: any learner, as the file says (kbit.load). `initial` is what load() returns while nothing
has been saved: a model file's path (the deployed model) or a model (RKP.new(...)); without it
load() raises OSError ENOENT then, as for any missing file, so a script can fall back itself.

A save writes the whole model file (its CRC-32 covers everything) to PATH.new, closes it, then
renames it over PATH: on littlefs (the rp2 and esp32 filesystems) and POSIX the rename is atomic,
so a power cut at any moment leaves the save done, or PATH as it was and PATH.new missing,
partial (empty on littlefs: a file's data lands at close) or complete. Where rename cannot
replace a file (FAT), PATH is removed first: then for an instant only PATH.new holds the state.
A model that is not a learner of `cls` is refused before anything is written; a save that fails
before the rename (the model's save raising, the filesystem full) removes its PATH.new.

What load() returns ("torn": partial, empty or not a model of `cls`; never loaded):

    PATH \\ PATH.new   missing             complete     torn
    missing            nothing saved (*)   PATH.new +   nothing saved (*): a first save was cut
    valid              PATH                PATH.new +   PATH
    corrupt            ModelFileError      PATH.new +   ModelFileError

(+) renamed over PATH first (unless the filesystem is read-only), finishing the save: the next
save's PATH.new must not be written over the only copy of the newest state.
(*) `initial`, or OSError ENOENT naming PATH. A corrupt PATH comes from no power cut (save never
writes PATH itself): the error names it, and removing it starts again from `initial`.

`fs` is where the files live: an object with open(path, mode), rename(a, b) and remove(path);
by default the built-in open and os, and a stand-in in the fault-injection tests, which cut a save
at every write.
"""
from . import load as _load_any
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


def _learner(c, what):
    """TypeError unless c (a class or a model) can be checkpointed: it learns and saves."""
    if not (hasattr(c, "learn") and hasattr(c, "save")):
        name = getattr(c, "__name__", None) or type(c).__name__  # a class, or a model
        raise TypeError("%s: %s is not a learner (no learn and save): a checkpoint keeps what "
                        "a model learns on the board" % (what, name))


class Checkpoint:
    def __init__(self, cls, path, every=0, fs=None, initial=None):
        """cls: the learner's class, or None for any; every: save after every `every`-th learnt
        mistake (0: only on demand); initial: see the module. ValueError for a bad `every`,
        TypeError for a class that does not learn (a predictor: nothing to keep)."""
        if type(every) is not int or every < 0:
            raise ValueError("every must be an int >= 0 (0: save on demand only), not %r"
                             % (every,))
        if cls is not None:
            _learner(cls, "Checkpoint")
        self.cls, self.path, self.every, self.initial = cls, path, every, initial
        self.fs = fs if fs is not None else _OS()
        self.model = None
        self.mistakes = 0  # learnt mistakes since the last save

    def _read(self, p):
        """The learner in file p: OSError when p does not exist, ModelFileError naming p when it
        holds no learner of `cls`."""
        load = _load_any if self.cls is None else self.cls.load
        f = self.fs.open(p, "rb")
        try:
            m = load(f)
        except ModelFileError as e:
            raise ModelFileError("%s: %s" % (p, e))
        finally:
            f.close()
        if not hasattr(m, "learn"):
            raise ModelFileError("%s: a %s learns nothing: not a checkpoint"
                                 % (p, type(m).__name__))
        return m

    def load(self):
        """The newest complete checkpoint as a model (the table in the module's docstring)."""
        new = self.path + ".new"
        try:
            m = self._read(new)
        except (OSError, ModelFileError):  # missing or torn: never the only copy of a state
            m = None
        if m is not None:  # the save the cut interrupted, finished: the next save's PATH.new
            try:  # must not be written over the only copy
                self.fs.rename(new, self.path)
            except OSError:  # a read-only filesystem (CircuitPython under USB): no save either
                pass
        else:
            try:
                m = self._read(self.path)
            except OSError:
                m = self.initial
                if m is None:
                    raise OSError(_ENOENT, "nothing saved yet: no checkpoint %s" % self.path)
                if type(m) is str:
                    m = self._read(m)
        self.model = m
        return m

    def save(self, model=None):
        """Write the model (default: the loaded one) as the new checkpoint; a model given here
        is the one learn() then trains. TypeError, before anything is written, for a model that
        is not a learner of `cls`; PATH.new is removed when the save fails before the rename."""
        m = self.model if model is None else model
        if m is None:
            raise ValueError("no model to save: load() first, or save(model)")
        _learner(m, "Checkpoint.save")
        if self.cls is not None and not isinstance(m, self.cls):
            raise TypeError("Checkpoint.save: the model is %s, not %s (load() would refuse it)"
                            % (type(m).__name__, self.cls.__name__))
        self.model = m
        new = self.path + ".new"
        f = self.fs.open(new, "wb")
        try:
            try:
                m.save(f)
            finally:
                f.close()
        except:  # noqa: E722 (a KeyboardInterrupt too): PATH still holds the last state
            try:
                self.fs.remove(new)
            except OSError:
                pass
            raise
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
