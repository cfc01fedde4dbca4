"""The integer quantizer (docs/contract.md, 1.1) and the model file's trailer (4.1).

    q = m.quantizer                    # None, or the file's Quantizer
    codes = m.quantize(array("h", raw))          # a new bytearray (assoc: array("b"))
    m.quantize(raw, codes)                       # filled in place: integer-only, no allocation

Raw readings -> codes, as every runtime computes them (contract 1.1), with M derived once here
from the file's integer bounds lo[j], hi[j]. The work is one loop, `Quantizer.codes(raw, out)`,
which trusts its arguments; `Quantizer.quantize` checks them first (before the heap is locked,
so the errors stay readable) and locks the heap around the loop where the port can.

A model file's trailer (contract 4.1) is read by kbit.kbfile.read_trailer and written by
kbit.kbfile.trailer; for a trailer with extras (quantizer, labels, float scaler) they import
this module to do it (read_extras, trailer): a model without extras never imports it.
"""
from array import array

from .compat import const, ints as _ints, lock as _lock, unlock as _unlock
from .kbfile import Inputs  # its quantize is the native module's too (below)

_Q_TOTAL = const(28)  # S + b: (x - lo) * M + R stays below 2^30, a small int
_SPAN_MAX = const(0x0FFFFFFF)
_INT_MIN = const(-0x40000000)
_INT_MAX = const(0x3FFFFFFF)
# the trailer's extras bits (contract 4.1)
SCALER = const(1)
QUANT = const(2)
LABELS = const(4)
PIPELINE = const(8)
_LABEL_LEN = const(32)
_CHUNK = const(64)


class Quantizer:
    """Raw integer readings -> the model's b-bit codes (contract 1.1). floor: ckp's rounding
    (R = 0); signed: assoc's values, the code minus 2^(b-1), into an array("b")."""

    def __init__(self, lo, hi, bits, floor=False, signed=False):
        n = len(lo)
        if len(hi) != n or not n or not 1 <= bits <= 16:
            raise ValueError("a quantizer takes lo and hi of equal length and bits in 1..16")
        for j in range(n):
            if not _INT_MIN <= lo[j] <= hi[j] <= _INT_MAX or hi[j] - lo[j] > _SPAN_MAX:
                raise ValueError("integer quantizer bounds out of range")
        self.n = n
        self.hi = hi if type(hi) is array else array("i", hi)  # as the file holds them
        S = _Q_TOTAL - bits
        R = 0 if floor else 1 << (S - 1)
        top = (1 << bits) - 1
        # Feature j's lo, up and M at t[3j], t[3j+1], t[3j+2]: one array, which the native
        # kernel reads in one pass (three words a reading, one pointer). up is the first
        # reading whose code is top: hi, or lo + d where d, the least x - lo with
        # (d * M + R) >> S >= top, is below the span. Below up the formula never exceeds top,
        # so the loops compare x with up and need no clamp; from up on, min(..., top) is top.
        t = array("i", bytes(12 * n))
        for j in range(n):
            a = lo[j]
            span = hi[j] - a
            t[3 * j] = a
            t[3 * j + 1] = hi[j]
            if span:  # M stays 0 only where span == 0: every reading gives code 0 there
                M = ((1 << _Q_TOTAL) + (span >> 1)) // span
                t[3 * j + 2] = M
                d = ((top << S) - R + M - 1) // M
                if d < span:
                    t[3 * j + 1] = a + d
        self.t = t
        self.bits = bits
        self.S = S
        self.R = R
        self.top = top
        self.off = 1 << (bits - 1) if signed else 0
        if _nat and bits <= 8:  # the native kernel's context (its codes are bytes)
            _nat.bind(self)

    def quantize(self, raw, out=None):
        """The codes of raw (n ints: array("h"), array("i"), a list...) in out (a bytearray of
        n; array("b") when signed, array("H") when bits > 8; a new one when None), returned.
        TypeError for a value that is not an int, ValueError for a wrong length, a reading outside
        -2^30..2^30-1 or an unfit out."""
        n = self.n
        _ints(raw, "readings")
        if len(raw) != n or min(raw) < _INT_MIN or max(raw) > _INT_MAX:
            raise ValueError("expected %d readings in -2^30..2^30-1" % n)
        tc = "b" if self.off else "B" if self.bits <= 8 else "H"
        if out is None:
            out = bytearray(n) if tc == "B" else array(tc, bytes(2 * n if tc == "H" else n))
        elif len(out) != n or not _holds(out, tc):
            raise ValueError("out must be %s of %d" % (
                "a bytearray" if tc == "B" else 'an array("%s")' % tc, n))
        _lock()
        try:
            return self.codes(raw, out)
        finally:
            _unlock()

    def codes(self, raw, out):
        """The loop of contract 1.1 over checked arguments (quantize's): out[j] for every j."""
        t = self.t
        S = self.S
        R = self.R
        top = self.top
        off = self.off
        i = 0
        for j in range(self.n):
            x = raw[j]
            a = t[i]
            if x <= a:
                c = 0
            elif x >= t[i + 1]:  # compared before x - lo is formed: that may exceed 2^30
                c = top if t[i + 2] else 0
            else:  # below up: never above top
                c = ((x - a) * t[i + 2] + R) >> S
            out[j] = c - off
            i += 3
        return out


