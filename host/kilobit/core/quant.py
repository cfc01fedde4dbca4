"""Min-max scaling and B-bit quantization (docs/contract.md, section 1), and the integer
quantizer of raw integer readings that every runtime shares (section 1.1)."""
import numpy as np

from kilobit.core.errors import DataError


class MinMaxScaler:
    """Scale each feature to [0, 1] with bounds learnt on the training split only."""

    def fit(self, X):
        X = _check_matrix(X)
        self.lo_ = X.min(axis=0).astype(np.float32)
        self.hi_ = X.max(axis=0).astype(np.float32)
        return self

    def transform(self, X):
        X = _check_matrix(X, self.lo_.shape[0])
        lo = self.lo_.astype(np.float64)
        span = self.hi_.astype(np.float64) - lo
        safe = np.where(span > 0, span, 1.0)
        Z = np.where(span > 0, (X - lo) / safe, 0.0)
        return np.clip(Z, 0.0, 1.0)

    def fit_transform(self, X):
        return self.fit(X).transform(X)

    @classmethod
    def stored_or_fitted(cls, stored, X_train):
        """The input map a model file stores (its trailer's kilobit.core.kbfile.Extras: the
        integer quantizer or the float scaler), or, when it has neither, a scaler fitted on
        X_train (the training split). Either has transform(X) -> [0, 1]."""
        if stored is not None:
            if stored.quant is not None:
                return stored.quant
            stored = stored.scaler
        sc = cls()
        if stored is None:
            return sc.fit(X_train)
        sc.lo_, sc.hi_ = stored
        return sc


def quantize(X, bits):
    """Codes 0..2^B-1 from values in [0, 1]: round half up, clamp (paper eq. 5)."""
    if not 1 <= bits <= 8:
        raise ValueError("bits must be in 1..8")
    X = np.asarray(X, dtype=np.float64)
    top = (1 << bits) - 1
    codes = np.floor(X * (1 << bits) + 0.5)
    return np.clip(codes, 0, top).astype(np.int64)


def _check_matrix(X, dims=None):
    X = np.asarray(X, dtype=np.float64)
    if X.ndim != 2:
        raise DataError("expected a 2-D array of features, got shape %s" % (X.shape,))
    if not np.all(np.isfinite(X)):
        bad = np.argwhere(~np.isfinite(X))[0]
        raise DataError("non-finite value (NaN or inf) at row %d, column %d" % (bad[0], bad[1]))
    if dims is not None and X.shape[1] != dims:
        raise DataError("expected %d features per row, got %d" % (dims, X.shape[1]))
    return X


# --- the integer quantizer (contract 1.1) ---
Q_TOTAL = 28  # S + b: every product (x - lo) * M + R stays below 2^30
SPAN_MAX = (1 << Q_TOTAL) - 1
INT_MIN, INT_MAX = -(1 << 30), (1 << 30) - 1


class IntQuantizer:
    """Raw integer readings -> the model's b-bit codes, exactly as every runtime computes them
    (contract 1.1): bounds lo/hi (integers) fitted on the training split, M derived from them.

    `codes(X)` is the reference. `transform(X)` gives each code's bin at (code + 1/4) / 2^b, a
    dyadic value every model's float quantization (round half up, or ckp's floor) turns back
    into exactly that code, so the trainers and tools written for scaled rows take it as a
    MinMaxScaler and see the contract's codes.
    """

    def __init__(self, bits, floor=False):
        if not 1 <= bits <= 16:
            raise ValueError("code bits must be in 1..16")
        self.bits, self.floor = bits, floor
        self.lo_ = self.hi_ = None

    @staticmethod
    def applies(X):
        """True when X (2-D) holds only integers inside the contract's ranges."""
        X = np.asarray(X, dtype=np.float64)
        if X.ndim != 2 or X.shape[0] == 0 or not np.all(np.isfinite(X)):
            return False
        if not np.all(X == np.floor(X)) or X.min() < INT_MIN or X.max() > INT_MAX:
            return False
        return bool(np.all(X.max(axis=0) - X.min(axis=0) <= SPAN_MAX))

    def fit(self, X):
        X = _check_matrix(X)
        if not self.applies(X):
            raise DataError("an integer quantizer needs integer features in %d..%d whose "
                            "range spans less than 2^28" % (INT_MIN, INT_MAX))
        self.lo_ = X.min(axis=0).astype(np.int64)
        self.hi_ = X.max(axis=0).astype(np.int64)
        return self

    def set_bounds(self, lo, hi):
        """From a model file: None when valid, else what is wrong (a str)."""
        lo, hi = np.asarray(lo, dtype=np.int64), np.asarray(hi, dtype=np.int64)
        if np.any(lo > hi) or np.any(lo < INT_MIN) or np.any(hi > INT_MAX) or \
                np.any(hi - lo > SPAN_MAX):
            return "integer quantizer bounds out of range"
        self.lo_, self.hi_ = lo, hi
        return None

    def params(self):
        """(S, M per feature, R) of contract 1.1."""
        S = Q_TOTAL - self.bits
        span = self.hi_ - self.lo_
        M = np.where(span > 0, ((1 << Q_TOTAL) + span // 2) // np.maximum(span, 1), 0)
        return S, M, 0 if self.floor else 1 << (S - 1)

    def codes(self, X):
        """Codes 0 .. 2^b - 1 of raw integer rows (contract 1.1); DataError for a value that is
        not an integer (NaN, inf, a fraction) or has the wrong number of features."""
        X = _check_matrix(X, len(self.lo_))
        if not np.all(X == np.floor(X)):
            bad = np.argwhere(X != np.floor(X))[0]
            raise DataError("the model quantizes integer readings: row %d, column %d is %r"
                            % (bad[0], bad[1], X[bad[0], bad[1]]))
        S, M, R = self.params()
        top = (1 << self.bits) - 1
        span = self.hi_ - self.lo_
        x = np.clip(X, self.lo_, self.hi_).astype(np.int64) - self.lo_
        c = np.where(x >= span, top, np.minimum((x * M + R) >> S, top))
        return np.where((span == 0) | (x <= 0), 0, c).astype(np.int64)

    def transform(self, X):
        return (self.codes(X) + 0.25) / float(1 << self.bits)

    def fit_transform(self, X):
        return self.fit(X).transform(X)


def raw_rows(stored, *Xs):
    """A golden file's "raw" rows: the rows of Xs (in order) as lists of ints when the model
    file's trailer (kilobit.core.kbfile.Extras) holds an integer quantizer, else None."""
    if stored is None or stored.quant is None:
        return None
    return [[int(v) for v in r] for X in Xs for r in np.asarray(X)]


def fit_inputs(X_train, bits=None, floor=False, kind="auto"):
    """The input map a trainer stores in its model file: an IntQuantizer of `bits`-bit codes
    (floor: ckp's rounding) when kind is "int", or "auto" and every training value is an
    integer in the contract's ranges; else a MinMaxScaler. Fitted on X_train."""
    if kind not in ("auto", "int", "float"):
        raise ValueError("quantizer kind must be auto, int or float")
    if bits is not None and kind != "float" and (kind == "int" or IntQuantizer.applies(X_train)):
        return IntQuantizer(bits, floor).fit(X_train)
    return MinMaxScaler().fit(X_train)
