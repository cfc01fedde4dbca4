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
- Uno cycles per prediction: the int8 model built into firmware_c/avr/predict_stream.c, the first
  UNO_INPUTS test inputs streamed over the simulated UART (update frames of 16 codes, then a
  predict frame); cycles are those inside the update and predict handlers (markers 5-6 and 3-4:
  the projection, the tree, the scores), UART excluded, summed per input; every reply must equal
  the host integer reference's fields (P, leaf, scores, class);
- RAM: static (.data + .bss of the whole firmware, UART buffers included) plus the stack
  high-water mark the simulator measured over the run.

The paper's BonsaiOpt on an Uno (Table 5) takes 2.93 ms on USPS-2 (256 features, the setting of
the mnist16-2 row: 16 x 16 MNIST, even vs odd).
"""
import time

import numpy as np

from kilobit.bench import must_show_lines, run_lines, write_report
from kilobit import data
from kilobit.runtimes.avr import fw_predict as predict_fw
from kilobit.models.bonsai.model import Bonsai

CLOCK_HZ = 16_000_000
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
UNO_INPUTS = 30
QUICK_UNO_INPUTS = 3
TARGET_MS = 2.5
TARGET_RAM = 256
PAPER_MS = 2.93


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
    n = QUICK_UNO_INPUTS if quick else UNO_INPUTS
    inputs = [[int(c) for c in u] for u in cte[:n]]
    rows, res, sizes = predict_fw.replay(est.to_bytes(8), inputs, "uno")
    cyc = predict_fw.cycles(res)
    r.update(uno_n=n, identical=rows == m8.field_rows(inputs) and len(cyc) == n,
             cyc_mean=float(np.mean(cyc)), cyc_max=int(max(cyc)), static=sizes["ram"],
             stack=res.stack_bytes, flash=sizes["flash"])
    r["ms_mean"] = 1000.0 * r["cyc_mean"] / CLOCK_HZ
    r["ms_max"] = 1000.0 * r["cyc_max"] / CLOCK_HZ
    r["ram"] = r["static"] + r["stack"]
    progress("%-26s float %.4f int16 %.4f int8 %.4f  %d B (int8)  train %.1f s  Uno %.0f cycles "
             "(%.2f ms) max %d, RAM %d+%d B%s"
             % (label, r["float"], r["int16"], r["int8"], r["bytes8"], r["train_s"],
                r["cyc_mean"], r["ms_mean"], r["cyc_max"], r["static"], r["stack"],
                "" if r["identical"] else "  NOT IDENTICAL"))
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
    if m:
        out.append(("256-feature depth-3 projection-10 model (%d B) on the Uno: <= %.1f ms "
                    "per prediction (worst input)" % (m["bytes8"], TARGET_MS),
                    "mean %.2f ms, max %.2f ms (%d cycles)" % (m["ms_mean"], m["ms_max"],
                                                               m["cyc_max"]),
                    m["ms_max"] <= TARGET_MS))
        out.append(("256-feature model: RAM <= %d B (static + measured stack)" % TARGET_RAM,
                    "%d + %d = %d B" % (m["static"], m["stack"], m["ram"]),
                    m["ram"] <= TARGET_RAM))
    for r in res.values():
        out.append(("%s: Uno replies equal the host integer reference" % r["label"],
                    "%d inputs" % r["uno_n"], r["identical"]))
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
        "model in firmware_c/avr/predict_stream.c on the simulated ATmega328P at 16 MHz, the "
        "first test inputs streamed over the UART; cycles are those of the update and predict "
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
    add("| data set | D | inputs | cycles mean | cycles max | ms mean | ms max | flash | "
        "RAM static | stack | RAM total | replies = host |")
    add("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for r in res.values():
        add("| %s | %d | %d | %.0f | %d | %.2f | %.2f | %d B | %d B | %d B | %d B | %s |"
            % (r["label"], r["dims"], r["uno_n"], r["cyc_mean"], r["cyc_max"], r["ms_mean"],
               r["ms_max"], r["flash"], r["static"], r["stack"], r["ram"],
               "yes" if r["identical"] else "**NO**"))
    m = res.get("mnist16-2")
    if m:
        add("")
        add("Beside the paper (Table 5): BonsaiOpt on USPS-2 (256 features) predicts on an Uno "
            "in %.2f ms; our 256-feature depth-%d projection-%d model (mnist16-2) takes "
            "%.2f ms on average and %.2f ms at worst, %d B of RAM, %d B on the device."
            % (PAPER_MS, m["depth"], m["proj"], m["ms_mean"], m["ms_max"], m["ram"],
               m["bytes8"]))
        m2 = res.get("mnist16-2-2k")
        if m2:
            add("")
            add("With a 2 KB budget (%d non-zero weights in Z against %d) the same model takes "
                "%.2f ms on average and %.2f ms at worst (accuracy int8 %.4f against %.4f): "
                "the projection's walk over the stored weights is most of the time."
                % (m2["nnz_z"], m["nnz_z"], m2["ms_mean"], m2["ms_max"], m2["int8"],
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
