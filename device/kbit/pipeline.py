"""A model's window pipeline on the board (docs/contract.md 12.1): from a window of raw sensor
readings to the model's label, and to a learning step, with no float and no allocation.

    m = kbit.load("activity.kb")        # trained with kilobit train ... --window 32 --axes 3
    w = Window(m)                       # preallocates the features and the codes
    w.predict(window)                   # window: array("h") x0 y0 z0 x1 ... (axes * samples)
    w.learn(window, "Walking")          # the learners: one step on the window's features

The model file says which features of how many samples and axes (m.pipeline, read from its
trailer), so the board computes exactly the host's features (kbit.features), then the file's
integer quantizer (kbit.quant), then the model's own predict or learn.
"""
from .compat import const

_AXES_MAX = const(16)  # a model file's pipeline (contract 4.1 bit 3); an Extractor takes 255


def per_axis(n, axes, mask, p, bands):
    """F, the features of one axis, of a pipeline's fields; ValueError where contract 12.1
    refuses them (kbit.features.selection, and at most 16 axes)."""
    if not 1 <= axes <= _AXES_MAX:
        raise ValueError("a pipeline takes 1..16 axes")
    from .features import selection
    return selection(axes, n, mask, p, bands)


def read(r, n):
    """The pipeline section of Reader r's trailer, held to the model's n inputs: (N, A, mask,
    p, B), or None when it is bad."""
    b = r.read(6)
    pipe = (b[0] | b[1] << 8, b[2], b[3], b[4], b[5])
    try:
        if b[2] * per_axis(*pipe) != n:
            return None
    except ValueError:
        return None
    return pipe


def pack(pipe):
    n, axes, mask, p, bands = pipe
    return bytes((n & 0xFF, n >> 8, axes, mask, p, bands))


class Window:
    """Model m fed windows of raw readings through the pipeline its file records."""

    def __init__(self, m):
        pipe = getattr(m, "pipeline", None)
        if pipe is None:
            raise ValueError("this model takes features, not windows (train it with "
                             "kilobit train ... --window N --axes A --features LIST)")
        from .features import Extractor
        n, axes, mask, p, bands = pipe
        self.model = m
        self.extractor = Extractor(axes, n, mask, p, bands)
        self.size = axes * n  # readings in a window
        self.codes = m.quantize(self.extractor.out)  # allocated once, refilled in place

    def features(self, window):
        """The window's features (the extractor's array("i"), refilled by every call)."""
        return self.extractor.run(window)

    def inputs(self, window):
        """The model's codes of a window (self.codes, refilled)."""
        return self.model.quantize(self.extractor.run(window), self.codes)

    def predict(self, window):
        """The model's answer to a window: its label when the file names them."""
        return self.model.predict(self.inputs(window))

    def learn(self, window, y):
        """One learning step of a learner on a window, y a class id or label; what the
        model's learn returns."""
        return self.model.learn(self.inputs(window), y)
