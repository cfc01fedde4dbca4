"""Fixed image features, computed the same way for every method (nothing learnt from data).

The associative memory of Boukli Hacene et al. (SiPS 2017) votes over P subvectors; the paper fed
it CNN features, in which every coordinate carries information about the whole image. On raw
pixels a subvector is one region of the image (an often blank border included), a weak voter,
and P >= 2 loses to P = 1 (docs/benchmarks/assoc.md). Two cheap, label-free steps stand in for
the pre-trained extractor:

`hog`       gradient-orientation histograms: `cells` x `cells` cells, `bins` signed orientations,
            each pixel's gradient magnitude shared linearly between its two nearest bins, the
            whole vector scaled to unit length (stroke directions, not ink positions);
`hadamard`  a randomized Walsh-Hadamard transform: random signs, then the orthonormal
            Hadamard transform, `rounds` times. An isometry (Euclidean distances are kept, so
            nearest-neighbour search sees the same geometry) that spreads every input over
            every output, as a CNN layer does; O(T log T) additions, no stored matrix: the
            signs come from the contract generator (section 2) and the seed.

`image` chains them. Inputs are rows of side x side images (row-major), any value range.
"""
import numpy as np

from kilobit.core.rng import Rng, seed_state


def _edges(side, cells):
    """First pixel of each of `cells` near-equal cells along a side."""
    if not 1 <= cells <= side:
        raise ValueError("cells must be in 1..%d, got %d" % (side, cells))
    return (np.arange(cells) * side) // cells


def hog(X, side, cells=4, bins=8):
    """(n, cells*cells*bins) histograms of gradient orientations of the images X (n, side*side).

    Central differences inside the image, one-sided at its border; angle in [0, 2*pi) (signed:
    a stroke's two edges fall in opposite bins); feature index (cy*cells + cx)*bins + b. A
    blank image gives zeros."""
    X = np.asarray(X, dtype=np.float64)
    if X.ndim != 2 or X.shape[1] != side * side:
        raise ValueError("expected rows of %d x %d = %d pixels, got shape %s"
                         % (side, side, side * side, X.shape))
    n = len(X)
    img = np.pad(X.reshape(n, side, side), ((0, 0), (1, 1), (1, 1)), mode="edge")
    gx = img[:, 1:-1, 2:] - img[:, 1:-1, :-2]
    gy = img[:, 2:, 1:-1] - img[:, :-2, 1:-1]
    mag = np.hypot(gx, gy)
    t = (np.arctan2(gy, gx) % (2 * np.pi)) * (bins / (2 * np.pi))
    lo = np.floor(t).astype(np.int64) % bins
    w = t - np.floor(t)  # the share of the next bin up
    e = _edges(side, cells)
    H = np.zeros((n, cells, cells, bins))
    for b in range(bins):
        m = mag * np.where(lo == b, 1.0 - w, 0.0) + mag * np.where((lo + 1) % bins == b, w, 0.0)
        H[..., b] = np.add.reduceat(np.add.reduceat(m, e, axis=1), e, axis=2)
    H = H.reshape(n, -1)
    norm = np.linalg.norm(H, axis=1, keepdims=True)
    return H / np.where(norm > 0, norm, 1.0)


def signs(N, seed):
    """N values +-1 from the contract generator: +1 when the top bit of next() is 0."""
    g = Rng(seed_state(seed))
    return np.array([1.0 - 2.0 * (g.next() >> 15) for _ in range(N)])


def fwht(X):
    """The orthonormal Walsh-Hadamard transform of each row (length a power of 2)."""
    Y = np.array(X, dtype=np.float64)
    n, N = Y.shape
    if N & (N - 1):
        raise ValueError("length %d is not a power of 2" % N)
    h = 1
    while h < N:
        Y = Y.reshape(n, N // (2 * h), 2, h)
        Y = np.stack([Y[:, :, 0] + Y[:, :, 1], Y[:, :, 0] - Y[:, :, 1]], axis=2)
        h *= 2
    return Y.reshape(n, N) / np.sqrt(N)


def hadamard(X, seed=0, rounds=2):
    """Rows of X zero-padded to the next power of 2, N, then `rounds` times: multiplied by N
    random signs (one draw of the generator per value, round after round) and transformed."""
    X = np.asarray(X, dtype=np.float64)
    T = X.shape[1]
    N = 1 << max(0, int(T - 1).bit_length())
    Y = np.pad(X, ((0, 0), (0, N - T)))
    s = signs(N * rounds, seed).reshape(rounds, N)
    for r in range(rounds):
        Y = fwht(Y * s[r])
    return Y


def image(X, side, cells=4, bins=8, seed=0, rounds=2):
    """`hadamard(hog(X))`: the image features of `kilobit bench assoc`."""
    return hadamard(hog(X, side, cells, bins), seed, rounds)
