"""Bonsai, integer only (docs/contract.md, section 8).

    from kbit.bonsai import Bonsai
    with open("digits.kb", "rb") as f:
        m = Bonsai.load(f)
    for j in range(m.dims):            # features as they arrive: index, B-bit code
        m.update(j, code[j])           # indices increase within one input; skip zeros freely
    y = m.predict()                    # class (binary: 1 if score > 0); then ready for the next
    m.update_run(0, codes)             # or a whole input in one call (codes: bytes, bytearray),
    y = m.predict()                    # or a run: features start .. start+len(codes)-1
    m.P, m.leaf, m.scores              # the projected vector, the leaf reached, the scores

RAM does not grow with the input dimension: the projection keeps d accumulators (kbit.proj),
prediction uses P (d), the dot products of one node (1 + 2L) and the scores (L). The weights stay
in the model's payload buffer. `update`, `update_run` and `predict` allocate nothing and lock the
heap while they run (where the port has micropython.heap_lock). `update_run(start, codes)`
refuses what `update` would refuse for any of its features (an index not above the previous one
or beyond dims, a code above 2^B - 1: ValueError), before anything changes; on the native path
it is one call into the kernel for the whole run, against one per feature for `update` (about
2,400 cycles each on the Pico).

Native kernel: where the native module _kb_bonsai.mpy for this port is installed beside this
file, `update`, `update_run`, `reset` and `predict` are that module's functions, firmware_c's
kb_bonsai.h, with the same results and fields as the bytecode (kbit.compat.native); its state
(kb_bonsai_t: the accumulators, the parsed offsets) lives in the model's context `_ctx`, opaque
to Python, and the payload `buf` is then a bytes (what was checked cannot change). `m.native`
says which runs (NATIVE_WHY why not); `use_native(False)` switches back (between inputs, not in
the middle of one). The native kernel keeps 1 + 2L dot products on the C stack, so it takes at
most 64 classes: a model with more runs the bytecode (its `native` is False).
"""
from array import array

from . import kbfile, smat
from .compat import const
from .proj import (
    ACT_MAX,
    HEAD as _HEAD,
    SHIFT_MAX,
    SMALL,
    Model,
    Proj,
    check as _check_proj,
    decide,
    head,
    rshift_round,
    sat,
)

# the head: wbits in_bits dims(u16) proj (kbit.proj), then depth classes tanh_bits
DEPTH_MAX = const(6)
TANH_BITS_MAX = const(14)
_ERR_LIMIT = const(9)  # kb_err_t's KB_ERR_LIMIT (firmware_c/kb_file.h): see use_native


def check(wbits, in_bits, dims, proj, depth, classes, tanh_bits):
    """None when the parameters are inside the contract's ranges, else what is wrong."""
    err = _check_proj(wbits, in_bits, dims, proj)
    if err:
        return err
    if not 0 <= depth <= DEPTH_MAX:
        return "depth %d not in 0..%d" % (depth, DEPTH_MAX)
    if not 1 <= classes <= 255:
        return "classes %d not in 1..255" % classes
    if not 1 <= tanh_bits <= TANH_BITS_MAX:
        return "tanh_bits %d not in 1..%d" % (tanh_bits, TANH_BITS_MAX)
    return None


