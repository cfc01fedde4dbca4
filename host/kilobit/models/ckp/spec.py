"""The ckp model type as the registry lists it (kilobit.models.spec)."""
from kilobit.core import kbfile
from kilobit.models.ckp import commands, firmware, golden
from kilobit.models.ckp.model import CKPInt
from kilobit.models.spec import ModelSpec

SPEC = ModelSpec(
    name="ckp", type_id=kbfile.MODEL_TYPES["ckp"], title="Compressed Kernel Perceptron",
    paper="Vucetic, Coric & Wang 2009", kind="learner", int_class=CKPInt, golden=golden,
    firmware=firmware, commands=commands, kbit="kbit.ckp:CKP", learns_online=True,
    boards=("attiny2313", "attiny4313", "uno"))
