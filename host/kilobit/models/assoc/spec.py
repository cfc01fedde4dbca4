"""The assoc model type as the registry lists it (kilobit.models.spec)."""
from kilobit.core import kbfile
from kilobit.models.assoc import commands, firmware, golden
from kilobit.models.assoc.model import AssocInt, to_int8
from kilobit.models.spec import ModelSpec


def inputs(m, X01):
    """The device's inputs of rows scaled to [0, 1]."""
    return to_int8(X01, m.bits)


def describe(m):
    """The parameters and learnt state of an integer model (`kilobit inspect`)."""
    learnt = [int(v) for v in m.labels[:m.nc]]
    return [("approach", ("I-I", "N-I", "N-O")[m.approach]), ("value bits B", m.bits),
            ("inputs T", "%d = P %d x d %d" % (m.T, m.P, m.d)),
            ("class slots", m.cap), ("anchors per class k~", m.kt),
            ("output neurons per class R", m.R),
            ("classes learnt", "%d%s" % (m.nc, " (labels %s)" % " ".join(map(str, learnt))
                                          if learnt else "")),
            ("memory", "%d B" % len(m.memory()))]


SPEC = ModelSpec(
    name="assoc", type_id=kbfile.MODEL_TYPES["assoc"], title="binary associative memory",
    paper="Boukli Hacene et al., SiPS 2017", kind="classes", int_class=AssocInt, golden=golden,
    firmware=firmware, commands=commands, kbit="kbit.assoc:Assoc", learns_online=True,
    inputs=inputs, describe=describe, boards=("uno",))
