"""Binary associative memory with product random sampling (Boukli Hacene et al., SiPS 2017).

A feature vector of T = P*d values is split into P contiguous subvectors of d values. Each
subvector is replaced by the index of its nearest *anchor* (a subvector of a real training
example, eq. 1); the P indices light one input neuron per cluster, and learning connects those
neurons to one output neuron of the example's class (R output neurons per class, the one used
drawn at random). Connections are bits. A class's score is how many of a word's neurons are
connected to (one of) its output neurons.

Two forms live here:

`AssocInt`  the integer reference: exactly what device/kbit/assoc.py and firmware_c/kb_assoc.h
            do (docs/contract.md, section "assoc"): int8 inputs, anchors filled from each
            class's examples in stream order (the first gives a whole row, each later one a
            single subspace: `fill_slot`), squared Euclidean distance, every tie broken the
            documented way, a .kb model file.
`AssociativeMemory`  the paper's estimator (scikit-learn style, `partial_fit` takes new classes
            at any time): I-I, N-I and N-O, any P, R and k~, product random sampling drawn
            independently per subspace, on float features (`bits=None`) or on the same int8
            codes as the devices (`bits=1..8`). With `sampling="stream"` it *is* AssocInt.

Approaches (paper section IV-A):
    I-I  anchors sampled per class; a training example is quantized with its own class's
         anchors only, so learning a class never touches another class's connections.
    N-I  anchors sampled per class as they come; a training example is quantized with every
         anchor acquired so far (any class).
    N-O  anchors sampled once from all the data before anything is stored (offline); every
         example is quantized with all of them.
"""
import struct

import numpy as np

from kilobit.core import kbfile
from kilobit.core.errors import ModelFileError
from kilobit.core.quant import quantize
from kilobit.core.rng import Rng, seed_state

APPROACHES = ("I-I", "N-I", "N-O")
II, NI, NO = 0, 1, 2
NO_CLASS = -1  # the prediction of a memory that knows no class yet
SMALL = (1 << 30) - 1  # every intermediate of the integer contract stays within this
_PARAMS = struct.Struct("<BBBBBBBBH")  # approach bits P d cap kt R nc rng


def approach_id(approach):
    if isinstance(approach, str):
        if approach not in APPROACHES:
            raise ValueError("approach must be one of %s, got %r" % (APPROACHES, approach))
        return APPROACHES.index(approach)
    if approach not in (II, NI, NO):
        raise ValueError("approach id must be 0, 1 or 2, got %r" % (approach,))
    return int(approach)


def check_params(approach, bits, P, d, cap, kt, R):
    """Raise ValueError unless the parameters are inside the contract's ranges."""
    approach_id(approach)
    for name, v, lo, hi in (("bits", bits, 1, 8), ("P", P, 1, 255), ("d", d, 1, 255),
                            ("capacity", cap, 1, 255), ("anchors per class", kt, 1, 255),
                            ("R", R, 1, 255)):
        if not lo <= v <= hi:
            raise ValueError("%s must be in %d..%d, got %d" % (name, lo, hi, v))
    top = (1 << bits) - 1
    if P * d * top * top > SMALL:
        raise ValueError("distance sum T*(2^B-1)^2 = %d exceeds 2^30-1" % (P * d * top * top))
    if P * cap * kt * cap * R > SMALL:
        raise ValueError("connection matrix of %d bits exceeds 2^30-1" % (P * cap * kt * cap * R))
    if approach_id(approach) != NO and fill_max(P, kt) > 255:
        raise ValueError("fill counter 1 + (k~-1)*P = %d exceeds 255" % fill_max(P, kt))


def fill_max(P, kt):
    """Where a class's fill counter stops (contract 9.4): its first example, then one subspace
    of rows 1 .. k~-1 per example."""
    return 1 + (kt - 1) * P


def fill_slot(n, P):
    """(row within the class, subspace or None for all) written by a class's example number n
    (n from 0, n < fill_max): example 0 a whole row, so one example is a complete anchor;
    later ones a single subspace each, so each subspace's anchors come from other examples."""
    if n == 0:
        return 0, None
    return 1 + (n - 1) // P, (n - 1) % P


