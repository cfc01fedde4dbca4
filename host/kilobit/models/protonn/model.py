"""ProtoNN's integer model (docs/contract.md section 10): the contract in executable form.

    y = rho(sum_j z_j k(||W x - b_j||^2))          (Gupta et al., ICML 2017, with k the RBF)

P is the streamed projection of section 7.3 (kilobit.core.proj); for each prototype j, in order,
e_r = sat(P_r - (Bq[j][r] << bshift)), D_j = sum_r rshift_round(e_r^2, dshift) saturating at
SMALL, k_j = table[D_j >> kshift] (0 past the table), S += Zq[j] * k_j. device/kbit/protonn.py
and firmware_c/kb_protonn.h agree with this module bit for bit (tests/golden/protonn-*.json).
The float trainer and the quantization that build a ProtoNNInt live in kilobit.models.protonn.train.

The running sum of D only ever adds non-negative terms, so saturating it at SMALL step by step
equals min(sum, SMALL): the vectorised form below uses that.
"""
import struct

import numpy as np

from kilobit.core import kbfile, smat
from kilobit.core.fixedpoint import ACT_MAX, SMALL, qmax, rshift_round, sat

# PROJ_MAX is kilobit.core.proj's, re-exported (the redundant alias) for protonn.commands
from kilobit.core.proj import (
    HEAD as _HEAD,
    HEAD_BYTES,
    PROJ_MAX as PROJ_MAX,
    SHIFT_MAX,
    check_params as check_projection,
    parse_head,
)

PROTOS_MAX = 255
MULTILABEL_MAX = 30  # the prediction is a bit mask of the classes: below 2^30
BSHIFT_MAX = 8
TABLE_MAX = 255
# the payload's head (kilobit.core.proj.HEAD): wbits in_bits dims d m classes multilabel


def n_scores(classes, multilabel):
    """L, the score rows: K when multilabel, else 1 for K <= 2 and K otherwise."""
    return classes if multilabel or classes > 2 else 1


def check_params(wbits, in_bits, dims, d, m, classes, multilabel):
    """None when the parameters are inside the contract's ranges (10), else what is wrong."""
    err = check_projection(wbits, in_bits, dims, d)
    if err:
        return err
    if not 1 <= m <= PROTOS_MAX:
        return "prototypes %d not in 1..%d" % (m, PROTOS_MAX)
    if not 1 <= classes <= 255:
        return "classes %d not in 1..255" % classes
    if multilabel not in (0, 1):
        return "multilabel %r not 0 or 1" % (multilabel,)
    if multilabel and classes > MULTILABEL_MAX:
        return "multilabel with %d classes (at most %d)" % (classes, MULTILABEL_MAX)
    return None


def fixed_bytes(d, nt):
    """Device bytes outside the smat data of the projection, prototype and label matrices:
    head, the projection's encoding/length/shifts/biases, the kernel section and the two
    matrices' encoding and length. device_bytes() == fixed_bytes(d, nt) + the three matrices'
    smat bytes (kilobit.core.smat.encode)."""
    return HEAD_BYTES + (3 + 3 * d) + (4 + 2 * nt) + 3 + 3


