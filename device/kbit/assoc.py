"""Binary associative memory, class-incremental, integer only (docs/contract.md, section 9).

    from kbit.assoc import Assoc
    m = Assoc(0, 8, 1, 16, 10, 8)      # I-I, 8 bits, P=1 subvector of d=16, 10 classes, k~=8
    u = array("b", bytes(16))          # int8 values -2^(B-1) .. 2^(B-1)-1, filled in place
    m.learn(u, 7)                      # label 0..255; returns the label predicted before
    m.predict(u)                       # label of the winning class (-1: no class yet);
    m.count                            # ... and its count (subvectors connected to it)

Buffers, all allocated once at construction for the capacity `cap` classes of k~ anchors:
`labels`/`nf` (bytearray(cap): the label and fill counter of each class slot), `anchors`
(array("b"), S = cap*k~ rows of T = P*d int8 values) and `conn` (bytearray, the connection
bits). A new label takes the next class slot; its first example becomes a whole anchor row, each
later one (up to 1 + (k~-1)*P in all) one subspace of the next rows (contract 9.4).
`predict` and `learn` allocate nothing (every intermediate is a small int below 2^30) and lock
the heap themselves where the port has micropython.heap_lock; argument checks run before the
lock so that their errors stay readable (a value outside -2^(B-1) .. 2^(B-1)-1, a wrong length
or label: ValueError, nothing changed).

Native kernel: where the native module _kb_assoc.mpy for this port is installed beside this
file, `predict` and `learn` (and `_predict`, `_learn`) are that module's functions, firmware_c's
kb_assoc.h, with the same results as the bytecode below (kbit.compat.native); `m.native` says
which runs (NATIVE_WHY why not), `use_native(False)` switches back. Values that are not an
array("b") take the bytecode anyway. As in kbit.rkp, the kernel's context `_ctx` is made with
the model and keeps no state of its own (firmware_c/natmod/kbn_mp.h).
"""
from array import array

from . import kbfile
from .compat import (
    check_codes as _check_codes,
    const,
    label_id as _label_id,
    label_of as _label_of,
    lock as _lock,
    unlock as _unlock,
)
from .kbfile import Inputs, read_trailer, trailer
from .rng import scale, step

II = const(0)
NI = const(1)
NO = const(2)
NO_CLASS = const(-1)
_SMALL = const(0x3FFFFFFF)
_PARAMS = const(10)  # approach bits P d cap kt R nc rng(u16)
_CHUNK = const(64)


def conn_bytes(P, d, cap, kt, R):
    return (P * cap * kt * cap * R + 7) >> 3


def check(approach, bits, P, d, cap, kt, R, nc, state):
    """None when the parameters are inside the contract, else what is wrong (a str)."""
    if not 0 <= approach <= 2:
        return "approach %d not in 0..2" % approach
    if not 1 <= bits <= 8:
        return "bits %d not in 1..8" % bits
    for name, v in (("P", P), ("d", d), ("capacity", cap), ("k~", kt), ("R", R)):
        if not 1 <= v <= 255:
            return "%s %d not in 1..255" % (name, v)
    top = (1 << bits) - 1
    if P * d > _SMALL // (top * top):
        return "distance sum T*(2^B-1)^2 exceeds 2^30-1"
    if P * cap * kt * cap > _SMALL // R:
        return "connection matrix exceeds 2^30-1 bits"
    if approach != NO and 1 + (kt - 1) * P > 255:
        return "fill counter 1 + (k~-1)*P exceeds 255"
    if nc > cap:
        return "nc %d above capacity %d" % (nc, cap)
    if not 1 <= state <= 0xFFFF:
        return "rng state %d not in 1..65535" % state
    return None


