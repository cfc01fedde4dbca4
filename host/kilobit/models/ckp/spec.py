"""The ckp model type as the registry lists it (kilobit.models.spec)."""
from kilobit.core import kbfile
from kilobit.models import learner, ovr
from kilobit.models.ckp import commands, firmware, golden
from kilobit.models.ckp.model import CKPInt, mem_bytes, quantize
from kilobit.models.spec import ModelSpec


def inputs(m, X01):
    """The device's inputs of rows scaled to [0, 1]."""
    return quantize(X01, m.bits)


def describe(m):
    """The parameters and learnt state of an integer model (`kilobit inspect`)."""
    learners = ovr.learners_of(m)
    bits = [b for k in learners for b in k.slot_bits()]
    prec = sum(bits) / len(bits) if bits else 0
    n = len(learners)
    return [("input bits P", m.bits), ("inputs M", m.dims), ("classes", learner.classes_text(m)),
            ("budget L", "%d bits%s" % (m.L, " a learner" if n > 1 else "")),
            ("kernel width A", "%g" % (m.width / 1000.0)), ("weight scale C", m.C),
            ("support vectors", "%d (at most %d)" % (m.count, n * m.max_svs)),
            ("mean precision", "%.2f bits" % prec), ("memory", "%d B" % (n * mem_bytes(m.L)))]


SPEC = ModelSpec(
    name="ckp", type_id=kbfile.MODEL_TYPES["ckp"], title="Compressed Kernel Perceptron",
    paper="Vucetic, Coric & Wang 2009", kind="learner", int_class=CKPInt, golden=golden,
    firmware=firmware, commands=commands, kbit="kbit.ckp:CKP", learns_online=True,
    inputs=inputs, describe=describe, boards=("attiny2313", "attiny4313", "uno"))
