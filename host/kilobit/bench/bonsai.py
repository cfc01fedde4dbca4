"""`kilobit bench bonsai`: Bonsai (Kumar, Goyal & Varma, ICML 2017) trained on the host,
quantized to int16 and int8, and run on the simulated Uno; written to docs/benchmarks/bonsai.md.

For each data set (SETS): one float model is trained (kilobit.models.bonsai.Bonsai, seed 0, the byte
budget split between Z and Theta at int8), then quantized to int16 and int8 with power-of-two
scales chosen on the training codes; int16 is the same float model stored at 16 bits (twice
the matrix bytes). Reported:

- accuracy on the test split of the float model (on the device's input codes, with the device's
  tanh approximation and hard paths) and of the int16 and int8 integer models
  (kilobit.models.bonsai.BonsaiInt, the contract the device follows bit for bit);
- bytes on the device: the model file's payload without its host-only scaler trailer;
- training time: wall clock of the three phases (start, IHT, retraining), this machine;
- Uno cycles per prediction (kilobit.bench.uno): the int8 model built into
  firmware_c/avr/predict_stream.c, every test input streamed over the simulated UART (update
  frames of 16 codes, then a predict frame); cycles are those inside the update and predict
  handlers (markers 5-6 and 3-4: the projection, the tree, the scores), UART excluded, summed per
  input, mean and maximum over the whole test split; every reply must equal the host integer
  reference's fields (P, leaf, scores, class); cycles per stored non-zero weight (Z and the
  tree's theta, W, V);
- RAM: static (.data + .bss of the whole firmware, UART buffers included) plus the stack
  high-water mark the simulator measured over the run.

The paper's BonsaiOpt on an Uno (Table 5) takes 2.93 ms on USPS-2 (256 features, the setting of
the mnist16-2 row: 16 x 16 MNIST, even vs odd). Issue 22's targets: the mnist16-2 1 KB and the
digits-binary models at most 0.8 ms on average, no row above 25 cycles per stored weight.
"""
import time

import numpy as np

from kilobit import data
from kilobit.bench import must_show_lines, run_lines, uno, write_report
from kilobit.models.bonsai.model import Bonsai

CLOCK_HZ = uno.CLOCK_HZ
# key, label, data set, depth, projection, budget in bytes on the device (int8), epochs.
# The 256-feature model of the Uno target is the 1 KB one (the paper's BonsaiOpt models are
# 0.30-0.50 KB); the 2 KB one is listed beside it.
SETS = (
    ("digits", "digits-binary", "digits", 3, 10, 2048, (30, 60, 30)),
    ("mnist-2", "MNIST-2", "mnist-2", 3, 10, 2048, (30, 60, 30)),
    ("pendigits-10", "pendigits-10", "pendigits-10", 3, 10, 2048, (10, 20, 10)),
    ("letter-26", "letter-26", "letter-26", 3, 16, 8192, (5, 10, 5)),
    ("mnist16-2", "mnist16-2 (256 features, 1 KB)", "mnist16-2", 3, 10, 1024, (30, 60, 30)),
    ("mnist16-2-2k", "mnist16-2 (256 features, 2 KB)", "mnist16-2", 3, 10, 2048,
     (30, 60, 30)),
)
QUICK_EPOCHS = (1, 2, 1)
QUICK_TRAIN = 600
QUICK_UNO_INPUTS = 3  # a full run streams the whole test split
TARGET_MS = 2.5
TARGET_RAM = 256
PAPER_MS = 2.93
#: issue 22: mean milliseconds per prediction on the Uno, by data set key
TARGET_MEAN_MS = {"mnist16-2": 0.8, "digits": 0.8}


def measure(label, name, depth, proj, budget, epochs, quick=False, progress=print):
    s = data.load(name)
    Xtr, ytr = s.X_train, s.y_train
    if quick:
        Xtr, ytr = Xtr[:QUICK_TRAIN], ytr[:QUICK_TRAIN]
        epochs = QUICK_EPOCHS
    est = Bonsai(depth=depth, proj=proj, budget=budget, epochs=epochs, seed=0).fit(Xtr, ytr)
    cte = est.codes(s.X_test)
    r = dict(label=label, name=name, depth=depth, proj=proj, budget=budget, epochs=epochs,
             dims=Xtr.shape[1], classes=int(max(ytr.max(), s.y_test.max())) + 1,
             n_train=len(ytr), n_test=len(s.y_test), train_s=est.train_seconds_)
    r["float"] = float((est.float_.predict(cte / 256.0) == s.y_test).mean())
    for w in (16, 8):
        m = est.int_[w]
        r["int%d" % w] = float((m.predict(cte) == s.y_test).mean())
        r["bytes%d" % w] = m.device_bytes()
    m8 = est.int_[8]
    r["nnz_z"] = int(np.count_nonzero(m8.pj.Zq))
    n = QUICK_UNO_INPUTS if quick else len(cte)
    r["uno"] = u = uno.measure(est.to_bytes(8), [[int(c) for c in x] for x in cte[:n]])
    progress("%-26s float %.4f int16 %.4f int8 %.4f  %d B (int8)  train %.1f s"
             % (label, r["float"], r["int16"], r["int8"], r["bytes8"], r["train_s"]))
    progress("  Uno: " + (u["error"] if "error" in u else
                          "%.0f cycles (%.2f ms) max %d, %.1f a weight, RAM %d+%d B%s"
                          % (u["cyc_mean"], u["ms_mean"], u["cyc_max"], u["per_weight"],
                             u["static"], u["stack"], "" if u["identical"] else
                             "  NOT IDENTICAL")))
    return r


