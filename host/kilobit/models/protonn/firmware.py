"""The protonn firmware: the predictor firmware (kilobit.models.predictor) with this model's
payload in flash."""
import struct

import numpy as np

from kilobit.core import kbfile, smat
from kilobit.models import predictor
from kilobit.models.protonn.model import ProtoNNInt

SOURCE, DEPENDS, MCUS = predictor.SOURCE, predictor.DEPENDS, predictor.MCUS
RUNTIME = predictor.RUNTIME


def header(model_bytes, frames=True):
    return predictor.header("protonn", kbfile.MODEL_TYPES["protonn"], ProtoNNInt, model_bytes,
                            frames, avr_tables=avr_tables)


def _has_csum(m):
    """The Uno's distances through C_j need DENSE int8 prototypes and bshift >= 1."""
    return m.wbits == 8 and m.proto_enc == smat.DENSE and m.bshift >= 1


def avr_tables(m):
    """The Uno's derived table of a model with DENSE int8 prototypes and bshift >= 1
    (firmware_c/kb_protonn.h, KB_PROTONN_CSUM): per prototype j the constant
    C_j = 2^(bshift-1) sum_r Bq[j][r]^2 of D_j = Q + 2^e (C_j - sum_r P_r Bq[j][r]), int32
    little-endian, so that a distance costs one multiply-add a weight."""
    if not _has_csum(m):
        return []
    c = ((m.protos.astype(np.int64) ** 2).sum(axis=1) << (m.bshift - 1)).astype("<i4")
    return ["/* per prototype 2^(bshift-1) sum |Bq|^2 (kb_protonn.h, KB_PROTONN_CSUM) */",
            "static const uint8_t kb_fw_protonn_csum[%d] KB_FW_PROGMEM = {%s};"
            % (4 * m.m, ",".join(str(b) for b in c.tobytes())),
            "#define KB_PROTONN_CSUM kb_fw_protonn_csum"]


def derived_bytes(m):
    """Flash bytes of avr_tables(m)."""
    return 4 * m.m if _has_csum(m) else 0


def reply_row(m, p):
    """The golden fields of a predict reply (docs/uart-protocol.md): pred u32, P (d int16),
    scores (L int32) -> P, None for each D and k (the Uno keeps neither: RAM), scores,
    prediction."""
    (pred,) = struct.unpack_from("<I", p)
    P = list(struct.unpack_from("<%dh" % m.d, p, 4))
    S = list(struct.unpack_from("<%di" % m.L, p, 4 + 2 * m.d))
    return P + [None] * (2 * m.m) + S + [pred]
