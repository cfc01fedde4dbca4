"""`kilobit bench peers`: kilobit's Bonsai and ProtoNN beside emlearn, the library AVR users
pick, on the same splits, the same input codes and the same simulated Uno; written to
docs/benchmarks/peers.md with two plots (peers-cycles.png, peers-bytes.png beside it).

For each data set (SETS): kilobit's int8 Bonsai and ProtoNN, trained as `kilobit bench bonsai`
and `kilobit bench protonn` train them (their SETS rows; mnist16-2 is the 1 KB model), on the
Uno as kilobit.bench.uno measures them (predict_stream.c, features streamed over the UART,
every reply equal to the host integer reference). emlearn (EMLEARN, pinned: a bench-only extra,
`pip install -e '.[bench]'`), trained on kilobit's own input codes of the same split:

- a decision tree (depth TREE_DEPTH) and a random forest (FOREST trees of that depth),
  scikit-learn, converted by emlearn.convert(method="inline", dtype="int16_t");
- an MLP with one hidden layer (the widest of MLP_HIDDEN whose float weights fit the Uno's RAM;
  else "does not fit" and why), converted with emlearn's loadable float network.

Fairness: emlearn truncates a tree's thresholds to integers with int() and compares with `<`,
where scikit-learn's split is `<=` at a midpoint: on 8-bit codes that moves every split by one
code. The codes are scaled by 2^SCALE before training (midpoints become integers, the truncation
a no-op), the MLP gets the codes / 255 as floats (its own input type, no conversion counted).
emlearn keeps its tables as `static const` (no PROGMEM: on an AVR they are copied to RAM at
start) and takes the whole input vector in RAM; kilobit streams the features and keeps its
model in flash. Each emlearn model runs in firmware_c/avr/peer_predict.c (the features arrive
over the UART into RAM, one prediction between the cycle markers, the class back), built with
avr-gcc -Os like kilobit's firmware, on kb_sim; every chip reply must equal emlearn's own host
reference: the same C compiled for the host (firmware_c/host/peer_ref.c; emlearn's Python
wrapper reads CSV lines of at most 2 KB, too short for 256 or 784 features). *Model bytes*:
kilobit's device payload plus the flash tables its firmware header derives from it (the
projection's row table, ProtoNN's prototype groups); emlearn's, the flash its firmware has over
the harness without a model (an inline tree is code; tables in RAM are also in flash, their
initial values).
"""
import hashlib
import os
import re
import subprocess
import sys
import time
import warnings

import numpy as np

from kilobit import data
from kilobit.bench import (
    bonsai as bonsai_bench,
    must_show_lines,
    protonn as protonn_bench,
    run_lines,
    uno,
    write_report,
)
from kilobit.core import paths
from kilobit.core.errors import KilobitError
from kilobit.models import predictor
from kilobit.models.bonsai.model import Bonsai
from kilobit.models.protonn.train import ProtoNN

EMLEARN = "0.23.2"
# key (as in the bonsai and protonn benches), label, data set
SETS = (
    ("digits", "digits-binary", "digits"),
    ("mnist16-2", "mnist16-2", "mnist16-2"),
    ("mnist-2", "MNIST-2", "mnist-2"),
    ("pendigits-10", "pendigits-10", "pendigits-10"),
    ("letter-26", "letter-26", "letter-26"),
)
TREE_DEPTH = 8
FOREST = 10
MLP_HIDDEN = (16, 8, 4)
SCALE = 7
RAM_BYTES = 2048
FLASH_BYTES = 32768
STACK_RESERVE = 64  # as kilobit's firmware reserves on the Uno
QUICK_TRAIN = 600
QUICK_TEST = 20
HARNESS = paths.firmware_c("avr", "peer_predict.c")
BUILD = paths.cache("peers")
PNG_CYCLES = "peers-cycles.png"
PNG_BYTES = "peers-bytes.png"
KILOBIT = ("kilobit Bonsai int8", "kilobit ProtoNN int8")
KINDS = KILOBIT + ("emlearn DecisionTree", "emlearn RandomForest", "emlearn MLP")
KIND_LABELS = ("kilobit Bonsai int8", "kilobit ProtoNN int8", "emlearn tree",
               "emlearn forest", "emlearn MLP (float)")


