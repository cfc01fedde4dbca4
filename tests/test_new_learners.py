"""Learners from parameters alone on the board (issue 28, item 3): RKP.new and CKP.new compute
their tables integer-only (kbit.kernel, kbit.tables) and must hold the host's bytes; the plain
constructors refuse a table that does not fit their parameters; Assoc takes its approach by name.

What is exhaustive here, and what is argued:
- rkp: every kernel, bits 1..8, width -16..16 and C 1..255 (the table depends on nothing else).
- ckp's power table depends on (width, P, C) through exp(-10^6 2^s / width^2), s = j - 2P - 2:
  about 2 million (width, s) pairs times 255 C, too many for kbit's big-int code in the suite.
  The suite checks, exhaustively, that no host value C * g^(2^j) comes nearer than 1e-9 to a
  rounding boundary, and that kbit's exponential is within 1e-15 of float64's over the whole
  argument range; together they give equal tables everywhere. The direct comparison of every
  (width, s) pair is `python tests/test_new_learners.py --exhaustive` (about 2 minutes).
- ckp's loss table: the host's is kbit.tables' own code (kilobit.models.ckp.loss_table), so the
  bytes agree by construction; checked here is that code against the paper's float formula
  (host loss_q): equal on every golden file and benchmark setting, and elsewhere off by at most
  one unit, only where the float value is within its own rounding of an integer.
"""
import glob
import io
import json
import math
import os
import random
import sys

import numpy as np
import pytest

from conftest import need
from kbit import kernel as kb_kernel, tables
from kbit.assoc import Assoc
from kbit.ckp import CKP
from kbit.rkp import RKP
from kilobit.core.goldenfile import compare
from kilobit.core.paths import REPO
from kilobit.golden import replay_doc
from kilobit.models.ckp.model import (
    NORM_MAX,
    CKPInt,
    loss_q,
    power_table as ckp_host_table,
    quant_loss,
)
from kilobit.models.rkp.model import RKPInt, power_table as rkp_host_table
from kilobit.runtimes.catalog import get

GOLDEN = os.path.join(REPO, "tests", "golden")
ONE = 1 << 128  # kbit.tables' fixed point
KERNELS = ("laplace", "rbf")


def rkp_exponent(kernel, bits, width):
    """e of g = exp(-2^-e): the host's kernel_scale (contract 3.2)."""
    return width + (2 * bits if kernel == "rbf" else bits)


# --- rkp ----------------------------------------------------------------------------------------

def test_rkp_power_table_every_parameter():
    for kernel in KERNELS:
        for bits in range(1, 9):
            for width in range(-16, 17):
                e = rkp_exponent(kernel, bits, width)
                for C in range(1, 256):
                    assert list(kb_kernel.power_table(e, C)) == rkp_host_table(
                        kernel, bits, width, C), (kernel, bits, width, C)
                # RKP.new reaches the same table through its own exponent, and the host's
                # trainer state through the seed
                m = RKP.new(kernel, bits, 1, 3, width, 255, seed=width + 20)
                h = RKPInt(kernel, bits, 1, 3, width, 255, seed=width + 20)
                assert list(m.table) == h.table and m.state == h.rng.state


def test_rkp_constructor_refuses_a_foreign_table():
    own = rkp_host_table("laplace", 4, -2, 255)
    assert list(RKP("laplace", 4, 6, 8, -2, 255, bytes(own)).table) == own
    assert list(RKP("laplace", 4, 6, 8, -2, 255).table) == own  # None: computed
    for table in (own[:-1], own + [1], [own[0] - 1] + own[1:], rkp_host_table("rbf", 4, -2, 255),
                  ()):
        with pytest.raises(ValueError, match="bad parameters: weight table does not match"):
            RKP("laplace", 4, 6, 8, -2, 255, bytes(table))
    with pytest.raises(ValueError, match="bad parameters: weight table does not match"):
        RKP("laplace", 4, 6, 8, -2, 200, bytes(own))  # the table of another C
    with pytest.raises(ValueError, match="bad parameters: weight table not in"):
        RKP("laplace", 4, 6, 8, -2, 255, bytes((5, 9)))  # malformed: the old message stays
    # the REPL line of docs (DESIGN.md): keywords as the host trainer's
    m = RKP.new("laplace", bits=4, dims=6, budget=16, width=-2)
    assert (list(m.table), m.C, m.state) == (own, 255, RKPInt("laplace", 4, 6, 16, -2).rng.state)
    made_up = bytes((200, 100, 50))
    assert RKP("laplace", 4, 6, 8, -2, 255, made_up, any_table=True).table == made_up


