"""ckp: the Compressed Kernel Perceptron (Vucetic, Coric & Wang 2009), a budget of L bits
shared between support vectors and their precision; learns online on every device.
docs/contract.md section 6."""
from kilobit.core import kbfile
from kilobit.models.ckp import commands, firmware, golden
from kilobit.models.ckp.model import CKPInt
from kilobit.models.spec import ModelSpec

SPEC = ModelSpec(
    name="ckp", type_id=kbfile.MODEL_TYPES["ckp"], title="Compressed Kernel Perceptron",
    paper="Vucetic, Coric & Wang 2009", kind="learner", int_class=CKPInt, golden=golden,
    firmware=firmware, commands=commands, kbit="kbit.ckp:CKP", learns_online=True,
    boards=("attiny2313", "attiny4313", "uno"))