def emlearn_module():
    """emlearn, imported without its side effect (it sets numpy to raise on every floating-point
    error); KilobitError with what to install when it is missing or another version."""
    old = np.geterr()
    try:
        import emlearn
    except ImportError:
        raise KilobitError("kilobit bench peers needs emlearn %s, a bench-only extra: "
                           ".venv/bin/python -m pip install -e '.[bench]'" % EMLEARN) from None
    finally:
        np.seterr(**old)
    got = getattr(emlearn, "__version__", "?")
    if got != EMLEARN:
        raise KilobitError("kilobit bench peers is pinned to emlearn %s, found %s: "
                           ".venv/bin/python -m pip install -e '.[bench]'" % (EMLEARN, got))
    return emlearn


def _convert(em, est, **kw):
    """emlearn.convert, run inside build/peers: its wrappers compile the C for the host in a
    folder `tmp` of the working directory (the MLP's at once), which must not be the checkout."""
    os.makedirs(BUILD, exist_ok=True)
    here = os.getcwd()
    os.chdir(BUILD)
    try:
        return em.convert(est, **kw)
    finally:
        os.chdir(here)


# ---- emlearn's C on the simulated Uno ----

def _build(code, nfeat, feature, tag):
    """(elf, sizes) of the harness with `code` (None: the baseline), cached by content; raises
    KilobitError("does not fit: ...") when the link overflows the Uno."""
    from kilobit.runtimes.avr import kb_sim
    em = emlearn_module()
    with open(HARNESS) as f:
        harness = f.read()
    text = "%s|%d|%s|%s" % (code, nfeat, feature, harness)
    key = hashlib.sha256(text.encode()).hexdigest()[:20]
    d = os.path.join(BUILD, "%s-%s" % (tag, key))
    elf = os.path.join(d, "peer.elf")
    if not os.path.exists(elf):
        os.makedirs(d, exist_ok=True)
        defs = ["-DPEER_NFEAT=%d" % nfeat, "-DPEER_FEATURE=%s" % feature]
        if code is None:
            defs.append("-DPEER_NONE")
        else:
            with open(os.path.join(d, "model.h"), "w") as f:
                f.write(code)
            defs += ['-DPEER_MODEL="model.h"', "-DPEER_PREDICT=peer_predict"]
        tmp = elf + ".%d.tmp" % os.getpid()
        cmd = (["avr-gcc", "-mmcu=atmega328p", "-DF_CPU=16000000UL", "-std=gnu99", "-Os",
                "-ffunction-sections", "-fdata-sections", "-w", "-I", d, "-I", em.includedir]
               + defs + ["-o", tmp, HARNESS, "-Wl,--gc-sections", "-lm"])
        p = subprocess.run(cmd, capture_output=True, text=True)
        if p.returncode != 0:
            over = re.search(r"region `(text|data)' overflowed by (\d+) bytes", p.stderr)
            if over:
                what = "flash" if over.group(1) == "text" else "RAM"
                raise KilobitError("does not fit: %d B over the Uno's %s" % (int(over.group(2)),
                                                                            what))
            raise KilobitError("avr-gcc failed: %s" % p.stderr.strip()[-400:])
        os.replace(tmp, elf)
    sizes = kb_sim.avr_size(elf)
    if sizes["flash"] > FLASH_BYTES:
        raise KilobitError("does not fit: program %d B > %d B flash" % (sizes["flash"],
                                                                        FLASH_BYTES))
    if sizes["ram"] + STACK_RESERVE > RAM_BYTES:
        raise KilobitError("does not fit: static RAM %d B (inputs %d B, tables copied to RAM) "
                           "+ %d B of stack > %d B" % (sizes["ram"], nfeat * (
                               4 if feature == "float" else 2), STACK_RESERVE, RAM_BYTES))
    return elf, sizes


