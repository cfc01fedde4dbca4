"""The protonn model type as the registry lists it (kilobit.models.spec)."""
from kilobit.core import kbfile
from kilobit.models.protonn import commands, firmware, golden
from kilobit.models.protonn.model import ProtoNNInt
from kilobit.models.spec import ModelSpec

SPEC = ModelSpec(
    name="protonn", type_id=kbfile.MODEL_TYPES["protonn"], title="ProtoNN",
    paper="Gupta et al., ICML 2017", kind="predictor", int_class=ProtoNNInt, golden=golden,
    firmware=firmware, commands=commands, kbit="kbit.protonn:ProtoNN", learns_online=False,
    boards=("uno",), kbit_fields=("P", "D", "k", "scores"))
