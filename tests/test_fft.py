"""Band energies of an integer FFT (docs/contract.md, section 13) and feature selections (12.1):
the host reference (kilobit.core.features.fft_bands, extract, Spec) against a plain
transcription of the contract's text, its accuracy against numpy's float FFT within a derived
bound, kbit (kbit.features.Extractor, kbit.fft) under CPython and on real MicroPython under
heap_lock against the host, and the refusals of bad selections and windows. The C side is in
tests/test_features_c.py."""
import json
import math
import random
from array import array

import numpy as np
import pytest

from conftest import need
from kbit import fft as kfft
from kbit.features import Extractor
from kilobit.core.errors import DataError
from kilobit.core.features import DEFAULT, Spec, W, extract, fft_bands, window_features
from kilobit.runtimes.micropython import kbit_unix
from kilobit.runtimes.micropython.kbit_wasm import missing_wasm, run as wasm_run
from test_features import run_script

SIZES = (5, 6, 7, 8)  # p: P = 32 .. 256


class Trace:
    """The largest magnitudes the transcription meets, for the contract's width claims."""

    def __init__(self):
        self.part = self.product = self.q = self.Q = 0


def contract(w, A, p, B, trace=None):
    """Section 13 as its text reads, for one window (a list), with Python's unbounded ints: the
    B band energies of each axis, axis after axis. W is computed here from its definition."""
    trace = trace or Trace()
    P = 1 << p
    n = len(w) // A
    table = [round(32767 * math.cos(2 * math.pi * k / 256)) for k in range(65)]

    def cos(j):
        return table[j] if j <= 64 else -table[128 - j]

    def sin(j):
        return table[64 - j] if j <= 64 else table[j - 64]

    def r(z):
        trace.product = max(trace.product, abs(z))
        return (z + 2 ** 14) >> 15

    def rev(i):
        return int(format(i, "0%db" % p)[::-1], 2)

    out = []
    for a in range(A):
        x = [w[i * A + a] for i in range(n)]
        m = (sum(x) + 32768 * n + n // 2) // n - 32768
        d = [x[i] - m for i in range(P)]
        M = max(abs(v) for v in d)
        if M == 0:
            out += [0] * B
            continue
        s = 14 - M.bit_length()
        y = [v << s if s >= 0 else v >> -s for v in d]
        re = [y[rev(i)] for i in range(P)]
        im = [0] * P
        L = 2
        while L <= P:
            h = L // 2
            for b in range(0, P, L):
                for k in range(h):
                    u, v = b + k, b + k + h
                    j = k * 256 // L
                    c, sn = cos(j), sin(j)
                    tr = r(c * re[v]) + r(sn * im[v])
                    ti = r(c * im[v]) - r(sn * re[v])
                    re[u], im[u], re[v], im[v] = ((re[u] + tr) >> 1, (im[u] + ti) >> 1,
                                                  (re[u] - tr) >> 1, (im[u] - ti) >> 1)
            trace.part = max([trace.part] + [abs(t) for t in re + im])
            L *= 2
        q = [re[k] ** 2 + im[k] ** 2 for k in range(1, P // 2 + 1)]
        trace.q = max([trace.q] + q)
        width, rr = P // (2 * B), 2 * s + 5
        for b in range(B):
            Q = sum(q[b * width:(b + 1) * width])
            trace.Q = max(trace.Q, Q)
            out.append(((Q >> (rr - 1)) + 1) >> 1)
    return out


def sine(P, n, bin_, amp, phase=0.0, base=0):
    return [int(round(base + amp * math.cos(2 * math.pi * bin_ * i / P + phase))) for i in range(n)]


def edge_windows(p):
    """(window, axes) of 1..3 axes, N >= P: the cases the contract's widths and rounding are
    about."""
    P = 1 << p
    lo, hi = -32768, 32767
    out = [([5] * P, 1), ([lo] * P, 1), ([hi] * (P + 3), 1),          # all equal: bands 0
           ([0] * (P // 2) + [1000] + [0] * (P // 2 - 1), 1),          # one spike
           ([hi] + [lo] * (P - 1), 1), ([lo] + [hi] * (P - 1), 1),     # a spike of full scale
           ([lo, hi] * (P // 2), 1), ([hi, lo] * (P // 2 + 1), 1),     # Nyquist, full scale
           ([hi] * (P // 2) + [lo] * (P // 2), 1),                     # a full-scale square
           ([lo] * P + [hi] * min(P, 256 - P), 1),                     # m far from the P samples
           ([0, 1] * (P // 2), 1), ([3, -3, 0, 2] * (P // 4), 1), ([0] * (P - 1) + [1], 1),
           ([2, 1] * (P // 2), 1)]                                     # amplitudes 1..3
    for k, amp in ((1, 32767), (P // 2 - 1, 32767), (3, 16000), (P // 4, 700), (5, 3)):
        out.append((sine(P, P, k, amp), 1))
    x, y = sine(P, P, 2, 20000, 0.3), sine(P, P, 7, 9000, 1.1)
    out.append(([v for i in range(P) for v in (x[i], y[i], (-1) ** i * 3)], 3))
    out.append(([lo, hi, 0] * P, 3))
    return [(w[:256 * A], A) for w, A in out]  # N <= 256


def random_windows(seed, count, p):
    rs = random.Random(seed)
    P = 1 << p
    out = []
    for _ in range(count):
        A = rs.choice((1, 2, 3))
        n = rs.randint(P, 256)
        scale = rs.choice((1, 3, 300, 20000, 32768))
        base = rs.randint(-32768 + scale, 32767 - scale) if scale < 32768 else 0
        w = [max(-32768, min(32767, base + rs.randint(-scale, scale))) for _ in range(A * n)]
        out.append((w, A))
    return out


def bands_of(P):
    return [b for b in (1, 2, 4, 8, 16, 32, 64, 128) if b <= P // 2]


CASES = [(w, A, p, B) for p in SIZES
         for k, (w, A) in enumerate(edge_windows(p) + random_windows(13 + p, 12, p))
         for B in (bands_of(1 << p)[k % len(bands_of(1 << p))], 1 << (p - 1))]


def host(w, A, p, B):
    return fft_bands(np.array([w]), A, p, B)[0].tolist()


def test_the_table_is_the_contract_text_and_kbit_holds_it():
    assert list(W) == [round(32767 * math.cos(2 * math.pi * k / 256)) for k in range(65)]
    assert list(kfft.W) == list(W)
    # no value within 0.007 of a half: every libm rounds it the same
    assert min(abs(32767 * math.cos(2 * math.pi * k / 256) % 1 - 0.5) for k in range(65)) > 0.007


@pytest.mark.parametrize("p", SIZES)
def test_host_equals_the_contract_text_and_its_widths_hold(p):
    trace = Trace()
    cases = [c for c in CASES if c[2] == p]
    for w, A, _, B in cases:
        assert host(w, A, p, B) == contract(w, A, p, B, trace), (A, len(w) // A, B)
    # the contract's widths: re/im int16, products and q_k, Q_b small ints (< 2^30, 2^29)
    assert trace.part < 16402 and trace.product < 1 << 30
    assert trace.q < 1 << 29 and trace.Q < 1 << 29
    assert trace.part >= 16384 // 2  # a full-scale window came near the bound


def test_edge_values():
    """What the contract's text gives for the plainest windows: about a^2/128 for a sinusoid of
    amplitude a on one bin, a spike's energy spread flat, nothing for a constant."""
    for p in SIZES:
        P = 1 << p
        assert host([77] * min(P + 5, 256), 1, p, 4) == [0] * 4
        # Nyquist at full scale (s = -2): (65535/2)^2 / 32 in the top band, float's to 1e-4
        e = host([-32768, 32767] * (P // 2), 1, p, 4)
        assert e[:3] == [0, 0, 0] and abs(e[3] / (32767.5 ** 2 / 32) - 1) < 1e-4
        # amplitude 30 on bin 3, one bin a band: 900/128 = 7.03 there, 0 elsewhere
        e = host(sine(P, P, 3, 30), 1, p, P // 2)
        assert e[2] == 7 and sum(e) == 7
        # amplitudes 1..3 are normalised first, so their tiny energies still round correctly
        assert host(sine(P, P, 1, 3), 1, p, P // 2)[0] == 0  # 9/128 rounds to 0
        assert host(sine(P, P, 1, 3), 1, p, 1) == [0]
        # a spike of 1000: |D_k| = 1000 on every bin, 1e6 / (128 P) a half of the spectrum
        assert host([0] * (P // 2) + [1000] + [0] * (P // 2 - 1), 1, p, 2) == \
            [round(1e6 / (128 * P))] * 2


@pytest.mark.parametrize("P", [32, 64, 128, 256])
def test_fft_bands_takes_p_or_P_and_is_vectorised(P):
    rs = np.random.RandomState(P)
    Wn = rs.randint(-32768, 32768, size=(30, 3 * P))
    p = P.bit_length() - 1
    E = fft_bands(Wn, 3, p, 4)
    assert E.shape == (30, 12) and E.dtype == np.int64
    assert (fft_bands(Wn, 3, P, 4) == E).all()
    for r in range(0, 30, 7):
        assert E[r].tolist() == contract(Wn[r].tolist(), 3, p, 4)


# --- accuracy against numpy's float FFT --------------------------------------------------------
#
# The integer FFT computes X = DFT(y) / P of y = d * 2^s (exact for s >= 0; for s < 0, y is d
# shifted down with floor, off by less than 1 a sample, so off by less than 1 in X's modulus).
# Each stage's butterfly (u + t) / 2 rounds: t = r(c v_re) + r(s v_im) is off by at most 0.5
# a rounded product (modulus sqrt(2)/2 * 2 = 1.42 over both components), the twiddles are
# 32767 cos / 32768 (off by at most 1.5 / 32768 of |v| <= 16402: 0.76), and the floor halving
# is off by at most 0.5 a component (0.71); earlier errors are halved with the values. So an
# error of modulus e becomes at most (2e + 1.42 + 0.76) / 2 + 0.71 = e + 1.8 a stage: every
# bin's error is below 1.8 p + 1 in y's units. A band of w bins (l2 triangle inequality) is then
# within sqrt(w) (1.8 p + 1) of the exact band's amplitude, and E = Q / 2^(2s + 5) rounded
# half up adds at most 0.5 in energy units:
#     |sqrt(E_int) - sqrt(E_float)| <= sqrt(w) (1.8 p + 1) / (2^s sqrt(32)) + sqrt(0.5)
# with E_float = sum |D_k|^2 / (32 P^2) over the band's bins, D the DFT of d.

def float_bands(w, A, p, B):
    """(A, B) float band energies and (A,) s of each axis: numpy's FFT of the same deviations."""
    P = 1 << p
    X = np.asarray(w, np.int64).reshape(-1, A)
    n = len(X)
    m = (X.sum(axis=0) + 32768 * n + n // 2) // n - 32768
    d = (X[:P] - m).T.astype(np.float64)
    D = np.fft.fft(d, axis=1)[:, 1:P // 2 + 1]
    E = (np.abs(D) ** 2).reshape(A, B, -1).sum(axis=2) / (32.0 * P * P)
    M = np.abs(X[:P] - m).max(axis=0)
    s = np.array([14 - int(v).bit_length() for v in M])
    return E, s


def bound(p, B, s):
    width = (1 << p) // (2 * B)
    return math.sqrt(width) * (1.8 * p + 1) / (2.0 ** s * math.sqrt(32)) + math.sqrt(0.5)


def accuracy_windows(p, seed, count):
    """Sinusoids (one bin, between bins, several at once, with an offset) and noise."""
    rs = random.Random(seed)
    P = 1 << p
    out = []
    for k in range(count):
        n = rs.randint(P, 256)
        kind = k % 4
        amp = rs.choice((5, 300, 12000, 32000))
        if kind == 0:
            x = sine(P, n, rs.randint(1, P // 2 - 1), amp, rs.random() * 6.3)
        elif kind == 1:
            x = sine(P, n, rs.randint(1, P // 2 - 2) + rs.random(), amp, rs.random() * 6.3)
        elif kind == 2:
            parts = [sine(P, n, rs.randint(1, P // 2 - 1), amp / 3, rs.random() * 6.3)
                     for _ in range(3)]
            x = [sum(v) + 100 for v in zip(*parts)]
        else:
            x = [rs.randint(-amp, amp) for _ in range(n)]
        out.append([max(-32768, min(32767, v)) for v in x])
    return out


@pytest.mark.parametrize("p", SIZES)
def test_band_energies_agree_with_numpys_fft_within_the_bound(p):
    worst = 0.0
    for k, w in enumerate(accuracy_windows(p, 100 + p, 40)):
        B = bands_of(1 << p)[k % len(bands_of(1 << p))]
        got = np.array(host(w, 1, p, B), float)
        want, s = float_bands(w, 1, p, B)
        err = np.abs(np.sqrt(got) - np.sqrt(want[0]))
        limit = bound(p, B, s[0])
        assert (err <= limit).all(), (k, B, s, err.max(), limit)
        worst = max(worst, float((err / limit).max()))
    assert worst > 0.01  # the bound is not vacuous: errors reach a visible share of it


def test_relative_error_of_the_band_energies(capsys):
    """Figures for the report (pytest -s): relative error of E_b against numpy's, median and max
    over seeded random windows (noise and sinusoids, amplitude 300..32000, 8 bands), per P;
    bands holding less than 1/1000 of the window's spectral energy, or below 100 (where an
    integer's own rounding is 0.5%), are left out: there the error is absolute (the bound
    above)."""
    rows = []
    for p in SIZES:
        rel = []
        for w in accuracy_windows(p, 7 + p, 200):
            if max(w) - min(w) < 600:
                continue
            got = np.array(host(w, 1, p, 8), float)
            want = float_bands(w, 1, p, 8)[0][0]
            keep = (want > want.sum() / 1000) & (want >= 100)
            rel += list(np.abs(got[keep] - want[keep]) / want[keep])
        rows.append((1 << p, len(rel), float(np.median(rel)), float(np.max(rel))))
        assert np.median(rel) < 0.01 and np.max(rel) < 0.1
    with capsys.disabled():
        for P, count, med, top in rows:
            print("\nfft%d:8 relative error of E_b vs numpy over %d bands: median %.2e, max %.2e"
                  % (P, count, med, top), end="")


# --- selections (contract 12.1) ----------------------------------------------------------------

@pytest.mark.parametrize("text, canonical, mask, p, bands", [
    ("time", "time", 0x7F, 0, 0),
    ("mean,mad,energy,fft64:8", "mean,mad,energy,fft64:8", 0x13, 6, 8),
    ("fft64", "fft64:8", 0, 6, 8),
    ("fft32:16", "fft32:16", 0, 5, 16),
    ("time,fft256", "time,fft256:8", 0x7F, 8, 8),
    (" Mean , cross ,FFT128:1", "mean,cross,fft128:1", 0x41, 7, 1),
    ("mean,mad,min,max,energy,diff,cross", "time", 0x7F, 0, 0),
    ("max", "max", 0x08, 0, 0),
])
def test_spec_parses_the_contract_text(text, canonical, mask, p, bands):
    spec = Spec.parse(text)
    assert str(spec) == canonical and Spec.parse(str(spec)) == spec
    assert (spec.mask, spec.p, spec.bands) == (mask, p, bands)
    assert spec.fft == (1 << p if p else 0)
    assert spec.per_axis == bin(mask).count("1") + bands
    assert Spec.from_fields(mask, p, bands) == spec and hash(Spec.from_fields(mask, p, bands)) \
        == hash(spec)
    assert spec.names == tuple(k for i, k in enumerate(DEFAULT) if mask >> i & 1)


def test_spec_constructor_columns_and_check():
    assert Spec() == Spec.parse("time") and Spec(fft=32) == Spec.parse("time,fft32:8")
    assert Spec((), 32) == Spec.parse("fft32:8")
    assert Spec(("mean",), fft=64, bands=2) == Spec.parse("mean,fft64:2")
    assert Spec(("mean",), 64, 2) != Spec(("mean",), 64, 4) and Spec() != "time"
    assert Spec.parse("mad,fft32:2").columns(2) == [
        "a0.mad", "a0.band0", "a0.band1", "a1.mad", "a1.band0", "a1.band1"]
    assert len(Spec().columns(3)) == 21
    assert Spec.parse("fft64").check(64) is not None
    for n, words in ((63, "at least 64"), (0, "1..256"), (257, "1..256"), (64.0, "1..256")):
        with pytest.raises(DataError, match=words):
            Spec.parse("fft64").check(n)
    with pytest.raises(DataError, match="axes"):
        Spec().columns(0)


@pytest.mark.parametrize("text, words", [
    ("", "empty"), ("mean,,mad", "empty"), ("mean,", "empty"),
    ("std", "unknown feature 'std'"), ("mad,mean", "order"), ("mean,mean", "order"),
    ("time,mean", "order"), ("fft64:8,mean", "comes last"), ("fft48", "32, 64, 128, 256"),
    ("fft512", "32, 64, 128, 256"), ("fft64:3", "power of two"), ("fft64:64", "1..32"),
    ("fft64:0", "1..32 bands"), ("fft64:x", "fftP or fftP:B"), ("fft:8", "fftP or fftP:B"),
    ("fft64:", "fftP or fftP:B"), ("fft-64", "fftP or fftP:B"), ("fft64:-2", "fftP or fftP:B"),
    ("fft32:8,fft64:8", "comes last"),
])
def test_spec_refuses_bad_text(text, words):
    with pytest.raises(DataError, match=words):
        Spec.parse(text)


@pytest.mark.parametrize("args, words", [
    (((), 0, 0), "at least one"), (("std",), "names is a sequence"),
    ((("mean",), 100, 8), "32, 64"), ((("mean",), 64, 5), "power of two"),
    ((("mean",), 0, 4), "need an fft"), ((("mean",), True, 0), "fft must be"),
    ((("mean",), 64, 2.0), "bands must be an integer"), ((("cross", "mean"),), "order"),
])
def test_spec_constructor_refuses(args, words):
    with pytest.raises(DataError, match=words):
        Spec(*args)


@pytest.mark.parametrize("fields, words", [
    ((0x80, 0, 0), "bit 7"), ((0, 0, 0), "at least one"), ((1, 4, 2), "5..8"),
    ((1, 9, 2), "5..8"), ((1, 6, 0), "0 bands"), ((1, 0, 2), "need an fft"),
    ((1, 5, 32), "1..16"), ((256, 0, 0), "byte"), ((-1, 0, 0), "byte"), ((1, 6, 6), "power"),
])
def test_spec_from_fields_refuses(fields, words):
    with pytest.raises(DataError, match=words):
        Spec.from_fields(*fields)
    with pytest.raises(DataError):
        Spec.parse(123)


def test_extract_is_time_then_bands_axis_after_axis():
    rs = np.random.RandomState(29)
    Wn = rs.randint(-32768, 32768, size=(25, 3 * 100))
    spec = Spec.parse("mean,energy,cross,fft64:4")
    X = extract(Wn, 3, spec)
    assert X.shape == (25, 3 * 7) and X.dtype == np.int64
    T = window_features(Wn, 3, ("mean", "energy", "cross")).reshape(25, 3, 3)
    E = fft_bands(Wn, 3, 6, 4).reshape(25, 3, 4)
    assert (X == np.concatenate((T, E), axis=2).reshape(25, -1)).all()
    assert (extract(Wn, 3, "mean,energy,cross,fft64:4") == X).all()
    assert (extract(Wn, 3, "fft64:4") == E.reshape(25, -1)).all()
    assert (extract(Wn, 3, "time") == window_features(Wn, 3)).all()


@pytest.mark.parametrize("call, words", [
    (lambda: extract(np.zeros((2, 3 * 50), int), 3, "fft64"), "at least 64"),
    (lambda: extract(np.zeros((2, 7), int), 3, "time"), "holds 3"),
    (lambda: extract(np.full((1, 64), 32768), 1, "fft64"), "int16"),
    (lambda: extract(np.zeros((1, 64)), 1, "fft64,mean"), "comes last"),
    (lambda: fft_bands(np.zeros((1, 64), int), 1, 4, 2), "32, 64"),
    (lambda: fft_bands(np.zeros((1, 64), int), 1, 0, 0), "needs p in 5..8"),
    (lambda: fft_bands(np.zeros((1, 64), int), 1, 6, 64), "1..32"),
    (lambda: fft_bands(np.zeros((1, 32), int), 1, 6, 2), "at least 64"),
])
def test_extract_and_fft_bands_refuse_bad_input(call, words):
    with pytest.raises(DataError, match=words):
        call()


# --- kbit: the same integers ---------------------------------------------------------------------

def selections():
    """(window, axes, mask, p, B): every FFT case with a rotating mask, and time-only ones."""
    rs = random.Random(31)
    out = [(w, A, rs.choice((0, 0x7F, 0x13, 0x41, 0x01)), p, B) for w, A, p, B in CASES]
    out += [(w, A, rs.randint(1, 127), 0, 0) for w, A in random_windows(5, 6, 5)]
    return out


SELECTIONS = selections()


def want(w, A, mask, p, B):
    return extract(np.array([w]), A, Spec.from_fields(mask, p, B))[0].tolist()


def test_kbit_cpython_equals_host():
    for w, A, mask, p, B in SELECTIONS:
        ex = Extractor(A, len(w) // A, mask, p, B)
        assert ex.size == len(w) and len(ex.out) == A * ex.per_axis
        assert ex.run(array("h", w)) is ex.out
        assert list(ex.out) == want(w, A, mask, p, B), (A, len(w) // A, mask, p, B)
        assert list(ex.run(list(w))) == want(w, A, mask, p, B)


def test_kbit_twiddles_are_the_contract_cos_and_sin():
    for p in SIZES:
        P = 1 << p
        cs = kfft.twiddles(p, array("h", bytes(2 * P)))
        for k in range(P // 2):
            j = k * 256 // P
            assert cs[k] == round(32767 * math.cos(2 * math.pi * j / 256))
            assert cs[P // 2 + k] == round(32767 * math.sin(2 * math.pi * j / 256))


@pytest.mark.parametrize("args, words", [
    ((0, 64), "1..255 axes"), ((256, 64), "1..255 axes"), ((3, 0), "1..256 samples"),
    ((3, 257), "1..256 samples"), ((3, 64, 0x80), "bits 0..6"), ((3, 64, -1), "bits 0..6"),
    ((3, 64, 0, 0, 0), "at least one"), ((3, 63, 0x7F, 6, 8), "at most n = 63"),
    ((3, 64, 0x7F, 4, 2), "p is 5..8"), ((3, 64, 0x7F, 9, 2), "p is 5..8"),
    ((3, 64, 0x7F, 6, 0), "power of two in 1..32"), ((3, 64, 0x7F, 6, 3), "power of two"),
    ((3, 64, 0x7F, 6, 64), "1..32"), ((3, 64, 0x7F, 0, 4), "need an FFT"),
    ((3, 64.0), "ints"), ((3, 64, True), "ints"),
])
def test_kbit_extractor_refuses_bad_selections(args, words):
    with pytest.raises(ValueError, match=words):
        Extractor(*args)


@pytest.mark.parametrize("window, exc, words", [
    ([0] * 191, ValueError, "holds 192 readings, not 191"),
    ([0] * 193, ValueError, "holds 192"),
    ([0] * 191 + [32768], ValueError, "int16"),
    ([-32769] + [0] * 191, ValueError, "int16"),
    ([0] * 191 + [1.0], TypeError, "ints"),
    ("abc", TypeError, "bytearray, an array or a list"),
    (array("f", bytes(4 * 192)), TypeError, "ints"),
])
def test_kbit_extractor_refuses_bad_windows_before_writing(window, exc, words):
    ex = Extractor(3, 64, 0x13, 6, 8)
    for j in range(len(ex.out)):
        ex.out[j] = 1000 + j
    before = list(ex.out)
    with pytest.raises(exc, match=words):
        ex.run(window)
    assert list(ex.out) == before


# --- real MicroPython: the same integers, the whole run under micropython.heap_lock ------------

MP_SCRIPT = """
import json, sys
from array import array
import micropython
from kbit.features import Extractor

for w, A, mask, p, B in json.load(open(sys.argv[1])):
    ex = Extractor(A, len(w) // A, mask, p, B)
    win = array("h", w)
    micropython.heap_lock()                   # the checks and the bytecode allocate nothing
    try:
        ex.run(win)
        ex.run(w)                             # a list reads the same
    finally:
        micropython.heap_unlock()
    print("E", json.dumps(list(ex.out)))
"""


@pytest.mark.parametrize("runner", ["kbit-unix", "webassembly"])
def test_kbit_on_micropython_equals_host_under_heap_lock(tmp_path, runner):
    if runner == "kbit-unix":
        need(kbit_unix.missing())
        run = kbit_unix.run
    else:
        need(missing_wasm())
        run = wasm_run
    cases = SELECTIONS if runner == "kbit-unix" else SELECTIONS[::7]
    lines = run_script(tmp_path, run, MP_SCRIPT, cases, timeout=600)
    got = [json.loads(ln[2:]) for ln in lines if ln.startswith("E ")]
    assert len(got) == len(cases)
    for g, (w, A, mask, pp, B) in zip(got, cases):
        assert g == want(w, A, mask, pp, B), (A, len(w) // A, mask, pp, B)