def host_reference(code, X, feature):
    """The classes of emlearn's C `code` for the rows of X (int16 or float32 features), compiled
    for the host by firmware_c/host/peer_ref.c: the reference the chip's replies must equal."""
    em = emlearn_module()
    src = paths.firmware_c("host", "peer_ref.c")
    with open(src) as f:
        driver = f.read()
    key = hashlib.sha256(("%s|%d|%s|%s" % (code, X.shape[1], feature, driver)).encode()
                         ).hexdigest()[:20]
    d = os.path.join(BUILD, "host-" + key)
    exe = os.path.join(d, "ref")
    if not os.path.exists(exe):
        os.makedirs(d, exist_ok=True)
        with open(os.path.join(d, "model.h"), "w") as f:
            f.write(code)
        tmp = exe + ".%d.tmp" % os.getpid()
        p = subprocess.run(["gcc", "-std=gnu99", "-O2", "-w", "-I", d, "-I", em.includedir,
                            '-DPEER_MODEL="model.h"', "-DPEER_NFEAT=%d" % X.shape[1],
                            "-DPEER_FEATURE=%s" % feature, "-DPEER_PREDICT=peer_predict",
                            "-o", tmp, src, "-lm"], capture_output=True, text=True)
        if p.returncode != 0:
            raise KilobitError("gcc failed on the peer's C: %s" % p.stderr.strip()[-400:])
        os.replace(tmp, exe)
    dt = "=i2" if feature == "int16_t" else "=f4"
    out = subprocess.run([exe], input=np.ascontiguousarray(X, dtype=dt).tobytes(),
                         capture_output=True, check=True).stdout
    if len(out) != len(X):
        raise KilobitError("the peer's host reference answered %d of %d rows" % (len(out),
                                                                                len(X)))
    return np.frombuffer(out, dtype=np.uint8).astype(np.int64)


def peer_uno(code, X_chip, feature, want):
    """An emlearn model's C on the simulated Uno: X_chip its inputs (n x features, int16 or
    float32), want its host reference's classes. Same figures as kilobit.bench.uno.measure
    (model_bytes instead of weights), or {"error": why}."""
    from kilobit.runtimes.avr import fw_predict, kb_sim
    nfeat = X_chip.shape[1]
    try:
        elf, sizes = _build(code, nfeat, feature, "model")
        _, base = _build(None, nfeat, feature, "base")
        dt = "<i2" if feature == "int16_t" else "<f4"
        res = kb_sim.run(elf, "atmega328p", uno.CLOCK_HZ,
                         np.ascontiguousarray(X_chip, dtype=dt).tobytes(),
                         max_cycles=2 * 10 ** 10, timeout=3600)
    except (KilobitError, OSError) as e:
        return {"error": str(e)}
    cyc = fw_predict.cycles(res)
    got = list(res.output)
    r = dict(uno_n=len(want), identical=got == [int(v) for v in want] and len(cyc) == len(want),
             cyc_mean=float(np.mean(cyc)) if cyc else 0.0, cyc_max=int(max(cyc)) if cyc else 0,
             flash=sizes["flash"], static=sizes["ram"], stack=res.stack_bytes,
             model_bytes=sizes["flash"] - base["flash"])
    r["ram"] = r["static"] + r["stack"]
    r["ms_mean"] = 1000.0 * r["cyc_mean"] / uno.CLOCK_HZ
    r["ms_max"] = 1000.0 * r["cyc_max"] / uno.CLOCK_HZ
    return r