class Assoc(Inputs):
    """A binary associative memory learner (product random sampling, R output neurons per
    class). approach: 0 I-I, 1 N-I, 2 N-O (anchors fixed: they come from the host's file).
    From its file also the integer quantizer and `names`, the user's names of labels 0..K-1
    (kbit.quant.Inputs; `labels` is the class slots' labels, 0..255)."""

    native = False  # True while predict/learn run the native kernel (use_native)

    def __init__(self, approach, bits, P, d, cap, kt, R=1, state=1, nc=0):
        names = ("I-I", "N-I", "N-O")  # the host's spelling (kilobit train assoc --approach)
        if approach in names:
            approach = names.index(approach)
        elif not isinstance(approach, int):
            raise ValueError("bad parameters: approach %r not one of %s (or 0, 1, 2)"
                             % (approach, ", ".join(names)))
        err = check(approach, bits, P, d, cap, kt, R, nc, state)
        if err:
            raise ValueError("bad parameters: " + err)
        self.approach = approach
        self.bits = bits
        self.P = P
        self.d = d
        self.cap = cap
        self.kt = kt
        self.R = R
        self.T = P * d
        self.S = cap * kt
        self.state = state  # generator state (kbit.rng)
        self.nc = nc  # class slots in use
        self.count = 0  # count of the last prediction
        self.labels = bytearray(cap)
        self.nf = bytearray(cap)
        self.anchors = array("b", bytes(self.S * self.T))
        self.conn = bytearray(conn_bytes(P, d, cap, kt, R))
        self._k = array("H", bytes(2 * P))  # nearest anchor row per subspace
        self._dist = array("i", bytes(4 * P))  # its squared distance
        if _nat:  # the native kernel's context, made whether or not it runs now (use_native)
            _nat.bind(self)

    # --- the model file (contract 4 and 9) ---
    @classmethod
    def load(cls, src):
        """A model from a .kb file (a path, bytes-like, or a stream with readinto()). Raises
        kbfile.ModelFileError, with the host's messages, for anything the host refuses."""
        return kbfile.with_reader(src, cls._load)

    @classmethod
    def _load(cls, r):
        m = None
        err = kbfile.type_error(r, kbfile.TYPE_ASSOC)
        if not err and r.left < _PARAMS:
            err = "truncated assoc parameters"
        elif not err:
            p = r.read(_PARAMS)
            state = p[8] | p[9] << 8
            err = check(p[0], p[1], p[2], p[3], p[4], p[5], p[6], p[7], state)
            if err:
                err = "bad assoc parameters: " + err
            else:
                nmem = 2 * p[4] + p[4] * p[5] * p[2] * p[3] + conn_bytes(*p[2:7])
                if r.left < nmem + 1:
                    err = "truncated assoc payload"
                else:
                    m = cls(p[0], p[1], p[2], p[3], p[4], p[5], p[6], state, p[7])
                    r.readinto(m.labels)
                    r.readinto(m.nf)
                    chunk = bytearray(_CHUNK)
                    a = m.anchors
                    i = 0
                    n = len(a)
                    while i < n:
                        k = min(_CHUNK, n - i)
                        r.readinto(chunk, k)
                        for j in range(k):
                            v = chunk[j]
                            a[i + j] = v - 256 if v > 127 else v
                        i += k
                    r.readinto(m.conn)
                    err = m.check_state()
                    if err:
                        err = "bad assoc memory: " + err
                    err = err or read_trailer(r, m, m.T, "assoc", p[1], signed=True)
        r.finish()
        if err:
            raise kbfile.ModelFileError(err)
        return m

    def check_state(self):
        """None when the memory is one a learner can reach (the host's checks), else why."""
        nc = self.nc
        kt = self.kt
        for c in range(nc):
            for e in range(c):
                if self.labels[e] == self.labels[c]:
                    return "a label appears twice"
        for c in range(nc, self.cap):
            if self.labels[c]:
                return "label of an unused class slot is not 0"
        if self.approach == NO:
            for c in range(self.cap):
                if self.nf[c]:
                    return "N-O keeps no per-class fill counters"
        else:
            top = 1 + (kt - 1) * self.P
            for c in range(self.cap):
                if (c < nc and not 1 <= self.nf[c] <= top) or (c >= nc and self.nf[c]):
                    return ("fill counters not in 1..1+(k~-1)*P for used class slots, 0 for "
                            "the others")
        d = self.d
        for s in range(self.S):
            for p in range(self.P):
                if not self.valid(s, p):
                    for j in range(s * self.T + p * d, s * self.T + p * d + d):
                        if self.anchors[j]:
                            return "an anchor not filled yet is not 0"
        CR = self.cap * self.R
        live_cols = nc * self.R
        conn = self.conn
        bit = 0
        for p in range(self.P):
            for s in range(self.S):
                live = self.valid(s, p)
                for col in range(CR):
                    if (conn[bit >> 3] >> (bit & 7)) & 1 and (not live or col >= live_cols):
                        return ("a connection of an anchor not filled yet or of an unused class "
                                "is set")
                    bit += 1
        if bit & 7 and conn[bit >> 3] >> (bit & 7):
            return "padding bits are not 0"
        return None

    def save(self, stream):
        """Write this learner as a .kb file, with the trailer it was loaded with."""
        p = bytearray(_PARAMS)
        p[0] = self.approach
        p[1] = self.bits
        p[2] = self.P
        p[3] = self.d
        p[4] = self.cap
        p[5] = self.kt
        p[6] = self.R
        p[7] = self.nc
        p[8] = self.state & 0xFF
        p[9] = self.state >> 8
        a = bytearray(len(self.anchors))
        for i in range(len(a)):
            a[i] = self.anchors[i] & 0xFF
        kbfile.write(stream, kbfile.TYPE_ASSOC, (p, self.labels, self.nf, a, self.conn,
                                                 trailer(self)))

    def stored(self):
        """S for N-O, else the examples that wrote anchors (the sum of the fill counters)."""
        if self.approach == NO:
            return self.S
        n = 0
        for c in range(self.nc):
            n += self.nf[c]
        return n

    def rows(self, c, p):
        """How many of class slot c's rows are valid for subspace p (contract 9.2): a prefix,
        row 0 from the first example, then one row per P later examples."""
        f = self.nf[c]
        if f <= p + 1:
            return 1 if f else 0
        return 1 + (f - 2 - p + self.P) // self.P

    def valid(self, s, p):
        return self.approach == NO or s % self.kt < self.rows(s // self.kt, p)

    # --- contract 9.2: nearest anchors ---
    def _nearest(self, u, c0, c1):
        """Per subspace p, the nearest row valid for p of the class slots c0 .. c1-1 (all rows for
        N-O) and its squared distance, into self._k / self._dist. Rows are visited in
        ascending order and only a strictly nearer row replaces the best: the lowest row wins
        a tie. A row is given up as soon as its partial sum reaches the best."""
        A = self.anchors
        T = self.T
        d = self.d
        kt = self.kt
        K = self._k
        D = self._dist
        fixed = self.approach == NO
        if fixed:
            c0 = 0
            c1 = 1
        for p in range(self.P):
            o = p * d
            best = _SMALL
            bk = 0
            for c in range(c0, c1):
                if fixed:
                    s = 0
                    s1 = self.S
                else:
                    s = c * kt
                    s1 = s + self.rows(c, p)
                while s < s1:
                    i = s * T + o
                    dist = 0
                    for j in range(o, o + d):
                        t = A[i] - u[j]
                        dist += t * t
                        if dist >= best:
                            break
                        i += 1
                    else:
                        best = dist
                        bk = s
                    s += 1
            K[p] = bk
            D[p] = best

    # --- contract 9.3: scores and prediction ---
    def _predict(self, u):
        nc = self.nc
        if nc == 0:
            self.count = 0
            return NO_CLASS
        self._nearest(u, 0, nc)
        K = self._k
        D = self._dist
        conn = self.conn
        R = self.R
        CR = self.cap * R
        S = self.S
        best_n = -1
        best_s = 0
        best_c = 0
        for c in range(nc):
            for col in range(c * R, c * R + R):
                n = 0
                s = 0
                for p in range(self.P):
                    b = (p * S + K[p]) * CR + col
                    if (conn[b >> 3] >> (b & 7)) & 1:
                        n += 1
                        s += D[p]
                if n > best_n or (n == best_n and s < best_s):
                    best_n = n
                    best_s = s
                    best_c = c
        self.count = best_n
        return self.labels[best_c]

    def _check(self, u):
        half = 1 << (self.bits - 1)
        _check_codes(u, self.T, -half, half - 1)

    def predict(self, u):
        """Label of the winning class (-1 when no class is known), its name when the model's
        file named it (names); its count in self.count. u: T int8 values (an array("b") or a
        list of ints)."""
        if type(u) is not array:  # an array goes to the kernel, which checks it (or refuses:
            self._check(u)  # then _predict_id's check runs)
        i = self._predict_id(u)
        names = self.names
        return i if names is None else _label_of(i, names)

    def _predict_id(self, u):  # native: the kernel's predict
        self._check(u)
        _lock()
        try:
            return self._predict(u)
        finally:
            _unlock()

    def slot(self, y):
        """Class slot of label y, or -1."""
        for c in range(self.nc):
            if self.labels[c] == y:
                return c
        return -1

    # --- contract 9.4: learning step ---
    def learn(self, u, y):
        """Learn (u, y), y a label 0..255 or its name in the model's labels (names). Returns
        the label predicted before learning (as predict; its count in self.count). A new label
        takes the next class slot; ValueError when all `cap` slots are taken. Refused before
        anything changes, as every model's learn (kbit.compat's checks)."""
        if type(u) is not array:
            self._check(u)
        if type(y) is not int or y >> 8:
            y = _label_id(y, self.names, 256)
        i = self._learn_id(u, y)
        names = self.names
        return i if names is None else _label_of(i, names)

    def _learn_id(self, u, y):  # native: the kernel's learn, which runs this when capacity is full
        self._check(u)
        if self.slot(y) < 0 and self.nc == self.cap:
            raise ValueError("class capacity %d is full: cannot learn label %d" % (self.cap, y))
        _lock()
        try:
            return self._learn(u, y)
        finally:
            _unlock()

    def _learn(self, u, y):
        pred = self._predict(u)
        c = self.slot(y)
        if c < 0:
            c = self.nc
            self.labels[c] = y
            self.nc = c + 1
        n = self.nf[c]
        if self.approach != NO and n <= (self.kt - 1) * self.P:
            # example 0: a whole row (one-shot); example n: subspace (n-1) % P of a later row
            T = self.T
            j0 = 0
            j1 = T
            i = c * self.kt * T
            if n:
                j0 = (n - 1) % self.P * self.d
                j1 = j0 + self.d
                i += (1 + (n - 1) // self.P) * T
            A = self.anchors
            for j in range(j0, j1):
                A[i + j] = u[j]
            self.nf[c] = n + 1
        if self.approach == II:
            self._nearest(u, c, c + 1)
        else:
            self._nearest(u, 0, self.nc)
        col = c * self.R
        if self.R > 1:
            x = step(self.state)
            self.state = x
            col += scale(x, self.R)
        K = self._k
        conn = self.conn
        CR = self.cap * self.R
        S = self.S
        for p in range(self.P):
            b = (p * S + K[p]) * CR + col
            conn[b >> 3] |= 1 << (b & 7)
        return pred


def load(src):
    """Assoc.load(src)."""
    return Assoc.load(src)


# --- the native kernel: kb_assoc.h as kbit/_kb_assoc.mpy (kbit.compat.native) ---
# On the native path Assoc's predict, learn, _predict and _learn are the native module's own
# functions; they run the bytecode ones for what the kernel does not take (values that are
# not an array("b") of length T, a label outside 0..255, a full class capacity: the same
# errors, the same results).
from .compat import native_methods as _native_methods  # noqa: E402

_nat, use_native, NATIVE_WHY = _native_methods(
    Assoc, "assoc", (("_predict_id", "predict"), ("_learn_id", "learn"), "_predict", "_learn"))
