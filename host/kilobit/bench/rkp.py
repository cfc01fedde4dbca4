"""`kilobit bench rkp`: the experiments of Djuric & Vucetic (2010), section 3, on kilobit's RKP.

Writes docs/benchmarks/rkp.md with

(a) Tables 3-5: test accuracy of the integer model (`kilobit.models.rkp.RKPInt`) and of the float
    reference (`kilobit.models.rkp.RKPFloat`, the paper's eq. 6 in double precision) at the paper's
    bit lengths and support-vector counts, beside the paper's numbers;
(b) the A sweep of Figures 4-7 (B = 5, C = 255, 70-byte budget): both accuracies and the
    approximation accuracy of eq. 13 in two variants (see `_sweep`);
(c) the Banana acceptance check (4 bits, 62 SVs, A = -6);
(d) the weight error of the log method (Figure 2), ours (rounded division) beside the paper's
    truncating division and its sequential method.

Every run is one online pass over the training split in the split's (seeded) shuffled order;
the integer and the float learner of a run share the split, the order and the generator seed.
The integer learner here is `_LutInt`, `RKPInt` with its weights looked up in a table of
`kilobit.models.rkp.weights` over every possible offset (the same integers, computed once instead of
per step); the float learner *is* `RKPFloat`. A cross-check replays some runs with `RKPInt`
itself and requires the same support vectors and the same test predictions.
"""
import datetime
import math
import os
import platform
import time

import numpy as np

from kilobit import data
from kilobit.bench import write_report
from kilobit.core import options
from kilobit.core.errors import DataError, KilobitError
from kilobit.core.quant import quantize
from kilobit.models.rkp.model import RKPFloat, RKPInt, kernel_scale, mem_bytes, power_table, weights

C = 255
KERNEL = "laplace"
TABLE_A = -6  # the paper's A for its hardware tables (section 3.1)
BUDGET_BYTES = 70
SWEEP_BITS = 5
SWEEP_A = tuple(range(-8, 5))
QUICK_SWEEP_A = (-8, -6, 0)
TABLE_GRID_A = (-8, -6, -4, -2, 0, 2, 4)  # A sensitivity of the Table 3-5 setups
QUICK_TABLE_GRID_A = (TABLE_A,)
DATASETS = ("banana", "checkerboard", "pendigits")
BITS = (2, 4, 6, 8)
# Support vectors of Tables 3-5 (the paper's; 2-D sets fill 70 bytes, Pendigits ~180-190 bytes).
SVS = {"banana": {2: 112, 4: 62, 6: 43, 8: 32},
       "checkerboard": {2: 112, 4: 62, 6: 43, 8: 32},
       "pendigits": {2: 46, 4: 23, 6: 15, 8: 11}}
# Tables 3-5: accuracy [%] (fixed, float) per bit length.
PAPER = {"banana": {2: (67.32, 65.12), 4: (81.08, 81.00), 6: (79.36, 79.60), 8: (78.00, 77.80)},
         "checkerboard": {2: (52.20, 51.20), 4: (72.60, 72.64), 6: (78.20, 78.60),
                          8: (74.04, 73.80)},
         "pendigits": {2: (93.80, 94.20), 4: (92.76, 93.92), 6: (86.44, 86.32),
                       8: (80.72, 81.68)}}
PAPER_TABLE = {"banana": 3, "checkerboard": 4, "pendigits": 5}
# (d): (kernel, A, B) settings for the weight error.
WEIGHT_SETTINGS = (("laplace", -6, 4), ("laplace", -2, 5), ("laplace", 0, 5), ("laplace", 2, 8),
                   ("laplace", 4, 8), ("rbf", -6, 4), ("rbf", -2, 5), ("rbf", 0, 5),
                   ("rbf", 2, 6), ("rbf", 4, 8))
SEQUENTIAL_MAX_K = 1 << 16  # the sequential method is a Python loop: evaluate it up to here


def budget_svs(dims, bits, budget_bytes=BUDGET_BYTES):
    """Support vectors that fit `budget_bytes`: floor(8 * bytes / (M*B + 1))."""
    return (8 * budget_bytes) // (dims * bits + 1)


