"""Several classes for the online learners (kbit.rkp, kbit.ckp): one-vs-rest (docs/contract.md
3.6 and 6.8).

    m = kbit.load("gestures.kb")        # a file of K >= 3 classes gives a OneVsRest
    m = RKP.new("laplace", 4, 6, 16, -2, classes=3)
    m.learn(codes, "wave")              # every learner k learns (codes, label == k)
    m.predict(codes)                    # the class of the largest score (the lowest on a tie)

K binary learners of one type share the parameters and the weight tables (one bytes object);
each has its own generator, count and memory, so the binary kernels run unchanged -- the
native ones included. score, predict and learn build nothing per step (no list, no tuple),
and every learner locks the heap while its kernel runs.

`memory` (the K memories back to back, as the file and the golden files hold them) and save()
build bytes: they are for saving and checking, not for a learning loop.
"""
from .compat import check_codes as _check_codes, label_id as _label_id, label_of as _label_of
from .kbfile import Inputs, trailer, write

#: the classes flag in a learner's first payload byte (rkp's kernel, ckp's bits)
FLAG = 0x80


class OneVsRest(Inputs):
    """K >= 3 binary learners (RKP or CKP objects) answering class k against the rest."""

    def __init__(self, learners):
        if not 3 <= len(learners) <= 255:
            raise ValueError("bad parameters: %d classes not in 3..255" % len(learners))
        self.learners = tuple(learners)
        first = learners[0]
        self.classes = len(learners)
        self.dims = first.dims
        self.bits = first.bits
        self.mistake = False  # set by learn(): whether any learner stored a support vector
        self.last_class = 0  # the class of the largest score of the last learn or score

    @property
    def count(self):
        """Support vectors of all the learners."""
        n = 0
        for m in self.learners:
            n += m.count
        return n

    @property
    def native(self):
        """True when every learner runs its native kernel (kbit.compat.native)."""
        for m in self.learners:
            if not m.native:
                return False
        return True

    @property
    def memory(self):
        return b"".join(m.memory for m in self.learners)

    def _tail_set(self):
        for m in self.learners:
            if m._tail_set():
                return True
        return False

    def _check(self, u):
        if type(u) is not bytearray:  # the kernels check a bytearray themselves
            _check_codes(u, self.dims, 0, (1 << self.bits) - 1)

    def score(self, u):
        """The largest of the learners' scores; last_class is its class."""
        self._check(u)
        k = 0
        best = 0
        i = 0
        for m in self.learners:
            s = m.score(u)
            if i == 0 or s > best:
                best = s
                k = i
            i += 1
        self.last_class = k
        return best

    def predict(self, u):
        """The class of the largest score, the lowest on a tie: its label when the file named
        it, else the id."""
        self.score(u)
        names = self.names
        return self.last_class if names is None else _label_of(self.last_class, names)

    def learn(self, u, y):
        """One step for codes u and label y (a class id 0 .. K-1 or one of the model's labels):
        learner k learns (u, 1 if y == k else 0). Returns the largest score before learning;
        sets mistake and last_class. Refused before anything changes, as a binary learner's."""
        self._check(u)
        if type(y) is not int or not 0 <= y < self.classes:
            y = _label_id(y, self.names, self.classes)
        k = 0
        best = 0
        i = 0
        mistake = False
        for m in self.learners:
            s = m._learn_id(u, 1 if i == y else 0)
            if m.mistake:
                mistake = True
            if i == 0 or s > best:
                best = s
                k = i
            i += 1
        self.mistake = mistake
        self.last_class = k
        return best

    def save(self, stream):
        """Write the model as a .kb file (contract 3.5/6.7 with the classes section), with the
        trailer it was loaded with: learner 0's file, spliced."""
        first = self.learners[0]
        parts = _Parts()
        first.save(parts)
        # parts.chunks: the file's head, then first's payload parts (parameters, tables ..,
        # memory, trailer), then its CRC
        p = bytearray(parts.chunks[1])
        p[0] |= FLAG
        n = len(p) - 13  # ckp's parameters are 4 bytes longer (norm), so is its state
        sec = bytearray(1 + (len(self.learners) - 1) * (4 + n))
        sec[0] = len(self.learners)
        j = 1
        for m in self.learners[1:]:
            for v, w in ((m.state, 2), (m.count, 2), (m.norm if n else 0, n)):
                for _ in range(w):
                    sec[j] = v & 0xFF
                    v >>= 8
                    j += 1
        out = [p, sec] + parts.chunks[2:-3] + [m.memory for m in self.learners] + [trailer(self)]
        write(stream, parts.chunks[0][5], out)


class _Parts:
    """A stream that keeps what is written to it, chunk by chunk."""

    def __init__(self):
        self.chunks = []

    def write(self, b):
        self.chunks.append(bytes(b))


def read_states(r, size, name):
    """(K, the states of learners 1 .. K-1 as bytes, None) of the classes section at Reader r
    (u8 K, then K-1 states of `size` bytes), or (1, b"", what is wrong) for a bad or truncated
    section."""
    if r.left < 1:
        return 1, b"", "truncated %s payload" % name
    K = r.read(1)[0]
    if not 3 <= K <= 255:
        return 1, b"", "bad parameters: %d classes not in 3..255" % K
    if r.left < (K - 1) * size:
        return 1, b"", "truncated %s payload" % name
    return K, r.read((K - 1) * size), None


def read(first, r, states, size, make):
    """The OneVsRest of learner `first` (its memory read) and learners 1 .. K-1: make(states,
    i) builds one from its state at states[i:], then its memory is read from Reader r."""
    learners = [first]
    for i in range(0, len(states), size):
        m = make(states, i)
        r.readinto(m.memory)
        if hasattr(m, "_clear_unused"):
            m._clear_unused()
        learners.append(m)
    return OneVsRest(learners)


