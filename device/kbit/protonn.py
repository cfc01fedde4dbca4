"""ProtoNN, integer only (docs/contract.md, section 10).

    from kbit.protonn import ProtoNN
    with open("digits.kb", "rb") as f:
        m = ProtoNN.load(f)
    for j in range(m.dims):            # features as they arrive: index, B-bit code
        m.update(j, code[j])           # indices increase within one input; skip zeros freely
    y = m.predict()                    # class (multilabel: a bit mask); then ready for the next
    m.update_run(0, codes)             # or a whole input in one call (codes: bytes, bytearray),
    y = m.predict()                    # or a run: features start .. start+len(codes)-1
    m.P, m.D, m.k, m.scores            # projection, distances, kernel values, scores

RAM does not grow with the input dimension: the projection keeps d accumulators (kbit.proj),
prediction keeps P (d), D and k (m each) and the scores (L). Prototypes and labels are read
from the payload buffer with one forward cursor each. `update`, `update_run` and `predict`
allocate nothing and lock the heap while they run (where the port has micropython.heap_lock).
`update_run(start, codes)` refuses what `update` would refuse for any of its features (an index
not above the previous one or beyond dims, a code above 2^B - 1: ValueError), before anything
changes; on the native path it is one call into the kernel for the whole run, against one per
feature for `update` (about 2,400 cycles each on the Pico).

Native kernel: where the native module _kb_protonn.mpy for this port is installed beside this
file, `update`, `update_run`, `reset` and `predict` are that module's functions, firmware_c's
kb_protonn.h, with the same results and fields as the bytecode (kbit.compat.native); its state
(kb_protonn_t:
the accumulators, the parsed pointers) lives in the model's context `_ctx`, opaque to Python, and
the payload `buf` is then a bytes (what was checked cannot change). `m.native` says which runs
(NATIVE_WHY why not); `use_native(False)` switches back (between inputs, not in the middle of
one).
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

# the head: wbits in_bits dims(u16) d (kbit.proj), then m classes multilabel
BSHIFT_MAX = const(8)
MULTILABEL_MAX = const(30)
_END = const(0x3FFFFFFF)  # cursor position past every matrix: no stored weight left


def check(wbits, in_bits, dims, d, m, classes, multilabel):
    """None when the parameters are inside the contract's ranges, else what is wrong."""
    err = _check_proj(wbits, in_bits, dims, d)
    if err:
        return err
    if not 1 <= m <= 255:
        return "prototypes %d not in 1..255" % m
    if not 1 <= classes <= 255:
        return "classes %d not in 1..255" % classes
    if multilabel > 1:
        return "multilabel %d not 0 or 1" % multilabel
    if multilabel and classes > MULTILABEL_MAX:
        return "multilabel with %d classes (at most %d)" % (classes, MULTILABEL_MAX)
    return None


class _Cursor:
    """A forward walk over one stored matrix (smat): `pos` is the flat position of the pending
    stored weight (_END when none is left), at buf[i]."""

    def __init__(self, buf, start, end, wb, enc):
        self.buf = buf
        self.start = start
        self.end = end
        self.wb = wb
        self.enc = enc
        self.reset()

    def reset(self):
        self.i = self.start
        self.pos = 0
        if self.enc == smat.SPARSE or self.start >= self.end:
            self._seek(0)

    def _seek(self, pos):
        """Find the next stored weight from position pos on (SPARSE)."""
        buf = self.buf
        i = self.i
        while True:
            if i >= self.end:
                self.pos = _END
                break
            g = buf[i]
            i += 1
            if g:
                self.pos = pos + g - 1
                break
            pos += 255
        self.i = i

    def take(self):
        """The pending weight; the cursor moves to the next one."""
        w = smat.weight(self.buf, self.i, self.wb)
        self.i += self.wb
        if self.enc == smat.SPARSE:
            self._seek(self.pos + 1)
        elif self.i < self.end:
            self.pos += 1
        else:
            self.pos = _END
        return w