def emlearn_rows(codes_tr, y_tr, codes_te, y_te, progress=print):
    """The emlearn models of one data set: [(method, accuracy or None, uno figures)]."""
    em = emlearn_module()
    from sklearn.ensemble import RandomForestClassifier
    from sklearn.neural_network import MLPClassifier
    from sklearn.tree import DecisionTreeClassifier
    Xtr = codes_tr.astype(np.int64) << SCALE
    Xte = codes_te.astype(np.int64) << SCALE
    out = []
    for method, est in (
            ("emlearn DecisionTree depth %d" % TREE_DEPTH,
             DecisionTreeClassifier(max_depth=TREE_DEPTH, random_state=0)),
            ("emlearn RandomForest %d x depth %d" % (FOREST, TREE_DEPTH),
             RandomForestClassifier(n_estimators=FOREST, max_depth=TREE_DEPTH, random_state=0))):
        est.fit(Xtr, y_tr)
        code = _convert(em, est, method="inline", dtype="int16_t").save(name="peer")
        ref = host_reference(code, Xte.astype(np.int16), "int16_t")
        r = peer_uno(code, Xte.astype(np.int16), "int16_t", ref)
        out.append((method, float((ref == y_te).mean()), r))
        progress("  %-34s acc %.4f  %s" % (method, out[-1][1], _said(r)))
    nfeat, ncls = codes_tr.shape[1], int(max(y_tr.max(), y_te.max())) + 1
    n_out = 1 if ncls == 2 else ncls
    Ftr, Fte = codes_tr / 255.0, (codes_te / 255.0).astype(np.float32)
    row = None
    for h in MLP_HIDDEN:  # the widest that fits
        method = "emlearn MLP %d-%d-%d (float)" % (nfeat, h, ncls)
        # float weights and biases, the inputs and two activation buffers: all in RAM
        ram = 4 * (nfeat * h + h + h * n_out + n_out) + 4 * nfeat + 8 * max(nfeat, h, n_out)
        if ram + STACK_RESERVE > RAM_BYTES:
            row = (method, None, {"error": "does not fit: even %d hidden units take %d B of "
                                           "RAM (float weights copied to RAM, the float "
                                           "inputs, buffers) + %d B of stack > %d B"
                                           % (h, ram, STACK_RESERVE, RAM_BYTES)})
            continue
        mlp = MLPClassifier(hidden_layer_sizes=(h,), max_iter=400, random_state=0)
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore")  # a ConvergenceWarning at max_iter: it is measured
            mlp.fit(Ftr, y_tr)
        code = _convert(em, mlp, method="loadable").save(name="peer")
        ref = host_reference(code, Fte, "float")
        r = peer_uno(code, Fte, "float", ref)
        row = (method, float((ref == y_te).mean()), r)
        if not r.get("error", "").startswith("does not fit"):
            break
    out.append(row)
    progress("  %-34s %s  %s" % (method, "acc %.4f" % out[-1][1] if out[-1][1] is not None
                                 else "", _said(out[-1][2])))
    return out


def _said(r):
    if "error" in r:
        return r["error"]
    return ("%.0f cycles (max %d), %d B model, flash %d B, RAM %d+%d B%s"
            % (r["cyc_mean"], r["cyc_max"], r["model_bytes"], r["flash"], r["static"], r["stack"],
               "" if r["identical"] else "  NOT IDENTICAL"))


# ---- kilobit's models ----

def _derived_bytes(model_bytes):
    """The flash tables the firmware header derives from a model file (the projection's row
    table, the Bonsai tree's rows, ProtoNN's prototype groups)."""
    from kilobit.models import registry
    spec = registry.of_file(model_bytes)
    m, _ = spec.load(model_bytes)
    return predictor.proj_rows_bytes(m.pj, len(m.payload()) - 1) + spec.firmware.derived_bytes(m)


