"""Kernel weights shared by kbit's kernel perceptrons (docs/contract.md, section 3.2).

w(k) by the log method with rounded division over the power table P made on the host; every
intermediate is below 2^16, so nothing allocates.
"""
from .compat import const

TABLE_MAX = const(32)


def check_table(table, C):
    """None when P (the weight table) has at most 32 entries, C >= P[0] >= P[1] ... > 0."""
    n = len(table)
    if n > TABLE_MAX:
        return "weight table of %d entries (max 32)" % n
    prev = C
    for i in range(n):
        if not 0 < table[i] <= prev:
            return "weight table not in C >= P[0] >= P[1] >= ... > 0"
        prev = table[i]
    return None


def _weight(k, tab, J, C, half):
    """w(k) for k > 0 by the log method with rounded division (contract 3.2)."""
    if k >> J:
        return 0
    b = J - 1
    while not k >> b:
        b -= 1
    w = tab[b]
    while b:
        b -= 1
        if (k >> b) & 1:
            w = (w * tab[b] + half) // C
            if not w:
                return 0
    return w


def weight(k, table, C):
    """w(k) (contract 3.2): C for k = 0, else the log method over the table."""
    if k == 0:
        return C
    return _weight(k, table, len(table), C, C >> 1)


# exp(-2^k) * 2^22, rounded, for k = -10 .. 3. Below k = -10 the series 1 - 2^k + 2^(2k-1) - ..
# rounds to 2^22 - 2^(22+k) (the square term stays under half a unit), and from k = 4 on
# C * exp(-16) < 1/2 for every C <= 255. 22 bits keep C * E below 2^30 (a small int), and
# the rounding of C * exp(-2^k) is exact with them: the nearest any of the 255 x 14 products
# comes to a half-integer is 6e-4 (at k = -3, C = 200), far above the 2^-22 * 255 error
# (tests/test_new_learners.py compares with the host's float64 for every C and exponent).
_EXP2 = (4190210, 4186120, 4177952, 4161664, 4129277, 4065259, 3940184, 3701460, 3266527,
         2543974, 1542998, 567637, 76821, 1407)
_ONE = const(0x400000)  # 2^22


def power_table(e, C):
    """The power table of contract 3.2, P[j] = round(C * exp(-2^j / 2^e)) until the first 0,
    as bytes, integer-only: e = width + bits (laplace) or width + 2 * bits (rbf)."""
    out = bytearray(TABLE_MAX)
    n = 0
    for j in range(TABLE_MAX):
        k = j - e
        if k > 3:
            break
        if k >= -10:
            x = _EXP2[k + 10]
        elif k >= -22:
            x = _ONE - (1 << (22 + k))
        else:
            x = _ONE
        p = (C * x + (_ONE >> 1)) >> 22
        if not p:
            break
        out[n] = p
        n += 1
    return bytes(out[:n])
