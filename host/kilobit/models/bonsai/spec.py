"""The bonsai model type as the registry lists it (kilobit.models.spec)."""
from kilobit.core import kbfile
from kilobit.models.bonsai import commands, firmware, golden
from kilobit.models.bonsai.model import BonsaiInt
from kilobit.models.spec import ModelSpec
from kilobit.core.quant import quantize


def inputs(m, X01):
    """The device's inputs of rows scaled to [0, 1]."""
    return quantize(X01, m.in_bits)


SPEC = ModelSpec(
    name="bonsai", type_id=kbfile.MODEL_TYPES["bonsai"], title="Bonsai",
    paper="Kumar, Goyal & Varma, ICML 2017", kind="predictor", int_class=BonsaiInt,
    golden=golden, firmware=firmware, commands=commands, kbit="kbit.bonsai:Bonsai",
    learns_online=False, inputs=inputs,
    boards=("uno",), kbit_fields=("P", "leaf", "scores"))
