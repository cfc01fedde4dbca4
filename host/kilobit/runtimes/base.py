"""What every runtime adapter is: given a model file and a list of steps, the fields each step
produces, bit for bit the host integer reference's.

A model's kind (kilobit.models.spec: "learner", "predictor", "classes") decides the steps and
the fields, so an adapter has one replay_<kind> method per kind it runs; `replay` picks it by the
type in the model file's header.

    replay_learner    steps ("L", y, codes) | ("Q", None, codes) -> (score, pred, mistake,
                      count, memory or None); the memory after every mistake and the last step
    replay_predictor  steps ("P", None, codes) -> the model's golden fields as a tuple of ints
                      (None where the runtime does not report a field)
    replay_classes    steps ("L", label, values) | ("Q", None, values) -> (prediction, count,
                      classes, anchors, memory or None); the memory after every learning step
                      and the last step
    replay_features   windows of raw readings and a selection -> the features of each window
                      (a features golden file, kilobit.core.goldenfeatures: no model file)

    quantize_rows     (model, rows of raw integer readings) -> the inputs the model file's own
                      integer quantizer makes of them (contract 1.1; assoc: its int8 values);
                      None on a runtime that does not quantize raw readings itself

A model the runtime refuses raises RuntimeFailure whose message carries the runtime's own error
text.
"""
from kilobit.core.errors import KilobitError
from kilobit.core.paths import REPO  # noqa: F401 (a checkout's root, for its tests; the adapters use kilobit.core.paths' functions)

#: the field of a replay's row that is the prediction, per kind (the rows described above)
PREDICTION = {"learner": 1, "predictor": -1, "classes": 0}


class RuntimeFailure(KilobitError):
    """The runtime could not run (toolchain missing, crashed, or refused the model file)."""


class Runtime:
    name = "?"
    quantize_rows = None
    #: True: replay(model, steps, raw=True) takes steps of raw readings and quantizes them with
    #: the model file's own quantizer (the C tools' -r)
    replays_raw = False

    def missing(self):
        """None when usable here, else a short text naming what is missing."""
        return None

    def replay(self, model, steps):
        from kilobit.models import registry
        spec = registry.peek(model)
        kind = spec.kind if spec is not None else "learner"  # its loader says what is wrong
        method = getattr(self, "replay_" + kind, None)
        if method is None:
            raise RuntimeFailure("%s does not run %s models" % (self.name, spec.name))
        return method(model, steps)

    def replay_features(self, windows, axes, n, mask, p, bands):
        """The features of each window (axes*n readings, interleaved) under the selection
        (mask, p, bands) of contract 12.1: one list of ints a window, axis after axis."""
        raise RuntimeFailure("%s does not compute window features" % self.name)

    def replay_features_many(self, jobs):
        """replay_features of every job ((axes, n, mask, p, bands), windows): a list of rows a
        job. A runtime whose start costs more than a job's windows runs them all at once."""
        return [self.replay_features(ws, *sel) for sel, ws in jobs]