class Bonsai(Model):
    """predict(): the class (binary: 1 if the score is > 0, else 0; multi-class: the first
    highest score); it sets P, leaf and scores."""
    native = False  # True while update/reset/predict run the native kernel (use_native)
    NAME = "bonsai"
    TYPE = kbfile.TYPE_BONSAI

    def __init__(self, payload):
        """A model from its payload (bytes-like, kept: the weights are read from it).
        ValueError when the payload is outside the contract."""
        buf = payload
        if _nat and type(buf) is not bytes:  # the native kernel takes a payload that cannot
            buf = bytes(buf)  # change after it was checked
        self.wbits, self.in_bits, self.dims, self.d = head(buf, "bonsai")
        self.depth = buf[5]
        self.classes = buf[6]
        self.tanh_bits = buf[7]
        err = check(self.wbits, self.in_bits, self.dims, self.d, self.depth, self.classes,
                    self.tanh_bits)
        if err:
            raise ValueError(err)
        self.buf = buf
        d = self.d
        self.proj = Proj(buf, _HEAD, self.dims, d, self.in_bits, self.wbits)
        off = self.proj.end
        N = (1 << (self.depth + 1)) - 1
        self.N = N
        self.ni = (1 << self.depth) - 1
        L = 1 if self.classes <= 2 else self.classes
        self.L = L
        if off + 3 + 2 * N > len(buf):
            raise ValueError("truncated tree")
        self.tenc = buf[off]
        tlen = buf[off + 1] | buf[off + 2] << 8
        self.offs = off + 3  # u16 offsets[N]
        self.t0 = self.offs + 2 * N
        self.tend = self.t0 + tlen
        self.wsh = self.tend
        self.vsh = self.tend + N
        self.end = self.tend + 2 * N  # the host-only trailer follows
        if self.end > len(buf):
            raise ValueError("truncated tree")
        self.P = array("i", [0] * d)
        self.dots = array("i", [0] * (1 + 2 * L))
        self.scores = array("i", [0] * L)
        self.leaf = 0
        prev = 0
        for k in range(N):
            a = self._off(k)
            b = self._off(k + 1)
            if (k == 0 and a != 0) or b < a:
                raise ValueError("bad node offsets")
            if buf[self.wsh + k] > SHIFT_MAX or buf[self.vsh + k] > SHIFT_MAX:
                raise ValueError("node shift outside 0..30")
            rows = (1 if k < self.ni else 0) + 2 * L
            for r in range(rows):
                self.dots[r] = 0
            err = smat.check(buf, self.t0 + a, self.t0 + b, rows, d, self.wbits >> 3,
                             self.tenc, self.dots, False, SMALL // ACT_MAX)
            if err:
                raise ValueError(err)
            prev = b
        if prev > tlen:
            raise ValueError("bad node offsets")
        if _nat:  # the native kernel's state, made whether or not it runs now (use_native)
            err = _nat.bind(self)
            if err == _ERR_LIMIT:  # more classes than the native kernel holds: bytecode
                self._ctx = None
                self.native = False
            elif err:
                raise ValueError("the native kernel refused the payload (error %d)" % err)

    def _off(self, k):
        """Start of node k's block in the tree data (k == N: its end)."""
        if k == self.N:
            return self.tend - self.t0
        i = self.offs + 2 * k
        return self.buf[i] | self.buf[i + 1] << 8

    @classmethod
    def _payload(cls, r):
        # the payload's length up to the trailer is learnt piece by piece
        if r.left < _HEAD + 3:
            raise ValueError("truncated bonsai payload")
        h = r.read(_HEAD + 3)
        d = h[4]
        N = (1 << (h[5] + 1)) - 1 if h[5] <= DEPTH_MAX else 1
        n1 = _HEAD + 3 + (h[_HEAD + 1] | h[_HEAD + 2] << 8) + 3 * d + 3
        if n1 - len(h) > r.left:
            raise ValueError("truncated bonsai payload")
        part = bytearray(n1)
        part[:len(h)] = h
        r.readinto(memoryview(part)[len(h):], n1 - len(h))
        n2 = n1 + 2 * N + (part[n1 - 2] | part[n1 - 1] << 8) + 2 * N
        if n2 - n1 + 1 > r.left:
            raise ValueError("truncated bonsai payload")
        buf = bytearray(n2)
        buf[:n1] = part
        part = None
        r.readinto(memoryview(buf)[n1:], n2 - n1)
        return buf

    def _predict(self):
        P = self.P
        self.proj.finish(P)
        buf = self.buf
        dots = self.dots
        S = self.scores
        L = self.L
        eT = self.tanh_bits
        one = 1 << eT
        wb = self.wbits >> 3
        for cl in range(L):
            S[cl] = 0
        k = 0
        while True:
            internal = k < self.ni
            rows = 2 * L + (1 if internal else 0)
            smat.row_dots(buf, self.t0 + self._off(k), self.t0 + self._off(k + 1), self.d, wb,
                          self.tenc, P, dots, rows)
            ws = buf[self.wsh + k]
            vs = buf[self.vsh + k]
            r = 1 if internal else 0
            for cl in range(L):
                w = sat(rshift_round(dots[r], ws))
                t = rshift_round(dots[r + 1], vs)
                if t > one:
                    t = one
                elif t < -one:
                    t = -one
                S[cl] += rshift_round(w * t, eT)
                r += 2
            if not internal:
                break
            k = 2 * k + 1 if dots[0] > 0 else 2 * k + 2
        self.leaf = k
        return decide(S, L)


def load(src):
    """Bonsai.load(src)."""
    return Bonsai.load(src)


# --- the native kernel: kb_bonsai.h as kbit/_kb_bonsai.mpy (kbit.compat.native) ---
# On the native path Bonsai's update, update_run, reset and predict are the native module's
# own functions; a model without a context (see _ERR_LIMIT) runs the bytecode ones.
from .compat import native_methods as _native_methods  # noqa: E402

_nat, use_native, NATIVE_WHY = _native_methods(
    Bonsai, "bonsai", ("update", "update_run", "reset", ("_predict_id", "predict")),
    # what the native update and update_run run for a call the kernel does not take (kbit.proj)
    update_err=Bonsai._refused, update_run_err=Bonsai._run_other)
