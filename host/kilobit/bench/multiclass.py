"""`kilobit bench multiclass`: the online learners on many classes at equal bytes (issue 28
item 4), written to docs/benchmarks/multiclass.md.

For pendigits-10 and letter-26, the binary associative memory (assoc, class-incremental by
design) at k~ anchors per class sets a byte budget: its learnt memory. RKP and CKP then get the
same bytes of support-vector memory, split over their K one-vs-rest learners (contract 3.6,
6.8): RKP the most support vectors T each whose K memories fit, CKP L = 8 floor(bytes / K)
bits each. Every model is the integer one the devices run, trained by one online pass over the
training split (assoc in its trainer's seeded order, RKP and CKP in the split's order, as
`kilobit train` does), and tested on the test split. The kernel widths are fixed per data set
(WIDTHS), chosen once from a few values on seed 0's split; no budget or seed is tuned.
"""
import time

import numpy as np

from kilobit import data
from kilobit.bench import run_lines, write_report
from kilobit.core.errors import DataError

HELP = "RKP and CKP one-vs-rest beside assoc at equal bytes (pendigits-10, letter-26)"
SETS = ("pendigits-10", "letter-26")
KT = (2, 5, 10)  # assoc's anchors per class: the byte budgets
QUICK_KT = (2,)
QUICK_TRAIN = 1500
RKP_BITS = 4
CKP_BITS = 4
# (rkp width A, ckp A): the best of a few tried on seed 0's split (rkp -5 .. 1, ckp 0.1 .. 0.8)
WIDTHS = {"pendigits-10": (-1, 0.6), "letter-26": (-1, 0.4)}
SHAPES = {"pendigits-10": (10, 16), "letter-26": (26, 16)}  # (K, M) of the Uno fit table


def uno_rows(progress):
    """(name, K, kind, budget, RAM, stack reserve, budget with checkpoints) of the largest
    one-vs-rest RKP (T a class) and CKP (L a class) the Uno's firmware holds; [] without avr-gcc
    and simavr."""
    from kilobit.runtimes.avr import kb_sim, uno_classes
    if kb_sim.missing():
        return []
    kb_sim.build_sim()
    rows = []
    for name, (K, M) in SHAPES.items():
        for kind, bits in (("rkp", RKP_BITS), ("ckp", CKP_BITS)):
            f = uno_classes.largest(kind, K, M, bits)
            rows.append((name, K, kind, f["budget"], f["ram"], f["stack_reserve"],
                         f["checkpoint_budget"]))
            progress("bench multiclass: uno %s %s: %s" % (name, kind, f))
    return rows


def assoc_run(sp, kt, seed):
    """(memory bytes, test accuracy) of assoc I-I, P = 1, 8-bit values, k~ = kt, as its
    trainer makes it (kilobit.models.assoc.commands.train)."""
    from kilobit.core.quant import fit_inputs
    from kilobit.models.assoc.model import AssocInt, to_int8

    K = int(max(sp.y_train.max(), sp.y_test.max())) + 1
    m = AssocInt("I-I", 8, 1, sp.X_train.shape[1], K, kt, 1, seed=seed)
    sc = fit_inputs(sp.X_train, 8)
    utr, ute = to_int8(sc.transform(sp.X_train), 8), to_int8(sc.transform(sp.X_test), 8)
    for i in np.random.default_rng(seed).permutation(len(utr)):
        m.learn(utr[i], int(sp.y_train[i]))
    pred, _ = m.predict_many(ute)
    return len(m.memory()), float(np.mean(pred == sp.y_test))


