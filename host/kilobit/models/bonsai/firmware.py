"""The bonsai firmware: the predictor firmware (kilobit.models.predictor) with this model's
payload in flash."""
import struct

from kilobit.core import kbfile
from kilobit.models import predictor
from kilobit.models.bonsai.model import BonsaiInt

SOURCE, DEPENDS, MCUS = predictor.SOURCE, predictor.DEPENDS, predictor.MCUS
RUNTIME = predictor.RUNTIME


def header(model_bytes, frames=True):
    return predictor.header("bonsai", kbfile.MODEL_TYPES["bonsai"], BonsaiInt, model_bytes, frames)


def reply_row(m, p):
    """The golden fields of a predict reply (docs/uart-protocol.md): pred u8, leaf u8, P (d
    int16), scores (L int32) -> P, leaf, scores, prediction."""
    pred, leaf = p[0], p[1]
    P = list(struct.unpack_from("<%dh" % m.d, p, 2))
    S = list(struct.unpack_from("<%di" % m.L, p, 2 + 2 * m.d))
    return P + [leaf] + S + [pred]
