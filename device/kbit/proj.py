"""The streamed sparse projection (docs/contract.md, section 7.3), shared by Bonsai and ProtoNN.

    p = Proj(buf, off, dims, d, in_bits, wbits)      # parses and checks its model-file section
    p.update(j, c)                                   # feature j (strictly increasing) has code c
    p.finish(P)                                      # P[r] = sat(rshift_round(acc_r, shift_r)
                                                     #                + bias_r); then p.reset()

The stored matrix has one row per input feature (dims x d). `update` walks it with a cursor
that only moves forward, so a whole input costs one pass over the stored weights and the RAM is
d accumulators whatever the input dimension. Indices must come in increasing order within one
input (features not sent are 0); anything else raises ValueError and changes nothing.
`update` and `finish` allocate nothing and lock the heap while they run (where the port has
micropython.heap_lock), as kbit.rkp does.
"""
from .compat import const, lock as _lock, unlock as _unlock

from array import array

from . import smat

SMALL = const(0x3FFFFFFF)
ACT_MAX = const(32767)
SHIFT_MAX = const(30)


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
        if j <= self.last or j >= self.dims or c < 0 or c > self.top:
            raise ValueError("feature %d, code %d: indices increase, codes in 0..%d"
                             % (j, c, self.top))
        self.last = j
        if c == 0:
            return
        _lock()
        try:
            self._update(j, c)
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
