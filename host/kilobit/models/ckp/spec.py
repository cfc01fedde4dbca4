"""The ckp model type as the registry lists it (kilobit.models.spec)."""
from kilobit.core import kbfile
from kilobit.models.ckp import commands, firmware, golden
from kilobit.models.ckp.model import CKPInt
from kilobit.models.spec import ModelSpec
from kilobit.models.ckp.model import quantize


def inputs(m, X01):
    """The device's inputs of rows scaled to [0, 1]."""
    return quantize(X01, m.bits)


SPEC = ModelSpec(
    name="ckp", type_id=kbfile.MODEL_TYPES["ckp"], title="Compressed Kernel Perceptron",
    paper="Vucetic, Coric & Wang 2009", kind="learner", int_class=CKPInt, golden=golden,
    firmware=firmware, commands=commands, kbit="kbit.ckp:CKP", learns_online=True,
    inputs=inputs, boards=("attiny2313", "attiny4313", "uno"))