def test_a_loaded_file_keeps_its_own_table():
    """The contract lets a file carry any valid table (the host's RKPInt and CKPInt load one):
    the file wins, on the host and the board alike."""
    h = RKPInt("laplace", 4, 2, 8, -2, 255)
    h.table = [250, 120, 9]
    m = RKP.load(h.to_bytes())
    assert list(m.table) == [250, 120, 9] == RKPInt.from_bytes(h.to_bytes())[0].table
    c = CKPInt(6, 2, 120, 100, 255)
    c.table, c.q = [240, 200], [1] * len(c.q)
    m = CKP.load(c.to_bytes())
    assert list(m.table) == [240, 200] and list(m.q) == c.q


# --- ckp: the power table -------------------------------------------------------------------------

def test_ckp_power_table_sweep():
    """kbit against the host's float64 table: every width up to 512 (A <= 0.512, where tables
    are short and start low), then every 127th, for every P, C cycling through 1..255."""
    widths = list(range(1, 513)) + list(range(512, 65536, 127)) + [65535]
    for i, width in enumerate(widths):
        for bits in range(1, 9):
            C = (7 * i + 31 * bits) % 255 + 1
            assert list(tables.power_table(width, bits, C)) == ckp_host_table(
                width / 1000.0, bits, C), (width, bits, C)


def exponent_pairs():
    """Every (width, s) whose x = exp(-10^6 2^s / width^2) can round to a nonzero entry for
    some C <= 255 (x >= 1/510), as float64 arrays of widths and x, one array per s."""
    w = np.arange(1, 65536, dtype=np.float64)
    A2 = (w / 1000.0) * (w / 1000.0)  # the host's A * A
    for s in range(-18, 30):  # j - 2P - 2 for j 0..31, P 1..8
        arg = 2.0 ** s / A2
        keep = arg < math.log(510.0)
        if keep.any():
            yield s, w[keep], np.exp(-arg[keep])


def test_ckp_power_table_rounding_margin_everywhere():
    """Exhaustive over every width, P, j and C: C * g^(2^j) is never within 1e-9 of a
    half-integer, so any computation of g^(2^j) to within 1e-12 rounds as float64 does."""
    C = np.arange(1, 256, dtype=np.float64)
    nearest = 1.0
    for _, _, x in exponent_pairs():
        for lo in range(0, len(x), 8192):
            v = x[lo:lo + 8192, None] * C[None, :]
            nearest = min(nearest, float(np.abs(v - np.floor(v) - 0.5).min()))
    assert nearest > 1e-9, nearest


def test_ckp_exponential_accuracy():
    """kbit.tables' exp(-t) against float64's, over the power table's whole range of t, at
    the fixed-point values its power table feeds it (t = floor(10^6 2^(128+s) / width^2))."""
    rs = random.Random(5)
    worst = 0.0
    for _ in range(4000):
        width, s = rs.randrange(1, 65536), rs.randrange(-18, 30)
        t = (1000000 << (128 + s)) // (width * width) if s >= 0 else \
            (1000000 << 128) // ((width * width) << -s)
        if t >= 7 * ONE:
            continue
        worst = max(worst, abs(tables._exp_neg(t, 128) / ONE - math.exp(-t / ONE)))
    for t in (0, 1, ONE >> 3, ONE >> 3 | 1, ONE, 7 * ONE - 1):
        worst = max(worst, abs(tables._exp_neg(t, 128) / ONE - math.exp(-t / ONE)))
    assert worst < 1e-15, worst


# --- ckp: the loss table ------------------------------------------------------------------------

