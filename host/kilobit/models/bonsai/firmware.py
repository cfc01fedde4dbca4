"""The bonsai firmware: the predictor firmware (kilobit.models.predictor) with this model's
payload in flash."""
import struct

import numpy as np

from kilobit.core import kbfile, smat
from kilobit.models import predictor
from kilobit.models.bonsai.model import BonsaiInt

SOURCE, DEPENDS, MCUS = predictor.SOURCE, predictor.DEPENDS, predictor.MCUS
RUNTIME = predictor.RUNTIME
def header(model_bytes, frames=True):
    return predictor.header("bonsai", kbfile.MODEL_TYPES["bonsai"], BonsaiInt, model_bytes, frames,
                            avr_tables=avr_tables)


def tree_rows(m):
    """The int8 tree of a model as the Uno walks it (firmware_c/kb_bonsai.h, KB_BONSAI_ROWS and
    KB_BONSAI_ROFF), or None for an int16 model: (rows, offsets). Node k starts at offsets[k]:
    its two shifts (W's, V's), theta_k's row if internal, the count of classes whose W_k and
    V_k rows both hold a weight, then per such class its index, its W row and its V row; a row
    is a count byte, then per non-zero weight (u8 2 * column, i8 weight). The same weights as
    the model file's tree, in its order; a class left out has W_k = 0 or V_k = 0, so w = 0 or
    v = 0, and it adds round(w t) = 0.

    None too for a DENSE tree of one score (its file's rows go nearly as fast there, 22.5
    cycles a weight in kb_smat_avr_dots, and one score costs little: the table would double the
    tree's flash for a few per cent) and when the table and the payload would not fit
    predictor.TABLE_ROOM (the C walks the file's own tree then)."""
    if m.wbits != 8 or (m.tree_enc == smat.DENSE and m.L == 1):
        return None
    out, offs = bytearray(), []

    def row(r):
        cols = np.flatnonzero(r)
        out.append(len(cols))
        for c in cols:
            out.extend((2 * int(c), int(r[c]) & 0xFF))

    for k in range(m.N):
        offs.append(len(out))
        out.extend((int(m.wshift[k]), int(m.vshift[k])))
        if k < m.ni:
            row(m.theta[k])
        present = [cl for cl in range(m.L) if np.any(m.W[k, cl]) and np.any(m.V[k, cl])]
        out.append(len(present))
        for cl in present:
            out.append(cl)
            row(m.W[k, cl])
            row(m.V[k, cl])
    if len(m.payload()) + len(out) + 2 * len(offs) > predictor.TABLE_ROOM:
        return None
    return bytes(out), offs


def avr_tables(m):
    """The Uno's derived flash tables of a model (kilobit.models.predictor.header)."""
    t = tree_rows(m)
    if t is None:
        return []
    rows, offs = t
    return ["/* the tree's non-zero weights as the Uno walks them (kb_bonsai.h, "
            "KB_BONSAI_ROWS) */",
            "static const uint8_t kb_fw_bonsai_rows[%d] KB_FW_PROGMEM = {%s};"
            % (len(rows), ",".join(str(b) for b in rows)),
            "static const uint16_t kb_fw_bonsai_roff[%d] KB_FW_PROGMEM = {%s};"
            % (len(offs), ",".join(str(o) for o in offs)),
            "#define KB_BONSAI_ROWS kb_fw_bonsai_rows",
            "#define KB_BONSAI_ROFF ((const uint8_t *)kb_fw_bonsai_roff)"]


def derived_bytes(m):
    """Flash bytes of avr_tables(m)."""
    t = tree_rows(m)
    return 0 if t is None else len(t[0]) + 2 * len(t[1])


def reply_row(m, p):
    """The golden fields of a predict reply (docs/uart-protocol.md): pred u8, leaf u8, P (d
    int16), scores (L int32) -> P, leaf, scores, prediction."""
    pred, leaf = p[0], p[1]
    P = list(struct.unpack_from("<%dh" % m.d, p, 2))
    S = list(struct.unpack_from("<%di" % m.L, p, 2 + 2 * m.d))
    return P + [leaf] + S + [pred]