class ProtoNNInt(kbfile.PayloadModel):
    """Integer ProtoNN: a Projection (kilobit.core.proj), prototypes Bq (m x d) with bshift, the
    distance shifts dshift and kshift, the kernel table (nt entries) and the labels Zq (m x L,
    prototype-major). proto_enc, z_enc: smat encodings, the smaller one when None. The model
    file: payload(), to_bytes(), from_bytes(), device_bytes() (kbfile.PayloadModel)."""
    NAME = "protonn"

    def __init__(self, projection, protos, bshift, dshift, kshift, table, zmat, classes,
                 multilabel=False, proto_enc=None, z_enc=None):
        self.pj = projection
        self.dims, self.d = projection.dims, projection.d
        self.in_bits, self.wbits = projection.in_bits, projection.wbits
        self.classes, self.multilabel = int(classes), bool(multilabel)
        self.protos = np.asarray(protos, dtype=np.int64)
        self.zmat = np.asarray(zmat, dtype=np.int64)
        self.table = np.asarray(table, dtype=np.int64).ravel()
        self.bshift, self.dshift, self.kshift = int(bshift), int(dshift), int(kshift)
        self.m = self.protos.shape[0] if self.protos.ndim == 2 else 0
        self.L = n_scores(self.classes, self.multilabel)
        err = check_params(self.wbits, self.in_bits, self.dims, self.d, self.m, self.classes,
                           int(self.multilabel)) or self._check()
        if err:
            raise ValueError("bad protonn model: " + err)
        wb = self.wbits // 8
        self.proto_enc = smat.best_encoding(self.protos, wb)[0] if proto_enc is None \
            else proto_enc
        self.z_enc = smat.best_encoding(self.zmat, wb)[0] if z_enc is None else z_enc
        for what, enc, M in (("prototypes", self.proto_enc, self.protos),
                             ("labels", self.z_enc, self.zmat)):
            if enc not in (smat.DENSE, smat.SPARSE):
                raise ValueError("bad protonn model: %s: unknown matrix encoding %r"
                                 % (what, enc))
            if len(smat.encode(M, wb, enc)) > 0xFFFF:
                raise ValueError("bad protonn model: %s of more than 65535 bytes" % what)

    def _check(self):
        q = qmax(self.wbits)
        if self.protos.shape != (self.m, self.d):
            return "prototypes of shape %s, expected (m, %d)" % (self.protos.shape, self.d)
        if self.zmat.shape != (self.m, self.L):
            return "labels of shape %s, expected %s" % (self.zmat.shape, (self.m, self.L))
        if not 0 <= self.bshift <= BSHIFT_MAX:
            return "bshift %d not in 0..%d" % (self.bshift, BSHIFT_MAX)
        if not 0 <= self.dshift <= SHIFT_MAX:
            return "dshift %d not in 0..%d" % (self.dshift, SHIFT_MAX)
        if not 0 <= self.kshift <= SHIFT_MAX:
            return "kshift %d not in 0..%d" % (self.kshift, SHIFT_MAX)
        if not 1 <= self.table.size <= TABLE_MAX:
            return "kernel table of %d entries (1..%d)" % (self.table.size, TABLE_MAX)
        if self.table.min() < 0 or self.table.max() > ACT_MAX:
            return "kernel table entry outside 0..%d" % ACT_MAX
        if np.abs(self.protos).max() > q:
            return "prototype weight outside +-%d" % q
        if np.abs(self.protos).max() << self.bshift > ACT_MAX:
            return "prototype |Bq| << bshift exceeds %d" % ACT_MAX
        if np.abs(self.zmat).max() > q:
            return "label weight outside +-%d" % q
        if np.abs(self.zmat).sum(axis=0).max() * ACT_MAX > SMALL:
            return "label column: sum |Zq[:, l]| * 32767 exceeds 2^30 - 1"
        return None

    @property
    def nt(self):
        return int(self.table.size)

    # --- evaluation, vectorised over a batch of code vectors ---
    def fields(self, codes):
        """dict of per-example integer arrays: P (n x d), D (n x m), k (n x m), scores (n x L),
        pred (n)."""
        P = self.pj.project(np.asarray(codes, dtype=np.int64))
        E = sat(P[:, None, :] - (self.protos << self.bshift)[None, :, :])
        D = np.minimum(rshift_round(E * E, self.dshift).sum(axis=2), SMALL)
        i = D >> self.kshift
        k = np.where(i < self.nt, self.table[np.minimum(i, self.nt - 1)], 0)
        S = k @ self.zmat
        if self.multilabel:
            pred = ((S > 0) * (1 << np.arange(self.L, dtype=np.int64))).sum(axis=1)
        elif self.L == 1:
            pred = (S[:, 0] > 0).astype(np.int64)
        else:
            pred = S.argmax(axis=1)  # the first of the largest
        return {"P": P, "D": D, "k": k, "scores": S, "pred": pred}

    def predict(self, codes):
        return self.fields(codes)["pred"]

    def stored_weights(self):
        """The non-zero weights the device stores: W, the prototypes and the labels."""
        return int(sum(np.count_nonzero(a) for a in (self.pj.Zq, self.protos, self.zmat)))

    def field_names(self):
        return (["z%d" % r for r in range(self.d)] + ["D%d" % j for j in range(self.m)]
                + ["k%d" % j for j in range(self.m)] + ["s%d" % cl for cl in range(self.L)]
                + ["pred"])

    def field_rows(self, codes):
        """One list of ints per example, in the order of field_names() (the golden fields)."""
        f = self.fields(codes)
        out = np.concatenate([f["P"], f["D"], f["k"], f["scores"], f["pred"][:, None]], axis=1)
        return [[int(v) for v in row] for row in out]

    # --- the model file (contract 10.2) ---
    def payload(self, scaler=None):
        wb = self.wbits // 8
        head = _HEAD.pack(self.wbits, self.in_bits, self.dims, self.d, self.m, self.classes,
                          int(self.multilabel))
        kern = struct.pack("<BBBB", self.bshift, self.dshift, self.kshift, self.nt) + \
            self.table.astype("<u2").tobytes()
        mats = b""
        for enc, M in ((self.proto_enc, self.protos), (self.z_enc, self.zmat)):
            data = smat.encode(M, wb, enc)
            mats += struct.pack("<BH", enc, len(data)) + data
        return head + self.pj.pack() + kern + mats + kbfile.pack_scaler(scaler)

    @classmethod
    def _parse(cls, pl):
        (wbits, in_bits, dims, d, m, classes, multilabel), pj, off = parse_head(
            pl, "protonn", check_params)
        wb = wbits // 8
        L = n_scores(classes, multilabel)
        if off + 4 > len(pl):
            raise ValueError("truncated kernel section")
        bshift, dshift, kshift, nt = struct.unpack_from("<BBBB", pl, off)
        off += 4
        if off + 2 * nt > len(pl):
            raise ValueError("truncated kernel section")
        table = np.frombuffer(bytes(pl[off:off + 2 * nt]), dtype="<u2").astype(np.int64)
        off += 2 * nt
        mats = []
        for what, rows, cols in (("prototypes", m, d), ("labels", m, L)):
            if off + 3 > len(pl):
                raise ValueError("truncated %s" % what)
            enc, n = struct.unpack_from("<BH", pl, off)
            off += 3
            if enc not in (smat.DENSE, smat.SPARSE):
                raise ValueError("%s: unknown matrix encoding %d" % (what, enc))
            if off + n + 1 > len(pl):
                raise ValueError("truncated %s" % what)
            try:
                M = smat.decode(pl[off:off + n], rows, cols, wb, enc)
            except ValueError as e:
                raise ValueError("%s: %s" % (what, e)) from None
            mats.append((enc, M))
            off += n
        scaler = kbfile.unpack_scaler(pl, off, dims, "protonn", pj.in_bits)
        (penc, protos), (zenc, zmat) = mats
        model = cls(pj, protos, bshift, dshift, kshift, table, zmat, classes, bool(multilabel),
                    proto_enc=penc, z_enc=zenc)
        return model, scaler
