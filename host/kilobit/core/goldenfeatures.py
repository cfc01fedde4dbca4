"""The features golden file (kind "features"): windows of raw readings and the features every
runtime must compute from them, bit for bit (docs/contract.md sections 12, 12.1, 13).

    format, version  "kilobit-golden", 1 (kilobit.core.goldenfile's)
    kind             "features"
    params           what it was made with (for people): window, axes, features, seed, count
    N, A             samples per window, axes (readings interleaved, contract 12)
    mask, p, B       the selection (contract 12.1): time-domain feature bits, log2 of the FFT
                     size (0: none), band count
    windows          one window a line: A*N int16 readings
    expect           per window its A*F features, axis after axis

    doc = make(window=100, axes=3, features="time,fft64:8", seed=1)
    problem = schema_problem(doc)            # None, or what is wrong
    bad = compare(doc, "c-host", rows)       # None, or the first window and column that differ

Made here from seeded windows by the host reference (kilobit.core.features.extract); replayed
on the runtimes by kilobit.golden.
"""
import math
import random

from kilobit.core import features as kf, goldenfile
from kilobit.core.errors import DataError, KilobitError

KIND = "features"
LO, HI = -32768, 32767
#: windows a file holds when --count is not given: every edge shape on every axis, then random
COUNT = 24
#: the selection keys of a document, in Extractor's order after axes and n
SELECTION = ("mask", "p", "B")
#: the C tool and the AVR firmware take axes as a byte
AXES_MAX = 255


def _clip(v):
    return max(LO, min(HI, v))


