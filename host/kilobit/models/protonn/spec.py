"""The protonn model type as the registry lists it (kilobit.models.spec)."""
from kilobit.core import kbfile, smat
from kilobit.core.quant import quantize
from kilobit.models.protonn import commands, firmware, golden
from kilobit.models.protonn.model import ProtoNNInt
from kilobit.models.spec import ModelSpec


def inputs(m, X01):
    """The device's inputs of rows scaled to [0, 1]."""
    return quantize(X01, m.in_bits)


def describe(m):
    """The parameters of an integer model (`kilobit inspect`)."""
    return [("inputs D", m.dims), ("input bits", m.in_bits), ("projection d", m.d),
            ("prototypes m", m.m), ("classes", "%d%s" % (m.classes,
                                                      " (multilabel)" if m.multilabel else "")),
            ("weights", "int%d" % m.wbits),
            ("projection", "%s, %d non-zero weights" % (smat.ENCODINGS[m.pj.enc],
                                                       int((m.pj.Zq != 0).sum()))),
            ("prototypes, labels", "%s, %s" % (smat.ENCODINGS[m.proto_enc],
                                               smat.ENCODINGS[m.z_enc])),
            ("on the device", "%d B" % m.device_bytes())]


SPEC = ModelSpec(
    name="protonn", type_id=kbfile.MODEL_TYPES["protonn"], title="ProtoNN",
    paper="Gupta et al., ICML 2017", kind="predictor", int_class=ProtoNNInt, golden=golden,
    firmware=firmware, commands=commands, kbit="kbit.protonn:ProtoNN", learns_online=False,
    inputs=inputs, describe=describe, boards=("uno",), kbit_fields=("P", "D", "k", "scores"))
