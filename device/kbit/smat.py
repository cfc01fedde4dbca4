"""Stored integer weight matrices, dense or sparse (docs/contract.md, section 7.2).

Shared by the host-trained predictors (Bonsai, ProtoNN). A matrix lives inside the model's
payload buffer `buf` from byte `start` to `end`:

    DENSE  (0)  rows*cols weights, row-major, wb bytes each (1: int8, 2: int16 little-endian)
    SPARSE (1)  the non-zero weights in row-major order, each as a gap byte then the weight:
                gap d in 1..255: the weight is d-1 positions after the cursor, which then moves
                just past it; d == 0: the cursor moves 255 positions on, no weight follows.

Nothing here allocates after import: results go into caller-owned arrays.
"""
from .compat import const

DENSE = const(0)
SPARSE = const(1)


def weight(buf, i, wb):
    """The signed weight of wb bytes at buf[i]."""
    v = buf[i]
    if wb == 1:
        return v - 256 if v > 127 else v
    v |= buf[i + 1] << 8
    return v - 65536 if v > 32767 else v


def check(buf, start, end, rows, cols, wb, enc, sums, by_col, limit):
    """None when buf[start:end] is exactly one valid matrix (no weight beyond rows*cols, no
    stored zero in SPARSE, dense length exact), else what is wrong. Adds |w| to sums[col] (by_col)
    or sums[row] and fails when a sum exceeds `limit`."""
    n = rows * cols
    if enc == DENSE:
        if end - start != n * wb:
            return "dense matrix of %d bytes, expected %d" % (end - start, n * wb)
    elif enc != SPARSE:
        return "unknown matrix encoding %d" % enc
    i = start
    row = 0
    col = 0
    while i < end:
        if enc == SPARSE:
            g = buf[i]
            i += 1
            if g == 0:
                col += 255
                while col >= cols:
                    col -= cols
                    row += 1
                continue
            col += g - 1
            while col >= cols:
                col -= cols
                row += 1
            if row >= rows or i + wb > end:
                return "sparse matrix entry beyond its end"
        w = weight(buf, i, wb)
        i += wb
        if enc == SPARSE and w == 0:
            return "sparse matrix stores a zero weight"
        if w == -128 and wb == 1 or w == -32768:
            return "weight outside the symmetric range"
        k = col if by_col else row
        s = sums[k] + (w if w >= 0 else -w)
        if s > limit:
            return "weights too large: a sum of |w| exceeds %d" % limit
        sums[k] = s
        col += 1
        if col == cols:
            col = 0
            row += 1
    return None


def row_dots(buf, start, end, cols, wb, enc, vec, dots, nrows):
    """dots[r] = sum_c M[r][c] * vec[c] for r < nrows, M the stored matrix (one pass)."""
    for r in range(nrows):
        dots[r] = 0
    i = start
    if enc == DENSE:
        for r in range(nrows):
            s = 0
            for c in range(cols):
                v = buf[i]
                if wb == 1:
                    if v > 127:
                        v -= 256
                else:
                    v |= buf[i + 1] << 8
                    if v > 32767:
                        v -= 65536
                s += v * vec[c]
                i += wb
            dots[r] = s
        return
    row = 0
    col = 0
    while i < end:
        g = buf[i]
        i += 1
        if g == 0:
            col += 255
        else:
            col += g - 1
        while col >= cols:
            col -= cols
            row += 1
        if g == 0:
            continue
        v = buf[i]
        if wb == 1:
            if v > 127:
                v -= 256
        else:
            v |= buf[i + 1] << 8
            if v > 32767:
                v -= 65536
        i += wb
        dots[row] += v * vec[col]
        col += 1
