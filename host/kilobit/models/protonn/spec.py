"""The protonn model type as the registry lists it (kilobit.models.spec)."""
from kilobit.core import kbfile
from kilobit.models.protonn import commands, firmware, golden
from kilobit.models.protonn.model import ProtoNNInt
from kilobit.models.spec import ModelSpec
from kilobit.core.quant import quantize


def inputs(m, X01):
    """The device's inputs of rows scaled to [0, 1]."""
    return quantize(X01, m.in_bits)


SPEC = ModelSpec(
    name="protonn", type_id=kbfile.MODEL_TYPES["protonn"], title="ProtoNN",
    paper="Gupta et al., ICML 2017", kind="predictor", int_class=ProtoNNInt, golden=golden,
    firmware=firmware, commands=commands, kbit="kbit.protonn:ProtoNN", learns_online=False,
    inputs=inputs, boards=("uno",), kbit_fields=("P", "D", "k", "scores"))
