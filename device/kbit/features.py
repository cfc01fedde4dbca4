"""Time-domain features of a window of raw int16 readings (docs/contract.md, section 12).

    from kbit.features import features, F
    out = array("i", bytes(4 * F * 3))           # once: 7 features of each of 3 axes
    features(window, 3, out)                     # window: array("h") x0 y0 z0 x1 y1 z1 ...

out[a*F + k] is feature k of axis a: mean, mad, min, max, energy, diff, cross (kbit.features.NAMES),
the same integers as the host's kilobit.core.features.window_features. `features` checks its
arguments before it writes anything (so its errors stay readable), then runs `fill`, the
integer-only loop that allocates nothing, under micropython.heap_lock where the port has it.
"""
from .compat import const, lock as _lock, unlock as _unlock, ints as _ints

from array import array

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
    _ints(window, "readings")
    size = len(window)
    if size % axes or not 1 <= size // axes <= _N_MAX:
        raise ValueError("a window of %d axes holds %d*N readings, 1 <= N <= 256: got %d"
                         % (axes, axes, size))
    if min(window) < -_BIAS or max(window) >= _BIAS:
        raise ValueError("window readings must be int16 (-32768..32767)")
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
