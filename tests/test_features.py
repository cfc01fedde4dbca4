"""Time-domain features of a window (docs/contract.md, section 12): the host reference
(kilobit.core.features) against a plain transcription of the contract's text, kbit.features under
CPython and on real MicroPython (the unix port and the WebAssembly build, under heap_lock)
against the host, and the refusals of bad input."""
import json
import random
from array import array

import numpy as np
import pytest

from conftest import need
from kbit import features as kf
from kilobit.core.errors import DataError
from kilobit.core.features import DEFAULT, window_features
from kilobit.runtimes.micropython import kbit_unix
from kilobit.runtimes.micropython.kbit_wasm import missing_wasm, run as wasm_run


def contract(w, A):
    """Section 12 as its text reads, one window (a list), Python's unbounded ints."""
    n = len(w) // A
    out = []
    for a in range(A):
        x = [w[i * A + a] for i in range(n)]
        m = (sum(x) + 32768 * n + n // 2) // n - 32768
        mad = (sum(abs(v - m) for v in x) + n // 2) // n
        energy = (sum((v - m) ** 2 for v in x) + 2 * n) // (4 * n)
        if n == 1:
            diff = 0
        else:
            diff = (sum(abs(x[i] - x[i - 1]) for i in range(1, n)) + (n - 1) // 2) // (n - 1)
        cross = sum(1 for i in range(1, n) if (x[i - 1] >= m) != (x[i] >= m))
        out += [m, mad, min(x), max(x), energy, diff, cross]
    return out


def edge_windows():
    """(window, axes): the extremes the contract's overflow proof is about, and tiny N."""
    lo, hi = -32768, 32767
    out = [([lo] * 256, 1), ([hi] * 256, 1), ([123] * 100, 1), ([lo, hi] * 128, 1),
           ([hi, lo] * 128, 1), ([hi] + [lo] * 255, 1), ([lo] + [hi] * 255, 1),
           ([7], 1), ([lo, hi, 5], 3), ([lo, hi], 1), ([hi, lo], 1), ([-1, 0], 1),
           ([lo, hi, 0] * 256, 3), ([-3, 4, -3, 4, 9], 1)]
    # the mean's rounding at a half (odd sums over even N), on both signs
    out += [([-1, 0, -1, 0], 1), ([1, 0, 1, 0], 1), ([-5, -6], 1), ([5, 6], 1)]
    return out


def random_windows(seed, count):
    rs = random.Random(seed)
    out = []
    for _ in range(count):
        A = rs.choice((1, 2, 3, 6))
        n = rs.choice((1, 2, 3, 50, 100, 128, 255, 256))
        scale = rs.choice((3, 300, 20000, 32768))
        base = rs.randint(-32768 + scale, 32767 - scale) if scale < 32768 else 0
        w = [max(-32768, min(32767, base + rs.randint(-scale, scale))) for _ in range(A * n)]
        out.append((w, A))
    return out


CASES = edge_windows() + random_windows(29, 60)


def host(w, A):
    return [int(v) for v in window_features(np.array([w]), A)[0]]


def test_energy_bound_is_reached_near_its_proof():
    """Alternating extremes make the largest energy there is: below 2^28 as the contract says."""
    e = host([-32768, 32767] * 128, 1)[4]
    assert e == 268427264 < 1 << 28


@pytest.mark.parametrize("k", range(len(CASES)))
def test_host_equals_the_contract_text(k):
    w, A = CASES[k]
    assert host(w, A) == contract(w, A)


def test_host_is_vectorised_over_windows_and_names_select():
    rs = np.random.RandomState(5)
    W = rs.randint(-32768, 32768, size=(40, 3 * 64))
    F = window_features(W, 3)
    assert F.shape == (40, 21) and F.dtype == np.int64
    for r in range(40):
        assert list(F[r]) == contract(list(W[r]), 3)
    sub = window_features(W, 3, names=("mean", "energy", "cross"))
    assert (sub == F.reshape(40, 3, 7)[:, :, [0, 4, 6]].reshape(40, 9)).all()
    # integer-valued floats (a CSV read as float) give the same integers
    assert (window_features(W.astype(np.float64), 3) == F).all()


@pytest.mark.parametrize("bad, axes, names, words", [
    (np.zeros((2, 2, 6), int), 3, DEFAULT, "2-D"),
    (np.zeros((2, 7), int), 3, DEFAULT, "holds 3*N"),
    (np.zeros((2, 3 * 257), int), 3, DEFAULT, "N <= 256"),
    (np.zeros((2, 0), int), 1, DEFAULT, "N <= 256"),
    (np.full((2, 6), 0.5), 3, DEFAULT, "integers"),
    (np.full((2, 6), np.nan), 3, DEFAULT, "integers"),
    (np.array([["1", "2", "3"]]), 3, DEFAULT, "integers"),
    (np.array([[0, 32768, 0]]), 3, DEFAULT, "int16"),
    (np.array([[0, -32769, 0]]), 3, DEFAULT, "int16"),
    (np.zeros((1, 6), int), 0, DEFAULT, "axes"),
    (np.zeros((1, 6), int), 3, ("mean", "std"), "unknown feature 'std'"),
    (np.zeros((1, 6), int), 3, ("max", "min"), "order"),
    (np.zeros((1, 6), int), 3, ("min", "min"), "order"),
    (np.zeros((1, 6), int), 3, (), "order"),
])
def test_host_refuses_bad_input(bad, axes, names, words):
    with pytest.raises(DataError, match=words.replace("*", r"\*")):
        window_features(bad, axes, names)


def kbit_cpython(w, A):
    out = array("i", bytes(4 * 7 * A))
    assert kf.features(array("h", w), A, out) is out
    return list(out)


@pytest.mark.parametrize("k", range(len(CASES)))
def test_kbit_cpython_equals_host(k):
    w, A = CASES[k]
    assert kbit_cpython(w, A) == host(w, A)
    out = array("i", bytes(4 * 7 * A))
    assert list(kf.features(list(w), A, out)) == host(w, A)  # a list of ints reads the same


@pytest.mark.parametrize("window, axes, out, exc, words", [
    ([0] * 7, 3, array("i", bytes(84)), ValueError, "holds 3\\*N"),
    ([0] * 3 * 257, 3, array("i", bytes(84)), ValueError, "N <= 256"),
    ([], 1, array("i", bytes(28)), ValueError, "N <= 256"),
    ([0, 32768, 0], 3, array("i", bytes(84)), ValueError, "int16"),
    ([0, 1.5, 0], 3, array("i", bytes(84)), TypeError, "ints"),
    ("abc", 3, array("i", bytes(84)), TypeError, "bytearray, an array or a list"),
    ([0] * 6, 0, array("i", bytes(84)), ValueError, "axes"),
    ([0] * 6, 3, array("i", bytes(80)), ValueError, "of 21"),
    ([0] * 6, 3, array("h", bytes(42)), TypeError, 'array\\("i"\\)'),
    ([0] * 6, 3, array("I", bytes(84)), TypeError, 'array\\("i"\\)'),
    ([0] * 6, 3, [0] * 21, TypeError, 'array\\("i"\\)'),
    ([0] * 6, 3, bytearray(84), TypeError, 'array\\("i"\\)'),
])
def test_kbit_refuses_before_writing(window, axes, out, exc, words):
    if isinstance(out, array) and out.typecode == "i":
        for j in range(len(out)):
            out[j] = 1000 + j
    before = list(out)
    with pytest.raises(exc, match=words):
        kf.features(window, axes, out)
    assert list(out) == before


# --- real MicroPython: the same integers, under micropython.heap_lock -------------------------

MP_SCRIPT = """
import json, sys
from array import array
import micropython
from kbit.features import features, fill

cases = json.load(open(sys.argv[1]))
for w, A in cases:
    win = array("h", w)
    out = array("i", bytes(28 * A))
    features(win, A, out)                     # checked, the heap locked inside
    again = array("i", bytes(28 * A))
    micropython.heap_lock()                   # the loop itself under the caller's lock too
    try:
        fill(win, A, again)
    finally:
        micropython.heap_unlock()
    print("F", json.dumps(list(out)), list(out) == list(again))
for bad in ((array("h", bytes(42)), "h"), (array("I", bytes(84)), "I"), (bytearray(84), "b")):
    try:
        features(array("h", bytes(12)), 3, bad[0])
        print("accepted", bad[1])
    except TypeError as e:
        print("refused", bad[1], e)
"""


def run_script(tmp_path, runner, script, cases, timeout=300):
    """The stdout lines of MicroPython script (text) run by runner (kbit_unix.run, wasm_run)
    with cases as JSON in /cases.json (sys.argv[1]); a failed run fails the test."""
    path = tmp_path / "cases.json"
    path.write_text(json.dumps(cases))
    (tmp_path / "script.py").write_text(script)
    p = runner([str(tmp_path / "script.py"), "/cases.json"], files=[("/cases.json", str(path))],
               timeout=timeout)
    assert p.returncode == 0, p.stdout[-3000:] + p.stderr[-3000:]
    return p.stdout.splitlines()


def mp_lines(tmp_path, runner):
    lines = run_script(tmp_path, runner, MP_SCRIPT, CASES)
    got = [ln for ln in lines if ln.startswith("F ")]
    assert len(got) == len(CASES)
    for ln, (w, A) in zip(got, CASES):
        body, same = ln[2:].rsplit(" ", 1)
        assert same == "True"
        assert json.loads(body) == host(w, A)
    assert [ln.split(" ", 2)[:2] for ln in lines if ln.startswith(("refused", "accepted"))] \
        == [["refused", "h"], ["refused", "I"], ["refused", "b"]]


def test_kbit_on_the_unix_port_equals_host(tmp_path):
    need(kbit_unix.missing())
    mp_lines(tmp_path, kbit_unix.run)


def test_kbit_on_webassembly_micropython_equals_host(tmp_path):
    need(missing_wasm())
    mp_lines(tmp_path, wasm_run)
