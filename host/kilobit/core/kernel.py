"""Kernel weights shared by the kernel perceptrons (docs/contract.md, 3.2 and 3.3).

One concept, one implementation: the power table, the log-method weight w(k) with rounded
division, and the score relative to the nearest ring with its tie-break are the same for the
Random Kernel Perceptron (`kilobit.models.rkp`) and the Compressed Kernel Perceptron
(`kilobit.models.ckp`);
only how a model turns codes into the integer distance k differs.
"""
import math

import numpy as np

TABLE_MAX = 32


def power_table_scaled(scale, C):
    """P[j] = round(C * exp(-2^j / scale)) for j = 0, 1, .. until the first zero (at most 32
    entries): the kernel is K = g^d with g = exp(-1 / scale). Computed once, on the host."""
    table = []
    for j in range(TABLE_MAX):
        p = int(math.floor(C * math.exp(-(2.0 ** j) / scale) + 0.5))
        if p == 0:
            break
        table.append(p)
    return table


def table_ok(table, C):
    """A power table as the contract allows it in a file: entries in 1..C, non-increasing."""
    return all(0 < t <= C for t in table) and table == sorted(table, reverse=True)


def weight(k, table, C):
    """w(k) by the log method with rounded division (contract 3.2). Scalar form."""
    if k == 0:
        return C
    j = k.bit_length() - 1
    if j >= len(table):
        return 0
    w = table[j]
    half = C >> 1
    for b in range(j - 1, -1, -1):
        if (k >> b) & 1:
            w = (w * table[b] + half) // C
            if w == 0:
                return 0
    return w


def weights(k, table, C):
    """Vectorised w(k) over an integer array; identical to `weight` element by element."""
    k = np.asarray(k, dtype=np.int64)
    w = np.where(k == 0, C, 0).astype(np.int64)
    started = np.zeros(k.shape, dtype=bool)
    alive = k != 0
    half = C >> 1
    top = int(k.max()).bit_length() if k.size else 0
    for b in range(top - 1, -1, -1):
        bit = ((k >> b) & 1).astype(bool) & alive
        first = bit & ~started
        if b >= len(table):
            alive &= ~first  # highest bit beyond the table: weight 0
            started |= first
            continue
        p = table[b]
        w = np.where(first, p, w)
        more = bit & started
        w = np.where(more, (w * p + half) // C, w)
        started |= first
    return np.where(alive | (k == 0), w, 0)


def ring_score(d, labels, wfn):
    """Contract 3.3: sum of y_i * w(d_i - base) over d_i >= base, base the nearest distance;
    while that is 0 and farther vectors exist, base moves to the next ring. d, labels (+1/-1):
    arrays over the stored support vectors; wfn: offsets (array) -> weights (array)."""
    if not len(d):
        return 0
    base = d.min()
    while True:
        ring = d >= base
        s = int((labels[ring] * wfn(d[ring] - base)).sum())
        farther = d[d > base]
        if s or not farther.size:
            return s
        base = farther.min()
