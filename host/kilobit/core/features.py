"""Time-domain features of windows of raw int16 readings (docs/contract.md, section 12): the
integer reference every runtime's extractor must equal bit for bit.

    F = window_features(W, axes=3)                 # W: (windows, 3*N) interleaved x0 y0 z0 x1 ...
    F = window_features(W, 3, names=("mean", "energy"))

int64 throughout: the sums of squares reach 2^40 here, where a board splits them in two words
(the contract's proof); the results are the same integers.

A selection (contract 12.1) adds the band energies of an integer FFT (contract 13):

    spec = Spec.parse("mean,mad,energy,fft64:8")  # or Spec(("mean",), fft=64, bands=8)
    X = extract(W, 3, spec)                        # (windows, 3 * spec.per_axis)
    E = fft_bands(W, 3, 6, 8)                      # the bands alone: p = log2 P (or P itself)
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
    return _time(_windows(windows, axes), names)


def _mean(X):
    """(count, A): the rounded mean m of each axis; every dividend >= 0."""
    n = X.shape[1]
    return (X.sum(axis=1) + 32768 * n + n // 2) // n - 32768


def _time(X, names):
    """(count, A*len(names)) from checked (count, N, A) readings: contract 12."""
    n = X.shape[1]
    m = _mean(X)
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


# --- contract 12.1: a selection; contract 13: band energies of an integer FFT ---------------

#: W[k] = round(32767 cos(2 pi k / 256)), k = 0..64: the quarter wave every runtime stores
W = (32767, 32757, 32728, 32678, 32609, 32521, 32412, 32285, 32137, 31971, 31785, 31580, 31356,
     31113, 30852, 30571, 30273, 29956, 29621, 29268, 28898, 28510, 28105, 27683, 27245, 26790,
     26319, 25832, 25329, 24811, 24279, 23731, 23170, 22594, 22005, 21403, 20787, 20159, 19519,
     18868, 18204, 17530, 16846, 16151, 15446, 14732, 14010, 13279, 12539, 11793, 11039, 10278,
     9512, 8739, 7962, 7179, 6393, 5602, 4808, 4011, 3212, 2410, 1608, 804, 0)
FFT_SIZES = (32, 64, 128, 256)
DEFAULT_BANDS = 8


def _int(v):
    return not isinstance(v, bool) and isinstance(v, (int, np.integer))


def _check_fft(fft, bands):
    """(P, B) as ints; DataError unless P in FFT_SIZES, B a power of two <= P/2, or both 0."""
    if not _int(fft) or not (fft == 0 or fft in FFT_SIZES):
        raise DataError("fft must be 0 (no spectrum) or one of %s points, not %r"
                        % (", ".join(map(str, FFT_SIZES)), fft))
    if not _int(bands):
        raise DataError("bands must be an integer, not %r" % (bands,))
    fft, bands = int(fft), int(bands)
    if fft == 0:
        if bands:
            raise DataError("%d bands need an fft (fftP:%d)" % (bands, bands))
    elif not (1 <= bands <= fft // 2 and bands & (bands - 1) == 0):
        raise DataError("bands of a %d-point fft must be a power of two in 1..%d, not %d"
                        % (fft, fft // 2, bands))
    return fft, bands


class Spec:
    """A feature selection (contract 12.1): time-domain `names` (a subset of DEFAULT, in its
    order) and `bands` band energies of an `fft`-point FFT (0: none). Every bad value is a
    DataError. `Spec(names, fft)` with bands 0 takes the text's default, min(8, fft/2)."""

    def __init__(self, names=DEFAULT, fft=0, bands=0):
        if isinstance(names, str):
            raise DataError("names is a sequence of feature names; parse text with Spec.parse")
        names = tuple(names)
        if names:
            check_names(names)
        if _int(fft) and fft in FFT_SIZES and _int(bands) and bands == 0:
            bands = min(DEFAULT_BANDS, fft // 2)
        self.fft, self.bands = _check_fft(fft, bands)
        if not names and not self.bands:
            raise DataError("a selection needs at least one feature")
        self.names = names
        self.mask = sum(1 << DEFAULT.index(k) for k in names)
        self.p = self.fft.bit_length() - 1 if self.fft else 0
        self.per_axis = len(names) + self.bands

    @classmethod
    def from_fields(cls, mask, p, bands):
        """The selection a model file stores (4.1 bit 3: u8 mask, u8 p, u8 B); DataError for
        fields no runtime accepts (bands 0 with p > 0 included: no default here)."""
        for what, v in (("mask", mask), ("p", p), ("bands", bands)):
            if not _int(v) or not 0 <= v <= 255:
                raise DataError("feature %s must be a byte, not %r" % (what, v))
        if mask & 0x80:
            raise DataError("feature mask 0x%02x: bit 7 names no feature" % mask)
        if p and not 5 <= p <= 8:
            raise DataError("fft p must be 0 or 5..8 (32..256 points), not %d" % p)
        if p and not bands:
            raise DataError("a %d-point fft with 0 bands" % (1 << p))
        return cls(tuple(k for i, k in enumerate(DEFAULT) if mask >> i & 1),
                   1 << p if p else 0, bands)

    @classmethod
    def parse(cls, text):
        """Contract 12.1's text: comma-separated names in the table's order ("time": all
        seven), then "fftP:B" or "fftP" (B = min(8, P/2)), e.g. "mean,mad,energy,fft64:8"."""
        if not isinstance(text, str):
            raise DataError("a feature selection is text, not %s" % type(text).__name__)
        parts = [t.strip().lower() for t in text.split(",")]
        if not text.strip() or "" in parts:
            raise DataError("empty feature in %r (e.g. mean,mad,energy,fft64:8)" % text)
        fft = bands = 0
        names = []
        for i, t in enumerate(parts):
            if t.startswith("fft"):
                if i != len(parts) - 1:
                    raise DataError("%r: the fft comes last (e.g. mean,mad,fft64:8)" % text)
                size, colon, b = t[3:].partition(":")
                if not size.isdigit() or (colon and not b.isdigit()):
                    raise DataError("%r: write the spectrum as fftP or fftP:B, e.g. fft64:8" % t)
                fft, bands = int(size), int(b) if b else 0
                if fft in FFT_SIZES and not b:
                    bands = min(DEFAULT_BANDS, fft // 2)
                elif fft in FFT_SIZES and bands == 0:
                    raise DataError("%r: an fft needs 1..%d bands" % (t, fft // 2))
            elif t == "time":
                names += DEFAULT
            else:
                names.append(t)
        return cls(tuple(names), fft, bands)

    def __str__(self):
        parts = ["time"] if self.names == DEFAULT else list(self.names)
        if self.fft:
            parts.append("fft%d:%d" % (self.fft, self.bands))
        return ",".join(parts)

    def __repr__(self):
        return "Spec.parse(%r)" % str(self)

    def __eq__(self, other):
        return isinstance(other, Spec) and (self.mask, self.p, self.bands) == \
            (other.mask, other.p, other.bands)

    def __hash__(self):
        return hash((self.mask, self.p, self.bands))

    def check(self, n):
        """DataError unless windows of n samples can give these features (1 <= n <= 256, and
        the FFT's P <= n: it reads the first P samples)."""
        if not _int(n) or not 1 <= n <= N_MAX:
            raise DataError("a window holds 1..%d samples, not %r" % (N_MAX, n))
        if self.fft > n:
            raise DataError("a %d-point fft needs windows of at least %d samples, not %d"
                            % (self.fft, self.fft, n))
        return self

    def columns(self, axes):
        """The feature names of axes*per_axis columns, axis after axis: a0.mean .. a0.band0 .."""
        if not _int(axes) or axes < 1:
            raise DataError("axes must be a positive integer, not %r" % (axes,))
        each = list(self.names) + ["band%d" % b for b in range(self.bands)]
        return ["a%d.%s" % (a, k) for a in range(axes) for k in each]


def extract(windows, axes, spec):
    """(count, axes*spec.per_axis) int64: the selected features of each window (contract
    12.1), axis after axis: an axis's time-domain features in the table's order, then its band
    energies, lowest band first. spec: a Spec or its text."""
    if not isinstance(spec, Spec):
        spec = Spec.parse(spec)
    X = _windows(windows, axes)
    spec.check(X.shape[1])
    parts = []
    if spec.names:
        parts.append(_time(X, spec.names).reshape(len(X), axes, -1))
    if spec.bands:
        parts.append(_bands(X, spec.p, spec.bands).reshape(len(X), axes, -1))
    out = np.concatenate(parts, axis=2)
    return out.reshape(len(X), -1).astype(np.int64)


def fft_bands(windows, axes, p, bands):
    """(count, axes*bands) int64: contract 13's band energies of each axis, axis after axis.
    p is log2 P (5..8) as the contract and a model file write it; P itself (32..256) is taken
    too (the two ranges are disjoint)."""
    if _int(p) and 5 <= p <= 8:
        p = 1 << int(p)
    fft, bands = _check_fft(p, bands)
    if not fft:
        raise DataError("fft_bands needs p in 5..8 (or P in %s)" % ", ".join(map(str, FFT_SIZES)))
    X = _windows(windows, axes)
    Spec((), fft, bands).check(X.shape[1])
    return _bands(X, fft.bit_length() - 1, bands)


def _cos_sin(j):
    """cos(j), sin(j) of angle indices 0 <= j < 128 from the quarter wave W (contract 13.2)."""
    Wt = np.array(W, np.int64)
    low = j <= 64
    c = np.where(low, Wt[np.where(low, j, 0)], -Wt[np.where(low, 0, 128 - j)])
    s = np.where(low, Wt[np.where(low, 64 - j, 0)], Wt[np.where(low, 0, j - 64)])
    return c, s


def _round15(z):
    return (z + (1 << 14)) >> 15


def _bands(X, p, B):
    """(count, A*B) band energies of checked (count, N, A) readings: contract 13, every axis of
    every window at once, one vectorised pass a stage."""
    count, _, A = X.shape
    P = 1 << p
    m = _mean(X)
    d = (X[:, :P, :] - m[:, None, :]).transpose(0, 2, 1).reshape(count * A, P)
    M = np.abs(d).max(axis=1)
    bitlen = np.zeros_like(M)
    for b in range(17):                     # |d| <= 65535: at most 16 bits
        bitlen += (M >> b) > 0
    s = 14 - bitlen
    y = np.where(s[:, None] >= 0, d << np.maximum(s, 0)[:, None], d >> np.maximum(-s, 0)[:, None])
    rev = np.zeros(P, np.int64)
    for b in range(p):
        rev |= ((np.arange(P) >> b) & 1) << (p - 1 - b)
    re = y[:, rev]
    im = np.zeros_like(re)
    rows = count * A
    L = 2
    while L <= P:
        h = L // 2
        c, sn = _cos_sin(np.arange(h) * 256 // L)
        re, im = re.reshape(rows, P // L, L), im.reshape(rows, P // L, L)
        ur, ui, vr, vi = re[..., :h], im[..., :h], re[..., h:], im[..., h:]
        tr = _round15(c * vr) + _round15(sn * vi)
        ti = _round15(c * vi) - _round15(sn * vr)
        re = np.concatenate(((ur + tr) >> 1, (ur - tr) >> 1), axis=2).reshape(rows, P)
        im = np.concatenate(((ui + ti) >> 1, (ui - ti) >> 1), axis=2).reshape(rows, P)
        L *= 2
    q = re[:, 1:P // 2 + 1] ** 2 + im[:, 1:P // 2 + 1] ** 2
    Q = q.reshape(rows, B, P // (2 * B)).sum(axis=2)
    r = 2 * s + 5
    E = ((Q >> (r - 1)[:, None]) + 1) >> 1
    E[M == 0] = 0
    return E.reshape(count, A * B)
