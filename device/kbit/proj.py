"""The streamed sparse projection (docs/contract.md, section 7.3), shared by Bonsai and ProtoNN.

    p = Proj(buf, off, dims, d, in_bits, wbits)      # parses and checks its model-file section
    p.update(j, c)                                   # feature j (strictly increasing) has code c
    p.update_run(start, codes)                       # features start.. have codes[0..n-1]
    p.finish(P)                                      # P[r] = sat(rshift_round(acc_r, shift_r)
                                                     #                + bias_r); then p.reset()

The models on the projection (Bonsai, ProtoNN) share more than the projection itself, and it
lives here once: the payload head (`head`, `check`: wbits, in_bits, dims, d, then three bytes of
the model's own), and `Model`, their common base: update/reset/predict around the model's
`_predict`, load, the host-only trailer of the model file, and `decide` (the class from the
scores).

The stored matrix has one row per input feature (dims x d). `update` walks it with a cursor
that only moves forward, so a whole input costs one pass over the stored weights and the RAM is
d accumulators whatever the input dimension. Indices must come in increasing order within one
input (features not sent are 0); anything else raises ValueError and changes nothing.
`update_run(start, codes)` is `update(start + k, codes[k])` for every k in one call (a whole
input: `update_run(0, codes)`), with the same refusals, checked for the whole run before
anything changes. `update`, `update_run` and `finish` allocate nothing and lock the heap while
they run (where the port has micropython.heap_lock), as kbit.rkp does.
"""
from array import array

from . import kbfile, smat
from .compat import (
    check_codes as _check_codes,
    const,
    ints as _ints,
    label_of as _label_of,
    lock as _lock,
    unlock as _unlock,
)
from .kbfile import Inputs, read_trailer, trailer

SMALL = const(0x3FFFFFFF)
ACT_MAX = const(32767)
SHIFT_MAX = const(30)
HEAD = const(8)  # wbits in_bits dims(u16) d, then three bytes the model defines
PROJ_MAX = const(64)


def check(wbits, in_bits, dims, d):
    """None when the head's projection parameters are inside the contract's ranges, else what
    is wrong."""
    if wbits != 8 and wbits != 16:
        return "wbits %d not 8 or 16" % wbits
    if not 1 <= in_bits <= 8:
        return "in_bits %d not in 1..8" % in_bits
    if not 1 <= dims <= 0xFFFF:
        return "dims %d not in 1..65535" % dims
    if not 1 <= d <= PROJ_MAX:
        return "proj %d not in 1..%d" % (d, PROJ_MAX)
    return None


def head(buf, name):
    """(wbits, in_bits, dims, d) from the head of a payload; ValueError when it is shorter than
    HEAD bytes. The model checks them (with its own three bytes) after."""
    if len(buf) < HEAD:
        raise ValueError("truncated %s payload" % name)
    return buf[0], buf[1], buf[2] | buf[3] << 8, buf[4]


def decide(S, L):
    """The class from the scores S[0..L-1]: binary (L == 1) 1 if S[0] > 0, else the first
    highest."""
    if L == 1:
        return 1 if S[0] > 0 else 0
    best = 0
    for cl in range(1, L):
        if S[cl] > S[best]:
            best = cl
    return best