def must_show(res):
    """(claim, measured, passed) lines, each computed from the numbers."""
    out = []
    d = res.get("digits")
    if d:
        out.append(("digits-binary: int8 model <= 2048 B on the device",
                    "%d B" % d["bytes8"], d["bytes8"] <= 2048))
        out.append(("digits-binary: int8 test accuracy >= 0.95", "%.4f" % d["int8"],
                    d["int8"] >= 0.95))
        out.append(("digits-binary: training < 60 s", "%.1f s" % d["train_s"],
                    d["train_s"] < 60.0))
    for r in res.values():
        out.append(("%s: int8 within 1 point of float" % r["label"],
                    "float %.4f, int8 %.4f (%+.2f points)"
                    % (r["float"], r["int8"], 100 * (r["int8"] - r["float"])),
                    r["int8"] >= r["float"] - 0.01))
    m = res.get("mnist16-2")
    if m and "error" not in m["uno"]:
        u = m["uno"]
        out.append(("256-feature depth-3 projection-10 model (%d B) on the Uno: <= %.1f ms "
                    "per prediction (worst input)" % (m["bytes8"], TARGET_MS),
                    "mean %.2f ms, max %.2f ms (%d cycles)" % (u["ms_mean"], u["ms_max"],
                                                               u["cyc_max"]),
                    u["ms_max"] <= TARGET_MS))
        out.append(("256-feature model: RAM <= %d B (static + measured stack)" % TARGET_RAM,
                    "%d + %d = %d B" % (u["static"], u["stack"], u["ram"]),
                    u["ram"] <= TARGET_RAM))
    for key, ms in TARGET_MEAN_MS.items():
        r = res.get(key)
        if r:
            u = r["uno"]
            out.append(("%s on the Uno: <= %.1f ms per prediction on average (issue 22)"
                        % (r["label"], ms), u.get("error") or
                        "%.3f ms (%.0f cycles), max %.3f ms" % (u["ms_mean"], u["cyc_mean"],
                                                                 u["ms_max"]),
                        "error" not in u and u["ms_mean"] <= ms))
    for r in res.values():
        out.append(uno.per_weight_line(r["label"], r["uno"]))
    for r in res.values():
        u = r["uno"]
        out.append(("%s: Uno replies equal the host integer reference" % r["label"],
                    u.get("error") or "%d inputs" % u["uno_n"],
                    "error" not in u and u["identical"]))
    return out


