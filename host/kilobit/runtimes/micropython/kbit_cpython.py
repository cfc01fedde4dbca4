"""device/kbit (the MicroPython package) run in-process under CPython."""
from kilobit.runtimes import kinds
from kilobit.runtimes.base import Runtime, RuntimeFailure


class KbitCPythonRuntime(Runtime):
    name = "kbit-cpython"

    def missing(self):
        try:
            import kbit.rkp  # noqa: F401
        except ImportError as e:
            return "the kbit package (device/kbit): %s" % e
        return None

    def quantize_rows(self, model, rows):
        from array import array

        import kbit
        try:
            m = kbit.load(bytes(model))
            if m.pipeline is not None:  # the rows are windows (kbit.pipeline)
                from kbit.pipeline import Window
                w = Window(m)
                return [list(w.inputs(array("h", r))) for r in rows]
            return [list(m.quantize(array("i", r))) for r in rows]
        except ValueError as e:  # ModelFileError is one
            raise RuntimeFailure("%s: %s" % (type(e).__name__, e)) from None

    def replay_predictor(self, model, steps):
        return kinds.kbit_predictor(model, kinds.predictor_inputs(steps))

    def replay_features(self, windows, axes, n, mask, p, bands):
        from array import array

        from kbit.features import Extractor
        try:
            ex = Extractor(axes, n, mask, p, bands)
            return [list(ex.run(array("h", w))) for w in windows]
        except (TypeError, ValueError) as e:
            raise RuntimeFailure("%s: %s" % (type(e).__name__, e)) from None

    def replay_classes(self, model, steps):
        return kinds.kbit_classes(model, steps)

    def replay_learner(self, model, steps):
        from kbit.kbfile import ModelFileError
        from kilobit.models import registry
        spec = registry.peek(model) or registry.get("rkp")  # kbit refuses a foreign file
        cls = spec.kbit_class()
        try:
            m = cls.load(bytes(model))
        except ModelFileError as e:
            raise RuntimeFailure("ModelFileError: %s" % e) from None
        u = bytearray(m.dims)
        out = []
        for op, y, codes in steps:
            u[:] = bytes(codes)
            if op == "L":
                s = m.learn(u, y)
                # one-vs-rest (kbit.ovr): the class of the largest score, not its sign
                pred, mistake = getattr(m, "last_class", int(s > 0)), m.mistake
            else:  # the class id, not the label predict() answers with the file's labels
                s, mistake = m.score(u), False
                pred = getattr(m, "last_class", int(s > 0))
            out.append((s, pred, int(mistake), m.count, bytes(m.memory) if mistake else None))
        if out:
            out[-1] = out[-1][:4] + (bytes(m.memory),)
        return out
