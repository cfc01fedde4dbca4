"""The streamed sparse projection P = sat(Zx) shared by the host-trained predictors (Bonsai's Z,
ProtoNN's W): quantization from float, the integer reference, and its section of a model file
(docs/contract.md, section 7.3).

A device receives the input as B-bit codes c_j (contract section 1), one feature at a time:
`update(j, c_j)` adds c_j times row j of the stored matrix (input-major: one row per input
feature, one column per projected dimension) to d int32 accumulators, then

    P_r = sat(rshift_round(acc_r, shift_r) + bias_r)           r = 0 .. d-1, |P_r| <= 32767

The float projection zhat = Zf x01 + bf (x01 = c / 2^B, what the device sees) is quantized with
one power-of-two scale per projected dimension (column of the stored matrix) and one scale eP of
P chosen on the training data, so shift_r = e_r + B - eP and bias_r = round(bf_r 2^eP). Input
scaling (mean, spread) is folded into Zf and bf by the model before it gets here.

Section layout (little-endian):
    u8  encoding (smat DENSE/SPARSE) | u16 nbytes | matrix (dims x d) | u8 shift[d] | i16 bias[d]

A model on the projection starts its payload with the same head, HEAD: the projection's
parameters (checked by check_params) then three bytes of the model's own; parse_head reads it
and the projection section after it.
"""
import struct

import numpy as np

from kilobit.core import smat
from kilobit.core.fixedpoint import (
    ACT_MAX,
    SMALL,
    pow2_exponent,
    qmax,
    quantize,
    range_exponent,
    rshift_round,
    sat,
)

SHIFT_MAX = 30
PROJ_MAX = 64
HEAD = struct.Struct("<BBHBBBB")  # wbits in_bits dims d, then three bytes the model defines
HEAD_BYTES = HEAD.size


def check_params(wbits, in_bits, dims, d):
    """None when the projection's parameters of a head are inside the contract's ranges, else
    what is wrong."""
    if wbits not in (8, 16):
        return "wbits %r not 8 or 16" % (wbits,)
    if not 1 <= in_bits <= 8:
        return "in_bits %d not in 1..8" % in_bits
    if not 1 <= dims <= 0xFFFF:
        return "dims %d not in 1..65535" % dims
    if not 1 <= d <= PROJ_MAX:
        return "proj %d not in 1..%d" % (d, PROJ_MAX)
    return None


def parse_head(pl, name, check):
    """(the seven fields of HEAD, Projection, offset after it) from the payload pl of model
    `name`; check(*fields) is the model's check_params. ValueError says what is wrong."""
    if len(pl) < HEAD_BYTES:
        raise ValueError("truncated %s payload" % name)
    fields = HEAD.unpack_from(pl)
    err = check(*fields)
    if err:
        raise ValueError(err)
    wbits, in_bits, dims, d = fields[:4]
    pj, off = Projection.unpack(pl, HEAD_BYTES, dims, d, in_bits, wbits)
    return fields, pj, off