def kilobit_rows(key, name, quick, progress=print):
    """[(method, accuracy, uno figures)] of kilobit's Bonsai and ProtoNN on one data set, and the
    Bonsai estimator (whose codes the peers get)."""
    s = data.load(name)
    Xtr, ytr = s.X_train, s.y_train
    if quick:
        Xtr, ytr = Xtr[:QUICK_TRAIN], ytr[:QUICK_TRAIN]
    out = []
    b = next(x for x in bonsai_bench.SETS if x[0] == key)
    _, _, _, depth, proj, budget, epochs = b
    est = Bonsai(depth=depth, proj=proj, budget=budget,
                 epochs=bonsai_bench.QUICK_EPOCHS if quick else epochs, seed=0).fit(Xtr, ytr)
    p = next(x for x in protonn_bench.SETS if x[0] == key)
    _, _, _, d, m, pbudget, pepochs, batch = p
    pest = ProtoNN(d=d, m=m, budget=pbudget, epochs=protonn_bench.QUICK_EPOCHS if quick else
                   pepochs, batch=batch, seed=0).fit(Xtr, ytr)
    for method, e in ((KILOBIT[0], est), (KILOBIT[1], pest)):
        cte = e.codes(s.X_test)
        if quick:
            cte = cte[:QUICK_TEST]
        y = s.y_test[:len(cte)]
        mb = e.to_bytes(8)
        acc = float((e.int_[8].predict(cte) == y).mean())
        r = uno.measure(mb, [[int(c) for c in u] for u in cte])
        if "error" not in r:
            r["model_bytes"] = e.int_[8].device_bytes() + _derived_bytes(mb)
        out.append((method, acc, r))
        progress("  %-34s acc %.4f  %s" % (method, acc, _said(r)))
    return out, est, s, Xtr, ytr


def measure(key, label, name, quick=False, progress=print):
    progress(label)
    rows, est, s, Xtr, ytr = kilobit_rows(key, name, quick, progress)
    ctr = est.codes(Xtr)
    cte = est.codes(s.X_test)
    yte = s.y_test
    if quick:
        cte, yte = cte[:QUICK_TEST], yte[:QUICK_TEST]
    rows += emlearn_rows(ctr, ytr, cte, yte, progress)
    return dict(key=key, label=label, dims=Xtr.shape[1], n_train=len(ytr), n_test=len(yte),
                rows=rows)


# ---- the report ----

def slower_at_equal_accuracy(res):
    """Sentences naming each kilobit model that an emlearn model on the Uno beats in mean cycles
    at equal or better accuracy (per data set)."""
    out = []
    for r in res.values():
        ours = [x for x in r["rows"] if x[0] in KILOBIT and "error" not in x[2]]
        peers = [x for x in r["rows"] if x[0] not in KILOBIT and x[1] is not None
                 and "error" not in x[2]]
        for m, acc, u in ours:
            for pm, pacc, pu in peers:
                if pacc >= acc and pu["cyc_mean"] < u["cyc_mean"]:
                    out.append("%s: %s is slower than %s at equal or better accuracy "
                               "(%.4f against %.4f, %.0f against %.0f cycles on average)"
                               % (r["label"], m, pm, acc, pacc, u["cyc_mean"], pu["cyc_mean"]))
    return out


def must_show(res, plots):
    out = []
    for r in res.values():
        for m, _, u in r["rows"]:
            if "error" in u:
                ok = u["error"].startswith("does not fit") and not m.startswith("kilobit")
                out.append(("%s, %s: on the Uno, replies equal its host reference"
                            % (r["label"], m), u["error"], ok))
            else:
                out.append(("%s, %s: on the Uno, replies equal its host reference"
                            % (r["label"], m), "%d inputs" % u["uno_n"], u["identical"]))
    keys = [k for k, _, _ in SETS]
    out.append(("data sets measured: %s" % ", ".join(keys), ", ".join(res),
                all(k in res for k in keys)))
    out.append(("plots of accuracy against cycles and against bytes", plots,
                plots == "%s, %s" % (PNG_CYCLES, PNG_BYTES)))
    return out


