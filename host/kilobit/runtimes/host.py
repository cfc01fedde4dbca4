"""The host integer reference as a runtime: what every other runtime is compared with."""
from kilobit.core.errors import KilobitError, ModelFileError
from kilobit.models import learner, registry
from kilobit.runtimes.base import Runtime, RuntimeFailure


def load(model):
    """(integer reference, scaler) of a model file, by the type in its header."""
    return registry.of_file(model).load(model)


class HostRuntime(Runtime):
    name = "host"

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

    def replay_classes(self, model, steps):
        from kilobit.models.assoc import golden
        try:
            return golden.replay(model, steps)
        except KilobitError as e:
            raise RuntimeFailure(str(e)) from None
