"""Random Kernel Perceptron, integer only (docs/contract.md, section 3).

    from kbit.rkp import RKP
    with open("banana.kb", "rb") as f:
        m = RKP.load(f)
    codes = bytearray(m.dims)          # B-bit codes 0 .. 2^B-1, filled in place
    s = m.learn(codes, 1)              # score before learning; m.mistake tells if it stored
    m.predict(codes)                   # 1 if score > 0 else 0

The support vectors live in one bytearray, `memory`, of exactly ceil(T * (M*B + 1) / 8) bytes,
bit-packed as contract 3.5. `score`, `predict` and `learn` allocate nothing: every intermediate
is a small int (< 2^30) and no object is created. They also lock the heap themselves while they
run, where the port has `micropython.heap_lock` (CircuitPython and CPython do without): ports
without a pystack give any function frame above 11 words a heap block for the call, unless the
heap is locked, when the frame goes on the C stack instead. So a call never touches the heap,
locked by the caller or not. Argument checks come before the lock so their errors stay readable:
a code outside 0 .. 2^B-1, a wrong length or label raises ValueError and changes nothing.

The score reads the memory as one stream of bits. It weighs each vector against the nearest
distance seen so far and restarts the sum when a nearer vector comes; the vectors before the
last restart are then read again (about 1.5 passes in all when the order is random). A vector
is given up as soon as its partial distance shows that its weight is 0. Weights of the 32
smallest offsets are precomputed (32 bytes); larger offsets use the log method on the table.

Native kernel: where the native module _kb_rkp.mpy for this port is installed beside this file,
`score`, `learn` and `predict` are that module's functions, firmware_c's kb_rkp.h, with the same
results as the bytecode below (kbit.compat.native); `m.native` says which runs (NATIVE_WHY why
not), `use_native(False)` switches back. Codes that are not a buffer of bytes (a list, say) take
the bytecode either way. The kernel's context, `_ctx`, is made with the model from its
attributes, checked as the loader checks them, and keeps no state of its own: count, state,
mistake and memory stay plain attributes, and the native module binds again, with every check,
whenever Python has set, replaced or resized one of them (firmware_c/natmod/kbn_mp.h).
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

# check_table and weight are part of this module's API too
from .kernel import TABLE_MAX as _TABLE_MAX, _weight, check_table, power_table, weight
from .rng import scale, step

LAPLACE = const(0)
RBF = const(1)
_CAP = const(0x3FFFFFFF)  # largest MicroPython small int; rbf distances stay <= it
_PARAMS = const(13)  # kernel bits dims budget width C rng count ntab: <BBHHbBHHB
_WCACHE_LOG = const(5)
_WCACHE = const(32)  # 1 << _WCACHE_LOG bytes of precomputed weights
_NAMES = ("laplace", "rbf")
# What a sweep of the score leaves for the next: [nearest distance, last restart]. One buffer
# for the module, not two attributes per model: an instance's attribute map grows in steps of
# 48 bytes on 32-bit ports, more than the Banana model's whole support-vector memory.
_SWEPT = array("i", (0, 0))


def mem_bytes(budget, dims, bits):
    """Size of the support-vector memory (contract 3.5)."""
    return (budget * (dims * bits + 1) + 7) // 8


def check(kernel, bits, dims, budget, width, C, state, count):
    """None when the parameters are inside the contract, else what is wrong (a str)."""
    if kernel != LAPLACE and kernel != RBF:
        return "unknown kernel %r" % (kernel,)
    if not 1 <= bits <= 8:
        return "bits %d not in 1..8" % bits
    if not 1 <= dims <= 0xFFFF:
        return "dims %d not in 1..65535" % dims
    if not 1 <= budget <= 0xFFFF:
        return "budget %d not in 1..65535" % budget
    if not -16 <= width <= 16:
        return "width %d not in -16..16" % width
    if not 1 <= C <= 255:
        return "C %d not in 1..255" % C
    if not 1 <= state <= 0xFFFF:
        return "rng state %d not in 1..65535" % state
    if not 0 <= count <= budget:
        return "count %d not in 0..budget" % count
    top = (1 << bits) - 1
    if kernel == LAPLACE and dims * top > 0xFFFF:
        return "laplace distance M*(2^B-1) exceeds 16 bits"
    if kernel == RBF and dims > _CAP // (top * top):
        return "rbf distance M*(2^B-1)^2 exceeds 30 bits"
    if dims * bits + 1 > _CAP // budget:
        return "memory of %d x %d bits too large for this device" % (budget, dims * bits + 1)
    return None


class RKP(Binary):
    """A Random Kernel Perceptron learner: parameters, weight table, generator, memory; and
    from its file, the integer quantizer and the user's labels. predict(u) and learn(u, y)
    (kbit.kbfile.Binary) take and answer labels; a mistake stores (u, y), at random when the
    budget is full (3.4)."""

    native = False  # True while score/learn run the native kernel (use_native)

    def __init__(self, kernel, bits, dims, budget, width, C, table=None, state=1, count=0,
                 any_table=False):
        """An empty learner. kernel: "laplace"/"rbf" (or LAPLACE/RBF); table: the power table
        P, computed here when None, else refused unless it is that table (kbit.kernel
        .power_table; any_table=True takes any valid one, as a loaded file's); state:
        kbit.rng.seed_state(seed). Codes given to score/learn/predict must be in
        0 .. 2^bits-1 (else ValueError)."""
        if kernel in _NAMES:
            kernel = _NAMES.index(kernel)
        err = check(kernel, bits, dims, budget, width, C, state, count)
        if not err:
            own = power_table(width + (bits << kernel), C)  # e = A+B, or A+2B for rbf
            if table is None:
                table = own
            else:
                err = check_table(table, C)
                if not err and not any_table and bytes(table) != own:
                    err = "weight table does not match kernel/bits/width/C (it is %s)" % (
                        list(own),)
        if err:
            raise ValueError("bad parameters: " + err)
        self.kernel = kernel  # LAPLACE or RBF
        self.bits = bits  # B
        self.dims = dims  # M
        self.budget = budget  # T
        self.width = width  # A (it made the table)
        self.C = C
        self.table = bytes(table)  # P[0 .. J-1]
        self.state = state  # generator state (kbit.rng)
        self.count = count  # support vectors stored
        self.mistake = False  # set by learn()
        self.memory = bytearray(mem_bytes(budget, dims, bits))
        # w(0 .. W-1) for the most frequent small offsets, W = min(2^J, _WCACHE)
        J = len(table)
        w = bytearray(_WCACHE if J > _WCACHE_LOG else 1 << J)
        for i in range(len(w)):
            w[i] = weight(i, table, C)
        self._w = w
        if _nat:  # the native kernel's context, made whether or not it runs now (use_native)
            _nat.bind(self)

    @classmethod
    def new(cls, kernel, bits, dims, budget, width, C=255, seed=0, classes=2,
            names=None, lo=None, hi=None):
        """An empty learner from its parameters alone, as the host's trainer makes it
        (kilobit.models.rkp: same names, C and seed): the power table is computed here,
        integer-only, equal to the host's. classes > 2: a kbit.ovr.OneVsRest of that many
        learners sharing the table, learner k seeded seed + k (contract 3.6). names: the user's
        labels of the classes (predict answers them, learn takes them; saved with the model).
        lo, hi: the raw readings' range (an int, or one per input), which gives the learner
        the integer quantizer of contract 1.1, so m.quantize(raw) makes its codes."""
        from .rng import seed_state
        names = _label_names(names, classes)
        q = _bounds(lo, hi, dims)
        m = cls(kernel, bits, dims, budget, width, C, None, seed_state(seed))
        if classes != 2:
            from .ovr import OneVsRest
            m = OneVsRest([m] + [cls(kernel, bits, dims, budget, width, C, m.table,
                                     seed_state(seed + k), 0, True) for k in range(1, classes)])
        if names is not None:  # an attribute only when given: each one costs the board RAM
            m.names = names
        if q:
            from .quant import give
            give(m, q[0], q[1], bits)
        return m

    # --- the model file (contract 4) ---
    @classmethod
    def load(cls, src):
        """A model from a .kb file: a path, bytes-like, or a stream with readinto() (e.g.
        open(.., "rb")). The memory is read straight into the model's buffer. Raises
        kbfile.ModelFileError."""
        return kbfile.with_reader(src, cls._load)

    @classmethod
    def _load(cls, r):
        m = None
        err = kbfile.type_error(r, kbfile.TYPE_RKP)
        if not err and r.left < _PARAMS:
            err = "truncated rkp payload"
        elif not err:
            # checks in the order of the host reference (kilobit.models.rkp.RKPInt.from_bytes)
            p = r.read(_PARAMS)
            dims = p[2] | p[3] << 8
            budget = p[4] | p[5] << 8
            width = p[6] - 256 if p[6] > 127 else p[6]
            state = p[8] | p[9] << 8
            count = p[10] | p[11] << 8
            ntab = p[12]
            kernel = p[0] & 0x7F
            K, st, err = 1, b"", None
            if p[0] & 0x80:  # several classes (contract 3.6): kbit.ovr, imported only then
                from . import ovr
                K, st, err = ovr.read_states(r, 4, "rkp")
            bad = check(kernel, p[1], dims, budget, width, p[7], state, count)
            for i in range(0, len(st), 4):
                bad = bad or check(kernel, p[1], dims, budget, width, p[7],
                                   st[i] | st[i + 1] << 8, st[i + 2] | st[i + 3] << 8)
            if not bad and ntab > _TABLE_MAX:
                bad = "weight table of %d entries (max 32)" % ntab
            if err:
                pass
            elif bad:
                err = "bad parameters: " + bad
            elif ntab + K * mem_bytes(budget, dims, p[1]) + 1 > r.left:
                err = "truncated rkp payload"
            else:
                table = r.read(ntab)
                err = check_table(table, p[7])
                if err:
                    err = "bad parameters: " + err
                else:
                    m = cls(kernel, p[1], dims, budget, width, p[7], table, state, count, True)
                    r.readinto(m.memory)
                    m._clear_unused()
                    if K > 1:
                        m = ovr.read(m, r, st, 4, lambda b, i: cls(
                            kernel, p[1], dims, budget, width, p[7], table, b[i] | b[i + 1] << 8,
                            b[i + 2] | b[i + 3] << 8, True))
                    err = read_trailer(r, m, dims, "rkp", p[1], bad="bad parameters: ")
        r.finish()
        if err:
            raise kbfile.ModelFileError(err)
        return m

    def _clear_unused(self):
        """Zero the bits of unused slots and the padding (contract 3.5), as the host does."""
        mem = self.memory
        p = self.count * (self.dims * self.bits + 1)
        i = p >> 3
        if p & 7:
            mem[i] &= (1 << (p & 7)) - 1
            i += 1
        for j in range(i, len(mem)):
            mem[j] = 0

    def save(self, stream):
        """Write this learner as a .kb file, with the trailer it was loaded with."""
        p = bytearray(_PARAMS)
        p[0] = self.kernel
        p[1] = self.bits
        p[2] = self.dims & 0xFF
        p[3] = self.dims >> 8
        p[4] = self.budget & 0xFF
        p[5] = self.budget >> 8
        p[6] = self.width & 0xFF
        p[7] = self.C
        p[8] = self.state & 0xFF
        p[9] = self.state >> 8
        p[10] = self.count & 0xFF
        p[11] = self.count >> 8
        p[12] = len(self.table)
        kbfile.write(stream, kbfile.TYPE_RKP, (p, self.table, self.memory, trailer(self)))

    # --- contract 3.3: score and prediction ---
    def score(self, u):
        """s = sum_i y_i * w(d_i - d_nn) over the stored vectors, or the next ring's sum when
        that is 0 (contract 3.3); u: M codes (indexable), each in 0 .. 2^B-1."""
        _check_codes(u, self.dims, 0, (1 << self.bits) - 1)
        _lock()
        try:
            return self._score(u)
        finally:
            _unlock()

    def _score(self, u):
        n = self.count
        if n == 0:
            return 0
        # One sweep weighs every vector against the nearest distance seen so far; when a nearer
        # one comes, the sum restarts from it. A second sweep weighs the vectors before the last
        # restart against the final nearest distance (it cannot restart: none is nearer).
        _SWEPT[0] = _CAP
        s = self._sweep(u, n)
        if _SWEPT[1]:
            s += self._sweep(u, _SWEPT[1])
        if s == 0:
            return self._tie_break(u, _SWEPT[0])
        return s

    def _sweep(self, u, n):
        """Sum of y_i * w(d_i - best) over vectors 0..n-1, restarting at a nearer vector;
        starts from and leaves the nearest distance in _SWEPT[0], the last restart in _SWEPT[1]."""
        mem = self.memory
        B = self.bits
        rbf = self.kernel
        mask = (1 << B) - 1
        S = self.dims * B + 1
        tab = self.table
        J = len(tab)
        wc = self._w  # w(0 .. len(wc)-1), precomputed
        nw = len(wc)
        C = self.C
        half = C >> 1
        # A vector is given up as soon as its partial distance exceeds lim = best + 2^J - 1:
        # its weight is 0 (w(k) = 0 for k >= 2^J). The memory is read as one stream of bits,
        # LSB first: `acc` holds the next `k` bits, mem[bi] is the next byte; k = -1 asks for a
        # restart of the stream at vector i (after a give-up).
        best = _SWEPT[0]
        if J >= 30 or best > _CAP - (1 << J):
            lim = _CAP
        else:
            lim = best + (1 << J) - 1
        last = 0
        s = 0
        k = -1
        for i in range(n):
            if k <= 0:
                if k:
                    bi = i * S
                    k = bi & 7
                    bi >>= 3
                    acc = mem[bi] >> k
                    k = 8 - k
                else:
                    acc = mem[bi]
                    k = 8
                bi += 1
            y = acc & 1
            acc >>= 1
            k -= 1
            d = 0
            for t in u:
                if k < B:
                    acc |= mem[bi] << k
                    bi += 1
                    k += 8
                t = (acc & mask) - t
                acc >>= B
                k -= B
                if rbf:
                    d += t * t
                elif t < 0:
                    d -= t
                else:
                    d += t
                if d > lim:
                    k = -1
                    break
            else:
                if d < best:
                    best = d
                    if J >= 30 or d > _CAP - (1 << J):
                        lim = _CAP
                    else:
                        lim = d + (1 << J) - 1
                    last = i
                    s = C if y else -C
                    continue
                d -= best
                if d < nw:
                    w = wc[d]
                else:
                    w = _weight(d, tab, J, C, half)
                if y:
                    s += w
                else:
                    s -= w
        _SWEPT[0] = best
        _SWEPT[1] = last
        return s

    def _dist(self, u, i):
        """Distance from codes u to support vector i, read at random (the tie-break's path)."""
        mem = self.memory
        B = self.bits
        mask = (1 << B) - 1
        rbf = self.kernel
        p = i * (self.dims * B + 1) + 1
        d = 0
        for t in u:
            q = p >> 3
            sh = p & 7
            v = mem[q] >> sh
            if sh + B > 8:
                v |= mem[q + 1] << (8 - sh)
            t = (v & mask) - t
            if rbf:
                d += t * t
            elif t < 0:
                d -= t
            else:
                d += t
            p += B
        return d

    def _tie_break(self, u, base):
        """The nearest ring at `base` cancelled: let the next ring decide, and so on (3.3)."""
        n = self.count
        S = self.dims * self.bits + 1
        mem = self.memory
        wc = self._w
        tab = self.table
        C = self.C
        while True:
            nxt = -1
            for i in range(n):
                d = self._dist(u, i)
                if d > base and (nxt < 0 or d < nxt):
                    nxt = d
            if nxt < 0:
                return 0
            base = nxt
            s = 0
            p = 0
            for i in range(n):
                d = self._dist(u, i) - base
                if d >= 0:
                    if d < len(wc):
                        w = wc[d]
                    else:
                        w = _weight(d, tab, len(tab), C, C >> 1)
                    if (mem[p >> 3] >> (p & 7)) & 1:
                        s += w
                    else:
                        s -= w
                p += S
            if s:
                return s

    # --- contract 3.4: learning step ---
    def _learn(self, u, y):
        s = self._score(u)
        if y == 1:
            m = s <= 0
        else:
            m = s >= 0
        self.mistake = m
        if m:
            n = self.count
            if n < self.budget:
                self.count = n + 1
            else:
                x = step(self.state)
                self.state = x
                n = scale(x, self.budget)
            self.store(n, u, y == 1)
        return s

    def store(self, slot, u, positive):
        """Write (u, label) into slot `slot` of the memory (codes masked to B bits)."""
        mem = self.memory
        B = self.bits
        mask = (1 << B) - 1
        pos = slot * (self.dims * B + 1)
        bi = pos >> 3
        sh = pos & 7
        if positive:
            mem[bi] |= 1 << sh
        else:
            mem[bi] &= ~(1 << sh)
        pos += 1
        for j in range(self.dims):
            bi = pos >> 3
            sh = pos & 7
            v = (u[j] & mask) << sh
            f = mask << sh
            mem[bi] = (mem[bi] & ~f) | (v & 0xFF)
            if sh + B > 8:
                mem[bi + 1] = (mem[bi + 1] & ~(f >> 8)) | (v >> 8)
            pos += B


def load(src):
    """RKP.load(src)."""
    return RKP.load(src)


# --- the native kernel: kb_rkp.h as kbit/_kb_rkp.mpy (kbit.compat.native) ---
# On the native path RKP's score, learn and predict are the native module's own functions;
# they run the bytecode ones for what the kernel does not take (codes that are not a buffer
# of bytes, a wrong length or label: the same errors, the same results).
from .compat import native_methods as _native_methods  # noqa: E402

_nat, use_native, NATIVE_WHY = _native_methods(
    RKP, "rkp", ("score", ("_learn_id", "learn"), ("_predict_id", "predict")))
