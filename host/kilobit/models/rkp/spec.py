"""The rkp model type as the registry lists it (kilobit.models.spec)."""
from kilobit.core import kbfile
from kilobit.core.quant import quantize
from kilobit.models import learner, ovr
from kilobit.models.rkp import commands, firmware, golden
from kilobit.models.rkp.model import RKPInt, mem_bytes
from kilobit.models.spec import ModelSpec


def inputs(m, X01):
    """The device's inputs of rows scaled to [0, 1]."""
    return quantize(X01, m.bits)


def describe(m):
    """The parameters and learnt state of an integer model (`kilobit inspect`)."""
    n = len(ovr.learners_of(m))
    return [("kernel", m.kernel), ("input bits B", m.bits), ("inputs M", m.dims),
            ("classes", learner.classes_text(m)),
            ("budget T", "%d support vectors%s" % (m.budget, " a learner" if n > 1 else "")),
            ("kernel width exponent A", m.width),
            ("weight scale C", m.C), ("support vectors", "%d of %d" % (m.count, n * m.budget)),
            ("memory", "%d B" % (n * mem_bytes(m.budget, m.dims, m.bits)))]


SPEC = ModelSpec(
    name="rkp", type_id=kbfile.MODEL_TYPES["rkp"], title="Random Kernel Perceptron",
    paper="Djuric & Vucetic 2010", kind="learner", int_class=RKPInt, golden=golden,
    firmware=firmware, commands=commands, kbit="kbit.rkp:RKP", learns_online=True,
    inputs=inputs, describe=describe, boards=("attiny2313", "attiny4313", "uno"))
