"""Time-domain features of a window of raw int16 readings (docs/contract.md, section 12).

    from kbit.features import features, F
    out = array("i", bytes(4 * F * 3))           # once: 7 features of each of 3 axes
    features(window, 3, out)                     # window: array("h") x0 y0 z0 x1 y1 z1 ...

out[a*F + k] is feature k of axis a: mean, mad, min, max, energy, diff, cross (kbit.features.NAMES),
the same integers as the host's kilobit.core.features.window_features. `features` checks its
arguments before it writes anything (so its errors stay readable), then runs `fill`, the
integer-only loop that allocates nothing, under micropython.heap_lock where the port has it.

A selection (contract 12.1: a mask of these seven, and the band energies of a P = 2^p point
integer FFT, contract 13, kbit.fft) runs through an Extractor, which owns every buffer:

    ex = Extractor(3, 100, mask=0x13, p=6, bands=8)   # mean, mad, energy, fft64:8 of 3 x 100
    ex.run(window)                                    # ex.out: array("i") of 3 * ex.per_axis
"""
from array import array

from .compat import const, ints as _ints, lock as _lock, unlock as _unlock
from .fft import bands as _bands, twiddles as _twiddles

F = const(7)
NAMES = ("mean", "mad", "min", "max", "energy", "diff", "cross")
_N_MAX = const(256)
_BIAS = const(32768)  # lifts the mean's dividend above 0: // and C's / then agree
_LOW = const(0xFFFF)
_HALF = const(0x8000)  # e below it: e*e < 2^30, still a small int


def features(window, axes, out):
    """Fill out (an array("i") of 7*axes) with the features of window (axes*N int16 readings,
    interleaved, 1 <= N <= 256: an array("h"), array("i") or a list); returns out. TypeError for
    readings that are not ints or an out that is not an array("i"), ValueError for a wrong
    length or a reading outside int16."""
    if type(axes) is not int or axes < 1:
        raise ValueError("axes must be a positive int")
    size = len(window)
    if size % axes or not 1 <= size // axes <= _N_MAX:
        _ints(window, "readings")  # a str's TypeError before its length's ValueError
        raise ValueError("a window of %d axes holds %d*N readings, 1 <= N <= 256: got %d"
                         % (axes, axes, size))
    _readings(window)
    if type(out) is not array or not _int32(out):
        raise TypeError('out must be an array("i")')
    if len(out) != F * axes:
        raise ValueError('out must be an array("i") of %d (7 features x %d axes)'
                         % (F * axes, axes))
    _lock()
    try:
        return fill(window, axes, out)
    finally:
        _unlock()


def _readings(window):
    """TypeError unless window holds ints, ValueError unless each is an int16."""
    _ints(window, "readings")
    if len(window) and (min(window) < -_BIAS or max(window) >= _BIAS):
        raise ValueError("window readings must be int16 (-32768..32767)")


def _int32(out):
    """True when out stores 32-bit signed ints. MicroPython's arrays have no typecode: a value
    that only an int32 item keeps (beyond 16 bits, negative) tells; out's first item is kept."""
    t = getattr(out, "typecode", None)
    if t is not None:
        return t in "il" and out.itemsize == 4
    if not len(out):
        return False
    v = out[0]
    out[0] = -0x10001
    ok = out[0] == -0x10001
    out[0] = v
    return ok