class ProtoNN(Model):
    """predict(): binary 1 if the score is > 0; multi-class the first highest score;
    multilabel the mask of the positive scores. It sets P, D, k and scores."""
    native = False  # True while update/reset/predict run the native kernel (use_native)
    NAME = "protonn"
    TYPE = kbfile.TYPE_PROTONN

    def __init__(self, payload):
        """A model from its payload (bytes-like, kept: the weights are read from it).
        ValueError when the payload is outside the contract."""
        buf = payload
        if _nat and type(buf) is not bytes:  # the native kernel takes a payload that cannot
            buf = bytes(buf)  # change after it was checked
        self.wbits, self.in_bits, self.dims, self.d = head(buf, "protonn")
        self.m = buf[5]
        self.classes = buf[6]
        self.multilabel = buf[7]
        err = check(self.wbits, self.in_bits, self.dims, self.d, self.m, self.classes,
                    self.multilabel)
        if err:
            raise ValueError(err)
        self.buf = buf
        d = self.d
        m = self.m
        wb = self.wbits >> 3
        L = self.classes if self.multilabel or self.classes > 2 else 1
        self.L = L
        self.proj = Proj(buf, _HEAD, self.dims, d, self.in_bits, self.wbits)
        off = self.proj.end
        if off + 4 > len(buf):
            raise ValueError("truncated kernel section")
        self.bshift = buf[off]
        self.dshift = buf[off + 1]
        self.kshift = buf[off + 2]
        self.nt = buf[off + 3]
        self.tab = off + 4
        off = self.tab + 2 * self.nt
        if off > len(buf):
            raise ValueError("truncated kernel section")
        if self.bshift > BSHIFT_MAX:
            raise ValueError("bshift %d not in 0..%d" % (self.bshift, BSHIFT_MAX))
        if self.dshift > SHIFT_MAX:
            raise ValueError("dshift %d not in 0..%d" % (self.dshift, SHIFT_MAX))
        if self.kshift > SHIFT_MAX:
            raise ValueError("kshift %d not in 0..%d" % (self.kshift, SHIFT_MAX))
        if self.nt == 0:
            raise ValueError("kernel table of 0 entries")
        for i in range(self.nt):
            if buf[self.tab + 2 * i + 1] > 127:
                raise ValueError("kernel table entry outside 0..32767")
        self.P = array("i", [0] * d)
        self.D = array("i", [0] * m)
        self.k = array("i", [0] * m)
        self.scores = array("i", [0] * L)
        ends = []
        for what, rows, cols, by_col, limit in (("prototypes", m, d, False, SMALL),
                                                ("labels", m, L, True, SMALL // ACT_MAX)):
            if off + 3 > len(buf):
                raise ValueError("truncated %s" % what)
            enc = buf[off]
            start = off + 3
            off = start + (buf[off + 1] | buf[off + 2] << 8)
            if enc != smat.DENSE and enc != smat.SPARSE:
                raise ValueError("%s: unknown matrix encoding %d" % (what, enc))
            if off > len(buf):
                raise ValueError("truncated %s" % what)
            sums = self.scores if by_col else self.D  # scratch here, zeroed again below
            for r in range(len(sums)):
                sums[r] = 0
            err = smat.check(buf, start, off, rows, cols, wb, enc, sums, by_col, limit)
            if err:
                if err.startswith("weights too large"):
                    err = "label column: sum |Zq[:, l]| * 32767 exceeds 2^30 - 1"
                raise ValueError("%s: %s" % (what, err))
            ends.append((start, off, enc))
        self.end = off  # the host-only trailer follows
        self.pc = _Cursor(buf, ends[0][0], ends[0][1], wb, ends[0][2])
        self.zc = _Cursor(buf, ends[1][0], ends[1][1], wb, ends[1][2])
        pc = self.pc
        top = ACT_MAX >> self.bshift
        while pc.pos != _END:
            w = pc.take()
            if w > top or w < -top:
                raise ValueError("prototype |Bq| << bshift exceeds 32767")
        pc.reset()
        for j in range(m):
            self.D[j] = 0
        for cl in range(L):
            self.scores[cl] = 0
        if _nat:  # the native kernel's state, made whether or not it runs now (use_native)
            err = _nat.bind(self)
            if err:
                raise ValueError("the native kernel refused the payload (error %d)" % err)

    @classmethod
    def _payload(cls, r):
        # the payload's length up to the trailer is learnt section by section: each read ends
        # with the u16 length (or count) of the next section
        buf = _more(r, bytearray(0), _HEAD, "truncated protonn payload")
        buf = _more(r, buf, _HEAD + 3, "truncated projection")
        n = buf[-2] | buf[-1] << 8
        buf = _more(r, buf, len(buf) + n + 3 * buf[4], "truncated projection")
        buf = _more(r, buf, len(buf) + 4, "truncated kernel section")
        buf = _more(r, buf, len(buf) + 2 * buf[-1], "truncated kernel section")
        for what in ("truncated prototypes", "truncated labels"):
            buf = _more(r, buf, len(buf) + 3, what)
            n = buf[-2] | buf[-1] << 8
            if n + 1 > r.left:  # the matrix and at least the trailer's flag
                raise ValueError(what)
            buf = _more(r, buf, len(buf) + n, what)
        return buf

    def _predict(self):
        P = self.P
        self.proj.finish(P)
        buf = self.buf
        S = self.scores
        D = self.D
        K = self.k
        d = self.d
        L = self.L
        bshift = self.bshift
        dshift = self.dshift
        kshift = self.kshift
        pc = self.pc
        zc = self.zc
        pc.reset()
        zc.reset()
        for cl in range(L):
            S[cl] = 0
        p0 = 0
        z0 = 0
        for j in range(self.m):
            s = 0
            for r in range(d):
                b = 0
                if pc.pos == p0 + r:
                    b = pc.take() << bshift
                e = sat(P[r] - b)
                t = rshift_round(e * e, dshift)
                s = SMALL if t > SMALL - s else s + t  # never forms a sum past SMALL
            p0 += d
            D[j] = s
            i = s >> kshift
            k = 0
            if i < self.nt:
                k = buf[self.tab + 2 * i] | buf[self.tab + 2 * i + 1] << 8
            K[j] = k
            z0 += L
            while zc.pos < z0:  # the labels of prototype j, also when k = 0
                cl = zc.pos - z0 + L
                S[cl] += zc.take() * k
        if self.multilabel:
            mask = 0
            for cl in range(L):
                if S[cl] > 0:
                    mask |= 1 << cl
            return mask
        return decide(S, L)


def _more(r, buf, n, what):
    """buf grown to n payload bytes read from r (ValueError `what` when the file is shorter)."""
    if n - len(buf) > r.left:
        raise ValueError(what)
    out = bytearray(n)
    out[:len(buf)] = buf
    r.readinto(memoryview(out)[len(buf):], n - len(buf))
    return out


def load(src):
    """ProtoNN.load(src)."""
    return ProtoNN.load(src)


# --- the native kernel: kb_protonn.h as kbit/_kb_protonn.mpy (kbit.compat.native) ---
# On the native path ProtoNN's update, update_run, reset and predict are the native module's
# own functions; a model without a context (none here) runs the bytecode ones.
from .compat import native_methods as _native_methods  # noqa: E402

_nat, use_native, NATIVE_WHY = _native_methods(
    ProtoNN, "protonn", ("update", "update_run", "reset", ("_predict_id", "predict")),
    # what the native update and update_run run for a call the kernel does not take (kbit.proj)
    update_err=ProtoNN._refused, update_run_err=ProtoNN._run_other)