def float_values(L, dims, width, bits, C):
    """v(B) of contract 6.5 by the paper's float formula (the host's loss_q), unshifted."""
    return [min(int(math.floor(C * loss_q(B, L, dims, width / 1000.0, bits))), NORM_MAX)
            for B in range(1, L // (dims + 1))]


def shifted(vals):
    shift = max(0, max(vals, default=0).bit_length() - 8)
    vals = [v >> shift for v in vals]
    start = 0
    while start < len(vals) and not vals[start]:
        start += 1
    return start + 1, shift, vals[start:]


def golden_and_bench_settings():
    """(L, dims, width, bits, C) of every ckp golden file and of `kilobit bench ckp`."""
    out = set()
    for path in glob.glob(os.path.join(GOLDEN, "ckp-*.json")):
        with open(path) as f:
            p = json.load(f)["params"]
        out.add((p["L"], p["dims"], p["width"], p["bits"], p["C"]))
    from kilobit.bench.ckp import AVR_A, AVR_BITS, AVR_C, AVR_L, BUDGETS, INT_BITS, SETS
    for M, A, _, _ in SETS.values():
        for LM in BUDGETS:
            out.add((LM * M, M, round(A * 1000), INT_BITS, 255))
    out.add((AVR_L, 2, round(AVR_A * 1000), AVR_BITS, AVR_C))
    return sorted(out)


def test_ckp_loss_table_equals_the_float_formula_where_it_is_used():
    for L, dims, width, bits, C in golden_and_bench_settings():
        qs, sh, q = tables.loss_table(L, dims, width, bits, C)
        assert (qs, sh, list(q)) == shifted(float_values(L, dims, width, bits, C)), (
            L, dims, width, bits, C)


def test_ckp_quant_loss_accuracy():
    """l(b) (paper eq. 9) in fixed point against float64 erf/expm1, over the three regimes of
    kbit.tables._phi: small z, the positive series up to z = 64, the asymptote beyond. The
    float is the looser one: erf(a) sqrt(pi) / (2a) - 1 cancels to about a^2 / 3, which costs
    it up to 3e-12 of relative precision just above its series' switch at a = 0.01."""
    rs = random.Random(9)
    cases = [(1, 1, 1, 1), (8, 1, 65535, 65535), (1, 1, 1, 250), (3, 2, 40, 1)]
    for _ in range(1500):
        q = rs.randrange(1, 5000)
        cases.append((rs.randrange(q, 8 * q + 1), q, rs.randrange(1, 2000),
                      int(math.exp(rs.uniform(0, math.log(65535))))))
    for p, q, dims, width in cases:
        want = quant_loss(p / q, dims, width / 1000.0)
        got = tables.quant_loss(p, q, dims, width) / ONE
        assert abs(got - want) <= 1e-11 * want, (p, q, dims, width, got, want)


def test_ckp_loss_table_sweep_differs_from_float_only_at_its_rounding():
    rs = random.Random(3)
    differ = 0
    for _ in range(120):
        bits = rs.randrange(1, 9)
        dims = rs.randrange(1, 80)
        L = rs.randrange(dims + 1, min(0xFFFF, 60 * (dims + 1)))
        width = int(math.exp(rs.uniform(0, math.log(65535))))
        C = rs.randrange(1, 256)
        fl = float_values(L, dims, width, bits, C)
        it = tables.loss_values(L, dims, width, bits, C)
        qs, sh, q = tables.loss_table(L, dims, width, bits, C)
        assert shifted(it) == (qs, sh, list(q))
        for B, (a, b) in enumerate(zip(it, fl), 1):
            if a != b:
                # a loss a hair under 2 (phi^M below float's 2^-53) is 2.0 in float: v = 2C,
                # where the exact value floors to 2C - 1 (checked with 400-bit mpmath on
                # these cases); otherwise only a float value within its rounding of an integer
                differ += 1
                v = C * loss_q(B, L, dims, width / 1000.0, bits)
                assert (b, a) == (2 * C, 2 * C - 1) or (
                    abs(a - b) == 1 and abs(v - round(v)) <= 1e-9 * v), (
                    L, dims, width, bits, C, B, a, b, v)
    assert differ  # this sweep has saturated losses: the case above is exercised


# --- CKP constructor ----------------------------------------------------------------------------

def test_ckp_new_and_constructor():
    m = CKP.new(6, 2, 560, 100, seed=21)
    h = CKPInt(6, 2, 560, 100, 255, seed=21)
    assert (list(m.table), m.qstart, m.qshift, list(m.q), m.state) == (
        h.table, h.qstart, h.qshift, h.q, h.rng.state)
    ok = (m.table, m.qstart, m.qshift, m.q)
    assert CKP(6, 2, 560, 100, 255, *ok).q == m.q
    for bad in ((m.table[:-1],) + ok[1:], (ok[0], ok[1] + 1) + ok[2:],
                ok[:2] + (ok[2] + 1, ok[3]), ok[:3] + (bytes(len(m.q)),)):
        with pytest.raises(ValueError, match="bad parameters: (weight|loss) table does not "
                                             "match"):
            CKP(6, 2, 560, 100, 255, *bad)
    with pytest.raises(ValueError, match="does not match"):
        CKP(6, 2, 560, 101, 255, *ok)  # another width
    assert CKP(6, 2, 560, 101, 255, *ok, any_table=True).table == m.table


# --- new() against the host's golden files --------------------------------------------------------

def golden_empty_learners():
    """Golden files of one binary learner that starts empty: their model_file is what the host
    made from the parameters alone."""
    out = []
    for path in sorted(glob.glob(os.path.join(GOLDEN, "rkp-*.json")) +
                       glob.glob(os.path.join(GOLDEN, "ckp-*.json"))):
        with open(path) as f:
            doc = json.load(f)
        if not set(doc["params"]) & {"pretrain", "norm", "classes"}:
            out.append(doc)
    return out


def test_new_is_the_golden_files_model_byte_for_byte():
    docs = golden_empty_learners()
    assert len([d for d in docs if d["model"] == "ckp"]) >= 8
    assert len([d for d in docs if d["model"] == "rkp"]) >= 16
    kbit_cpython = get("kbit-cpython")
    for doc in docs:
        p = doc["params"]
        if doc["model"] == "rkp":
            m = RKP.new(p["kernel"], p["bits"], p["dims"], p["budget"], p["width"], p["C"],
                        p["seed"])
        else:
            m = CKP.new(p["bits"], p["dims"], p["L"], p["width"], p["C"], p["seed"])
        out = io.BytesIO()
        m.save(out)
        assert out.getvalue().hex() == doc["model_file"], doc["params"]
        # and learning from it gives the host's results, step for step
        assert not compare(dict(doc, model_file=out.getvalue().hex()), "kbit-cpython",
                           replay_doc(dict(doc, model_file=out.getvalue().hex()), kbit_cpython))


# --- Assoc --------------------------------------------------------------------------------------

def test_assoc_approach_by_name():
    for i, name in enumerate(("I-I", "N-I", "N-O")):
        assert Assoc(name, 8, 2, 4, 3, 2).approach == i == Assoc(i, 8, 2, 4, 3, 2).approach
    for bad in ("i-i", "II", "", 1.0, None):
        with pytest.raises(ValueError, match="I-I, N-I, N-O"):
            Assoc(bad, 8, 2, 4, 3, 2)
    with pytest.raises(ValueError, match="approach 3 not in 0..2"):
        Assoc(3, 8, 2, 4, 3, 2)


# --- on real MicroPython, and on a board without float --------------------------------------------

SPOT_SCRIPT = r"""
from kbit.rkp import RKP
from kbit.ckp import CKP
from kbit.assoc import Assoc
for a in RKP_CASES:
    print("R", list(RKP.new(*a).table))
for a in CKP_CASES:
    m = CKP.new(*a)
    print("C", list(m.table), m.qstart, m.qshift, list(m.q))
print("A", Assoc("N-O", 8, 1, 4, 3, 2).approach)
"""
RKP_CASES = [("laplace", 4, 6, 8, -2, 255, 0), ("rbf", 8, 2, 4, 16, 1, 3),
             ("laplace", 1, 2, 2, -16, 200, 1), ("rbf", 3, 3, 5, -4, 97, 2)]
CKP_CASES = [(6, 2, 120, 100, 255, 0), (2, 3, 120, 1, 255, 1), (8, 2, 90, 65535, 17, 2),
             (4, 9, 450, 100, 255, 3)]


def spot_expected():
    rows = ["R %s" % RKPInt(*a).table for a in RKP_CASES]
    for a in CKP_CASES:
        h = CKPInt(*a)
        rows.append("C %s %d %d %s" % (h.table, h.qstart, h.qshift, h.q))
    return rows + ["A 2"]


def spot_script():
    return "RKP_CASES = %r\nCKP_CASES = %r\n%s" % (RKP_CASES, CKP_CASES, SPOT_SCRIPT)


def test_tables_on_micropython(tmp_path):
    from kilobit.runtimes.micropython.kbit_wasm import missing_wasm
    from kilobit.runtimes.micropython.mpwasm import run
    need(missing_wasm())
    script = tmp_path / "spot.py"
    script.write_text(spot_script())
    p = run([str(script)], timeout=300)
    assert p.returncode == 0, p.stdout + p.stderr
    assert p.stdout.split("\n")[:-1] == spot_expected()


def test_tables_on_the_emulated_pico_without_float(tmp_path):
    """The emulated Pico's MicroPython has no float at all (MICROPY_FLOAT_IMPL_NONE)."""
    from kilobit.runtimes.micropython import rp2040_sim
    need(rp2040_sim.missing())
    script = tmp_path / "spot.py"
    script.write_text("try:\n    eval('1.5')\n"
                      "except SyntaxError:  # decimal numbers not supported\n"
                      "    print('no float')\n" + spot_script())
    p = rp2040_sim.run([str(script)], timeout=600)
    assert p.returncode == 0, p.stdout + p.stderr
    assert p.stdout.replace("\r", "").split("\n")[:-1] == ["no float"] + spot_expected()


# --- the exhaustive ckp power-table run (not in the suite: about 2 minutes) ----------------------

def exhaustive_power_tables():
    """kbit's g^(2^j) for every (width, s) against float64's, with the margin of the suite's
    rounding test: equal tables for every width, P and C."""
    worst = 0.0
    n = 0
    for s, w, x in exponent_pairs():
        for width, xh in zip(w.astype(int).tolist(), x.tolist()):
            t = (1000000 << (128 + s)) // (width * width) if s >= 0 else \
                (1000000 << 128) // ((width * width) << -s)
            worst = max(worst, abs(tables._exp_neg(t, 128) / ONE - xh))
            n += 1
    return n, worst


if __name__ == "__main__" and "--exhaustive" in sys.argv:
    n, worst = exhaustive_power_tables()
    print("%d (width, s) pairs, largest |kbit - float64| %.3g (the rounding margin is 1e-9 / 255)"
          % (n, worst))
    sys.exit(0 if worst < 1e-12 else 1)


def test_new_learners_take_the_users_labels():
    """RKP.new / CKP.new(names=...): predict answers the labels, learn takes them, the file
    keeps them (contract 4.1) and kbit.load gives them back; a wrong count or label is refused
    before anything is made."""
    import io

    import kbit
    from kbit.ckp import CKP
    from kbit.rkp import RKP
    u = bytearray((1, 2, 3))
    for make in (lambda **k: RKP.new("laplace", 4, 3, 10, -2, **k),
                 lambda **k: CKP.new(4, 3, 100, 500, **k)):
        for names in (("no", "yes"), ("idle", "walk", "run")):
            m = make(classes=len(names), names=names)
            m.learn(u, names[-1])
            assert m.predict(u) == names[-1]
            f = io.BytesIO()
            m.save(f)
            m2 = kbit.load(f.getvalue())
            assert m2.names == names and m2.predict(u) == names[-1]
        assert make().names is None  # no labels: the ids answer
        for bad in (("a", "b", "c"), ("a", ""), ("a", "b" * 33), ("a", "\t"), ("a", 1)):
            with pytest.raises(ValueError):
                make(names=bad)


def test_new_learners_take_the_raw_readings_range():
    """RKP.new / CKP.new(lo=, hi=): the learner gets contract 1.1's integer quantizer from the
    sensor's range; its file's quantizer on the host makes the same codes of every reading."""
    import io
    from array import array

    import numpy as np

    from kbit.ckp import CKP
    from kbit.rkp import RKP
    from kilobit.models import registry
    g = np.random.default_rng(5)
    rows = g.integers(-32768, 32768, (200, 3))
    rows[:4] = [[-32768] * 3, [32767] * 3, [0, -1, 1], [-20000, 20000, 1000]]
    for m in (RKP.new("laplace", 4, 3, 10, -2, lo=-32768, hi=32767, classes=3),
              CKP.new(5, 3, 100, 500, lo=[-32768, -1000, 0], hi=[32767, 1000, 4095])):
        f = io.BytesIO()
        m.save(f)
        spec = registry.of_file(f.getvalue())
        _, extras = spec.load(f.getvalue())
        want = extras.quant.codes(rows.astype(np.float64))
        got = [list(m.quantize(array("i", [int(v) for v in r]))) for r in rows]
        assert got == want.tolist()
        assert extras.quant.floor == (spec.name == "ckp")
    with pytest.raises(ValueError):
        RKP.new("laplace", 4, 3, 10, -2, lo=0)  # a range needs both ends
    with pytest.raises(ValueError):
        RKP.new("laplace", 4, 3, 10, -2, lo=5, hi=4)  # lo above hi
    with pytest.raises(ValueError):
        RKP.new("laplace", 4, 3, 10, -2, lo=[0, 0], hi=[1, 1])  # 2 bounds for 3 inputs