def fill(w, A, out):
    """Contract 12 over checked arguments (features'): every axis's 7 features into out."""
    n = len(w) // A
    end = n * A
    for a in range(A):
        s = 0
        lo_x = w[a]
        hi_x = lo_x
        i = a
        while i < end:
            x = w[i]
            s += x
            if x < lo_x:
                lo_x = x
            elif x > hi_x:
                hi_x = x
            i += A
        m = (s + _BIAS * n + (n >> 1)) // n - _BIAS
        dev = 0
        hi = 0  # sum of e*e as hi*2^16 + lo: the whole would pass 2^30 (contract 12)
        lo = 0
        step = 0
        cross = 0
        prev = w[a]
        up = prev >= m
        i = a
        while i < end:
            x = w[i]
            if x >= m:  # one comparison gives |x - m| and the side of the mean
                e = x - m
                if not up:
                    cross += 1
                    up = True
            else:
                e = m - x
                if up:
                    cross += 1
                    up = False
            dev += e
            if e < _HALF:
                q = e * e
                hi += q >> 16
            else:  # e^2 = 2^30 + 2^16 f + f^2
                e -= _HALF
                q = e * e
                hi += 0x4000 + e + (q >> 16)
            lo += q & _LOW
            step += x - prev if x > prev else prev - x
            prev = x
            i += A
        d = 4 * n
        k = a * F
        out[k] = m
        out[k + 1] = (dev + (n >> 1)) // n
        out[k + 2] = lo_x
        out[k + 3] = hi_x
        out[k + 4] = (hi // d << 16) + ((hi % d << 16) + lo + 2 * n) // d
        out[k + 5] = (step + ((n - 1) >> 1)) // (n - 1) if n > 1 else 0
        out[k + 6] = cross
    return out


def selection(axes, n, mask=0x7F, p=0, bands=0):
    """F, the features of each axis, of a selection for windows of `axes` x `n` readings;
    ValueError for what contract 12.1 refuses (Extractor's, and kbit.pipeline's of a model
    file)."""
    for v in (axes, n, mask, p, bands):
        if type(v) is not int:
            raise ValueError("axes, n, mask, p and bands are ints")
    if not 1 <= axes <= 255 or not 1 <= n <= _N_MAX:
        raise ValueError("a window is 1..255 axes of 1..256 samples")
    if not 0 <= mask < 0x80:
        raise ValueError("mask has bits 0..6, one a feature (%s)" % ", ".join(NAMES))
    if p:
        size = 1 << p if 5 <= p <= 8 else 0
        if not size or size > n:
            raise ValueError("p is 5..8, a 32..256-point FFT of at most n = %d samples" % n)
        if not 1 <= bands <= size >> 1 or bands & (bands - 1):
            raise ValueError("bands of a %d-point FFT: a power of two in 1..%d"
                             % (size, size >> 1))
    elif bands:
        raise ValueError("bands need an FFT (p 5..8)")
    f = 0
    for k in range(F):
        f += mask >> k & 1
    if not f + bands:
        raise ValueError("a selection computes at least one feature")
    return f + bands


class Extractor:
    """The features a selection asks for (contract 12.1), of windows of `axes` x `n` readings:
    the time-domain features whose bit is set in `mask` (bit k: NAMES[k]), then `bands` band
    energies of a 2^p-point FFT (p 0: none; p 5..8 needs 2^p <= n). Every buffer is made here;
    run() then allocates nothing. ValueError for a selection contract 12.1 refuses."""

    def __init__(self, axes, n, mask=0x7F, p=0, bands=0):
        self.per_axis = selection(axes, n, mask, p, bands)
        self._pick = bytes(k for k in range(F) if mask >> k & 1)
        self.axes = axes
        self.n = n
        self.mask = mask
        self.p = p
        self.bands = bands
        self.size = axes * n  # readings in a window
        self.out = array("i", bytes(4 * axes * self.per_axis))
        # all seven of every axis: fill's output, the chosen ones copied from it
        self._t = array("i", bytes(4 * F * axes)) if mask else None
        if p:
            self._cs = _twiddles(p, array("h", bytes(2 << p)))
            self._re = array("h", bytes(2 << p))
            self._im = array("h", bytes(2 << p))
        if _nat:  # the native kernel's context, its FFT scratch made now (features.c: bind)
            _nat.bind(self)

    def run(self, window):
        """The features of window (self.size readings, interleaved: an array("h"), array("i")
        or a list of ints) into self.out, returned. TypeError/ValueError, nothing written, for
        readings that are not ints, not int16, or not self.size of them."""
        if len(window) != self.size:
            _ints(window, "readings")
            raise ValueError("a window of %d axes x %d samples holds %d readings, not %d"
                             % (self.axes, self.n, self.size, len(window)))
        _readings(window)
        _lock()
        try:
            self._run(window)
        finally:
            _unlock()
        return self.out

    def _run(self, w):
        """The bytecode over a checked window: fill for the time domain, kbit.fft for bands."""
        A = self.axes
        F_ = self.per_axis
        t = self._t
        out = self.out
        if t is not None:
            fill(w, A, t)
        for a in range(A):
            o = a * F_
            for k in self._pick:
                out[o] = t[a * F + k]
                o += 1
            if self.bands:
                m = t[a * F] if t is not None else _mean(w, A, a, self.n)
                _bands(w, A, a, m, self.p, self.bands, self._cs, self._re, self._im, out, o)


def _mean(w, A, a, n):
    """The rounded mean of axis a (NAMES[0]), for bands without the time-domain features."""
    s = 0
    i = a
    end = n * A
    while i < end:
        s += w[i]
        i += A
    return (s + _BIAS * n + (n >> 1)) // n - _BIAS


# --- the native kernel: kb_features.h as kbit/_kb_features.mpy (kbit.compat.native) ---
# On the native path Extractor.run and features are the native module's own functions (no
# Python frame before the C loops); it runs the bytecode ones above for what its kernel does
# not take (a list, an array("i"), a wrong length, ...), so the errors stay the bytecode's.
from .compat import native_methods as _native_methods  # noqa: E402

_features_py = features
_nat, _use_run, NATIVE_WHY = _native_methods(Extractor, "features", ("run",),
                                             features_py=features)


def use_native(on=True):
    """Extract in the native module (when it loaded) or in bytecode; whether native now (also
    kbit.features.native)."""
    global features, native
    native = _use_run(on)
    features = _nat.features if native else _features_py
    return native


native = use_native()