def _report(res, quick, seconds):
    L = []
    add = L.append
    add("# Bonsai: float, int16 and int8 on the host; int8 on the simulated Uno")
    add("")
    add("Generated by `kilobit bench bonsai%s` (host/kilobit/bench/bonsai.py); do not edit by "
        "hand." % (" --quick" if quick else ""))
    add("")
    if quick:
        add("**QUICK run**: %d training rows, epochs %s, %d Uno inputs: a smoke test, not the "
            "benchmark." % (QUICK_TRAIN, QUICK_EPOCHS, QUICK_UNO_INPUTS))
        add("")
    L += run_lines(seconds)
    add("Each data set: one float model (seed 0, the budget split between Z and Theta at int8), "
        "quantized to int16 and int8 with power-of-two scales chosen on the training codes. "
        "*Bytes* are what the device stores (the model file's payload without the host-only "
        "scaler). The int16 model is the same float model stored at 16 bits. *Uno*: the int8 "
        "model in firmware_c/avr/predict_stream.c on the simulated ATmega328P at 16 MHz, every "
        "test input streamed over the UART; cycles are those of the update and predict "
        "handlers per input (the projection, the tree and the scores; UART excluded), and every "
        "reply is checked against the host integer reference. *RAM* is static RAM of the whole "
        "firmware (UART buffers included) plus the stack high-water mark measured by the "
        "simulator.")
    add("")
    add("## Accuracy, size, training time")
    add("")
    add("| data set | D | classes | train / test | depth | proj | budget | float | int16 | "
        "int8 | bytes int16 | bytes int8 | nnz Z | training |")
    add("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for r in res.values():
        add("| %s | %d | %d | %d / %d | %d | %d | %d B | %.4f | %.4f | %.4f | %d | %d | %d | "
            "%.1f s |" % (r["label"], r["dims"], r["classes"], r["n_train"], r["n_test"],
                          r["depth"], r["proj"], r["budget"], r["float"], r["int16"], r["int8"],
                          r["bytes16"], r["bytes8"], r["nnz_z"], r["train_s"]))
    add("")
    add("## Uno (ATmega328P, 16 MHz, simulated): int8 model, per prediction")
    add("")
    add("Every test input (the whole split; a --quick run the first %d); *cycles* are those of "
        "the update and predict handlers of one input, mean and maximum over the split; "
        "*weights* are the non-zero weights the model stores (Z, theta, W, V: a prediction "
        "reads Z whole and the tree along one path), *a weight* the mean cycles per one of "
        "them. firmware_c's AVR paths (issue 22): the projection's sums as 16-bit halves in "
        "registers or RAM, a SPARSE Z read through a row table the firmware header derives "
        "from the model file (a feature whose code is 0 costs one test), and the tree walked by "
        "one assembly routine over a table of its non-zero weights the firmware header derives "
        "from the model file: the sums in registers, a class whose W or V row holds no weight left "
        "out, V skipped when w is 0, the tanh product and its rounding as one 16x16 multiply "
        "(models of more than one score, or with a SPARSE tree). The table is flash besides the "
        "model file's payload (*flash* counts it)."
        % QUICK_UNO_INPUTS)
    add("")
    add("| data set | D | inputs | weights | cycles mean | cycles max | ms mean | ms max | "
        "cycles a weight | flash | RAM static | stack | RAM total | replies = host |")
    add("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for r in res.values():
        u = r["uno"]
        if "error" in u:
            add("| %s | %d | not measured: %s |%s" % (r["label"], r["dims"], u["error"],
                                                     " - |" * 11))
            continue
        add("| %s | %d | %d | %d | %.0f | %d | %.2f | %.2f | %.1f | %d B | %d B | %d B | %d B | "
            "%s |" % (r["label"], r["dims"], u["uno_n"], u["weights"], u["cyc_mean"],
                      u["cyc_max"], u["ms_mean"], u["ms_max"], u["per_weight"], u["flash"],
                      u["static"], u["stack"], u["ram"],
                      "yes" if u["identical"] else "**NO**"))
    m = res.get("mnist16-2")
    if m and "error" not in m["uno"]:
        u = m["uno"]
        add("")
        add("Beside the paper (Table 5): BonsaiOpt on USPS-2 (256 features) predicts on an Uno "
            "in %.2f ms; our 256-feature depth-%d projection-%d model (mnist16-2) takes "
            "%.2f ms on average and %.2f ms at worst, %d B of RAM, %d B on the device."
            % (PAPER_MS, m["depth"], m["proj"], u["ms_mean"], u["ms_max"], u["ram"],
               m["bytes8"]))
        m2 = res.get("mnist16-2-2k")
        if m2 and "error" not in m2["uno"]:
            u2 = m2["uno"]
            add("")
            add("With a 2 KB budget (%d non-zero weights in Z against %d) the same model takes "
                "%.2f ms on average and %.2f ms at worst (accuracy int8 %.4f against %.4f): "
                "the projection's walk over the stored weights is most of the time."
                % (m2["nnz_z"], m["nnz_z"], u2["ms_mean"], u2["ms_max"], m2["int8"],
                   m["int8"]))
    add("")
    L += must_show_lines(must_show(res))
    return "\n".join(L)


def run(out="docs/benchmarks/bonsai.md", quick=False, progress=print, only=None):
    """Measure every data set of SETS (or those named in `only`), write the report; returns
    {data set name: figures}."""
    t0 = time.time()
    res = {}
    for key, label, name, depth, proj, budget, epochs in SETS:
        if only and key not in only:
            continue
        res[key] = measure(label, name, depth, proj, budget, epochs, quick, progress)
    text = _report(res, quick, time.time() - t0)
    write_report(out, text)
    progress("wrote %s" % out)
    return res


# ---- `kilobit bench bonsai` (kilobit.cli finds every bench module by these three) ----
HELP = 'Bonsai: float/int16/int8 accuracy, bytes, training time, Uno cycles and RAM (issue 5)'


def add_args(b):
    b.add_argument("-o", "--output", default="docs/benchmarks/bonsai.md")
    b.add_argument("--quick", action="store_true", help="a smoke run: few rows and epochs")


def main(a):
    run(out=a.output, quick=a.quick)
    return 0