def _plots(res, out_dir):
    """Write the two PNGs beside the report; a sentence on what was written."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return "matplotlib is not installed: no plots (the tables carry the numbers)"
    written = []
    for fname, field, xlabel in ((PNG_CYCLES, "cyc_mean", "cycles per prediction (mean)"),
                                 (PNG_BYTES, "model_bytes", "model bytes")):
        n = len(res)
        fig, axes = plt.subplots(1, n, figsize=(3.4 * n, 3.4), squeeze=False)
        for ax, r in zip(axes[0], res.values()):
            for m, acc, u in r["rows"]:
                if acc is None or "error" in u:
                    continue
                ours = m in KILOBIT
                # one colour and label a kind of model across the data sets
                kind = next(i for i, k in enumerate(KINDS) if m.startswith(k))
                ax.scatter([u[field]], [acc], marker="o" if ours else "s", s=40,
                           color="C%d" % kind, label=KIND_LABELS[kind])
            ax.set_xscale("log")
            ax.set_title(r["label"], fontsize=9)
            ax.set_xlabel(xlabel, fontsize=8)
            ax.tick_params(which="both", labelsize=7)
            ax.grid(alpha=0.3)
        axes[0][0].set_ylabel("test accuracy", fontsize=8)
        handles, labels = {}, []
        for ax in axes[0]:
            for h, lab in zip(*ax.get_legend_handles_labels()):
                if lab not in handles:
                    handles[lab] = h
                    labels.append(lab)
        fig.legend([handles[x] for x in labels], labels, loc="lower center", ncol=len(labels),
                   fontsize=7, frameon=False)
        fig.suptitle("kilobit and emlearn on the simulated Uno: accuracy against %s"
                     % ("cycles" if field == "cyc_mean" else "model bytes"), fontsize=10)
        fig.tight_layout(rect=(0, 0.08, 1, 1))
        path = os.path.join(out_dir, fname)
        fig.savefig(path, format="png", dpi=110)
        plt.close(fig)
        written.append(fname)
    return ", ".join(written)


def _report(res, quick, seconds, plots, em_version):
    L = []
    add = L.append
    add("# kilobit beside emlearn on the Uno")
    add("")
    add("Generated by `kilobit bench peers%s` (host/kilobit/bench/peers.py); do not edit by hand."
        % (" --quick" if quick else ""))
    add("")
    if quick:
        add("**QUICK run**: %d training rows, short training, %d test inputs: a smoke test, not "
            "the benchmark." % (QUICK_TRAIN, QUICK_TEST))
        add("")
    L += run_lines(seconds)
    add("- emlearn %s (PyPI, pinned; the bench-only extra `.[bench]`), scikit-learn models" %
        em_version)
    add("")
    add("Every model runs on the same simulated ATmega328P (kb_sim, 16 MHz) and is trained on "
        "the same split and the same 8-bit input codes (kilobit's quantization of the data). "
        "kilobit: the int8 Bonsai and ProtoNN of `kilobit bench bonsai` and `kilobit bench "
        "protonn` in their firmware (features streamed one frame at a time, the model in "
        "flash). emlearn: a decision tree (depth %d), a random forest (%d trees of depth %d) "
        "and a one-hidden-layer MLP where its float weights fit the Uno's RAM, in a harness "
        "that receives the whole input vector into RAM, then predicts (firmware_c/avr/"
        "peer_predict.c). *cycles*: one prediction, UART excluded (kilobit: the update and "
        "predict handlers of one input; emlearn: its predict call), mean and maximum over the "
        "test split. *model bytes*: kilobit's device payload and the flash tables its firmware "
        "derives from it; emlearn's, the flash its firmware has over the same harness without a "
        "model (an inline tree is code; its tables in RAM are in flash too, their initial "
        "values). *RAM*: static RAM of the whole "
        "firmware plus the stack high-water mark. Every reply on the chip is checked against "
        "the model's own host reference (kilobit's integer reference; emlearn's generated C "
        "compiled for the host, firmware_c/host/peer_ref.c)." % (TREE_DEPTH, FOREST, TREE_DEPTH))
    add("")
    add("Where emlearn needed help to be fair: it truncates a tree's thresholds with int() and "
        "compares with `<` where scikit-learn splits with `<=` at a midpoint, which on 8-bit "
        "codes moves every split by one code; the codes are scaled by 2^%d before training, so "
        "that the midpoints are integers. The MLP gets its own input type (the codes / 255 as "
        "floats, no conversion counted). emlearn has no PROGMEM: its tables (`static const`) "
        "are copied into RAM at start, which is what keeps its MLPs off the larger inputs; and "
        "it takes the whole input vector in RAM (2 bytes a feature, 4 for the MLP), where "
        "kilobit streams the features and keeps only its projection's sums." % SCALE)
    add("")
    if plots == "%s, %s" % (PNG_CYCLES, PNG_BYTES):
        add("![accuracy against cycles](%s)" % PNG_CYCLES)
        add("")
        add("![accuracy against model bytes](%s)" % PNG_BYTES)
        add("")
    for r in res.values():
        add("## %s (%d features, %d training / %d test rows)" % (r["label"], r["dims"],
                                                               r["n_train"], r["n_test"]))
        add("")
        add("| model | accuracy | model bytes | flash | RAM static | stack | RAM total | "
            "cycles mean | cycles max | ms mean | replies = reference |")
        add("|---|---|---|---|---|---|---|---|---|---|---|")
        for m, acc, u in r["rows"]:
            if "error" in u:
                add("| %s | %s | %s |%s" % (m, "-" if acc is None else "%.4f" % acc, u["error"],
                                            " - |" * 8))
                continue
            add("| %s | %.4f | %d | %d B | %d B | %d B | %d B | %.0f | %d | %.3f | %s |"
                % (m, acc, u["model_bytes"], u["flash"], u["static"], u["stack"], u["ram"],
                   u["cyc_mean"], u["cyc_max"], u["ms_mean"],
                   "yes" if u["identical"] else "**NO**"))
        add("")
    add("## Where kilobit is slower")
    add("")
    slow = slower_at_equal_accuracy(res)
    if slow:
        add("An emlearn model predicts in fewer cycles at equal or better accuracy:")
        add("")
        for line in slow:
            add("- " + line)
    else:
        add("No emlearn model here predicts in fewer cycles at equal or better accuracy.")
    add("")
    add("A tree's prediction is a handful of comparisons, a few hundred cycles whatever the "
        "input size; kilobit's cost grows with the weights it stores (a multiply-add each) and "
        "the features it streams, so on every data set here emlearn's trees predict in fewer "
        "cycles than kilobit's models. What kilobit buys with them is accuracy per byte, and "
        "RAM that does not grow with the input.")
    add("")
    L += must_show_lines(must_show(res, plots))
    return "\n".join(L)


def run(out="docs/benchmarks/peers.md", quick=False, progress=print, only=None):
    """Measure every data set of SETS (or those named in `only`), write the report and its
    plots; returns {data set key: figures}."""
    em = emlearn_module()
    t0 = time.time()
    res = {}
    for key, label, name in SETS:
        if only and key not in only:
            continue
        res[key] = measure(key, label, name, quick, progress)
    out_dir = os.path.dirname(os.path.abspath(out))
    os.makedirs(out_dir, exist_ok=True)
    plots = _plots(res, out_dir)
    text = _report(res, quick, time.time() - t0, plots, em.__version__)
    write_report(out, text)
    progress("wrote %s" % out)
    return res


# ---- `kilobit bench peers` (kilobit.cli finds every bench module by these three) ----
HELP = ("kilobit's Bonsai and ProtoNN beside emlearn on the simulated Uno: accuracy, bytes, RAM, "
        "cycles (issue 22; needs the bench extra: pip install -e '.[bench]')")


def add_args(b):
    b.add_argument("-o", "--output", default="docs/benchmarks/peers.md")
    b.add_argument("--quick", action="store_true",
                   help="a smoke run: few training rows and test inputs")


def main(a):
    try:
        emlearn_module()
    except KilobitError as e:
        print("kilobit: error: %s" % e, file=sys.stderr)
        return 2
    run(out=a.output, quick=a.quick)
    return 0
