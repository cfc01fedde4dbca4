"""Random Kernel Perceptron (Djuric & Vucetic 2010): float reference and integer reference.

The integer reference (`RKPInt`) *is* the contract of docs/contract.md section 3 in executable
form; device/kbit/rkp.py and firmware_c/kb_rkp.h must agree with it bit for bit. The float
reference (`RKPFloat`) is the paper's eq. 6 with exact exp on the same quantized codes and the
same removal sequence, so the two differ only by the fixed-point weight approximation.
"""
import struct

import numpy as np

from kilobit.core import kbfile
from kilobit.core.errors import ModelFileError

# weight is kilobit.core.kernel's, re-exported (the redundant alias) for rkp.firmware and the tests
from kilobit.core.kernel import (
    TABLE_MAX,
    power_table_scaled,
    ring_score,
    table_ok,
    weight as weight,
    weights,
)
from kilobit.core.quant import quantize
from kilobit.core.rng import Rng, seed_state
from kilobit.models import ovr

KERNELS = ("laplace", "rbf")
DEFAULT_C = 255
_PARAMS = struct.Struct("<BBHHbBHHB")  # kernel bits dims budget width C rng count ntab
_STATE = struct.Struct("<HH")  # rng count of each one-vs-rest learner after the first
#: in the kernel byte: the classes section follows the parameters (contract 3.6)
CLASSES_FLAG = 0x80


def check_params(kernel, bits, dims, budget, width, C):
    """Raise ValueError unless the parameters are inside the contract's ranges."""
    if kernel not in KERNELS:
        raise ValueError("kernel must be one of %s, got %r" % (KERNELS, kernel))
    if not 1 <= bits <= 8:
        raise ValueError("bits must be in 1..8, got %d" % bits)
    if not 1 <= dims <= 0xFFFF:
        raise ValueError("dims must be in 1..65535, got %d" % dims)
    if not 1 <= budget <= 0xFFFF:
        raise ValueError("budget must be in 1..65535 support vectors, got %d" % budget)
    if not -16 <= width <= 16:
        raise ValueError("width A must be in -16..16, got %d" % width)
    if not 1 <= C <= 255:
        raise ValueError("C must be in 1..255 (8-bit weights, 16-bit products), got %d" % C)
    top = (1 << bits) - 1
    if kernel == "laplace" and dims * top > 0xFFFF:
        raise ValueError("laplace distance M*(2^B-1) = %d exceeds 16 bits" % (dims * top))
    if kernel == "rbf" and dims * top * top > (1 << 30) - 1:
        raise ValueError("rbf distance M*(2^B-1)^2 = %d exceeds 30 bits" % (dims * top * top))


def kernel_scale(kernel, bits, width):
    """The exponent e with g = exp(-1 / 2^e): A+B for laplace, A+2B for rbf."""
    return width + (2 * bits if kernel == "rbf" else bits)


def power_table(kernel, bits, width, C=DEFAULT_C):
    """P[j] = round(C * g^(2^j)) until the first zero (contract 3.2). Computed once, on the host."""
    return power_table_scaled(2.0 ** kernel_scale(kernel, bits, width), C)


def distances(kernel, S, u):
    diff = S - u
    if kernel == "laplace":
        return np.abs(diff).sum(axis=1)
    return (diff * diff).sum(axis=1)


def mem_bytes(budget, dims, bits):
    """Size of the bit-packed support-vector memory (contract 3.5)."""
    return (budget * (dims * bits + 1) + 7) // 8