def _sine(rs, n, amplitude, offset=0):
    """A sinusoid on a whole number of cycles over the first power-of-two block, so that one
    FFT bin holds it, plus a fractional one half the time (leakage into neighbouring bands)."""
    block = 1 << max(0, (n.bit_length() - 1))
    cycles = rs.randint(1, max(1, block // 2)) + (0.5 if rs.random() < 0.5 else 0.0)
    phase = rs.random() * 2 * math.pi
    return [_clip(offset + int(round(amplitude * math.sin(2 * math.pi * cycles * i / block
                                                         + phase)))) for i in range(n)]


def _edge(kind, rs, n):
    """One axis of `n` readings of an edge shape: what the contract's proofs are about (the
    extremes, a constant that zeroes every deviation and band, one spike, a tiny signal that the
    FFT's normalisation must scale up, a half-way mean)."""
    if kind == 0:
        return [rs.randint(LO, HI)] * n
    if kind == 1:
        return [LO if i % 2 else HI for i in range(n)]
    if kind == 2:
        return [rs.choice((LO, HI)) for _ in range(n)]
    if kind == 3:
        spike = [0] * n
        spike[rs.randrange(n)] = rs.choice((LO, HI))
        return spike
    if kind == 4:
        base = rs.randint(-1000, 1000)
        return [base + rs.randint(-1, 1) for _ in range(n)]
    if kind == 5:
        return _sine(rs, n, 32767)
    if kind == 6:
        return _sine(rs, n, rs.randint(1, 40), rs.randint(-30000, 30000))
    if kind == 7:
        return [LO] * (n // 2) + [HI] * (n - n // 2)
    if kind == 8:
        return [(-1) ** i * (i & 1) for i in range(n)]  # a mean exactly half-way: 0, -1, 0, -1
    if kind == 9:
        a, b = _sine(rs, n, 12000), _sine(rs, n, 6000)
        return [_clip(x + y + rs.randint(-200, 200)) for x, y in zip(a, b)]
    return None


EDGES = 10


def _random_axis(rs, n):
    scale = rs.choice((2, 300, 20000, 32768))
    base = rs.randint(LO + scale, HI - scale) if scale < 32768 else 0
    return [_clip(base + rs.randint(-scale, scale)) for _ in range(n)]


def windows(n, axes, seed, count=COUNT):
    """`count` windows of `axes` x `n` readings drawn from `seed`: the first EDGES windows give
    every axis each edge shape (axis a of window i the shape (i + a) mod EDGES), the rest are
    random shapes and amplitudes."""
    rs = random.Random(seed)
    out = []
    for i in range(count):
        cols = []
        for a in range(axes):
            kind = (i + a) % EDGES if i < EDGES else rs.randrange(EDGES + 3)
            cols.append(_edge(kind, rs, n) or _random_axis(rs, n))
        out.append([cols[a][j] for j in range(n) for a in range(axes)])
    return out


def _int_param(name, v, lo, hi):
    if isinstance(v, bool) or not isinstance(v, int) or not lo <= v <= hi:
        raise KilobitError("--%s must be a whole number %d..%d, not %r" % (name, lo, hi, v))
    return v


def make(window, axes, features="time", seed=0, count=COUNT):
    """The golden document of `count` seeded windows of `axes` x `window` readings and the
    selection `features` (contract 12.1 text). KilobitError for a bad value."""
    _int_param("window", window, 1, kf.N_MAX)
    _int_param("axes", axes, 1, AXES_MAX)
    _int_param("count", count, 1, 100000)
    spec = kf.Spec.parse(features)
    spec.check(window)
    ws = windows(window, axes, seed, count)
    expect = kf.extract(ws, axes, spec)
    return {"format": goldenfile.FORMAT, "version": goldenfile.VERSION, "kind": KIND,
            "params": {"window": window, "axes": axes, "features": str(spec), "seed": seed,
                       "count": count},
            "N": window, "A": axes, "mask": spec.mask, "p": spec.p, "B": spec.bands,
            "windows": ws, "expect": [[int(v) for v in row] for row in expect]}


def _is_int(v):
    return isinstance(v, int) and not isinstance(v, bool)


def spec_of(doc):
    """The kilobit.core.features.Spec of a checked document."""
    return kf.Spec.from_fields(doc["mask"], doc["p"], doc["B"])


def schema_problem(doc):
    """What is wrong with a features document (keys, types, the selection valid for N, every
    window A*N int16 readings, every expect row A*F integers), or None."""
    for key in ("params", "N", "A") + SELECTION + ("windows", "expect"):
        if key not in doc:
            return "no %r key" % key
    if not isinstance(doc["params"], dict):
        return "'params' is not an object"
    for key in ("N", "A") + SELECTION:
        if not _is_int(doc[key]):
            return "%r is not a whole number" % key
    n, axes = doc["N"], doc["A"]
    if not 1 <= axes <= AXES_MAX:
        return "'A' (axes) %d is outside 1..%d" % (axes, AXES_MAX)
    try:
        spec = spec_of(doc)
        spec.check(n)
    except DataError as e:
        return "its selection (N %d, mask %d, p %d, B %d): %s" % (
            n, doc["mask"], doc["p"], doc["B"], e)
    ws, expect = doc["windows"], doc["expect"]
    if not isinstance(ws, list) or not ws:
        return "no windows (a features golden file replays at least one)"
    if not isinstance(expect, list) or len(expect) != len(ws):
        return "%d windows but %s expect rows" % (
            len(ws), len(expect) if isinstance(expect, list) else "no list of")
    for i, w in enumerate(ws):
        if not isinstance(w, list) or len(w) != axes * n:
            return "window %d is not a list of %d readings (A %d x N %d)" % (i, axes * n, axes, n)
        bad = next((v for v in w if not _is_int(v) or not LO <= v <= HI), None)
        if bad is not None:
            return "window %d: reading %r is not an int16" % (i, bad)
    width = axes * spec.per_axis
    for i, row in enumerate(expect):
        if not isinstance(row, list) or len(row) != width or not all(_is_int(v) for v in row):
            return "expect row %d is not %d integers (%d axes x %d features)" % (
                i, width, axes, spec.per_axis)
    return None


class Mismatch(goldenfile.Mismatch):
    """The first feature a runtime got wrong: its window (.step) and column (.field, such as
    "a1.energy")."""

    def __str__(self):
        return "%s: window %d, feature %s: expected %s, got %s" % (
            self.runtime, self.step, self.field, self.expected, self.got)


def compare(doc, runtime_name, rows):
    """The first difference between a runtime's rows (one list of ints a window) and the
    document's expect rows, or None."""
    expect = doc["expect"]
    if len(rows) != len(expect):
        return Mismatch(runtime_name, min(len(rows), len(expect)), "(windows)",
                        "%d windows" % len(expect), "%d" % len(rows))
    columns = spec_of(doc).columns(doc["A"])
    for i, (got, exp) in enumerate(zip(rows, expect)):
        got = list(got)
        if len(got) != len(exp):
            return Mismatch(runtime_name, i, "(count)", "%d features" % len(exp),
                            "%d" % len(got))
        for name, g, e in zip(columns, got, exp):
            if int(g) != e:
                return Mismatch(runtime_name, i, name, e, g)
    return None