def rkp_run(sp, nbytes, width, seed):
    """(T, memory bytes, test accuracy) of one-vs-rest RKP within nbytes of memory."""
    from kilobit.models.rkp.model import RandomKernelPerceptron, mem_bytes

    K, M = int(max(sp.y_train.max(), sp.y_test.max())) + 1, sp.X_train.shape[1]
    T = nbytes * 8 // (K * (M * RKP_BITS + 1))
    while T > 1 and K * mem_bytes(T, M, RKP_BITS) > nbytes:
        T -= 1
    _, xtr, xte = data.scale(sp, RKP_BITS)
    est = RandomKernelPerceptron("laplace", RKP_BITS, T, width, seed=seed, classes=K)
    est.fit(xtr, sp.y_train)
    return T, K * mem_bytes(T, M, RKP_BITS), est.score(xte, sp.y_test)


def ckp_run(sp, nbytes, A, seed):
    """(L, memory bytes, mean support vectors a learner, test accuracy) of one-vs-rest CKP
    within nbytes of memory."""
    from kilobit.models import ovr
    from kilobit.models.ckp.model import L_MAX, CompressedKernelPerceptron, mem_bytes

    K = int(max(sp.y_train.max(), sp.y_test.max())) + 1
    L = min(nbytes // K * 8, L_MAX)  # whole bytes a learner: K ceil(L/8) stays within nbytes
    _, xtr, xte = data.scale(sp, CKP_BITS, floor=True)
    est = CompressedKernelPerceptron(L=L, A=A, bits=CKP_BITS, seed=seed, classes=K)
    est.fit(xtr, sp.y_train)
    svs = np.mean([m.count for m in ovr.learners_of(est.model_)])
    return L, K * mem_bytes(L), svs, est.score(xte, sp.y_test)


def run(out="docs/benchmarks/multiclass.md", quick=False, seed=0, progress=print):
    t0 = time.time()
    progress = progress or (lambda *a: None)
    rows, missing = [], {}
    for name in SETS:
        try:
            sp = data.load(name, seed=seed, binary=False)
        except DataError as e:
            missing[name] = str(e)
            progress("bench multiclass: %s skipped: %s" % (name, e))
            continue
        if quick:
            sp = sp._replace(X_train=sp.X_train[:QUICK_TRAIN], y_train=sp.y_train[:QUICK_TRAIN])
        wr, wc = WIDTHS[name]
        for kt in (QUICK_KT if quick else KT):
            nb, acc_a = assoc_run(sp, kt, seed)
            T, nb_r, acc_r = rkp_run(sp, nb, wr, seed)
            L, nb_c, svs, acc_c = ckp_run(sp, nb, wc, seed)
            rows.append((name, kt, nb, acc_a, T, nb_r, acc_r, L, nb_c, svs, acc_c))
            progress("bench multiclass: %s k~=%d %d B: assoc %.4f, rkp %.4f, ckp %.4f"
                     % (name, kt, nb, acc_a, acc_r, acc_c))
    fit = uno_rows(progress)
    text = report(rows, missing, quick, seed, time.time() - t0, fit)
    write_report(out, text)
    return rows


def _pct(v, best):
    """An accuracy cell of the table, bold where it is its row's best."""
    return ("**%.2f%%**" if v == best else "%.2f%%") % (100 * v)


def report(rows, missing, quick, seed, seconds, fit=()):
    cmd = "kilobit bench multiclass" + (" --quick" if quick else "")
    out = ["# Several classes online at equal bytes: RKP and CKP one-vs-rest beside assoc", "",
           "Written by `%s`%s." % (cmd, " (a smoke run: %d training rows, one budget; not "
                                   "the reference numbers)" % QUICK_TRAIN if quick else ""),
           ""] + run_lines(seconds)
    out += ["Issue 28 item 4: RKP and CKP learn K >= 2 classes online, one-vs-rest (K binary "
            "learners sharing the parameters and tables, learner k learning class k against "
            "the rest; docs/contract.md 3.6, 6.8). assoc (I-I, P = 1, 8-bit values) at k~ "
            "anchors per class sets each row's byte budget, its learnt memory; RKP (laplace, "
            "B = %d) and CKP (P = %d) get the same bytes of support-vector memory, split over "
            "the K learners. One online pass over the training split, integer models, test "
            "split accuracy; split seed %d. Kernel widths fixed per data set: %s." % (
                RKP_BITS, CKP_BITS, seed, "; ".join(
                    "%s RKP A = %d, CKP A = %g" % (n, w[0], w[1]) for n, w in WIDTHS.items())),
            "", "| data | K | assoc k~ | bytes | assoc | RKP T (bytes) | RKP | CKP L bits (bytes, "
            "SVs a learner) | CKP |", "|---|---|---|---|---|---|---|---|---|"]
    for name, kt, nb, aa, T, nbr, ar, L, nbc, svs, ac in rows:
        K = {"pendigits-10": 10, "letter-26": 26}.get(name, "?")
        best = max(aa, ar, ac)
        out.append("| %s | %s | %d | %d | %s | %d (%d) | %s | %d (%d, %.1f) | %s |"
                   % (name, K, kt, nb, _pct(aa, best), T, nbr, _pct(ar, best), L, nbc, svs,
                      _pct(ac, best)))
    for name, why in missing.items():
        out.append("| %s | - | - | - | not run: %s | | | | |" % (name, why))
    out += ["", "Bytes are the learnt state a board keeps in RAM (assoc's memory; the K "
            "support-vector memories), not the model file (parameters, tables, trailer).", ""]
    out += uno_report(fit, rows)
    return "\n".join(out) + "\n"


def uno_report(fit, rows=()):
    out = ["## On the Uno", ""]
    if not fit:
        return out + ["Not measured: avr-gcc or simavr missing.", ""]
    out += ["The Uno's learner firmwares (firmware_c/avr/rkp_stream.c, ckp_stream.c with "
            "kb_ovr_fw.h) keep the K learners' states and memories in its 2 KB of RAM. The "
            "largest budget a class that fits, found by building the firmware: static RAM "
            "(the linker's) plus the stack reserve (the binary firmware's 64 B, measured, and "
            "16 B for the K-learner loop: 69 B the most measured over the multi-class golden "
            "files) within 2,048 B; with EEPROM checkpoints (every learning step), two copies "
            "of the state within the 1 KB EEPROM. RKP laplace with %d-bit codes, CKP with "
            "%d-bit codes, 16 codes an example. A model past these is refused by "
            "`kilobit fit`/the build (`does not fit uno: static RAM ...`)." % (
                RKP_BITS, CKP_BITS), "",
            "| model | data (classes) | largest budget a class | static RAM | stack reserve | "
            "largest with checkpoints |", "|---|---|---|---|---|---|"]
    unit = {"rkp": "T = %d support vectors", "ckp": "L = %d bits"}
    for name, K, kind, budget, ram, reserve, ckpt in fit:
        out.append("| %s | %s (K = %d) | %s | %s | %s | %s |" % (
            kind.upper(), name, K, unit[kind] % budget if budget else "none",
            "%d B" % ram if ram else "-", "%d B" % reserve if reserve else "-",
            unit[kind] % ckpt if ckpt else "none"))
    top = {(name, kind): budget for name, _, kind, budget, _, _, _ in fit}
    runs = ["%s k~=%d %s" % (name, kt, kind.upper())
            for name, kt, _, _, T, _, _, L, _, _, _ in rows
            for kind, b in (("rkp", T), ("ckp", L)) if b <= top.get((name, kind), 0)]
    if rows:
        out += ["", "Of the accuracy rows above, these run on the Uno: %s."
                % (", ".join(runs) or "none")]
    return out + [""]


def add_args(b):
    b.add_argument("-o", "--output", default="docs/benchmarks/multiclass.md")
    b.add_argument("--quick", action="store_true",
                   help="a smoke run: %d training rows, one budget" % QUICK_TRAIN)


def main(a):
    run(out=a.output, quick=a.quick)
    print("wrote %s" % a.output)
    return 0
