"""The assoc model type as the registry lists it (kilobit.models.spec)."""
from kilobit.core import kbfile
from kilobit.models.assoc import commands, firmware, golden
from kilobit.models.assoc.model import AssocInt
from kilobit.models.spec import ModelSpec
from kilobit.models.assoc.model import to_int8


def inputs(m, X01):
    """The device's inputs of rows scaled to [0, 1]."""
    return to_int8(X01, m.bits)


SPEC = ModelSpec(
    name="assoc", type_id=kbfile.MODEL_TYPES["assoc"], title="binary associative memory",
    paper="Boukli Hacene et al., SiPS 2017", kind="classes", int_class=AssocInt, golden=golden,
    firmware=firmware, commands=commands, kbit="kbit.assoc:Assoc", learns_online=True,
    inputs=inputs, boards=("uno",))
