"""Compressed Kernel Perceptron, integer only (docs/contract.md, section 6).

    from kbit.ckp import CKP
    with open("banana-ckp.kb", "rb") as f:
        m = CKP.load(f)
    codes = bytearray(m.dims)          # P-bit codes 0 .. 2^P-1 (floor quantization, 6.1)
    s = m.learn(codes, 1)              # score before learning; m.mistake tells if it learnt
    m.predict(codes)                   # 1 if score > 0 else 0

The budget is L bits: `memory` is one bytearray of exactly ceil(L/8) bytes holding every
support vector, label bit first, then its M codes at its own precision (b + 1 bits for the
first n1 slots, b for the rest, from the schedule of 6.2). Adding a support vector lowers the
precision of the stored ones in place (each code loses its low bits: bins nest). Whether a
mistake adds or replaces a random support vector is decided by the loss_q table the host made
for this L, M and A (6.5) against ||w||^2 * C, kept in `norm` with the weights of the score.

`score`, `predict` and `learn` allocate nothing: every intermediate is a small int and the only
buffer they use, the centres of a replaced support vector, is made with the model. Like
kbit.rkp they lock the heap themselves where the port has micropython.heap_lock.

Native kernel: where the native module _kb_ckp.mpy for this port is installed beside this file,
`score`, `learn` and `predict` are that module's functions, firmware_c's kb_ckp.h, with the same
results as the bytecode below (kbit.compat.native); `m.native` says which runs (NATIVE_WHY why
not), `use_native(False)` switches back. Codes that are not a buffer of bytes (a list, say) take
the bytecode either way. As in kbit.rkp, the kernel's context `_ctx` is made with the model and
keeps no state of its own (firmware_c/natmod/kbn_mp.h).
"""
from array import array

from . import kbfile
from .compat import (
    bounds as _bounds,
    check_codes as _check_codes,
    const,
    label_names as _label_names,
    lock as _lock,
    unlock as _unlock,
)
from .kbfile import Binary, read_trailer, trailer
from .kernel import TABLE_MAX as _TABLE_MAX, _weight, check_table
from .rng import scale, step

_CAP = const(0x3FFFFFFF)  # largest MicroPython small int
# The next ring a sweep of the score found (-1: none): a module buffer, as a returned tuple
# would be an allocation.
_NEXT = array("i", (0,))
_NORM_MIN = const(-0x3FFFFFFF - 1)  # -2^30, spelt so that no step leaves the small ints
_PARAMS = const(17)  # bits dims L width C rng count norm ntab: <BHHHBHHiB
_L_MAX = const(0xFFFF)


def mem_bytes(L):
    return (L + 7) >> 3


def max_svs(L, dims):
    """B_max = floor(L / (M + 1)) (contract 6.2)."""
    return L // (dims + 1)


def schedule(L, dims, B, bits):
    """(b, n1) for B >= 1 support vectors (contract 6.2)."""
    Lm = (L - B) // dims
    b = Lm // B
    if b >= bits:
        return bits, 0
    return b, Lm - B * b


def check(bits, dims, L, width, C, state, count, norm):
    """None when the parameters are inside the contract, else what is wrong (a str)."""
    if not 1 <= bits <= 8:
        return "bits %d not in 1..8" % bits
    if not 1 <= dims <= 0xFFFF:
        return "dims %d not in 1..65535" % dims
    top = (2 << bits) - 1
    if dims > _CAP // (top * top):
        return "distance M*(2^(P+1)-1)^2 exceeds 30 bits"
    if not dims + 1 <= L <= _L_MAX:
        return "L %d not in M+1..65535" % L
    if not 1 <= width <= 0xFFFF:
        return "width %d not in 1..65535" % width
    if not 1 <= C <= 255:
        return "C %d not in 1..255" % C
    if not 1 <= state <= 0xFFFF:
        return "rng state %d not in 1..65535" % state
    if not 0 <= count <= max_svs(L, dims):
        return "count %d not in 0..B_max" % count
    if not _NORM_MIN <= norm <= _CAP:
        return "norm %d outside 31 bits" % norm
    return None


def _get(mem, pos, n):
    """n (1..8) bits at bit position pos, LSB first."""
    i = pos >> 3
    sh = pos & 7
    v = mem[i] >> sh
    if sh + n > 8:
        v |= mem[i + 1] << (8 - sh)
    return v & ((1 << n) - 1)


