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