class _Core:
    """Support-vector store and random-removal learning rule shared by both references."""

    def __init__(self, kernel, bits, dims, budget, width, C=DEFAULT_C, seed=0):
        check_params(kernel, bits, dims, budget, width, C)
        self.kernel, self.bits, self.dims, self.budget = kernel, bits, dims, budget
        self.width, self.C = width, C
        self.rng = Rng(seed_state(seed))
        self.codes = np.zeros((budget, dims), dtype=np.int64)
        self.labels = np.zeros(budget, dtype=np.int64)  # +1 / -1 for stored slots
        self.count = 0

    def score(self, u):
        raise NotImplementedError

    def check_input(self, u, y=0):
        """Contract 3.1: codes in 0..2^B-1, M of them, label 0 or 1; anything else is refused."""
        u = np.asarray(u)
        if u.shape != (self.dims,):
            raise ValueError("expected %d codes, got shape %s" % (self.dims, u.shape))
        if u.min() < 0 or u.max() >= (1 << self.bits):
            raise ValueError("codes must be in 0..%d" % ((1 << self.bits) - 1))
        if y not in (0, 1):
            raise ValueError("label must be 0 or 1, got %r" % (y,))

    def learn(self, u, y):
        """One step of Algorithm 1: return (score before learning, mistake flag)."""
        self.check_input(u, y)
        s = self.score(u)
        mistake = s <= 0 if y == 1 else s >= 0
        if mistake:
            if self.count < self.budget:
                slot = self.count
                self.count += 1
            else:
                slot = self.rng.below(self.budget)
            self.codes[slot] = u
            self.labels[slot] = 1 if y == 1 else -1
        return s, mistake

    def memory(self):
        """The bit-packed support-vector memory of contract 3.5."""
        B, M = self.bits, self.dims
        bits = np.zeros((self.budget, M * B + 1), dtype=np.uint8)
        n = self.count
        bits[:n, 0] = self.labels[:n] > 0
        shifts = np.arange(B)
        bits[:n, 1:] = ((self.codes[:n, :, None] >> shifts) & 1).reshape(n, M * B)
        flat = np.concatenate([bits.ravel(), np.zeros((-bits.size) % 8, dtype=np.uint8)])
        return np.packbits(flat, bitorder="little").tobytes()

    def load_memory(self, mem, count):
        B, M = self.bits, self.dims
        S = M * B + 1
        flat = np.unpackbits(np.frombuffer(mem, dtype=np.uint8), bitorder="little")
        bits = flat[: self.budget * S].reshape(self.budget, S).astype(np.int64)
        self.labels[:] = 0
        self.codes[:] = 0
        self.labels[:count] = np.where(bits[:count, 0] == 1, 1, -1)
        code_bits = bits[:count, 1:].reshape(count, M, B)
        self.codes[:count] = (code_bits << np.arange(B)).sum(axis=2)
        self.count = count


class RKPInt(_Core):
    """Integer reference: fixed-point eq. 10 with the log-method weights of contract 3.2."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.table = power_table(self.kernel, self.bits, self.width, self.C)

    def _weights(self, k):
        return weights(k, self.table, self.C)

    def score(self, u):
        """Eq. 10 relative to the nearest ring, then the next ring while the sum is 0 (3.3)."""
        n = self.count
        if n == 0:
            return 0
        return ring_score(distances(self.kernel, self.codes[:n], u), self.labels[:n],
                          self._weights)

    # --- model file (contract 4; several classes: 3.6) ---
    def to_bytes(self, scaler=None):
        return self.pack([self], scaler)

    @staticmethod
    def pack(learners, scaler=None):
        """The model file of one binary learner, or of K >= 3 one-vs-rest learners sharing
        learner 0's parameters and table (kilobit.models.ovr)."""
        m = learners[0]
        kernel = KERNELS.index(m.kernel) | (CLASSES_FLAG if len(learners) > 1 else 0)
        head = _PARAMS.pack(kernel, m.bits, m.dims, m.budget, m.width, m.C,
                            m.rng.state, m.count, len(m.table))
        parts = [head]
        if len(learners) > 1:
            parts.append(bytes([len(learners)]))
            parts += [_STATE.pack(k.rng.state, k.count) for k in learners[1:]]
        parts += [bytes(m.table)] + [k.memory() for k in learners]
        parts.append(kbfile.pack_scaler(scaler))
        return kbfile.pack("rkp", b"".join(parts))

    @classmethod
    def from_bytes(cls, data):
        """Return (model, scaler or None); raise ModelFileError on any inconsistency. A file of
        K >= 3 classes gives their kilobit.models.ovr.OneVsRest."""
        name, p = kbfile.unpack(data)
        if name != "rkp":
            raise ModelFileError("expected an rkp model, file holds %s" % name)
        if len(p) < _PARAMS.size:
            raise ModelFileError("truncated rkp parameters")
        kernel, bits, dims, budget, width, C, state, count, ntab = _PARAMS.unpack_from(p)
        off = _PARAMS.size
        states = [(state, count)]
        if kernel & CLASSES_FLAG:
            kernel &= ~CLASSES_FLAG
            _, more, off = ovr.read_classes(p, off, "rkp", _STATE)
            states += more
        if kernel >= len(KERNELS):
            raise ModelFileError("unknown kernel id %d" % kernel)
        try:
            check_params(KERNELS[kernel], bits, dims, budget, width, C)
            rngs = [Rng(st) for st, _ in states]
        except ValueError as e:
            raise ModelFileError("bad rkp parameters: %s" % e) from None
        top = max(n for _, n in states)
        if top > budget or ntab > TABLE_MAX:
            raise ModelFileError("bad rkp header: count %d budget %d ntab %d"
                                 % (top, budget, ntab))
        table = list(p[off:off + ntab])
        off += ntab
        nmem = mem_bytes(budget, dims, bits)
        mems = []
        for _ in states:
            mems.append(p[off:off + nmem])
            off += nmem
        if len(table) != ntab or any(len(x) != nmem for x in mems) or off >= len(p):
            raise ModelFileError("truncated rkp payload")
        if not table_ok(table, C):
            raise ModelFileError("bad rkp weight table")
        scaler = kbfile.unpack_scaler(p, off, dims, "rkp", bits)
        learners = []
        for rng, (_, n), mem in zip(rngs, states, mems):
            m = cls(KERNELS[kernel], bits, dims, budget, width, C)
            m.rng = rng
            m.table = table  # the file's table is authoritative: it defines the weights
            m.load_memory(mem, n)
            learners.append(m)
        return ovr.model_of(learners), scaler