class Projection:
    """Integer projection: Zq (dims x d, int), shift (d,), bias (d,), with in_bits and wbits."""

    def __init__(self, Zq, shift, bias, in_bits, wbits, enc=None):
        self.Zq = np.asarray(Zq, dtype=np.int64)
        self.dims, self.d = self.Zq.shape
        self.shift = np.asarray(shift, dtype=np.int64)
        self.bias = np.asarray(bias, dtype=np.int64)
        self.in_bits, self.wbits = in_bits, wbits
        if enc is None:
            enc = smat.best_encoding(self.Zq, wbits // 8)[0]
        self.enc = enc
        err = self.check()
        if err:
            raise ValueError("bad projection: " + err)

    def check(self):
        """None when inside the contract (every accumulator within +-SMALL), else what is wrong."""
        if self.shift.shape != (self.d,) or self.bias.shape != (self.d,):
            return "shift/bias length differs from the projection"
        if self.shift.min(initial=0) < 0 or self.shift.max(initial=0) > SHIFT_MAX:
            return "shift outside 0..%d" % SHIFT_MAX
        if np.abs(self.bias).max(initial=0) > ACT_MAX:
            return "bias outside +-%d" % ACT_MAX
        q = qmax(self.wbits)
        if np.abs(self.Zq).max(initial=0) > q:
            return "weight outside +-%d" % q
        top = (1 << self.in_bits) - 1
        if (np.abs(self.Zq).sum(axis=0) * top).max(initial=0) > SMALL:
            return "sum |Z[:, r]| * (2^B - 1) exceeds 2^30 - 1"
        return None

    def acc(self, codes):
        """The accumulators after streaming every feature (n x d, exact int64)."""
        return np.asarray(codes, dtype=np.int64) @ self.Zq

    def project(self, codes):
        """P for a batch of code vectors (n x dims) -> (n x d), exactly as the devices."""
        A = self.acc(codes)
        P = np.empty_like(A)
        for r in range(self.d):
            P[:, r] = rshift_round(A[:, r], int(self.shift[r])) + self.bias[r]
        return sat(P)

    def nbytes(self):
        """Bytes of this section on the device."""
        return len(self.pack())

    def pack(self):
        data = smat.encode(self.Zq, self.wbits // 8, self.enc)
        return (struct.pack("<BH", self.enc, len(data)) + data
                + bytes(int(s) for s in self.shift)
                + self.bias.astype("<i2").tobytes())

    @classmethod
    def unpack(cls, buf, off, dims, d, in_bits, wbits):
        """(Projection, offset after it) from buf[off:]; ValueError says what is wrong."""
        if off + 3 > len(buf):
            raise ValueError("truncated projection")
        enc, n = struct.unpack_from("<BH", buf, off)
        off += 3
        if enc not in (smat.DENSE, smat.SPARSE):
            raise ValueError("unknown matrix encoding %d" % enc)
        if off + n + 3 * d > len(buf):
            raise ValueError("truncated projection")
        Zq = smat.decode(buf[off:off + n], dims, d, wbits // 8, enc)
        off += n
        shift = np.frombuffer(bytes(buf[off:off + d]), dtype=np.uint8).astype(np.int64)
        off += d
        bias = np.frombuffer(bytes(buf[off:off + 2 * d]), dtype="<i2").astype(np.int64)
        off += 2 * d
        return cls(Zq, shift, bias, in_bits, wbits, enc), off


def p_exponent(zhat_train):
    """eP: the scale of P, chosen on the training data with 2x headroom below saturation."""
    return range_exponent(float(np.abs(zhat_train).max(initial=0.0)), ACT_MAX // 2)


def quantize_projection(Zf, bf, in_bits, wbits, eP):
    """(Projection, eP) for zhat = Zf x01 + bf (Zf: d x dims floats on the x01 = c/2^B scale).

    eP is lowered when a column's weights are too large for shift_r = e_r + B - eP >= 0; the
    eP returned is the one the projection was made with."""
    Zf = np.asarray(Zf, dtype=np.float64)
    d, dims = Zf.shape
    q = qmax(wbits)
    top = (1 << in_bits) - 1
    es = [pow2_exponent(Zf[r], q, l1_limit=SMALL, in_max=top) for r in range(d)]
    eP = min(eP, min(es) + in_bits)
    Zq = np.zeros((dims, d), dtype=np.int64)
    shift = np.zeros(d, dtype=np.int64)
    for r in range(d):
        e = min(es[r], eP - in_bits + SHIFT_MAX)  # shift_r in 0..SHIFT_MAX
        Zq[:, r] = quantize(Zf[r], e, q)
        shift[r] = e + in_bits - eP
    bias = np.clip(np.floor(np.asarray(bf, dtype=np.float64) * 2.0 ** eP + 0.5),
                   -ACT_MAX, ACT_MAX).astype(np.int64)
    return Projection(Zq, shift, bias, in_bits, wbits), eP


def random_projection(g, dims, d, wbits, in_bits, enc, zero_bias=False):
    """A random Projection inside the contract for golden files (numpy Generator g): the
    extremes of the weight range, a gap of escapes when SPARSE and dims > 60, and scales such
    that a typical accumulator maps near 2^13 while the largest ones saturate."""
    q = qmax(wbits)
    top = (1 << in_bits) - 1
    zq = min(q, SMALL // (top * dims))
    dens = 0.15 if enc == smat.SPARSE else 1.0
    Zq = g.integers(-zq, zq + 1, (dims, d)) * (g.random((dims, d)) < dens)
    if enc == smat.SPARSE and dims > 60:
        Zq[dims // 3: dims // 3 + 40] = 0  # a gap of more than 255 positions: escapes
    Zq[0, 0] = zq
    Zq[-1, -1] = -zq
    typ = max(1.0, np.sqrt((Zq != 0).sum(axis=0).max()) * zq * top / 2)
    base = int(np.clip(np.floor(np.log2(typ)) - 12, 0, SHIFT_MAX))
    shift = np.clip(base + g.integers(-1, 2, d), 0, SHIFT_MAX)
    bias = np.zeros(d, dtype=np.int64) if zero_bias else g.integers(-4096, 4097, d)
    return Projection(Zq, shift, bias, in_bits, wbits, enc=enc)


def golden_inputs(dims, in_bits, n, seed):
    """Random inputs with the hard cases mixed in: all zero, all at the maximum code, mostly
    zero (sparse streams), and single extremes."""
    g = np.random.default_rng(seed + 7)
    top = (1 << in_bits) - 1
    out = [[0] * dims, [top] * dims]
    for _ in range(n - 2):
        r = g.random()
        if r < 0.3:
            u = g.integers(0, top + 1, dims) * (g.random(dims) < 0.15)
        elif r < 0.4:
            u = np.where(g.random(dims) < 0.5, top, 0)
        else:
            u = g.integers(0, top + 1, dims)
        out.append([int(c) for c in u])
    return out


def golden_doc(name, model, params, inputs=None, model_file=None):
    """The golden document (kilobit.core.goldenfile) of `model`, an integer predictor on the
    projection called `name`: its model file (`model_file`, default the model's own bytes) and
    its fields for `inputs` (default golden_inputs(model.dims, model.in_bits, steps, seed) from
    params)."""
    from kilobit.core import goldenfile
    if inputs is None:
        inputs = golden_inputs(model.dims, model.in_bits, params["steps"], params["seed"])
    return {
        "format": goldenfile.FORMAT, "version": goldenfile.VERSION, "model": name,
        "params": params,
        "model_file": (model.to_bytes() if model_file is None else model_file).hex(),
        "fields": model.field_names(),
        "steps": ["P " + " ".join(map(str, u)) for u in inputs],
        "expect": model.field_rows(inputs),
    }
