"""The host integer reference as a runtime: what every other runtime is compared with."""
from kilobit.core import kbfile
from kilobit.models.ckp.model import CKPInt
from kilobit.core.errors import ModelFileError
from kilobit.models.rkp.model import RKPInt
from kilobit.runtimes import Runtime, RuntimeFailure

#: model name (kilobit.kbfile.MODEL_TYPES) -> integer reference with from_bytes/learn/score
MODELS = {"rkp": RKPInt, "ckp": CKPInt}


def load(model):
    """(integer reference, scaler) of a model file, by the model type in its header."""
    name, _ = kbfile.unpack(model)
    if name not in MODELS:
        raise ModelFileError("the host runtime does not replay %s models" % name)
    return MODELS[name].from_bytes(model)


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
        except ModelFileError as e:
            raise RuntimeFailure(str(e)) from None
        out = []
        for op, y, codes in steps:
            if op == "L":
                s, mistake = m.learn(codes, y)
            else:
                s, mistake = m.score(codes), False
            out.append((s, int(s > 0), int(mistake), m.count, m.memory() if mistake else None))
        if out:
            out[-1] = out[-1][:4] + (m.memory(),)
        return out
