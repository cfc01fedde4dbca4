"""The host integer reference as a runtime: what every other runtime is compared with."""
from kilobit.core.errors import KilobitError, ModelFileError
from kilobit.models import learner, registry
from kilobit.runtimes import Runtime, RuntimeFailure


def load(model):
    """(integer reference, scaler) of a learner's model file, by the type in its header."""
    spec = registry.of_file(model)
    if spec.kind != learner.KIND:
        raise ModelFileError("the host runtime's learner replay does not take %s models"
                             % spec.name)
    return spec.load(model)


class HostRuntime(Runtime):
    name = "host"

    def replay(self, model, steps):
        from kilobit.runtimes import predictors
        if predictors.handles(model):  # a host-trained predictor (by the header's type)
            return predictors.replay(self, model, steps)
        from kilobit.runtimes import assoc_rt
        if assoc_rt.handles(model):  # an assoc learner (by the header's type)
            return assoc_rt.replay(self, model, steps)
        try:
            m, _ = load(model)
        except KilobitError as e:
            raise RuntimeFailure(str(e)) from None
        return learner.replay(m, steps)