# ----------------------------------------------------------------------------------------------
# learners

class _LutInt(RKPInt):
    """RKPInt whose weights come from a table of `weights` over every offset: same integers."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        top = (1 << self.bits) - 1
        kmax = self.dims * (top if self.kernel == "laplace" else top * top)
        self.lut = weights(np.arange(kmax + 1), self.table, self.C)

    def _weights(self, k):
        return self.lut[k]


def _copy_support(src, dst):
    dst.codes[:] = src.codes
    dst.labels[:] = src.labels
    dst.count = src.count
    return dst


def _train(model, codes, y):
    for u, t in zip(codes, y):
        model.learn(u, int(t))
    return model


def _scores(model, codes):
    return np.array([model.score(u) for u in codes])


def _predict(model, codes):
    return (_scores(model, codes) > 0).astype(np.int64)


class _Prepared:
    """Per data set and shuffle: the split, scaled on its training part, quantized per B."""

    def __init__(self, name, shuffles):
        self.name = name
        self.splits = []
        for s in range(shuffles):
            split = data.load(name, seed=s)
            _, xtr, xte = data.scale(split)
            self.splits.append((split, xtr, xte))
        self.dims = self.splits[0][0].dims
        self._codes = {}

    def codes(self, s, bits):
        key = (s, bits)
        if key not in self._codes:
            split, xtr, xte = self.splits[s]
            self._codes[key] = (quantize(xtr, bits), split.y_train,
                                quantize(xte, bits), split.y_test)
        return self._codes[key]


def _run(prep, s, bits, budget, width, same_sv=False):
    """Train fixed and float learners on shuffle s; return a dict of test results."""
    ctr, ytr, cte, yte = prep.codes(s, bits)
    M = prep.dims
    fixed = _train(_LutInt(KERNEL, bits, M, budget, width, C, s), ctr, ytr)
    flt = _train(RKPFloat(KERNEL, bits, M, budget, width, C, s), ctr, ytr)
    sf = _scores(fixed, cte)
    pf, pl = (sf > 0).astype(np.int64), _predict(flt, cte)
    out = {"fixed": float(np.mean(pf == yte)), "float": float(np.mean(pl == yte)),
           "agree_indep": float(np.mean(pf == pl)), "model": fixed, "pred_fixed": pf}
    if same_sv:
        exact = _copy_support(fixed, RKPFloat(KERNEL, bits, M, budget, width, C, s))
        se = _scores(exact, cte)
        pe = (se > 0).astype(np.int64)
        differ = pe != pf
        out["agree_same"] = float(np.mean(~differ))
        out["exact_same"] = float(np.mean(pe == yte))
        out["n_differ"] = int(differ.sum())
        out["n_tie"] = int((differ & (sf == 0)).sum())  # integer score 0: all weights rounded
        out["n_underflow"] = int((differ & (se == 0.0)).sum())  # exp underflowed in double
    return out


def _cross_check(prep, s, bits, budget, width, result):
    """Replay a run with RKPInt itself: same support vectors, generator and predictions."""
    ctr, ytr, cte, _ = prep.codes(s, bits)
    ref = _train(RKPInt(KERNEL, bits, prep.dims, budget, width, C, s), ctr, ytr)
    m = result["model"]
    return (ref.memory() == m.memory() and ref.count == m.count
            and ref.rng.state == m.rng.state
            and np.array_equal(_predict(ref, cte), result["pred_fixed"]))


# ----------------------------------------------------------------------------------------------
# weight error (d)

def log_weights(k, table, C, rounding=True):
    """The log method (Algorithm 2) over an array of offsets: rounded division (contract 3.2,
    identical to kilobit.models.rkp.weights) or the paper's truncating division w * W[i] / W[0]."""
    k = np.asarray(k, dtype=np.int64)
    w = np.full(k.shape, C, dtype=np.int64)
    started = np.zeros(k.shape, dtype=bool)
    dead = np.zeros(k.shape, dtype=bool)
    half = C >> 1 if rounding else 0
    top = int(k.max()).bit_length() if k.size else 0
    for b in range(top - 1, -1, -1):
        bit = ((k >> b) & 1).astype(bool)
        first = bit & ~started
        if b >= len(table):
            dead |= first
        else:
            p = table[b]
            more = bit & started
            w = np.where(first, p, np.where(more, (w * p + half) // C, w))
        started |= bit
    return np.where(dead, 0, w)


def sequential_weights(n, w0, w1):
    """The paper's sequential method (eq. 12): w(d) = w(d-1)^2 / w(d-2), truncating."""
    w = [w0, w1]
    for _ in range(2, n):
        a, b = w[-1], w[-2]
        w.append(a * a // b if b else 0)
    return np.array(w[:n], dtype=np.int64)


def weight_error(kernel, A, B, C=C, chunk=1 << 20):
    """Max / mean / share-exact of |w(k) - round(C g^k)| over every k in [0, 2^J)."""
    e = kernel_scale(kernel, B, A)
    table = power_table(kernel, B, A, C)
    J = len(table)
    n = 1 << J  # w(k) == 0 == round(C g^k) for every k >= 2^J
    acc = {"round": [0, 0, 0], "trunc": [0, 0, 0]}  # max, sum, exact count
    for lo in range(0, n, chunk):
        k = np.arange(lo, min(n, lo + chunk), dtype=np.int64)
        exact = np.floor(C * np.exp(-k * 2.0 ** -e) + 0.5).astype(np.int64)
        ours = log_weights(k, table, C, rounding=True)
        if lo == 0:
            assert np.array_equal(ours, weights(k, table, C)), "log_weights != rkp.weights"
        for key, w in (("round", ours), ("trunc", log_weights(k, table, C, rounding=False))):
            a = np.abs(w - exact)
            acc[key][0] = max(acc[key][0], int(a.max()))
            acc[key][1] += int(a.sum())
            acc[key][2] += int((a == 0).sum())
    row = {"kernel": kernel, "A": A, "B": B, "e": e, "J": J, "n": n}
    for key, (mx, total, same) in acc.items():
        row[key] = (mx, total / n, same / n)
    if n <= SEQUENTIAL_MAX_K:
        k = np.arange(n, dtype=np.int64)
        exact = np.floor(C * np.exp(-k * 2.0 ** -e) + 0.5).astype(np.int64)
        a = np.abs(sequential_weights(n, C, table[0] if table else 0) - exact)
        row["seq"] = (int(a.max()), float(a.mean()), float(np.mean(a == 0)))
    return row


# ----------------------------------------------------------------------------------------------
# report

def _ms(values):
    v = 100.0 * np.asarray(values)
    return "%.2f ± %.2f" % (v.mean(), v.std())


def _machine():
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return "%s, %s, %d CPU(s); Python %s, numpy %s" % (
        platform.system() + " " + platform.release(), cpu, os.cpu_count() or 1,
        platform.python_version(), np.__version__)


def run(out="docs/benchmarks/rkp.md", shuffles=10, quick=False, progress=print):
    """Run the benchmark and write the markdown report to `out`; return a summary dict.

    shuffles: independent splits per setting (the paper: 10). quick: a smoke run (at most 2
    shuffles, A = -6 only for the tables, three A values for the sweep, the smaller weight
    settings, fewer cross-checks); its numbers are not the reference ones. progress: called
    with one line of text per finished setting (None for silence).
    """
    t0 = time.time()
    if int(shuffles) != shuffles or shuffles < 1:
        raise KilobitError("bench rkp: shuffles must be a positive integer, got %r" % shuffles)
    command = "kilobit bench rkp"
    if quick:
        command += " --quick"
    if shuffles != 10:
        command += " --shuffles %d" % shuffles
    if quick:
        shuffles = min(shuffles, 2)
    sweep_a = QUICK_SWEEP_A if quick else SWEEP_A
    grid_a = QUICK_TABLE_GRID_A if quick else TABLE_GRID_A
    progress = progress or (lambda *a: None)
    preps, missing = {}, {}
    for name in DATASETS:
        try:
            preps[name] = _Prepared(name, shuffles)
        except DataError as e:
            missing[name] = str(e)
            progress("bench rkp: %s skipped: %s" % (name, e))

    checks = []  # (what, ok)
    # (a) tables
    tables, grids = {}, {}
    for name, prep in preps.items():
        rows = []
        for bits in BITS:
            T = SVS[name][bits]
            by_a = {}
            for A in grid_a:
                by_a[A] = [_run(prep, s, bits, T, A) for s in range(shuffles)]
            res = by_a[TABLE_A]
            if not quick or bits == 4:
                checks.append(("%s B=%d T=%d A=%d shuffle 0" % (name, bits, T, TABLE_A),
                               _cross_check(prep, 0, bits, T, TABLE_A, res[0])))
            rows.append((bits, T, res))
            grids[(name, bits)] = by_a
            progress("bench rkp: table %s B=%d T=%d A=%d: fixed %s, float %s"
                     % (name, bits, T, TABLE_A, _ms([r["fixed"] for r in res]),
                        _ms([r["float"] for r in res])))
        tables[name] = rows

    # (b) sweep
    sweep = {}
    for name, prep in preps.items():
        T = budget_svs(prep.dims, SWEEP_BITS)
        rows = []
        for A in sweep_a:
            res = [_run(prep, s, SWEEP_BITS, T, A, same_sv=True) for s in range(shuffles)]
            if A in ((-8,) if quick else (-8, 0, 4)):
                checks.append(("%s B=%d T=%d A=%d shuffle 0" % (name, SWEEP_BITS, T, A),
                               _cross_check(prep, 0, SWEEP_BITS, T, A, res[0])))
            rows.append((A, res))
            progress("bench rkp: sweep %s A=%+d: approx same-SV %.2f%%, independent %.2f%%"
                     % (name, A, 100 * np.mean([r["agree_same"] for r in res]),
                        100 * np.mean([r["agree_indep"] for r in res])))
        sweep[name] = (T, rows)

    # (d) weight error
    werr = [weight_error(*w) for w in WEIGHT_SETTINGS
            if not quick or kernel_scale(w[0], w[2], w[1]) <= 12]
    progress("bench rkp: weight error done")

    summary = _write(out, command, shuffles, quick, tables, grids, grid_a, sweep, werr,
                     checks, missing, time.time() - t0)
    progress("bench rkp: wrote %s in %.0f s" % (out, time.time() - t0))
    return summary


def _write(out, command, shuffles, quick, tables, grids, grid_a, sweep, werr, checks,
           missing, seconds):
    L = []
    add = L.append
    add("# Random Kernel Perceptron: the paper's experiments on kilobit's references")
    add("")
    add("Generated by `%s` (host/kilobit/bench/rkp.py, run from the repository root); do not "
        "edit by hand." % command)
    add("")
    add("- date: %s" % datetime.datetime.now().strftime("%Y-%m-%d %H:%M"))
    add("- machine: %s" % _machine())
    add("- runtime: %.0f s; %d shuffles%s" % (seconds, shuffles,
                                             " (QUICK smoke run: fewer shuffles and A values, "
                                             "not the reference numbers)" if quick else ""))
    add("- paper: N. Djuric, S. Vucetic, *Random Kernel Perceptron on ATTiny2313 "
        "Microcontroller*, SensorKDD 2010, section 3")
    add("")
    add("Protocol. Shuffle *s* (s = 0..%d) draws the split with `kilobit.data.load(name, seed=s)` "
        "(Banana 4800/500, Checkerboard 3500/500, Pendigits 2998/500, as the paper's Table 2), "
        "fits the min-max scaler on the training part, quantizes to B bits (eq. 5) and trains "
        "each learner in ONE online pass over the training part in that shuffled order, with "
        "generator seed *s* for random removal. *fixed* is the integer reference (contract, "
        "`RKPInt`: log-method weights, rounded division, C = %d); *float* is `RKPFloat`, the "
        "paper's eq. 6 with exact `exp` in double precision on the same codes. Kernel: Laplace "
        "(Manhattan distance of codes), as in the paper. Accuracies are mean ± std over "
        "shuffles, in %%." % (shuffles - 1, C))
    add("")
    for name, why in missing.items():
        add("**%s skipped**: %s" % (name, why))
        add("")

    summary = {"checks": checks}
    verdicts = []  # (what, verdict) for the summary at the top
    at_summary = len(L)
    # (a)
    add("## (a) Tables 3-5: fixed vs float at the paper's bit lengths")
    add("")
    add("A = %d (the paper's setting for its hardware tables), C = %d. *SVs* are the paper's "
        "support-vector counts; *memory* is the bit-packed support-vector memory of the "
        "contract (`kilobit.models.rkp.mem_bytes`): the 2-D sets fill the 70-byte budget of the "
        "ATtiny2313, Pendigits uses the paper's counts for a 256-byte ATtiny48." % (TABLE_A, C))
    add("")
    for name, rows in tables.items():
        add("### %s (paper Table %d)" % (name.capitalize(), PAPER_TABLE[name]))
        add("")
        add("| B | SVs | memory [B] | fixed [%] | float [%] | fixed - float | "
            "paper fixed | paper float |")
        add("|---|---|---|---|---|---|---|---|")
        for bits, T, res in rows:
            fx = np.array([r["fixed"] for r in res])
            fl = np.array([r["float"] for r in res])
            pf, pl = PAPER[name][bits]
            add("| %d | %d | %d | %s | %s | %+.2f | %.2f | %.2f |"
                % (bits, T, mem_bytes(T, data_dims(name), bits), _ms(fx), _ms(fl),
                   100 * (fx.mean() - fl.mean()), pf, pl))
        add("")
        dfx = np.mean([100 * np.mean([r["fixed"] for r in res]) - PAPER[name][b][0]
                       for b, _, res in rows])
        dfl = np.mean([100 * np.mean([r["float"] for r in res]) - PAPER[name][b][1]
                       for b, _, res in rows])
        add("Ours minus the paper, averaged over the four bit lengths: fixed %+.2f, float %+.2f "
            "points." % (dfx, dfl))
        add("")

    add("### Which A? Sensitivity of the Table 3-5 setups")
    add("")
    add("Mean test accuracy [%%] over the same %d shuffles, fixed / float, for A in %s "
        "(the tables above use A = %d). A is chosen here on the test splits, so the best "
        "column is optimistic: this shows how much A matters, it is not a tuned result. With "
        "per-shuffle standard deviations of 2-8 points, a mean over %d shuffles is uncertain "
        "by about %.1f points or more, so neighbouring A values are often not "
        "distinguishable."
        % (shuffles, ", ".join("%+d" % a for a in grid_a), TABLE_A, shuffles,
           4.0 / math.sqrt(shuffles)))
    add("")
    add("| data set | B | SVs | " + " | ".join("A = %+d" % a for a in grid_a)
        + " | best A (fixed) |")
    add("|---|---|---|" + "---|" * (len(grid_a) + 1))
    best_a = {}
    for name, rows in tables.items():
        for bits, T, _ in rows:
            by_a = grids[(name, bits)]
            fx = {a: 100 * np.mean([r["fixed"] for r in by_a[a]]) for a in grid_a}
            fl = {a: 100 * np.mean([r["float"] for r in by_a[a]]) for a in grid_a}
            top = max(grid_a, key=lambda a: (fx[a], -abs(a - TABLE_A)))
            for a in grid_a:
                best_a.setdefault(name, {}).setdefault(a, []).append(fx[a])
            add("| %s | %d | %d | " % (name, bits, T)
                + " | ".join(("**%.1f** / %.1f" if a == top else "%.1f / %.1f") % (fx[a], fl[a])
                             for a in grid_a) + " | %+d |" % top)
    add("")
    for name, per_a in best_a.items():
        mean = {a: np.mean(v) for a, v in per_a.items()}
        top = max(mean, key=lambda a: (mean[a], -abs(a - TABLE_A)))
        add("- %s: best A averaged over the four bit lengths is %+d (fixed %.1f%%; A = %d: "
            "%.1f%%)." % (name, top, mean[top], TABLE_A, mean[TABLE_A]))
    summary["best_a"] = {n: max(v, key=lambda a: np.mean(v[a])) for n, v in best_a.items()}
    if len(grid_a) > 1 and best_a:
        gain = max(max(np.mean(v) for v in per_a.values()) - np.mean(per_a[TABLE_A])
                   for per_a in best_a.values())
        noise = 4.0 / math.sqrt(shuffles)
        add("")
        add("The best A gains at most %.1f points over A = %d (averaged over bit lengths): %s"
            % (gain, TABLE_A, "within the uncertainty, so A = %d, the paper's choice, suits all "
               "three data sets and is what the tables use." % TABLE_A if gain <= noise else
               "more than the ~%.1f-point uncertainty; the tables still use A = %d to match "
               "the paper." % (noise, TABLE_A)))
    add("")

    # (b)
    add("## (b) A sweep (Figures 4-7): B = %d, C = %d, %d-byte budget"
        % (SWEEP_BITS, C, BUDGET_BYTES))
    add("")
    add("Support vectors that fit: floor(%d / (M*B + 1)). Approximation accuracy (eq. 13) is "
        "the fraction of the 500 test points on which two predictors agree, in two variants:"
        % (8 * BUDGET_BYTES))
    add("")
    add("- **same SVs**: train the integer model; then score the test set with *its* support "
        "set twice, with the integer weights (eq. 10) and with exact `exp` (eq. 6, double "
        "precision, `RKPFloat.score`). Differences come only from the weight approximation "
        "(and from double-precision underflow of eq. 6). *disagreements* counts, over all "
        "shuffles, the test points where the two scorings differ, and of those how many have "
        "an integer score of exactly 0 (*ties*: every ring of support vectors cancelled, so "
        "even the tie-break of contract 3.3, which lets the next ring decide when the nearest "
        "one cancels, ends at 0 and predicts 0) and how many an exact score of 0.0 (*underflow*: "
        "every `exp` underflowed in double precision). *exact acc* is the accuracy of the "
        "exact-exp scoring of those support vectors.")
    add("- **independent**: the fixed learner and the float learner each trained on the same "
        "sequence (same seed); agreement of their test predictions. One different mistake "
        "early in training gives the two models different support sets, so this measures "
        "training divergence as well as approximation.")
    add("")
    must = {}
    for name, (T, rows) in sweep.items():
        add("### %s: M = %d, %d SVs (%d bytes)"
            % (name.capitalize(), data_dims(name), T, mem_bytes(T, data_dims(name), SWEEP_BITS)))
        add("")
        add("| A | fixed acc [%] | float acc [%] | approx, same SVs [%] (min) | "
            "disagreements: ties / underflow | exact acc, same SVs [%] | "
            "approx, independent [%] (min) |")
        add("|---|---|---|---|---|---|---|")
        for A, res in rows:
            same = 100 * np.array([r["agree_same"] for r in res])
            ind = 100 * np.array([r["agree_indep"] for r in res])
            add("| %+d | %s | %s | %.2f (%.1f) | %d: %d / %d | %s | %.2f (%.1f) |"
                % (A, _ms([r["fixed"] for r in res]), _ms([r["float"] for r in res]),
                   same.mean(), same.min(), sum(r["n_differ"] for r in res),
                   sum(r["n_tie"] for r in res), sum(r["n_underflow"] for r in res),
                   _ms([r["exact_same"] for r in res]), ind.mean(), ind.min()))
            if name == "banana" and -8 <= A <= 0:
                must[A] = (same.mean(), ind.mean(), sum(r["n_differ"] for r in res),
                           sum(r["n_tie"] for r in res))
        add("")
        summary.setdefault("sweep", {})[name] = [
            (A, np.mean([r["agree_same"] for r in res]), np.mean([r["agree_indep"] for r in res]),
             np.mean([r["fixed"] for r in res]), np.mean([r["float"] for r in res]))
            for A, res in rows]

    add("### Must-show: Banana approximation accuracy >= 99% for every A in [-8, 0] (B = 5)")
    add("")
    if must:
        ok_same = all(v[0] >= 99.0 for v in must.values())
        ok_ind = all(v[1] >= 99.0 for v in must.values())
        add("Mean over shuffles, A = %s:" % ", ".join("%+d" % a for a in sorted(must)))
        add("")
        add("- same SVs: min over A %.2f%% -> **%s**"
            % (min(v[0] for v in must.values()), "PASS" if ok_same else "FAIL"))
        add("- independent (informative, not the must-show: it measures training divergence): "
            "min over A %.2f%%" % min(v[1] for v in must.values()))
        add("")
        add("| A | power table P (C = %d, B = %d) | approx, same SVs [%%] | disagreements | "
            "of which integer ties |" % (C, SWEEP_BITS))
        add("|---|---|---|---|---|")
        for A in sorted(must):
            v = must[A]
            add("| %+d | %s | %.2f | %d | %d |"
                % (A, power_table(KERNEL, SWEEP_BITS, A, C) or "[] (J = 0)", v[0], v[2], v[3]))
        add("")
        low = [A for A in sorted(must) if must[A][0] < 99.0]
        if low:
            ties = sum(must[A][3] for A in low)
            total = sum(must[A][2] for A in low)
            under = sum(r["n_underflow"] for A, res in sweep["banana"][1] if A in low
                        for r in res)
            cut, merr = [], []
            for A in low:
                g = math.exp(-2.0 ** -kernel_scale(KERNEL, SWEEP_BITS, A))
                k0 = next(k for k in range(1, 1 << 16) if C * g ** k < 0.5)
                merr.append(weight_error(KERNEL, A, SWEEP_BITS)["round"][0])
                cut.append("A = %+d: round(C g^k) = 0 for every k >= %d, log-method max error "
                           "%d" % (A, k0, merr[-1]))
            add("Below 99%% (A = %s): %d of the %d disagreements are integer ties (s = 0), "
                "%d are double-precision underflow. Here g = exp(-1/2^(A+B)) is so small that "
                "C g^k rounds to 0 one or two steps past the nearest distance (%s). The "
                "integer model (eq. 9-10) then keeps only the support vectors at the nearest "
                "distance or next to it; when their labels cancel it scores exactly 0 and "
                "predicts 0, while exact `exp` still breaks the tie with the farther ones. So "
                "the shortfall comes from the rounding of eq. 9 at C = %d%s; a larger C, or "
                "breaking integer ties by the next distance, would be needed to reach 99%% "
                "there."
                % (", ".join("%+d" % a for a in low), ties, total, under, "; ".join(cut), C,
                   ", not from the log method (exact weights here)" if max(merr) == 0 else ""))
        summary["must_show"] = (ok_same, ok_ind)
        verdicts.append(("(b) Banana approximation accuracy >= 99%% for A in [-8, 0], same "
                         "SVs (min %.2f%%)" % min(v[0] for v in must.values()),
                         "PASS" if ok_same else "FAIL"))
        verdicts.append(("(b) the same, trained independently (min %.2f%%)"
                         % min(v[1] for v in must.values()), "informative"))
    else:
        add("**NOT RUN** (Banana unavailable)")
    add("")

    # (c)
    add("## (c) Acceptance: Banana, 4 bits, 62 SVs, A = -6")
    add("")
    if "banana" in tables:
        res = [r for b, T, r in tables["banana"] if b == 4][0]
        fx = 100 * np.mean([r["fixed"] for r in res])
        fl = 100 * np.mean([r["float"] for r in res])
        ok1, ok2 = abs(fx - fl) <= 1.0, fx >= 78.0
        verdict = "PASS" if ok1 and ok2 else "FAIL"
        summary["banana_4bit"] = (fx, fl, verdict)
        verdicts.append(("(c) Banana B=4, 62 SVs, A=-6: fixed %.2f%% vs float %.2f%% "
                         "(need >= 78%% and within 1 point)" % (fx, fl), verdict))
        add("Mean fixed test accuracy %.2f%% vs float %.2f%% over %d shuffles "
            "(memory %d bytes)." % (fx, fl, shuffles, mem_bytes(62, 2, 4)))
        add("")
        add("- fixed within 1 point of float: %s (|difference| = %.2f)"
            % ("yes" if ok1 else "NO", abs(fx - fl)))
        add("- fixed >= 78%%: %s" % ("yes" if ok2 else "NO"))
        add("")
        add("**Result: %s**" % verdict)
    else:
        add("**Result: NOT RUN** (Banana unavailable)")
    add("")

    # (d)
    add("## (d) Weight error of the log method (Figure 2)")
    add("")
    add("|w(k) - round(C g^k)| over every offset k in [0, 2^J), where J is the length of the "
        "power table (P[j] = round(C g^(2^j)), first zero excluded): beyond 2^J both are 0. "
        "*ours* is the contract's log method with rounded division `(w*P[b] + C//2) // C`; "
        "*paper log* is Algorithm 2 as printed, truncating `w*W[i] / W[0]`; *paper sequential* "
        "is eq. 12, `w(d) = w(d-1)^2 / w(d-2)` truncating, evaluated for 2^J <= %d. Cells: "
        "max / mean / share exact. C = %d; g = exp(-1/2^e), e = A+B (laplace) or A+2B (rbf)."
        % (SEQUENTIAL_MAX_K, C))
    add("")
    add("| kernel | A | B | e | J | offsets | ours (rounded) | paper log (truncated) | "
        "paper sequential |")
    add("|---|---|---|---|---|---|---|---|---|")
    fmt = lambda t: "%d / %.3f / %.1f%%" % (t[0], t[1], 100 * t[2])  # noqa: E731
    for r in werr:
        add("| %s | %+d | %d | %d | %d | %d | %s | %s | %s |"
            % (r["kernel"], r["A"], r["B"], r["e"], r["J"], r["n"], fmt(r["round"]),
               fmt(r["trunc"]), fmt(r["seq"]) if "seq" in r else "-"))
    add("")
    better = all(r["round"][1] <= r["trunc"][1] for r in werr)
    add("Rounded division has a mean error no larger than truncation in every setting: %s."
        % ("yes" if better else "NO"))
    verdicts.append(("(d) log-method weights: max |error| %d with rounded division, %d with "
                     "the paper's truncation" % (max(r["round"][0] for r in werr),
                                                 max(r["trunc"][0] for r in werr)),
                     "PASS" if better else "FAIL"))
    add("")
    summary["weights"] = werr

    add("## Cross-check")
    add("")
    add("The bench's integer learner (`_LutInt`: `RKPInt` with `weights` tabulated once) was "
        "replayed against `kilobit.models.rkp.RKPInt` itself on these runs; each must end with the "
        "same support-vector memory, count and generator state and make the same test "
        "predictions:")
    add("")
    for what, ok in checks:
        add("- %s: %s" % (what, "identical" if ok else "**DIFFERENT**"))
    add("")
    verdicts.append(("bench learner identical to RKPInt on %d replayed runs" % len(checks),
                     "PASS" if all(ok for _, ok in checks) else "FAIL"))
    head = ["## Summary", ""] + ["- %s: **%s**" % (w, v) for w, v in verdicts] + [""]
    L[at_summary:at_summary] = head
    write_report(out, "\n".join(L))
    summary["seconds"] = seconds
    return summary


def data_dims(name):
    return {"banana": 2, "checkerboard": 2, "pendigits": 16}[name]


# ---- `kilobit bench rkp` (kilobit.cli finds every bench module by these three) ----
HELP = "the RKP paper's experiments (Tables 3-5, Figures 2-4)"


def add_args(b):
    b.add_argument("-o", "--output", default="docs/benchmarks/rkp.md")
    b.add_argument("--shuffles", type=options.integer(1, options.REPS_MAX), default=10,
                   help="shuffles of each data set (split seeds 0..N-1) each figure is the "
                        "mean of")
    b.add_argument("--quick", action="store_true", help="a smoke run: fewer shuffles and A values")


def main(a):
    run(out=a.output, shuffles=a.shuffles, quick=a.quick)
    print("wrote %s" % a.output)
    return 0