def _holds(out, tc):
    """True when out is an array of typecode tc ("B": a bytearray too, "b" or "H"). MicroPython's
    arrays have no typecode: how stored values read back (wrapped, or not) tells the type."""
    if type(out) is bytearray:
        return tc == "B"
    if type(out) is not array:
        return False
    t = getattr(out, "typecode", None)
    if t is not None:
        return t == tc
    if tc == "b":
        out[0] = 255
        return out[0] == -1
    top = 255 if tc == "B" else 65535
    out[0] = top
    if out[0] != top:
        return False
    out[0] = top + 1
    return out[0] == 0


def _int32s(r, a):
    """Fill array a with little-endian int32s read from r; False when one is outside
    -2^30..2^30-1 (its top byte tells, so no long int is ever formed)."""
    buf = bytearray(_CHUNK)
    n = len(a)
    i = 0
    while i < n:
        k = min(_CHUNK >> 2, n - i)
        r.readinto(buf, 4 * k)
        for j in range(k):
            t = buf[4 * j + 3]
            if 64 <= t < 192:
                return False
            a[i + j] = (buf[4 * j] | buf[4 * j + 1] << 8 | buf[4 * j + 2] << 16) + \
                ((t - 256 if t > 127 else t) << 24)
        i += k
    return True


def read_extras(r, m, flags, n, name, bits, floor, signed, bad):
    """kbit.kbfile.read_trailer's work for a trailer that holds extras (its first byte, flags,
    read): sizes are compared with what is left of the payload before anything is allocated."""
    pipe = 6 if flags & PIPELINE else 0  # the last section's bytes (kbit.pipeline)
    left = r.left - pipe
    sec = 8 * n if flags & 3 else 0
    wrong = "%sbad %s trailer" % (bad, name)
    if flags & 0xF0 or flags & 3 == 3 or pipe and not flags & QUANT:
        return wrong
    if not flags & LABELS and left != sec or \
            flags & LABELS and not sec + 3 <= left <= sec + 1 + 255 * (1 + _LABEL_LEN):
        return wrong
    if flags & SCALER:
        s = m._scaler = bytes(r.read(sec))
        for i in range(3, sec, 4):  # exponent bits all ones: an infinite or NaN float32 bound
            if s[i] & 0x7F == 0x7F and s[i - 1] & 0x80:
                return wrong
    elif flags & QUANT:
        lo = array("i", bytes(4 * n))
        hi = array("i", bytes(4 * n))
        if not (_int32s(r, lo) and _int32s(r, hi)):
            return wrong
        try:
            give(m, lo, hi, bits, floor, signed)
        except ValueError:
            return wrong
    if flags & LABELS:
        k = r.read(1)[0]
        if not k:
            return wrong
        names = []
        for _ in range(k):
            ln = r.read(1)[0] if r.left > pipe else 0
            if not 1 <= ln <= _LABEL_LEN or ln > r.left - pipe:
                return wrong
            s = r.read(ln)
            for c in s:
                if c < 0x20 or c > 0x7E:
                    return wrong
            names.append(bytes(s).decode())
        if r.left != pipe:
            return wrong
        m.names = tuple(names)
    if pipe:
        from .pipeline import read
        m.pipeline = read(r, n)
        if m.pipeline is None:
            return wrong
    return None


