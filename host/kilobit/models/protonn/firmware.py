"""The protonn firmware: the predictor firmware (kilobit.models.predictor) with this model's
payload in flash."""
import struct

from kilobit.core import kbfile
from kilobit.models import predictor
from kilobit.models.protonn.model import ProtoNNInt

SOURCE, DEPENDS, MCUS = predictor.SOURCE, predictor.DEPENDS, predictor.MCUS
RUNTIME = predictor.RUNTIME


def header(model_bytes, frames=True):
    return predictor.header("protonn", kbfile.MODEL_TYPES["protonn"], ProtoNNInt, model_bytes,
                            frames)


def reply_row(m, p):
    """The golden fields of a predict reply (docs/uart-protocol.md): pred u32, P (d int16),
    scores (L int32) -> P, None for each D and k (the Uno keeps neither: RAM), scores,
    prediction."""
    (pred,) = struct.unpack_from("<I", p)
    P = list(struct.unpack_from("<%dh" % m.d, p, 4))
    S = list(struct.unpack_from("<%di" % m.L, p, 4 + 2 * m.d))
    return P + [None] * (2 * m.m) + S + [pred]