class Model(Inputs):
    """The base of the models on a streamed projection. A subclass sets NAME and TYPE (its
    model file's name and type), self.proj, self.dims, self.in_bits, self.buf and self.end (the
    payload up to its trailer) in __init__(payload), and defines _payload(r) (its payload, read
    from a kbfile.Reader up to the trailer) and _predict(). The integer quantizer and the
    user's labels (`names`) come from the trailer (kbit.quant.Inputs)."""

    multilabel = 0  # a multilabel model answers a mask of classes, never a label

    def update(self, j, c):
        """Feature j has code c (0 .. 2^in_bits - 1); j increases within one input."""
        self.proj.update(j, c)

    def update_run(self, start, codes):
        """Features start .. start + len(codes) - 1 have the codes (a buffer of bytes, or any
        sequence of ints): update(start + k, codes[k]) for each k, in one call, every index and
        code checked before anything changes. A whole input: update_run(0, codes)."""
        self.proj.update_run(start, codes)

    def reset(self):
        """Drop the input in progress."""
        self.proj.reset()

    # The native kernel's hooks (kbit.bonsai, kbit.protonn: the native module's update_err and
    # update_run_err), for a call its kernel does not take. The input in progress lives in the
    # kernel's context then, not in self.proj: these raise the bytecode's errors, or pass the
    # run back to the kernel as a bytes.
    def _refused(self, j, c):
        """An update the kernel refuses: the bytecode's error."""
        raise _update_error(j, c, self.proj.top)

    def _run_other(self, start, codes):
        """A run the kernel refuses or cannot read (codes that are not a buffer of bytes: a
        list, say): a run of codes in 0 .. 2^B - 1 that is not a bytes goes back to the kernel
        as one (which refuses it by its indices, if at all), anything else gets the bytecode's
        error."""
        _run_types(start, codes)
        n = len(codes)
        top = self.proj.top
        if n and type(codes) is not bytes and min(codes) >= 0 and max(codes) <= top:
            return self.update_run(start, bytes(codes))
        raise _run_error(start, n, self.dims, top)

    def predict(self, codes=None):
        """The prediction for codes (all dims of them: the input in progress is dropped), or
        with none for the input streamed since the last predict (the model's class docstring
        says what it is and which fields it sets): the class's label when the model's file
        named it (names), else the id. Codes are refused (TypeError, ValueError) before
        anything changes, as every model refuses them (kbit.compat's checks)."""
        if codes is not None:
            # a run shorter than dims is valid for update_run, not here; a bytearray in range
            # (the kernel's codes) passes without a call
            if type(codes) is not bytearray or len(codes) != self.dims or \
                    max(codes) > self.proj.top:
                _check_codes(codes, self.dims, 0, self.proj.top)
            self.reset()
            self.update_run(0, codes)
        i = self._predict_id()
        names = self.names
        return i if names is None or self.multilabel else _label_of(i, names)

    def _predict_id(self):  # native: the kernel's predict
        _lock()
        try:
            return self._predict()
        finally:
            _unlock()

    @classmethod
    def load(cls, src):
        """A model from a .kb file (a path, bytes-like or a stream with readinto()). Raises
        kbfile.ModelFileError."""
        return kbfile.load(cls, src, cls.NAME)

    @classmethod
    def _read(cls, r):
        m = cls(cls._payload(r))
        err = read_trailer(r, m, m.dims, cls.NAME, m.in_bits)
        if err:
            raise ValueError(err)
        return m

    def save(self, stream):
        """Write this model as a .kb file: its payload and the trailer it was loaded with."""
        kbfile.write(stream, self.TYPE, (memoryview(self.buf)[:self.end], trailer(self)))


def _update_error(j, c, top):
    if type(j) is not int or type(c) is not int:
        return TypeError("a feature index and a code are ints, not %s and %s"
                         % (type(j).__name__, type(c).__name__))
    return ValueError("feature %d, code %d: indices increase, codes in 0..%d" % (j, c, top))


def _run_types(start, codes):
    """TypeError unless start is an int and codes are ints (kbit.compat.ints)."""
    if type(start) is not int:
        raise TypeError("a run starts at an int feature index, not %s" % type(start).__name__)
    _ints(codes)


def _run_error(start, n, dims, top):
    return ValueError("features %d..%d: indices increase, below %d, codes in 0..%d"
                      % (start, start + n - 1, dims, top))


def rshift_round(x, s):
    """floor((x + 2^(s-1)) / 2^s) for s >= 1, x for s == 0 (contract 7.1), no intermediate
    beyond |x|."""
    if s == 0:
        return x
    return (x >> s) + ((x >> (s - 1)) & 1)


def sat(x):
    if x > ACT_MAX:
        return ACT_MAX
    if x < -ACT_MAX:
        return -ACT_MAX
    return x


