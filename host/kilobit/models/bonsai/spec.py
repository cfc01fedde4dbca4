"""The bonsai model type as the registry lists it (kilobit.models.spec)."""
from kilobit.core import kbfile, smat
from kilobit.core.quant import quantize
from kilobit.models.bonsai import commands, firmware, golden
from kilobit.models.bonsai.model import BonsaiInt
from kilobit.models.spec import ModelSpec


def inputs(m, X01):
    """The device's inputs of rows scaled to [0, 1]."""
    return quantize(X01, m.in_bits)


def describe(m):
    """The parameters of an integer model (`kilobit inspect`)."""
    return [("inputs D", m.dims), ("input bits", m.in_bits), ("projection d", m.d),
            ("depth h", "%d (%d nodes)" % (m.depth, m.N)), ("classes", m.classes),
            ("weights", "int%d" % m.wbits),
            ("projection", "%s, %d non-zero weights" % (smat.ENCODINGS[m.pj.enc],
                                                       int((m.pj.Zq != 0).sum()))),
            ("tree", smat.ENCODINGS[m.tree_enc]), ("on the device", "%d B" % m.device_bytes())]


SPEC = ModelSpec(
    name="bonsai", type_id=kbfile.MODEL_TYPES["bonsai"], title="Bonsai",
    paper="Kumar, Goyal & Varma, ICML 2017", kind="predictor", int_class=BonsaiInt,
    golden=golden, firmware=firmware, commands=commands, kbit="kbit.bonsai:Bonsai",
    learns_online=False, inputs=inputs, describe=describe,
    boards=("uno",), kbit_fields=("P", "leaf", "scores"))
