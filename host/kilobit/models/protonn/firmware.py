"""The protonn firmware: the predictor firmware (kilobit.models.predictor) with this model's
payload in flash."""
import struct

import numpy as np

from kilobit.core import kbfile, smat
from kilobit.core.fixedpoint import SMALL
from kilobit.models import predictor
from kilobit.models.protonn.model import ProtoNNInt

SOURCE, DEPENDS, MCUS = predictor.SOURCE, predictor.DEPENDS, predictor.MCUS
RUNTIME = predictor.RUNTIME


def header(model_bytes, frames=True):
    return predictor.header("protonn", kbfile.MODEL_TYPES["protonn"], ProtoNNInt, model_bytes,
                            frames, avr_tables=avr_tables)


#: prototypes a group of the Uno's distance kernel (kb_protonn_avr_kern: four sums in registers)
GROUP = 4
#: the most prototypes a pass of the Uno's labels takes (kb_protonn.h, KB_PROTONN_BLOCK)
BLOCK_MAX = 64


def avr_consts(m):
    """The constants of the Uno's distances D_j = Q + 2^e H_j (firmware_c/kb_protonn.h,
    kb_protonn_avr_const makes the same on the chip and takes the C when they differ): a dict
    of e, sh (the kernel index is v >> sh), istop, ksat; or None outside its conditions (int8
    DENSE prototypes, 1 <= bshift, dshift <= bshift + 1, kshift >= e)."""
    if m.wbits != 8 or m.proto_enc != smat.DENSE or m.bshift < 1 \
            or m.dshift > m.bshift + 1:
        return None
    e = m.bshift + 1 - m.dshift
    if m.kshift < e:
        return None
    nt = len(m.table)
    stop = SMALL + 1
    if m.kshift < 23 and nt << m.kshift < stop:
        stop = nt << m.kshift
    stop >>= e
    sh = m.kshift - e
    isat = SMALL >> m.kshift
    return {"e": e, "sh": sh, "istop": stop >> sh,
            "ksat": int(m.table[isat]) if isat < nt else 0}


def avr_groups(m):
    """The prototypes as the Uno's distance kernel reads them, GROUP at a time (the last group
    padded): per group the four C'_j = 2^(bshift-1) sum_r Bq_jr^2 + 2^15 sum_r Bq_jr (int32
    little-endian), then per r the four Bq_jr + 128, and with one score (L = 1) the four Zq_j0.
    With P_r + 2^15 and Bq_jr + 128 both unsigned a term is two MULs and no sign, and the
    offsets fold into C'_j and the per-input constant (kb_protonn_avr_scores)."""
    B = m.protos.astype(np.int64)
    pad = -m.m % GROUP
    B = np.vstack([B, np.zeros((pad, m.d), np.int64)])
    Z = np.concatenate([m.zmat.reshape(m.m, m.L)[:, 0], np.zeros(pad, np.int64)])
    c = ((B ** 2).sum(axis=1) << (m.bshift - 1)) + (B.sum(axis=1) << 15)
    out = bytearray()
    for g in range(0, len(B), GROUP):
        out += c[g:g + GROUP].astype("<i4").tobytes()
        out += (B[g:g + GROUP].T + 128).astype(np.uint8).tobytes()
        if m.L == 1:
            out += (Z[g:g + GROUP] & 0xFF).astype(np.uint8).tobytes()
    return bytes(out)


def avr_tables(m):
    """The Uno's derived table and constants of a model its distance kernel runs (avr_consts,
    avr_groups: firmware_c/kb_protonn.h, KB_PROTONN_GROUPS); none for another."""
    k = avr_consts(m)
    if k is None:
        return []
    g = avr_groups(m)
    return ["/* the prototypes four at a time for the distance kernel (kb_protonn.h, "
            "KB_PROTONN_GROUPS) */",
            "static const uint8_t kb_fw_protonn_groups[%d] KB_FW_PROGMEM = {%s};"
            % (len(g), ",".join(str(b) for b in g)),
            "#define KB_PROTONN_GROUPS kb_fw_protonn_groups",
            "#define KB_PROTONN_QD %d" % m.d,
            "#define KB_PROTONN_QL %d" % m.L,
            "#define KB_PROTONN_QE %d" % k["e"],
            "#define KB_PROTONN_QSH %d" % k["sh"],
            "#define KB_PROTONN_QISTOP %d" % k["istop"],
            "#define KB_PROTONN_QKSAT %d" % k["ksat"]] + (
        ["#define KB_PROTONN_BLOCK %d /* prototypes a pass of the labels */" % block(m)]
        if m.L > 1 else [])


def block(m):
    """Prototypes a pass of the Uno's labels (KB_PROTONN_BLOCK, 4 B of RAM each for the list):
    all of them up to BLOCK_MAX, so that each group of labels is summed and stored once."""
    return min(BLOCK_MAX, -(-m.m // GROUP) * GROUP)


def derived_bytes(m):
    """Flash bytes of avr_tables(m)."""
    return 0 if avr_consts(m) is None else len(avr_groups(m))


def reply_row(m, p):
    """The golden fields of a predict reply (docs/uart-protocol.md): pred u32, P (d int16),
    scores (L int32) -> P, None for each D and k (the Uno keeps neither: RAM), scores,
    prediction."""
    (pred,) = struct.unpack_from("<I", p)
    P = list(struct.unpack_from("<%dh" % m.d, p, 4))
    S = list(struct.unpack_from("<%di" % m.L, p, 4 + 2 * m.d))
    return P + [None] * (2 * m.m) + S + [pred]