def _put(mem, pos, n, v):
    """Write the n-bit value v at bit position pos."""
    i = pos >> 3
    sh = pos & 7
    f = ((1 << n) - 1) << sh
    v <<= sh
    mem[i] = (mem[i] & ~f) | (v & 0xFF)
    if sh + n > 8:
        mem[i + 1] = (mem[i + 1] & ~(f >> 8)) | (v >> 8)


def _norm_at(b, i):
    """The i32 norm at b[i:], or _CAP + 1 (check refuses it) when it is outside 31 bits: the
    product stays a small int."""
    hi = b[i + 3] - 256 if b[i + 3] > 127 else b[i + 3]
    if not -64 <= hi < 64:
        return _CAP + 1
    return b[i] | b[i + 1] << 8 | b[i + 2] << 16 | hi << 24


class CKP(Binary):
    """A Compressed Kernel Perceptron learner: parameters, tables, generator, norm, memory; and
    from its file, the integer quantizer and the user's labels. predict(u) and learn(u, y)
    (kbit.kbfile.Binary) take and answer labels; a mistake adds (u, y), lowering every
    precision, or replaces a random support vector, as the loss table and the norm decide."""

    native = False  # True while score/learn run the native kernel (use_native)

    def __init__(self, bits, dims, L, width, C, table=None, qstart=None, qshift=None, q=None,
                 state=1, count=0, norm=0, any_table=False):
        """An empty learner. table: the power table P; qstart, qshift and q (one byte per
        entry): the loss_q table. Each is computed here when None (kbit.tables, as the host
        makes them), else refused unless it is that table; any_table=True takes any valid
        tables, as a loaded file's. state: kbit.rng.seed_state(seed). Codes given to
        score/learn/predict must be in 0 .. 2^bits-1 (else ValueError, nothing changed)."""
        err = check(bits, dims, L, width, C, state, count, norm)
        if not err and (table is None or q is None or not any_table):
            from . import tables  # big ints: only when a table is to be made or compared
            own = tables.power_table(width, bits, C)
            if table is None:
                table = own
            elif not check_table(table, C) and not any_table and bytes(table) != own:
                err = "weight table does not match bits/width/C (it is %s)" % (list(own),)
            if not err and (q is None or not any_table):
                qs, sh, qt = tables.loss_table(L, dims, width, bits, C)
                if q is None:
                    qstart, qshift, q = qs, sh, qt
                elif (qstart, qshift, bytes(q)) != (qs, sh, qt):
                    err = ("loss table does not match L/dims/width/bits/C (it is qstart %d, "
                           "qshift %d, %d entries)" % (qs, sh, len(qt)))
        err = err or check_table(table, C)
        top = max_svs(L, dims)
        if not err and (qstart < 1 or qstart + len(q) > max(top, 1) or not 0 <= qshift <= 22):
            err = "loss table of %d + %d entries (B_max %d), shift %d" % (
                qstart, len(q), top, qshift)
        if err:
            raise ValueError("bad parameters: " + err)
        self.bits = bits  # P
        self.dims = dims  # M
        self.L = L
        self.width = width  # A in thousandths (it made the tables)
        self.C = C
        self.table = bytes(table)
        self.qstart = qstart
        self.qshift = qshift
        self.q = bytes(q)
        self.state = state
        self.norm = norm  # ||w||^2 * C
        self.mistake = False
        self.memory = bytearray(mem_bytes(L))
        # centres of a replaced support vector (the first M entries); the native kernel's
        # scratch, kb_ckp_t's 2M centres, on the native path (kbit.compat.native)
        self._c = array("H", bytes(4 * dims))
        self._set_count(count)
        if _nat:  # the native kernel's context, made whether or not it runs now (use_native)
            _nat.bind(self)

    @classmethod
    def new(cls, bits, dims, L, width, C=255, seed=0, classes=2,
            names=None, lo=None, hi=None):
        """An empty learner from its parameters alone, as the host's kilobit.models.ckp.CKPInt
        makes it (same names; width: A in thousandths): the power and loss_q tables are
        computed here, integer-only, equal to the host's (big ints: a few ms per support
        vector of B_max on a board). classes > 2: a kbit.ovr.OneVsRest of that many learners
        sharing the tables, learner k seeded seed + k (contract 6.8). names: the user's labels
        of the classes (predict answers them, learn takes them; saved with the model). lo, hi:
        the raw readings' range (an int, or one per input): the integer quantizer of contract
        1.1 (ckp's floor), so m.quantize(raw) makes its codes."""
        from .rng import seed_state
        names = _label_names(names, classes)
        q = _bounds(lo, hi, dims)
        m = cls(bits, dims, L, width, C, None, None, None, None, seed_state(seed))
        if classes != 2:
            from .ovr import OneVsRest
            m = OneVsRest([m] + [cls(bits, dims, L, width, C, m.table, m.qstart, m.qshift,
                                     m.q, seed_state(seed + k), 0, 0, True)
                                 for k in range(1, classes)])
        if names is not None:  # an attribute only when given: each one costs the board RAM
            m.names = names
        if q:
            from .quant import give
            give(m, q[0], q[1], bits, floor=True)
        return m

    def _set_count(self, n):
        """count = n and the schedule (b, n1) of contract 6.2, without a tuple."""
        self.count = n
        b = n1 = 0
        if n:
            Lm = (self.L - n) // self.dims
            b = Lm // n
            if b >= self.bits:
                b = self.bits
            else:
                n1 = Lm - n * b
        self._b = b
        self._n1 = n1

    # --- the model file (contract 4, 6.7) ---
    @classmethod
    def load(cls, src):
        """A model from a .kb file: a path, bytes-like, or a stream with readinto(). The memory
        is read straight into the model's buffer. Raises kbfile.ModelFileError."""
        return kbfile.with_reader(src, cls._load)

    @classmethod
    def _load(cls, r):
        m = None
        err = kbfile.type_error(r, kbfile.TYPE_CKP)
        if not err and r.left < _PARAMS:
            err = "truncated ckp payload"
        elif not err:
            p = r.read(_PARAMS)
            bits = p[0] & 0x7F
            dims = p[1] | p[2] << 8
            L = p[3] | p[4] << 8
            width = p[5] | p[6] << 8
            C = p[7]
            state = p[8] | p[9] << 8
            count = p[10] | p[11] << 8
            norm = _norm_at(p, 12)
            ntab = p[16]
            K, st, err = 1, b"", None
            if p[0] & 0x80:  # several classes (contract 6.8): kbit.ovr, imported only then
                from . import ovr
                K, st, err = ovr.read_states(r, 8, "ckp")
            bad = check(bits, dims, L, width, C, state, count, norm)
            for i in range(0, len(st), 8):
                bad = bad or check(bits, dims, L, width, C, st[i] | st[i + 1] << 8,
                                   st[i + 2] | st[i + 3] << 8, _norm_at(st, i + 4))
            if not bad and ntab > _TABLE_MAX:
                bad = "weight table of %d entries (max 32)" % ntab
            if err:
                pass
            elif bad:
                err = "bad parameters: " + bad
            elif ntab + 5 > r.left:
                err = "truncated ckp payload"
            else:
                table = r.read(ntab)
                qh = r.read(5)
                qstart = qh[0] | qh[1] << 8
                nq = qh[2] | qh[3] << 8
                top = max_svs(L, dims)
                if qstart < 1 or qstart + nq > max(top, 1) or qh[4] > 22:
                    err = "bad parameters: loss table %d + %d entries (B_max %d), shift %d" % (
                        qstart, nq, top, qh[4])
                elif nq + K * mem_bytes(L) + 1 > r.left:
                    err = "truncated ckp payload"
                else:
                    q = r.read(nq)
                    err = check_table(table, C)
                    if err:
                        err = "bad parameters: " + err
                    else:
                        m = cls(bits, dims, L, width, C, table, qstart, qh[4], q, state, count,
                                norm, True)
                        r.readinto(m.memory)
                        if K > 1:
                            m = ovr.read(m, r, st, 8, lambda b, i: cls(
                                bits, dims, L, width, C, table, qstart, qh[4], q,
                                b[i] | b[i + 1] << 8, b[i + 2] | b[i + 3] << 8,
                                _norm_at(b, i + 4), True))
                        err = read_trailer(r, m, dims, "ckp", bits, floor=True,
                                           bad="bad parameters: ")
        r.finish()
        if not err and m._tail_set():
            err = "bad parameters: bits set after the last support vector"
        if err:
            raise kbfile.ModelFileError(err)
        return m

    def _end(self):
        """The first bit after the last support vector."""
        n = self.count
        return n * (1 + self.dims * self._b) + self.dims * (n if n < self._n1 else self._n1)

    def _tail_set(self):
        mem = self.memory
        p = self._end()
        i = p >> 3
        if p & 7:
            if mem[i] >> (p & 7):
                return True
            i += 1
        for j in range(i, len(mem)):
            if mem[j]:
                return True
        return False

    def save(self, stream):
        """Write this learner as a .kb file, with the trailer it was loaded with."""
        p = bytearray(_PARAMS)
        p[0] = self.bits
        p[1] = self.dims & 0xFF
        p[2] = self.dims >> 8
        p[3] = self.L & 0xFF
        p[4] = self.L >> 8
        p[5] = self.width & 0xFF
        p[6] = self.width >> 8
        p[7] = self.C
        p[8] = self.state & 0xFF
        p[9] = self.state >> 8
        p[10] = self.count & 0xFF
        p[11] = self.count >> 8
        n = self.norm
        for i in range(4):
            p[12 + i] = n & 0xFF
            n >>= 8
        p[16] = len(self.table)
        nq = len(self.q)
        qh = bytes((self.qstart & 0xFF, self.qstart >> 8, nq & 0xFF, nq >> 8, self.qshift))
        kbfile.write(stream, kbfile.TYPE_CKP, (p, self.table, qh, self.q, self.memory,
                                                trailer(self)))

    # --- contract 6.3, 6.4: distances, score ---
    def _dist_u(self, u, pos, b):
        """Distance from input codes u (centres 2u+1) to the support vector whose codes start
        at bit pos, b bits each."""
        mem = self.memory
        sh = self.bits - b
        d = 0
        for t in u:
            t = 2 * t + 1 - ((2 * _get(mem, pos, b) + 1) << sh)
            d += t * t
            pos += b
        return d

    def _dist_c(self, c, pos, b):
        """The same from centres c (an array of at least M ints: the first M)."""
        mem = self.memory
        sh = self.bits - b
        d = 0
        for j in range(self.dims):
            t = c[j] - ((2 * _get(mem, pos, b) + 1) << sh)
            d += t * t
            pos += b
        return d

    def _dist(self, x, centres, pos, b):
        if centres:
            return self._dist_c(x, pos, b)
        return self._dist_u(x, pos, b)

    def score(self, u):
        """The nearest-ring score of contract 3.3 over the CKP distances (6.4); u: M codes."""
        _check_codes(u, self.dims, 0, (1 << self.bits) - 1)
        _lock()
        try:
            return self._score(u)
        finally:
            _unlock()

    def _ring(self, u, base):
        """The sum of y_i w(d_i - base) over d_i >= base; leaves the least d_i > base (or -1)
        in _NEXT[0]."""
        mem = self.memory
        M = self.dims
        b = self._b + 1
        n1 = self._n1
        tab = self.table
        J = len(tab)
        C = self.C
        half = C >> 1
        s = 0
        nxt = -1
        pos = 0
        for i in range(self.count):
            if i == n1:
                b -= 1
            y = (mem[pos >> 3] >> (pos & 7)) & 1
            d = self._dist_u(u, pos + 1, b)
            pos += 1 + M * b
            if d > base:
                if nxt < 0 or d < nxt:
                    nxt = d
            if d >= base:
                d -= base
                w = C if d == 0 else _weight(d, tab, J, C, half)
                if y:
                    s += w
                else:
                    s -= w
        _NEXT[0] = nxt
        return s

    def _score(self, u):
        if not self.count:
            return 0
        base = self._nearest(u)
        while True:
            s = self._ring(u, base)
            if s or _NEXT[0] < 0:
                return s
            base = _NEXT[0]

    def _nearest(self, u):
        M = self.dims
        b = self._b + 1
        n1 = self._n1
        best = _CAP
        pos = 0
        for i in range(self.count):
            if i == n1:
                b -= 1
            d = self._dist_u(u, pos + 1, b)
            pos += 1 + M * b
            if d < best:
                best = d
        return best

    def margin(self, x, centres=False):
        """sum_i y_i w(d_i) with absolute weights (contract 6.5): x are input codes, or with
        centres=True the centres of a point (an array)."""
        mem = self.memory
        M = self.dims
        b = self._b + 1
        n1 = self._n1
        tab = self.table
        J = len(tab)
        C = self.C
        half = C >> 1
        s = 0
        pos = 0
        for i in range(self.count):
            if i == n1:
                b -= 1
            y = (mem[pos >> 3] >> (pos & 7)) & 1
            d = self._dist(x, centres, pos + 1, b)
            pos += 1 + M * b
            w = C if d == 0 else _weight(d, tab, J, C, half)
            if y:
                s += w
            else:
                s -= w
        return s

    # --- contract 6.5: learning step ---
    def _pos(self, slot):
        """The first bit of a slot (contract 6.6)."""
        n1 = self._n1
        return slot * (1 + self.dims * self._b) + self.dims * (slot if slot < n1 else n1)

    def _bits(self, slot):
        """The precision of a slot: b + 1 for the first n1, b for the rest."""
        return self._b + 1 if slot < self._n1 else self._b

    def _adds(self):
        """B < B_max, norm > 0 and B * q <= (norm - 1) >> qshift (contract 6.5): every
        product below 2^23."""
        B = self.count
        n = self.norm
        if B >= max_svs(self.L, self.dims) or n <= 0:
            return False
        i = B - self.qstart
        if i < 0:
            q = 0
        elif i < len(self.q):
            q = self.q[i]
        else:
            return False
        return B * q <= (n - 1) >> self.qshift

    def _add_norm(self, delta):
        n = self.norm
        if delta > 0 and n > _CAP - delta:
            self.norm = _CAP
        elif delta < 0 and n < _NORM_MIN - delta:
            self.norm = _NORM_MIN
        else:
            self.norm = n + delta

    def _learn(self, u, y):
        s = self._score(u)
        m = s <= 0 if y == 1 else s >= 0
        self.mistake = m
        if not m:
            return s
        B = self.count
        C = self.C
        if B == 0:
            slot = 0
            self._set_count(1)
            self.norm = C
        else:
            mg = self.margin(u)
            if not y:
                mg = -mg
            if self._adds():
                self._lower(B)
                slot = B
                self._add_norm(2 * mg + C)
            else:
                x = step(self.state)
                self.state = x
                slot = scale(x, B)
                pos = self._pos(slot)
                b = self._bits(slot)
                mem = self.memory
                yR = (mem[pos >> 3] >> (pos & 7)) & 1
                c = self._c
                p = pos + 1
                sh = self.bits - b
                for j in range(self.dims):
                    c[j] = (2 * _get(mem, p, b) + 1) << sh
                    p += b
                mR = self.margin(c, True)
                if not yR:
                    mR = -mR
                d = 0
                for j in range(self.dims):
                    t = 2 * u[j] + 1 - c[j]
                    d += t * t
                k = C if d == 0 else _weight(d, self.table, len(self.table), C, C >> 1)
                if y != yR:
                    k = -k
                self._add_norm(2 * (mg - mR - k) + 2 * C)
        self._store(slot, u, y)
        return s

    def _lower(self, B):
        """B -> B+1 support vectors: rewrite every slot at its new precision, in place, from
        the first (a slot never moves up nor gains bits, so nothing unread is overwritten),
        and clear what the old layout held beyond the new one (contract 6.6)."""
        mem = self.memory
        M = self.dims
        bo = self._b
        n1o = self._n1
        self._set_count(B + 1)
        bn = self._b
        n1n = self._n1
        src = dst = 0
        so = bo + 1
        sn = bn + 1
        for i in range(B):
            if i == n1o:
                so = bo
            if i == n1n:
                sn = bn
            _put(mem, dst, 1, (mem[src >> 3] >> (src & 7)) & 1)
            src += 1
            dst += 1
            k = so - sn
            if k or src != dst:
                for _ in range(M):
                    _put(mem, dst, sn, _get(mem, src, so) >> k)
                    src += so
                    dst += sn
            else:
                src += M * so
                dst += M * sn
        # the new slot B (written by the caller) starts at dst; bits from there on are stale
        self._clear(dst, src)

    def _clear(self, start, end):
        """Zero bits start .. end-1."""
        mem = self.memory
        while start < end and start & 7:
            mem[start >> 3] &= ~(1 << (start & 7))
            start += 1
        while start + 8 <= end:
            mem[start >> 3] = 0
            start += 8
        while start < end:
            mem[start >> 3] &= ~(1 << (start & 7))
            start += 1

    def _store(self, slot, u, y):
        """Write label y and the codes u at the slot's precision (u >> (P - b))."""
        mem = self.memory
        pos = self._pos(slot)
        b = self._bits(slot)
        _put(mem, pos, 1, 1 if y else 0)
        pos += 1
        sh = self.bits - b
        for t in u:
            _put(mem, pos, b, t >> sh)
            pos += b


def load(src):
    """CKP.load(src)."""
    return CKP.load(src)


# --- the native kernel: kb_ckp.h as kbit/_kb_ckp.mpy (kbit.compat.native) ---
# On the native path CKP's score, learn and predict are the native module's own functions;
# they run the bytecode ones for what the kernel does not take (codes that are not a buffer
# of bytes, a wrong length or label: the same errors, the same results).
from .compat import native_methods as _native_methods  # noqa: E402

_nat, use_native, NATIVE_WHY = _native_methods(
    CKP, "ckp", ("score", ("_learn_id", "learn"), ("_predict_id", "predict")))
