"""Time-domain features of windows of raw int16 readings (docs/contract.md, section 12): the
integer reference every runtime's extractor must equal bit for bit.

    F = window_features(W, axes=3)                 # W: (windows, 3*N) interleaved x0 y0 z0 x1 ...
    F = window_features(W, 3, names=("mean", "energy"))

int64 throughout: the sums of squares reach 2^40 here, where a board splits them in two words
(the contract's proof); the results are the same integers.
"""
import numpy as np

from kilobit.core.errors import DataError

#: the contract's order; a subset asked for keeps it
DEFAULT = ("mean", "mad", "min", "max", "energy", "diff", "cross")
N_MAX = 256


def check_names(names):
    """names as a tuple, or DataError unless a non-empty subset of DEFAULT in its order."""
    names = tuple(names)
    unknown = [n for n in names if n not in DEFAULT]
    if unknown:
        raise DataError("unknown feature %r (known: %s)" % (unknown[0], ", ".join(DEFAULT)))
    if not names or list(names) != sorted(set(names), key=DEFAULT.index):
        raise DataError("features must be distinct names in the order %s" % ", ".join(DEFAULT))
    return names


def _windows(windows, axes):
    """(windows, N, A) int64 from a (windows, A*N) array of int16 readings, or DataError."""
    if isinstance(axes, bool) or not isinstance(axes, (int, np.integer)) or axes < 1:
        raise DataError("axes must be a positive integer, not %r" % (axes,))
    W = np.asarray(windows)
    if W.ndim == 1:
        W = W[None, :]
    if W.ndim != 2:
        raise DataError("windows must be a 2-D array (windows x axes*samples), not %d-D" % W.ndim)
    if W.dtype.kind not in "iu":
        if W.dtype.kind != "f" or not np.all(np.isfinite(W)) or np.any(W != np.round(W)):
            raise DataError("window readings must be integers (int16), not %s" % W.dtype)
    width = W.shape[1]
    if width % axes or not 1 <= width // axes <= N_MAX:
        raise DataError("a window of %d axes holds %d*N readings, 1 <= N <= %d: got %d"
                        % (axes, axes, N_MAX, width))
    W = W.astype(np.int64)
    if W.size and (W.min() < -32768 or W.max() > 32767):
        raise DataError("window readings must be int16 (-32768..32767): found %d..%d"
                        % (W.min(), W.max()))
    return W.reshape(W.shape[0], width // axes, axes)


def window_features(windows, axes, names=DEFAULT):
    """(windows, axes*len(names)) int64: the features of each window, axis after axis, each
    axis's in `names` order (contract 12). windows: (count, axes*N) interleaved readings (one
    window may be 1-D)."""
    names = check_names(names)
    X = _windows(windows, axes)
    n = X.shape[1]
    S = X.sum(axis=1)
    m = (S + 32768 * n + n // 2) // n - 32768          # (count, A): every dividend >= 0
    d = X - m[:, None, :]
    step = np.abs(np.diff(X, axis=1)).sum(axis=1)
    above = X >= m[:, None, :]
    got = {
        "mean": m,
        "mad": (np.abs(d).sum(axis=1) + n // 2) // n,
        "min": X.min(axis=1),
        "max": X.max(axis=1),
        "energy": ((d * d).sum(axis=1) + 2 * n) // (4 * n),
        "diff": (step + (n - 1) // 2) // (n - 1) if n > 1 else np.zeros_like(m),
        "cross": (above[:, 1:] != above[:, :-1]).sum(axis=1),
    }
    out = np.stack([got[k] for k in names], axis=2)      # (count, A, F): axis after axis
    return out.reshape(out.shape[0], -1).astype(np.int64)
