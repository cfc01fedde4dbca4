"""Integer weight matrices as stored on a device: dense, or as a compact sparse stream
(docs/contract.md, section 7.2). Shared by every host-trained predictor (Bonsai, ProtoNN).

A matrix of `rows x cols` signed weights of `wbytes` bytes each (1: int8, 2: int16, little-endian)
is stored in one of two encodings:

    DENSE  (0)  every weight, row-major: rows*cols*wbytes bytes
    SPARSE (1)  the non-zero weights in row-major order, each as a gap byte then the weight:
                gap byte d in 1..255: the weight sits d-1 positions after the cursor, which then
                moves just past it; d == 0: the cursor moves 255 positions on, no weight follows.
                The cursor starts at position 0 (row 0, column 0); position = row*cols + col.

A SPARSE stream is read front to back with nothing but a cursor (row, col, byte offset): that is
what lets a device walk the projection matrix as features stream in, one input row at a time.
"""
import numpy as np

DENSE, SPARSE = 0, 1
ENCODINGS = ("dense", "sparse")
ESCAPE = 255


def dense_bytes(rows, cols, wbytes):
    return rows * cols * wbytes


def sparse_bytes(positions, wbytes):
    """Bytes of a SPARSE stream holding weights at these (sorted, distinct) flat positions."""
    p = np.asarray(positions, dtype=np.int64)
    if not p.size:
        return 0
    gaps = np.diff(np.concatenate(([-1], p))) - 1
    return int(p.size * (1 + wbytes) + (gaps // ESCAPE).sum())


def encode(M, wbytes, enc):
    """bytes of the integer matrix M (2-D) in encoding enc."""
    M = np.asarray(M, dtype=np.int64)
    q = (1 << (8 * wbytes - 1))
    if M.size and (M.min() < -q or M.max() >= q):
        raise ValueError("weight outside int%d" % (8 * wbytes))
    flat = M.ravel()
    if enc == DENSE:
        return _le(flat, wbytes)
    if enc != SPARSE:
        raise ValueError("unknown encoding %r" % (enc,))
    out = bytearray()
    cur = 0
    for p in np.flatnonzero(flat):
        gap = int(p) - cur
        while gap >= ESCAPE:
            out.append(0)
            gap -= ESCAPE
        out.append(gap + 1)
        out += _le(flat[p:p + 1], wbytes)
        cur = int(p) + 1
    return bytes(out)


def decode(data, rows, cols, wbytes, enc):
    """The integer matrix (rows x cols) of a stored matrix; ValueError when `data` is not
    exactly one valid stream of that shape (cut short, a weight beyond the last position,
    trailing bytes, or -- SPARSE -- a stored zero weight)."""
    data = bytes(data)
    n = rows * cols
    if enc == DENSE:
        if len(data) != n * wbytes:
            raise ValueError("dense matrix of %d bytes, expected %d" % (len(data), n * wbytes))
        return _from_le(data, wbytes).reshape(rows, cols)
    if enc != SPARSE:
        raise ValueError("unknown encoding %r" % (enc,))
    flat = np.zeros(n, dtype=np.int64)
    cur, i = 0, 0
    while i < len(data):
        d = data[i]
        i += 1
        if d == 0:
            cur += ESCAPE
            continue
        p = cur + d - 1
        if p >= n or i + wbytes > len(data):
            raise ValueError("sparse matrix entry beyond its end")
        v = int(_from_le(data[i:i + wbytes], wbytes)[0])
        if v == 0:
            raise ValueError("sparse matrix stores a zero weight")
        flat[p] = v
        i += wbytes
        cur = p + 1
    return flat.reshape(rows, cols)


def best_encoding(M, wbytes):
    """(enc, data): the smaller of the two encodings of M (DENSE on a tie)."""
    d = encode(M, wbytes, DENSE)
    s = encode(M, wbytes, SPARSE)
    return (SPARSE, s) if len(s) < len(d) else (DENSE, d)


def top_mask(values, budget, wbytes, blocks=None):
    """Boolean mask keeping the largest-magnitude entries of `values` (flat) whose SPARSE
    storage fits `budget` bytes. `blocks` are the start offsets of independently encoded
    blocks (each restarts its cursor at 0), default one block. Ties are broken by position,
    so the mask is deterministic."""
    v = np.abs(np.asarray(values, dtype=np.float64).ravel())
    n = v.size
    starts = np.asarray([0] if blocks is None else blocks, dtype=np.int64)
    rel = np.arange(n) - starts[np.searchsorted(starts, np.arange(n), side="right") - 1]
    order = np.lexsort((np.arange(n), -v))

    def cost(k):
        keep = np.sort(order[:k])
        if not k:
            return 0
        blk = np.searchsorted(starts, keep, side="right") - 1
        total = 0
        for b in np.unique(blk):
            total += sparse_bytes(rel[keep[blk == b]], wbytes)
        return total

    lo, hi = 0, n
    while lo < hi:  # the largest k with cost(k) <= budget (cost grows with k)
        mid = (lo + hi + 1) // 2
        if cost(mid) <= budget:
            lo = mid
        else:
            hi = mid - 1
    mask = np.zeros(n, dtype=bool)
    mask[order[:lo]] = True
    return mask


def _le(flat, wbytes):
    a = np.asarray(flat, dtype=np.int64) & ((1 << (8 * wbytes)) - 1)
    return a.astype("<u%d" % wbytes).tobytes()


def _from_le(data, wbytes):
    return np.frombuffer(bytes(data), dtype="<i%d" % wbytes).astype(np.int64)
