"""A model's window pipeline (docs/contract.md 12.1, trailer bit 3): the window of raw readings
a model takes, and the integer features it computes from it before its integer quantizer.

    p = Pipeline(window=100, axes=3, spec=Spec.parse("mean,mad,energy,fft64:8"))
    F = p.features(W)          # W: (rows, 3*100) interleaved readings -> (rows, p.inputs) ints
    p.pack() / Pipeline.unpack(six_bytes)

A model trained with `--window/--axes/--features` stores it; predict, eval, golden make and a
board then start from windows, not features.
"""
import struct

import numpy as np

from kilobit.core.errors import DataError
from kilobit.core.features import Spec, extract

AXES_MAX = 16
_PACK = struct.Struct("<HBBBB")  # N, A, mask, p, B
SIZE = _PACK.size


class Pipeline:
    def __init__(self, window, axes, spec):
        if not isinstance(spec, Spec):
            spec = Spec.parse(spec)
        for what, v, top in (("window", window, 256), ("axes", axes, AXES_MAX)):
            if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or not 1 <= v <= top:
                raise DataError("%s must be an integer 1..%d, not %r" % (what, top, v))
        spec.check(int(window))
        self.window, self.axes, self.spec = int(window), int(axes), spec

    @property
    def inputs(self):
        """The model's raw inputs: A * F features."""
        return self.axes * self.spec.per_axis

    @property
    def width(self):
        """Readings in a window: A * N."""
        return self.axes * self.window

    def __eq__(self, other):
        return isinstance(other, Pipeline) and self.pack() == other.pack()

    def __str__(self):
        return "windows of %d x %d axes, features %s (%d a window)" % (
            self.window, self.axes, self.spec, self.inputs)

    def pack(self):
        s = self.spec
        return _PACK.pack(self.window, self.axes, s.mask, s.p, s.bands)

    @classmethod
    def unpack(cls, b, n=None):
        """The pipeline of a trailer's six bytes, held to n, the model's raw inputs; ValueError
        when they break contract 12.1."""
        window, axes, mask, p, bands = _PACK.unpack(bytes(b))
        try:
            pipe = cls(window, axes, Spec.from_fields(mask, p, bands))
        except DataError as e:
            raise ValueError(str(e)) from None
        if n is not None and pipe.inputs != n:
            raise ValueError("the pipeline makes %d inputs, the model takes %d" % (pipe.inputs, n))
        return pipe

    def features(self, W, what="the windows"):
        """(rows, inputs) int64: the features of each row of W, a window of A*N readings."""
        W = np.asarray(W)
        if W.ndim != 2 or W.shape[1] != self.width:
            raise DataError("%s: a row must be a window of %d readings (%d samples x %d axes), "
                            "not %d" % (what, self.width, self.window, self.axes,
                                        W.shape[-1] if W.ndim else 0))
        try:
            return extract(W, self.axes, self.spec)
        except DataError as e:
            raise DataError("%s: %s" % (what, e)) from None

    def apply(self, split):
        """The split with its windows turned into features, the pipeline kept with it."""
        return split._replace(X_train=self.features(split.X_train, split.name),
                              X_test=self.features(split.X_test, split.name), pipeline=self,
                              windows=(split.X_train, split.X_test))


def from_args(a):
    """The pipeline of `kilobit train`'s --window/--axes/--features, or None without them."""
    given = [a.window is not None, a.axes is not None, a.features is not None]
    if not any(given):
        return None
    if not a.window:
        raise DataError("--axes and --features go with --window N (samples per window)")
    return Pipeline(a.window, a.axes or 1, a.features or "time")


def of(extras):
    """The pipeline a model file's trailer holds (kilobit.core.kbfile.Extras), or None."""
    return getattr(extras, "pipeline", None) if extras is not None else None
