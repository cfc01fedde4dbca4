"""Fixed-point helpers shared by the host-trained predictors (Bonsai, ProtoNN): power-of-two
scales, the rounding shift of docs/contract.md section 7.1, saturation, and the small-int bound.

Every intermediate of an integer model stays within SMALL (2^30 - 1) in magnitude: MicroPython's
small ints are 31-bit, and C holds them in int32_t. The exponent pickers below choose the
largest power-of-two scale that keeps a quantized vector inside both its storage width and that
bound, so an exporter never has to check overflow after the fact.
"""
import numpy as np

SMALL = (1 << 30) - 1  # largest MicroPython small int; every intermediate stays within +-SMALL
ACT_MAX = 32767  # activations (the projected vector, node outputs) are saturated to +-ACT_MAX
E_MIN, E_MAX = -30, 40  # exponents the pickers consider


def qmax(wbits):
    """Largest stored magnitude of a signed wbits-bit weight (symmetric: -qmax .. qmax)."""
    if wbits not in (8, 16):
        raise ValueError("weights are 8 or 16 bits, got %r" % (wbits,))
    return (1 << (wbits - 1)) - 1


def rshift_round(x, s):
    """floor((x + 2^(s-1)) / 2^s) for s >= 1 (round half up), x for s == 0 (contract 7.1).

    Written as (x >> s) + ((x >> (s-1)) & 1) so that no intermediate exceeds |x|: Python's >> is
    a floor on negative numbers too. Works on ints and on numpy integer arrays."""
    if s < 0:
        raise ValueError("negative shift %d" % s)
    if s == 0:
        return x
    return (x >> s) + ((x >> (s - 1)) & 1)


def sat(x, lim=ACT_MAX):
    """Clamp to -lim .. lim (ints or numpy arrays)."""
    return np.clip(x, -lim, lim) if isinstance(x, np.ndarray) else max(-lim, min(lim, x))


def quantize(v, e, q):
    """round(v * 2^e) clamped to -q .. q, as int64 (round half away from zero)."""
    v = np.asarray(v, dtype=np.float64) * (2.0 ** e)
    r = np.sign(v) * np.floor(np.abs(v) + 0.5)
    return np.clip(r, -q, q).astype(np.int64)


def pow2_exponent(v, q, l1_limit=None, in_max=1):
    """The largest e in E_MIN..E_MAX such that quantize(v, e, q) needs no clamping and, when
    l1_limit is given, sum(|quantize(v, e, q)|) * in_max <= l1_limit. v is one vector (or any
    array, judged as a whole). All-zero v gives E_MAX."""
    a = np.abs(np.asarray(v, dtype=np.float64)).ravel()
    if not a.size or a.max() == 0.0:
        return E_MAX
    e = int(np.floor(np.log2(q / a.max()))) + 1
    e = min(e, E_MAX)
    while e > E_MIN:
        r = np.floor(a * (2.0 ** e) + 0.5)
        if r.max() <= q and (l1_limit is None or r.sum() * in_max <= l1_limit):
            return e
        e -= 1
    return E_MIN


def range_exponent(maxabs, limit):
    """The largest e with maxabs * 2^e <= limit (e in E_MIN..E_MAX): the scale of an activation
    whose largest magnitude on the training data is maxabs."""
    if maxabs <= 0:
        return E_MAX
    e = int(np.floor(np.log2(limit / maxabs)))
    while maxabs * 2.0 ** e > limit:
        e -= 1
    return max(E_MIN, min(E_MAX, e))