def valid_rows(nf, P):
    """Rows of a class with fill counter nf valid for subspace p, for p = 0 .. P-1: always a
    prefix of the class's rows, of these lengths (contract 9.2)."""
    if nf == 0:
        return [0] * P
    return [1 + max(0, -(-(nf - 1 - p) // P)) for p in range(P)]


def to_int8(X01, bits):
    """Device values from features scaled to [0, 1]: the B-bit code of contract section 1,
    minus 2^(B-1), so -2^(B-1) .. 2^(B-1)-1 (int8 for B <= 8)."""
    return quantize(X01, bits) - (1 << (bits - 1))


def mem_layout(P, d, cap, kt, R):
    """(offsets, total bytes) of the memory: labels[cap] | nf[cap] | anchors[S*T] | conn."""
    S, T = cap * kt, P * d
    conn = (P * S * cap * R + 7) // 8
    offs = dict(labels=0, nf=cap, anchors=2 * cap, conn=2 * cap + S * T)
    return offs, 2 * cap + S * T + conn


def complexity_p(T, K, P, R, C):
    """Operations to classify one input (paper section IV-C): T*K + P*R*C."""
    return T * K + P * R * C


def memory_bits(T, K, P, R, C, f=8):
    """Bits of anchors and connections (paper section IV-C): K*T*f + K*P*R*C."""
    return K * T * f + K * P * R * C


def _sqdist(A, U):
    """Squared distances between rows of U (n, d) and rows of A (k, d), exact integers or
    floats. Integer inputs stay exact: float64 holds every sum here (< 2^53)."""
    A64 = np.asarray(A, dtype=np.float64)
    U64 = np.asarray(U, dtype=np.float64)
    D = (U64 * U64).sum(1)[:, None] + (A64 * A64).sum(1)[None, :] - 2.0 * (U64 @ A64.T)
    if np.issubdtype(np.asarray(A).dtype, np.integer) and \
            np.issubdtype(np.asarray(U).dtype, np.integer):
        return np.rint(D).astype(np.int64)
    return np.maximum(D, 0.0)


def _decide(n, s, R):
    """Winner of neuron counts n (rows, C*R) and distance sums s: the largest count, then the
    smallest distance sum, then the lowest neuron index. Returns (class index, count)."""
    rows = np.arange(n.shape[0])
    best = n.max(1)
    cand = n == best[:, None]
    s_masked = np.where(cand, s, np.inf)
    smin = s_masked.min(1)
    idx = np.argmax(cand & (s_masked == smin[:, None]), axis=1)  # first = lowest index
    return idx // R, best, rows


class AssocInt:
    """The integer reference of the device (contract section "assoc"). Inputs are int8 values
    of B bits (`to_int8`); labels are 0..255; learning returns the prediction made before it.

    State: `labels[c]`/`nf[c]` (label, fill counter) per class slot c < nc (slots in order of
    first appearance), `anchors` (S = cap*kt rows of T int8 values; class slot c owns rows
    c*kt .. c*kt+kt-1, valid per subspace as `valid`), `conn` bits indexed [p, anchor row,
    c*R + r], the generator.
    """

    def __init__(self, approach, bits, P, d, cap, kt, R=1, seed=0):
        check_params(approach, bits, P, d, cap, kt, R)
        self.approach = approach_id(approach)
        self.bits, self.P, self.d, self.cap, self.kt, self.R = bits, P, d, cap, kt, R
        self.S, self.T = cap * kt, P * d
        self.dims = self.T  # the input width, as every model type names it
        self.rng = Rng(seed_state(seed))
        self.labels = np.zeros(cap, dtype=np.int64)
        self.nf = np.zeros(cap, dtype=np.int64)
        self.nc = 0
        self.anchors = np.zeros((self.S, self.T), dtype=np.int64)
        self.conn = np.zeros((P, self.S, cap * R), dtype=bool)

    # --- anchors ---
    def valid(self):
        """(S, P) booleans: anchor row s is valid for subspace p (contract 9.2); every row for
        N-O."""
        if self.approach == NO:
            return np.ones((self.S, self.P), dtype=bool)
        n = np.array([valid_rows(int(f), self.P) for f in self.nf]).reshape(self.cap, self.P)
        return (np.arange(self.S) % self.kt)[:, None] < np.repeat(n, self.kt, axis=0)

    def nearest(self, U, c=None):
        """For inputs U (n, T): per subspace the nearest valid row (lowest row on a tie) of
        class slot c, or of every class (rows(all)) when c is None, and its squared distance.
        Returns (k (n, P), dist (n, P))."""
        U = np.atleast_2d(np.asarray(U, dtype=np.int64))
        n = U.shape[0]
        k = np.zeros((n, self.P), dtype=np.int64)
        dist = np.zeros((n, self.P), dtype=np.int64)
        V = self.valid()
        if c is not None:
            V[:c * self.kt] = False
            V[(c + 1) * self.kt:] = False
        for p in range(self.P):
            sl = slice(p * self.d, (p + 1) * self.d)
            rows = np.nonzero(V[:, p])[0]
            D = _sqdist(self.anchors[rows, sl], U[:, sl])
            j = D.argmin(1)  # first minimum: rows ascend, so the lowest row wins a tie
            k[:, p] = rows[j]
            dist[:, p] = D[np.arange(n), j]
        return k, dist

    def scores(self, U):
        """Per input: neuron counts n (n, nc*R) and distance sums s (same shape)."""
        U = np.atleast_2d(np.asarray(U, dtype=np.int64))
        k, dist = self.nearest(U)
        ncol = self.nc * self.R
        n = np.zeros((U.shape[0], ncol), dtype=np.int64)
        s = np.zeros((U.shape[0], ncol), dtype=np.int64)
        for p in range(self.P):
            B = self.conn[p, k[:, p], :ncol]
            n += B
            s += B * dist[:, p:p + 1]
        return n, s

    def predict_many(self, U):
        """(labels (n,), counts (n,)) for inputs U (n, T); label NO_CLASS when nc == 0."""
        U = np.atleast_2d(np.asarray(U, dtype=np.int64))
        if self.nc == 0:
            return np.full(U.shape[0], NO_CLASS), np.zeros(U.shape[0], dtype=np.int64)
        n, s = self.scores(U)
        c, best, _ = _decide(n, s, self.R)
        return self.labels[c], best

    def predict(self, u):
        """(label, count) of one input: the class of the winning output neuron."""
        self.check_input(u)
        lab, cnt = self.predict_many(np.asarray(u)[None, :])
        return int(lab[0]), int(cnt[0])

    def check_input(self, u, y=0):
        u = np.asarray(u)
        if u.shape != (self.T,):
            raise ValueError("expected %d values, got shape %s" % (self.T, u.shape))
        lo = -(1 << (self.bits - 1))
        if u.min() < lo or u.max() > -lo - 1:
            raise ValueError("values must be in %d..%d" % (lo, -lo - 1))
        if not 0 <= y <= 255:
            raise ValueError("label must be in 0..255, got %r" % (y,))

    def slot_of(self, y):
        hit = np.nonzero(self.labels[:self.nc] == y)[0]
        return int(hit[0]) if hit.size else -1

    def learn(self, u, y):
        """One learning step. Returns (label, count) predicted *before* learning. A new label
        takes the next class slot (ValueError when all `cap` are taken: nothing changes)."""
        self.check_input(u, y)
        pred = self.predict(u)
        u = np.asarray(u, dtype=np.int64)
        c = self.slot_of(y)
        if c < 0:
            if self.nc == self.cap:
                raise ValueError("class capacity %d is full: cannot learn label %d"
                                 % (self.cap, y))
            c = self.nc
            self.labels[c] = y
            self.nc += 1
        if self.approach != NO and self.nf[c] < fill_max(self.P, self.kt):
            r, p = fill_slot(int(self.nf[c]), self.P)
            sl = slice(None) if p is None else slice(p * self.d, (p + 1) * self.d)
            self.anchors[c * self.kt + r, sl] = u[sl]
            self.nf[c] += 1
        k, _ = self.nearest(u[None, :], c if self.approach == II else None)
        r = self.rng.below(self.R) if self.R > 1 else 0
        self.conn[np.arange(self.P), k[0], c * self.R + r] = True
        return pred

    @property
    def anchors_stored(self):
        """The golden files' "anchors": S for N-O, else the examples that wrote anchors (the
        sum of the fill counters; with P = 1 the rows in use)."""
        return self.S if self.approach == NO else int(self.nf.sum())

    # --- memory and model file ---
    def memory(self):
        """labels[cap] | nf[cap] | anchors (S*T int8, row-major) | conn bits, bit
        (p*S + row)*cap*R + c*R + r, LSB first (contract)."""
        conn = np.packbits(self.conn.reshape(-1).astype(np.uint8), bitorder="little")
        return b"".join([self.labels.astype(np.uint8).tobytes(),
                         self.nf.astype(np.uint8).tobytes(),
                         self.anchors.astype(np.int8).tobytes(), conn.tobytes()])

    def load_memory(self, mem, nc):
        offs, total = mem_layout(self.P, self.d, self.cap, self.kt, self.R)
        b = np.frombuffer(mem, dtype=np.uint8)
        assert len(b) == total
        self.labels = b[:self.cap].astype(np.int64)
        self.nf = b[offs["nf"]:offs["nf"] + self.cap].astype(np.int64)
        self.anchors = b[offs["anchors"]:offs["conn"]].view(np.int8).astype(np.int64) \
            .reshape(self.S, self.T)
        nbits = self.P * self.S * self.cap * self.R
        bits = np.unpackbits(b[offs["conn"]:], bitorder="little")
        self.conn = bits[:nbits].astype(bool).reshape(self.P, self.S, self.cap * self.R)
        self.nc = nc
        err = self.check_state(bits[nbits:])
        if err:
            raise ModelFileError("bad assoc memory: " + err)

    def check_state(self, pad_bits=()):
        """None when the state is one a learner can reach, else what is wrong (a str)."""
        nc, kt = self.nc, self.kt
        if nc > self.cap:
            return "nc %d above capacity %d" % (nc, self.cap)
        if len(set(self.labels[:nc].tolist())) != nc:
            return "a label appears twice"
        if self.labels[nc:].any():
            return "label of an unused class slot is not 0"
        if self.approach == NO:
            if self.nf.any():
                return "N-O keeps no per-class fill counters"
        else:
            top = fill_max(self.P, kt)
            if ((self.nf[:nc] < 1) | (self.nf[:nc] > top)).any() or self.nf[nc:].any():
                return "fill counters not in 1..1+(k~-1)*P for used class slots, 0 for the others"
        live = self.valid()
        if self.anchors.reshape(self.S, self.P, self.d)[~live].any():
            return "an anchor not filled yet is not 0"
        if self.conn.transpose(1, 0, 2)[~live].any() or self.conn[:, :, nc * self.R:].any():
            return "a connection of an anchor not filled yet or of an unused class is set"
        if np.any(pad_bits):
            return "padding bits are not 0"
        return None

    def to_bytes(self, scaler=None):
        head = _PARAMS.pack(self.approach, self.bits, self.P, self.d, self.cap, self.kt,
                            self.R, self.nc, self.rng.state)
        parts = [head, self.memory(), kbfile.pack_scaler(scaler)]
        return kbfile.pack("assoc", b"".join(parts))

    @classmethod
    def from_bytes(cls, data):
        """Return (model, scaler or None); raise ModelFileError on any inconsistency."""
        name, p = kbfile.unpack(data)
        if name != "assoc":
            raise ModelFileError("expected an assoc model, file holds %s" % name)
        if len(p) < _PARAMS.size:
            raise ModelFileError("truncated assoc parameters")
        approach, bits, P, d, cap, kt, R, nc, state = _PARAMS.unpack_from(p)
        try:
            check_params(approach, bits, P, d, cap, kt, R)
            rng = Rng(state)
        except ValueError as e:
            raise ModelFileError("bad assoc parameters: %s" % e) from None
        if nc > cap:
            raise ModelFileError("bad assoc parameters: nc %d above capacity %d" % (nc, cap))
        _, nmem = mem_layout(P, d, cap, kt, R)
        off = _PARAMS.size
        if len(p) < off + nmem + 1:
            raise ModelFileError("truncated assoc payload")
        m = cls(approach, bits, P, d, cap, kt, R)
        m.rng = rng
        m.load_memory(p[off:off + nmem], nc)
        off += nmem
        return m, kbfile.unpack_scaler(p, off, P * d, "assoc", bits)


class AssociativeMemory:
    """The paper's classifier, scikit-learn style; classes may arrive at any time.

        m = AssociativeMemory(P=4, anchors_per_class=20, R=1, approach="I-I", bits=8, seed=0)
        m.partial_fit(X_class0, y0); m.partial_fit(X_class1, y1); m.predict(X)

    X is scaled to [0, 1] (kilobit.core.quant.MinMaxScaler). `bits=None` works on the floats
    (float distances); `bits=B` on the int8 device values (`to_int8`). The feature count must
    be a multiple of P (subvector p = features p*d .. p*d+d-1).

    sampling="random" (the paper): at each partial_fit, every class of the batch that has fewer
    than k~ anchors draws the missing ones (or `n_anchors` per class when given: the
    example-incremental protocol's proportional sampling) per subspace independently, uniformly
    without replacement among the batch's examples of that class; N-O draws K = k~ * classes
    anchors per subspace from the first batch and never again. Then every example of the batch
    is stored (connected to output neuron r drawn uniformly in 0..R-1).

    sampling="stream": the devices' rule (AssocInt, contract 9.4): examples one by one in the
    given order; a class's first example gives a whole anchor row (one-shot learning), each
    later one a single subspace (example n >= 1: subspace (n-1) mod P of row 1 + (n-1) div P),
    so each subspace's anchors come from other examples as in the paper's independent draws,
    and P times more examples contribute than with whole rows. Needs bits and at most
    `capacity` classes; 1 + (k~-1)*P <= 255.
    """

    def __init__(self, P=4, anchors_per_class=20, R=1, approach="I-I", bits=8, seed=0,
                 sampling="random", capacity=None, tiebreak="distance"):
        self.P, self.anchors_per_class, self.R = P, anchors_per_class, R
        self.approach, self.bits, self.seed = approach, bits, seed
        self.sampling, self.capacity = sampling, capacity
        self.tiebreak = tiebreak  # "distance" (the contract) or "index" (lowest class only)

    # --- encoding ---
    def _enc(self, X):
        X = np.asarray(X, dtype=np.float64)
        if X.ndim == 1:
            X = X[None, :]
        if X.shape[1] % self.P:
            raise ValueError("%d features do not split into P = %d equal parts"
                             % (X.shape[1], self.P))
        if hasattr(self, "T_") and X.shape[1] != self.T_:
            raise ValueError("expected %d features, got %d" % (self.T_, X.shape[1]))
        if self.bits is None:
            return X
        return to_int8(X, self.bits)

    def _init(self, T):
        approach_id(self.approach)
        self.T_, self.d_ = T, T // self.P
        self.classes_ = []
        self.gen_ = np.random.default_rng(self.seed)
        if self.sampling == "stream":
            if self.bits is None:
                raise ValueError("sampling='stream' runs the integer contract: give bits")
            cap = self.capacity or 255
            self.int_ = AssocInt(self.approach, self.bits, self.P, self.d_, cap,
                                 self.anchors_per_class, self.R, self.seed)
            return
        if self.sampling != "random":
            raise ValueError("sampling must be 'random' or 'stream'")
        dt = np.float64 if self.bits is None else np.int64
        self.A_ = [np.zeros((0, self.d_), dtype=dt) for _ in range(self.P)]  # anchors
        self.own_ = [np.zeros(0, dtype=np.int64) for _ in range(self.P)]  # owner class index
        self.conn_ = [np.zeros((0, 0), dtype=bool) for _ in range(self.P)]  # [anchor, c*R+r]
        self.have_ = []  # anchors per class (per subspace: the same count in every subspace)
        self.frozen_ = False  # N-O: the quantizer is fixed after the first batch

    def fit(self, X, y):
        for a in ("T_", "int_", "A_"):
            if hasattr(self, a):
                delattr(self, a)
        return self.partial_fit(X, y)

    def partial_fit(self, X, y, n_anchors=None):
        U = self._enc(X)
        y = np.asarray(y)
        if len(U) != len(y):
            raise ValueError("X has %d rows but y has %d labels" % (len(U), len(y)))
        if not hasattr(self, "T_"):
            self._init(U.shape[1])
        if self.sampling == "stream":
            for u, t in zip(U, y):
                if int(t) not in self.classes_:
                    self.classes_.append(int(t))
                self.int_.learn(u, int(t))
            return self
        new = [t for t in dict.fromkeys(y.tolist()) if t not in self.classes_]
        for t in new:
            self.classes_.append(t)
            self.have_.append(0)
            for p in range(self.P):
                self.conn_[p] = np.pad(self.conn_[p], ((0, 0), (0, self.R)))
        ci = np.array([self.classes_.index(t) for t in y.tolist()], dtype=np.int64)
        self._sample(U, ci, n_anchors)
        self._store(U, ci)
        return self

    def _add_anchors(self, p, V, owner):
        self.A_[p] = np.concatenate([self.A_[p], V])
        self.own_[p] = np.concatenate([self.own_[p], np.full(len(V), owner, dtype=np.int64)])
        self.conn_[p] = np.pad(self.conn_[p], ((0, len(V)), (0, 0)))

    def _sample(self, U, ci, n_anchors):
        kt, d, g = self.anchors_per_class, self.d_, self.gen_
        if approach_id(self.approach) == NO:
            if self.frozen_:
                return
            K = kt * len(self.classes_)
            for p in range(self.P):
                pick = g.choice(len(U), size=min(K, len(U)), replace=False)
                self._add_anchors(p, U[pick, p * d:(p + 1) * d], -1)
            self.frozen_ = True
            return
        for c in dict.fromkeys(ci.tolist()):
            idx = np.nonzero(ci == c)[0]
            m = kt - self.have_[c] if n_anchors is None else n_anchors
            m = max(0, min(m, len(idx)))
            if m == 0:
                continue
            for p in range(self.P):
                pick = idx[g.choice(len(idx), size=m, replace=False)]
                self._add_anchors(p, U[pick, p * d:(p + 1) * d], c)
            self.have_[c] += m

    def _nearest(self, p, V, mask=None):
        D = _sqdist(self.A_[p], V)
        if mask is not None:
            D = np.where(mask, D, np.inf)
        j = D.argmin(1)
        return j, D[np.arange(len(V)), j]

    def _store(self, U, ci):
        d, R = self.d_, self.R
        r = self.gen_.integers(0, R, size=len(U)) if R > 1 else np.zeros(len(U), dtype=np.int64)
        col = ci * R + r
        ii = approach_id(self.approach) == II
        for p in range(self.P):
            V = U[:, p * d:(p + 1) * d]
            if ii:
                # own class's anchors only; class by class keeps the distance matrix small
                for c in np.unique(ci):
                    rows = np.nonzero(self.own_[p] == c)[0]
                    sel = np.nonzero(ci == c)[0]
                    if rows.size == 0 or sel.size == 0:
                        continue
                    D = _sqdist(self.A_[p][rows], V[sel])
                    self.conn_[p][rows[D.argmin(1)], col[sel]] = True
            else:
                if len(self.A_[p]) == 0:
                    continue
                for s in range(0, len(V), 2048):
                    j, _ = self._nearest(p, V[s:s + 2048])
                    self.conn_[p][j, col[s:s + 2048]] = True

    # --- prediction ---
    def _scores(self, U):
        d = self.d_
        C = len(self.classes_)
        n = np.zeros((len(U), C * self.R), dtype=np.int64)
        s = np.zeros((len(U), C * self.R), dtype=np.float64)
        for p in range(self.P):
            if len(self.A_[p]) == 0:
                continue
            j, dist = self._nearest(p, U[:, p * d:(p + 1) * d])
            B = self.conn_[p][j]
            n += B
            s += B * dist[:, None]
        return n, s

    def predict(self, X):
        U = self._enc(X)
        if self.sampling == "stream":
            lab, _ = self.int_.predict_many(U)
            return lab
        out = np.empty(len(U), dtype=np.asarray(self.classes_).dtype)
        for a in range(0, len(U), 1024):
            n, s = self._scores(U[a:a + 1024])
            if self.tiebreak == "index":
                s = np.zeros_like(s)
            c, _, _ = _decide(n, s, self.R)
            out[a:a + 1024] = np.asarray(self.classes_)[c]
        return out

    def score(self, X, y):
        return float(np.mean(self.predict(X) == np.asarray(y)))

    # --- resources (paper section IV-C) ---
    @property
    def n_anchors_(self):
        """K: anchors per subspace (streamed: subspace 0's, the most filled)."""
        if self.sampling == "stream":
            return int(self.int_.valid()[:, 0].sum())
        return len(self.A_[0])

    def complexity_p(self):
        return complexity_p(self.T_, self.n_anchors_, self.P, self.R, len(self.classes_))

    def memory_bits(self, f=8):
        return memory_bits(self.T_, self.n_anchors_, self.P, self.R, len(self.classes_), f)
