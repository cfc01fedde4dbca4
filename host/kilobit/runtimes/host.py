"""The host integer reference as a runtime: what every other runtime is compared with."""
from kilobit.core.errors import KilobitError, ModelFileError
from kilobit.models import learner, registry
from kilobit.runtimes.base import Runtime, RuntimeFailure


def load(model):
    """(integer reference, scaler) of a model file, by the type in its header."""
    return registry.of_file(model).load(model)


def inputs_of_raw(spec, m, extras, rows):
    """The device's inputs of raw integer rows through a model file's integer quantizer."""
    import numpy as np
    if extras is None or extras.quant is None:
        raise RuntimeFailure("the model file has no integer quantizer")
    if extras.pipeline is not None:  # the rows are windows: their features are the readings
        rows = extras.pipeline.features(rows)
    return spec.inputs(m, extras.quant.transform(np.asarray(rows, dtype=np.float64))).tolist()


class HostRuntime(Runtime):
    name = "host"

    def quantize_rows(self, model, rows):
        try:
            m, extras = load(model)
        except KilobitError as e:
            raise RuntimeFailure(str(e)) from None
        return inputs_of_raw(registry.of_file(model), m, extras, rows)

    def replay_learner(self, model, steps):
        try:
            m, _ = load(model)
        except KilobitError as e:
            raise RuntimeFailure(str(e)) from None
        return learner.replay(m, steps)

    def replay_predictor(self, model, steps):
        from kilobit.runtimes.kinds import predictor_inputs
        inputs = predictor_inputs(steps)
        try:
            m, _ = load(model)
        except ModelFileError as e:
            raise RuntimeFailure(str(e)) from None
        return [tuple(r) for r in m.field_rows(inputs)] if inputs else []

    def replay_features(self, windows, axes, n, mask, p, bands):
        from kilobit.core import features
        try:
            spec = features.Spec.from_fields(mask, p, bands)
            spec.check(n)
            return features.extract(windows, axes, spec).tolist()
        except KilobitError as e:
            raise RuntimeFailure(str(e)) from None

    def replay_classes(self, model, steps):
        from kilobit.models.assoc import golden
        try:
            return golden.replay(model, steps)
        except KilobitError as e:
            raise RuntimeFailure(str(e)) from None
