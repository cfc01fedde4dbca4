"""Min-max scaling and B-bit quantization (docs/contract.md, section 1). Host only."""
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
        """The scaler a model file stores ((lo, hi), from its trailer), or, when it has none,
        one fitted on X_train (the training split)."""
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