def new_model(kernel, bits, dims, budget, width, C=DEFAULT_C, seed=0, classes=2):
    """A fresh integer model of `classes` classes: one binary learner for 2, else one-vs-rest
    learners, learner k seeded with ovr.learner_seed(seed, k)."""
    ovr.check_classes(classes)
    if classes == 2:
        return RKPInt(kernel, bits, dims, budget, width, C, seed)
    return ovr.OneVsRest([RKPInt(kernel, bits, dims, budget, width, C,
                                 ovr.learner_seed(seed, k)) for k in range(classes)])


class RKPFloat(_Core):
    """Float reference: exact K = exp(-d / 2^(A+B)) (eq. 6; 2^(A+2B) for rbf), same codes, same
    removals. Like the paper's float model it does not subtract the nearest distance first, so
    it underflows to a zero score at very small widths on high-dimensional data."""

    def score(self, u):
        n = self.count
        if n == 0:
            return 0.0
        d = distances(self.kernel, self.codes[:n], u).astype(np.float64)
        k = np.exp(-d * 2.0 ** -kernel_scale(self.kernel, self.bits, self.width))
        return float((self.labels[:n] * k).sum())


class RandomKernelPerceptron:
    """Budgeted kernel perceptron with random removal, in the scikit-learn / river style.

    X must already be scaled to [0, 1] (kilobit.core.quant.MinMaxScaler, or kilobit.data.scale); it
    is clipped and quantized to `bits` bits inside. y is a class id 0 .. classes-1 (0/1 with
    the default 2: one binary learner; more: one-vs-rest, kilobit.models.ovr, `budget` support
    vectors each). `fixed=True` runs the integer contract (what the devices run), `fixed=False`
    the float reference. One pass over the data, in order, as the paper's online learner.
    """

    def __init__(self, kernel="laplace", bits=4, budget=62, width=-6, C=DEFAULT_C, seed=0,
                 fixed=True, classes=2):
        self.kernel, self.bits, self.budget, self.width = kernel, bits, budget, width
        self.C, self.seed, self.fixed, self.classes = C, seed, fixed, classes

    def _init(self, dims):
        if self.fixed:
            self.model_ = new_model(self.kernel, self.bits, dims, self.budget, self.width,
                                    self.C, self.seed, self.classes)
            return
        ovr.check_classes(self.classes)
        learners = [RKPFloat(self.kernel, self.bits, dims, self.budget, self.width, self.C,
                             ovr.learner_seed(self.seed, k))
                    for k in range(1 if self.classes == 2 else self.classes)]
        self.model_ = ovr.model_of(learners)

    def _codes(self, X):
        X = np.asarray(X, dtype=np.float64)
        if X.ndim == 1:
            X = X[None, :]
        if hasattr(self, "model_") and X.shape[1] != self.model_.dims:
            raise ValueError("expected %d features, got %d" % (self.model_.dims, X.shape[1]))
        return quantize(X, self.bits)

    def fit(self, X, y):
        X = np.asarray(X)
        self._init(X.shape[1])
        return self.partial_fit(X, y)

    def partial_fit(self, X, y):
        X = np.asarray(X)
        if len(X) != len(y):
            raise ValueError("X has %d rows but y has %d labels" % (len(X), len(y)))
        if not hasattr(self, "model_"):
            self._init(X.shape[1])
        for u, t in zip(self._codes(X), np.asarray(y)):
            self.model_.learn(u, int(t))
        return self

    def learn_one(self, x, y):
        return self.partial_fit(np.asarray(x)[None, :], [y])

    def decision_function(self, X):
        """The score of each row (binary), or each class's score (one-vs-rest: n x K)."""
        m = self.model_
        if isinstance(m, ovr.OneVsRest):
            return np.array([m.scores(u) for u in self._codes(X)])
        return np.array([m.score(u) for u in self._codes(X)])

    def predict(self, X):
        return ovr.predict(self.decision_function(X))

    def predict_one(self, x):
        return int(self.predict(np.asarray(x)[None, :])[0])

    def score(self, X, y):
        return float(np.mean(self.predict(X) == np.asarray(y)))
