"""The Compressed Kernel Perceptron's tables made on the board, integer-only (contract 6.3, 6.5).

ckp's width A is in thousandths, so its kernel's argument is a fraction, not a power of two as
rkp's (kbit.kernel.power_table, small ints only), and its loss table needs erf and fractional
powers of 2. Both are evaluated here in binary fixed point with _F = 128 fraction bits, in big
ints: they allocate, which construction may, but need no float, which the emulated Pico and
many boards lack. kbit.ckp imports this module only to make or compare a table (CKP.new, or
CKP() without any_table); loading a file does not, so ports without long ints (some
CircuitPython builds) still load ckp models.

Why 128 bits: the power table's C * g^(2^j) is never nearer than 1e-9 to a rounding boundary,
over every width, P and C; the loss table floors C * loss_q(B), where l(b) is multiplied by up
to B + 1 < 2^15 and C < 2^8, which leaves about 100 bits below the floor's unit. Each step
below is exact to a few units of 2^-128 (the series and the squarings keep 16 or more guard
bits). The host's loss table is this code (kilobit.models.ckp.loss_table): the paper's float64
formula gives the same bytes except where C * loss_q is within float rounding of an integer
(tests/test_new_learners.py).
"""
from array import array

from .compat import const

_F = const(128)
_LN2 = 0xB17217F7D1CF79ABC9E3B39803F2F6AF  # floor(ln 2 * 2^128)
_PI = 0x3243F6A8885A308D313198A2E03707344  # floor(pi * 2^128)
_MILLION = const(1000000)  # A = width / 1000, so 1 / A^2 = 10^6 / width^2
_V_MAX = const(0x3FFFFFFF)
_ASYMPTOTIC = const(64)  # z >= 64: erf(sqrt z) = 1 to 2^-96, see _phi


def _bits(n):
    """The bit length of n >= 0 (MicroPython's int has no bit_length)."""
    b = 0
    while n >> (b + 16):
        b += 16
    while n >> b:
        b += 1
    return b


def _isqrt(n):
    """floor(sqrt(n)) by Newton's iteration from above."""
    if n <= 0:
        return 0
    x = 1 << ((_bits(n) + 1) >> 1)
    while True:
        y = (x + n // x) >> 1
        if y >= x:
            return x
        x = y


def _exp_neg(t, f):
    """exp(-t / 2^f) * 2^f for t >= 0: the series at t / 2^r < 1/8, then r squarings, with 16
    guard bits against the squarings doubling the relative error r times."""
    if t >> f > f:  # exp(-t) < 2^-f
        return 0
    g = f + 16
    x = t << 16
    r = 0
    while x >> (g - 3 + r):
        r += 1
    s = term = 1 << g
    n = 0
    while term:
        n += 1
        term = (term * x >> (g + r)) // n
        if n & 1:
            s -= term
        else:
            s += term
    for _ in range(r):
        s = s * s >> g
    return s >> 16


def power_table(width, bits, C):
    """P[j] = round(C * exp(-2^j / (A^2 4^(P+1)))) until the first 0 (contract 6.3), as bytes:
    A = width / 1000, P = bits."""
    out = bytearray(32)
    n = 0
    d = (width * width) << (2 * bits + 2)
    for j in range(32):
        t = (_MILLION << (_F + j)) // d  # 2^j / (A^2 4^(P+1)), floored at 2^-128
        if t >> _F >= 7:  # C * exp(-7) < 1/2
            break
        p = (C * _exp_neg(t, _F) + (1 << (_F - 1))) >> _F
        if not p:
            break
        out[n] = p
        n += 1
    return bytes(out[:n])


def _phi(z):
    """erf(a) sqrt(pi) / (2a), a = sqrt(z) (z in fixed point), the integral of exp(-z t^2)
    over [0, 1]. Below z = 64 it is exp(-z) * sum (2z)^n / (1 * 3 * .. * (2n+1)): every term
    positive, so nothing cancels, but the sum reaches e^z, so it runs with 1.5 z more bits. From
    z = 64 on it is sqrt(pi / (4z)) to within erfc(8) < 2^-96."""
    if z >> _F >= _ASYMPTOTIC:
        return _isqrt((_PI << (2 * _F - 2)) // z)
    extra = ((z >> _F) * 3 >> 1) + 8
    g = _F + extra
    zg = z << extra
    s = term = 1 << g
    n = 0
    while term:
        n += 1
        term = (term * zg >> (g - 1)) // (2 * n + 1)
        s += term
    return (_exp_neg(zg, g) * s >> g) >> extra


def _power(x, M):
    """x^M in fixed point, by squaring."""
    r = 1 << _F
    while M:
        if M & 1:
            r = r * x >> _F
        M >>= 1
        if M:
            x = x * x >> _F
    return r


def quant_loss(p, q, dims, width):
    """l(b) = 2 (1 - phi(a^2)^M), a = 2^-(b+1) / A, b = p / q >= 1 (paper eq. 9, contract
    6.5), in fixed point. 2^(-2b) = 2^-n exp(-(s/q) ln 2) with 2b = n + s/q, 0 <= s < q."""
    n = 2 * p // q
    s = 2 * p - n * q
    e = _exp_neg(s * _LN2 // q, _F)
    z = (e * _MILLION // (width * width)) >> (n + 2)
    return (1 << (_F + 1)) - (_power(_phi(z), dims) << 1)


def loss_values(L, dims, width, bits, C):
    """v(B) = min(floor(C loss_q(B)), 2^30 - 1) for B = 1 .. B_max - 1 (contract 6.5), budget
    L bits, M = dims, A = width / 1000, P = bits: loss_q(B) = (B+1) l(b_{B+1}) - B l(b_B),
    b_B = min((L - B) / (M B), P)."""
    top = L // (dims + 1)
    # an array, not a list: MicroPython keeps a big-int result as a heap object even once it
    # fits a small int, 48 bytes an entry in a list (65 KB for B_max = 1333 on a Pico)
    v = array("i", bytes(4 * max(top - 1, 0)))
    cap = None  # l(P), the same for every B whose b is capped
    prev = 0
    for B in range(1, top + 1):
        if L - B >= bits * dims * B:
            if cap is None:
                cap = quant_loss(bits, 1, dims, width)
            cur = cap
        else:
            cur = quant_loss(L - B, dims * B, dims, width)
        if B > 1:
            x = (C * (B * cur - (B - 1) * prev)) >> _F
            v[B - 2] = x if x < _V_MAX else _V_MAX
        prev = cur
    return v


def loss_table(L, dims, width, bits, C):
    """(qstart, qshift, q) of contract 6.5: the values of loss_values shifted right by the
    least qshift that brings them all below 256, those below qstart 0 after the shift."""
    v = loss_values(L, dims, width, bits, C)
    top_v = 0
    for x in v:
        if x > top_v:
            top_v = x
    shift = _bits(top_v) - 8
    if shift < 0:
        shift = 0
    start = 0
    while start < len(v) and not v[start] >> shift:
        start += 1
    q = bytearray(len(v) - start)
    for i in range(len(q)):
        q[i] = v[start + i] >> shift
    return start + 1, shift, bytes(q)
