"""Several classes for the binary online learners (rkp, ckp): one-vs-rest (docs/contract.md,
3.6 and 6.8).

K >= 3 binary learners of one type share the parameters and the weight tables; learner k has
its own generator, count and memory and learns (u, 1 if y == k else 0) at every step. The
prediction is the class of the largest score, the lowest id on a tie; a step's score is that
largest score. K = 2 is the binary learner itself (learner 0 answers class 1 against class 0),
so a binary model and its file stay what they were.

One-vs-rest, rather than a scheme sharing one budget across the classes, because every binary
learner is unchanged: the same step, the same memory layout, the same native kernels on every
runtime, and a class that is rarely wrong does not spend its mistakes' room on the others.
"""
from kilobit.core.errors import ModelFileError

#: the most classes a file holds (a u8)
MAX_CLASSES = 255


def check_classes(K):
    if not 2 <= K <= MAX_CLASSES:
        raise ValueError("classes must be in 2..%d, got %d" % (MAX_CLASSES, K))


def learner_seed(seed, k):
    """Learner k's seed: learner 0 keeps the binary model's, so K = 2 is the binary model."""
    return seed + k


class OneVsRest:
    """K >= 3 binary integer learners (RKPInt, CKPInt) with shared parameters and tables.

    Reads as one learner to the golden replays and the commands: learn(u, y) -> (largest score
    before learning, whether any learner stored a support vector), score(u) -> the largest
    score, predict_class(u), count (support vectors of all the learners), memory() (the K
    memories back to back, as the file stores them). The shared parameters (kernel, bits,
    dims, budget, width, C, table, ...) are learner 0's."""

    def __init__(self, learners):
        check_classes(len(learners))
        if len(learners) < 3:
            raise ValueError("one-vs-rest takes 3 or more learners; 2 classes are one binary "
                             "learner")
        self.learners = list(learners)

    def __getattr__(self, name):
        if name == "learners":  # not set yet (copy, pickle): no recursion through learners[0]
            raise AttributeError(name)
        return getattr(self.learners[0], name)

    @property
    def classes(self):
        return len(self.learners)

    @property
    def count(self):
        return sum(m.count for m in self.learners)

    def check_label(self, y):
        if not (isinstance(y, int) or hasattr(y, "__index__")) or not 0 <= y < self.classes:
            raise ValueError("label must be a class id in 0..%d, got %r" % (self.classes - 1, y))

    def scores(self, u):
        return [m.score(u) for m in self.learners]

    @staticmethod
    def best(scores):
        """(class, score) of the largest score, the lowest class on a tie."""
        k = max(range(len(scores)), key=lambda i: (scores[i], -i))
        return k, scores[k]

    def score(self, u):
        return self.best(self.scores(u))[1]

    def predict_class(self, u):
        return self.best(self.scores(u))[0]

    def step(self, op, y, codes):
        """(score, prediction, mistake) of one golden step ("L" learns y, "Q" only scores)."""
        if op != "L":
            k, s = self.best(self.scores(codes))
            return s, k, False
        s, mistake = self.learn(codes, y)
        return s, self._last, mistake

    def learn(self, u, y):
        """Every learner k learns (u, y == k); return (largest score before, any stored)."""
        check = getattr(self.learners[0], "check_input", None)  # the float references have none
        if check is not None:
            check(u, 0)
        self.check_label(y)
        out = [m.learn(u, 1 if k == y else 0) for k, m in enumerate(self.learners)]
        self._last, s = self.best([s for s, _ in out])
        return s, any(mis for _, mis in out)

    def memory(self):
        return b"".join(m.memory() for m in self.learners)

    def to_bytes(self, scaler=None):
        return type(self.learners[0]).pack(self.learners, scaler)


def predict(scores):
    """Class ids of decision values: a binary learner's scores (class 1 where > 0), or rows of
    the K learners' scores (the largest; numpy's argmax takes the lowest id on a tie)."""
    import numpy as np
    scores = np.asarray(scores)
    if scores.ndim == 1:
        return (scores > 0).astype(np.int64)
    return scores.argmax(axis=1).astype(np.int64)


def model_of(learners):
    """The model of a file's learners: the binary learner itself, or their one-vs-rest."""
    return learners[0] if len(learners) == 1 else OneVsRest(learners)


def learners_of(m):
    return m.learners if isinstance(m, OneVsRest) else [m]


def read_classes(p, off, what, state):
    """(K, [per-learner state tuples of learners 1..K-1], offset after them) of the classes
    section at p[off] (contract 3.5/6.7): u8 K (3..255), then (K-1) x `state` (a struct)."""
    if len(p) < off + 1:
        raise ModelFileError("truncated %s payload" % what)
    K = p[off]
    if not 3 <= K <= MAX_CLASSES:
        raise ModelFileError("bad %s parameters: %d classes (3..%d)" % (what, K, MAX_CLASSES))
    off += 1
    end = off + (K - 1) * state.size
    if len(p) < end:
        raise ModelFileError("truncated %s payload" % what)
    return K, [state.unpack_from(p, off + i * state.size) for i in range(K - 1)], end