def give(m, lo, hi, bits, floor=False, signed=False):
    """Give model m the integer quantizer of bounds lo, hi (array("i"): one per raw input) as
    its file would (contract 1.1); ValueError for bounds out of the contract's ranges."""
    m.quantizer = Quantizer(lo, hi, bits, floor, signed)
    if _nat and bits <= 8:
        _nat.attach(m)  # m.quantize found in m's own attributes (quant.c: attach)


def bounds(lo, hi, n):
    """The bounds of n raw inputs from what a user gives: an int each (a sensor's range, every
    input alike) or n ints each; ValueError/TypeError otherwise."""
    out = []
    for b in (lo, hi):
        if type(b) is int:
            a = array("i", bytes(4 * n))
            for j in range(n):
                a[j] = b
        else:
            _ints(b, "bounds")
            if len(b) != n:
                raise ValueError("expected %d bounds, got %d" % (n, len(b)))
            a = array("i", b)
        out.append(a)
    return out


def trailer(m):
    """kbit.kbfile.trailer's work for a model with extras: the bytes read_extras read."""
    sc = m._scaler
    q = m.quantizer
    names = m.names
    pipe = m.pipeline
    flags = (SCALER if sc is not None else 0) | (QUANT if q is not None else 0) | (
        PIPELINE if pipe is not None else 0)
    n = 1 + (len(sc) if sc is not None else 0) + (8 * q.n if q is not None else 0) + (
        6 if pipe is not None else 0)
    if names is not None:
        flags |= LABELS
        n += 1 + len(names)
        for s in names:
            n += len(s)
    out = bytearray(n)
    out[0] = flags
    i = 1
    if sc is not None:
        out[1:1 + len(sc)] = sc
        i += len(sc)
    if q is not None:
        t = q.t
        for k in range(2 * q.n):  # every lo, then every hi
            v = t[3 * k] if k < q.n else q.hi[k - q.n]
            out[i] = v & 0xFF
            out[i + 1] = v >> 8 & 0xFF
            out[i + 2] = v >> 16 & 0xFF
            out[i + 3] = v >> 24 & 0xFF
            i += 4
    if names is not None:
        out[i] = len(names)
        i += 1
        for s in names:
            out[i] = len(s)
            out[i + 1:i + 1 + len(s)] = s.encode()
            i += 1 + len(s)
    if pipe is not None:
        from .pipeline import pack
        out[i:i + 6] = pack(pipe)
    return out


# --- the native kernel: kb_quant.h as kbit/_kb_quant.mpy (kbit.compat.native) ---
# On the native path Quantizer.quantize and every model's quantize (Inputs.quantize) are the
# native module's own functions, so m.quantize(raw, out) runs no Python frame; they run the
# bytecode ones for what the kernel does not take (a list, no out, a wrong length or type, a
# model without a quantizer: the same errors, the same codes). A model whose file held a
# quantizer has its own m.quantize besides (read_extras: the native module's attach), which
# MicroPython finds without searching the classes; use_py switches those to the bytecode.
from .compat import native_methods as _native_methods  # noqa: E402

_nat, _use_q, NATIVE_WHY = _native_methods(Quantizer, "quant", ("quantize",))
_use_m = _native_methods(Inputs, "quant", (("quantize", "model_quantize"),))[1]


def use_native(on=True):
    """Quantize in the native module (when it loaded) or in bytecode; whether native now (also
    kbit.quant.native, what the replays report as the path)."""
    global native
    _use_m(on)
    native = _use_q(on)
    if _nat:
        _nat.use_py(not native)
    return native


native = Quantizer.native