class Proj:
    def __init__(self, buf, off, dims, d, in_bits, wbits):
        """Parse the section at buf[off:]; self.end is the offset after it. ValueError when the
        section is cut short or outside the contract."""
        if off + 3 > len(buf):
            raise ValueError("truncated projection")
        self.buf = buf
        self.enc = buf[off]
        n = buf[off + 1] | buf[off + 2] << 8
        self.z0 = off + 3
        self.zend = self.z0 + n
        self.end = self.zend + 3 * d
        if self.end > len(buf):
            raise ValueError("truncated projection")
        self.dims = dims
        self.d = d
        self.wb = wbits >> 3
        self.top = (1 << in_bits) - 1
        self.acc = array("i", [0] * d)
        err = smat.check(buf, self.z0, self.zend, dims, d, self.wb, self.enc, self.acc, True,
                         SMALL // self.top)
        if err:
            raise ValueError(err)
        self.shift = self.zend
        self.bias = array("h", [0] * d)
        for r in range(d):
            if buf[self.shift + r] > SHIFT_MAX:
                raise ValueError("shift outside 0..30")
            v = buf[self.zend + d + 2 * r] | buf[self.zend + d + 2 * r + 1] << 8
            v = v - 65536 if v > 32767 else v
            if v < -ACT_MAX:
                raise ValueError("bias outside +-32767")
            self.bias[r] = v
        self.reset()

    def reset(self):
        """Forget the input in progress: accumulators 0, cursor on the first stored weight."""
        for r in range(self.d):
            self.acc[r] = 0
        self.last = -1
        self.row = 0
        self.col = 0
        self.i = self.z0
        if self.enc == smat.SPARSE:
            self._seek(0)

    def _seek(self, col):
        """Move the cursor from position (self.row, col) to the next stored weight."""
        buf = self.buf
        i = self.i
        d = self.d
        row = self.row
        while True:
            if i >= self.zend:
                row = self.dims  # no weight left
                break
            g = buf[i]
            i += 1
            if g:
                col += g - 1
                break
            col += 255
        while col >= d:
            col -= d
            row += 1
        self.row = row
        self.col = col
        self.i = i

    def update(self, j, c):
        """Add code c of feature j. j must exceed the previous j of this input; c in 0..2^B-1."""
        if type(j) is not int or type(c) is not int or j <= self.last or \
                j >= self.dims or c < 0 or c > self.top:
            raise _update_error(j, c, self.top)
        self.last = j
        if c == 0:
            return
        _lock()
        try:
            self._update(j, c)
        finally:
            _unlock()

    def update_run(self, start, codes):
        """Add codes[k] of feature start + k for every k; refused (ValueError, nothing changed)
        as update would refuse any of them."""
        _run_types(start, codes)
        n = len(codes)
        if n == 0:
            return
        if start <= self.last or start + n > self.dims or min(codes) < 0 or \
                max(codes) > self.top:
            raise _run_error(start, n, self.dims, self.top)
        self.last = start + n - 1
        _lock()
        try:
            for k in range(n):
                c = codes[k]
                if c:
                    self._update(start + k, c)
        finally:
            _unlock()

    def _update(self, j, c):
        buf = self.buf
        acc = self.acc
        wb = self.wb
        if self.enc == smat.DENSE:
            i = self.z0 + j * self.d * wb
            for r in range(self.d):
                v = buf[i]
                if wb == 1:
                    if v > 127:
                        v -= 256
                else:
                    v |= buf[i + 1] << 8
                    if v > 32767:
                        v -= 65536
                acc[r] += v * c
                i += wb
            return
        while self.row <= j:
            i = self.i
            if self.row == j:
                v = buf[i]
                if wb == 1:
                    if v > 127:
                        v -= 256
                else:
                    v |= buf[i + 1] << 8
                    if v > 32767:
                        v -= 65536
                acc[self.col] += v * c
            self.i = i + wb
            self._seek(self.col + 1)

    def finish(self, P):
        """P[r] for the input streamed so far, then reset() for the next input."""
        _lock()
        try:
            buf = self.buf
            for r in range(self.d):
                P[r] = sat(rshift_round(self.acc[r], buf[self.shift + r]) + self.bias[r])
            self.reset()
        finally:
            _unlock()
