"""`kilobit bench rp2040`: device/kbit on the emulated Raspberry Pi Pico, per model, beside the
same model on the simulated AVRs and on MicroPython's x64 unix port (issues 19 and 20).

Each case is a model made by a `kilobit train` command line (or a fresh learner) and a golden
document from it on real data (`kilobit golden make --model`: a learner learns the training
split online and answers test queries; a predictor predicts the test split). The document is
replayed, every step under micropython.heap_lock(), on:

    rp2040-sim         kbit as armv6m .mpy on the emulated Pico: cycles per step from the core's
                       cycle counter (kbemu.cycles), at 125 MHz
    kbit-unix          the same replay on the 1.29 unix port (x64), microseconds per step
    uno-sim, attiny2313-sim   the AVR firmware, cycle-exact (kb_sim markers), where it fits

and each runtime's rows must equal the golden document's host rows, bit for bit, or the row says
so. Beside that: import time of kbit and of the model's module on the Pico, the heap they take
(gc.mem_free() around the imports and the load), the .mpy bytes on flash; and a calibration loop
whose cycle count is known from the Cortex-M0+ manual.

The Pico's figures are rp2040js's estimates, not silicon's: one cycle per flash read (the XIP
cache's misses are not modelled), and its hardware divider's own timing (tools/pico/README.md).
"""
import datetime
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time

from kilobit.core.errors import KilobitError
from kilobit.golden import compare, replay_doc
from kilobit.models import registry
from kilobit.runtimes import catalog
from kilobit.runtimes.base import RuntimeFailure

PICO_HZ = 125_000_000

# key, label, train command (None: the learner's fresh model from `fresh`), data set, steps,
# AVR boards to time it on
CASES = (
    ("rkp", "RKP Banana, 4 bits, 62 SVs (70 B)", None, "banana", 1000, ("attiny2313", "uno")),
    ("ckp", "CKP Banana, 70 B (L = 560 bits)",
     ["train", "ckp", "--data", "banana", "--L", "560", "--A", "0.1", "--bits", "6"],
     "banana", 1000, ("attiny2313", "uno")),
    ("bonsai-digits", "Bonsai digits-binary, 2 KB int8",
     ["train", "bonsai", "--data", "digits", "--depth", "3", "--proj", "10",
      "--budget-bytes", "2048", "--bits", "8"], "digits", 100, ("uno",)),
    ("bonsai-mnist16", "Bonsai mnist16-2, 1 KB int8",
     ["train", "bonsai", "--data", "mnist16-2", "--depth", "3", "--proj", "10",
      "--budget-bytes", "1024", "--bits", "8"], "mnist16-2", 100, ("uno",)),
    ("protonn-digits", "ProtoNN digits-binary, 2 KB int8",
     ["train", "protonn", "--data", "digits", "--proj", "10", "--prototypes", "20",
      "--budget-bytes", "2048", "--bits", "8"], "digits", 100, ("uno",)),
    ("protonn-mnist16", "ProtoNN mnist16-2, 1 KB int8",
     ["train", "protonn", "--data", "mnist16-2", "--proj", "10", "--prototypes", "20",
      "--budget-bytes", "1024", "--bits", "8", "--epochs", "20,2", "--batch", "128"],
     "mnist16-2", 100, ("uno",)),
    ("assoc", "assoc pendigits-10 (P = 1, kt = 10)",
     ["train", "assoc", "--data", "pendigits-10", "--P", "1", "--kt", "10"],
     "pendigits-10", 400, ("uno",)),
)
QUICK_STEPS = 30


def fresh_rkp():
    from kilobit.models.rkp.model import RKPInt
    return RKPInt("laplace", 4, 2, 62, -6, 255, seed=0).to_bytes()


def make_model(train, tmp, key):
    """A model file's bytes: `kilobit train ...` into tmp, or the fresh RKP learner."""
    if train is None:
        return fresh_rkp()
    out = os.path.join(tmp, key + ".kb")
    # the command line itself (a process: the tools layer does not import the CLI), so the case
    # is exactly the command the page shows
    p = subprocess.run([sys.executable, "-m", "kilobit.cli"] + list(train) + ["-o", out],
                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    if p.returncode != 0:
        raise KilobitError("kilobit %s failed: %s" % (" ".join(train), p.stderr.strip()))
    with open(out, "rb") as f:
        return f.read()


def _stats(values):
    if not values:
        return None
    return dict(n=len(values), mean=statistics.fmean(values), median=statistics.median(values),
                max=max(values))


def _split(doc, times):
    """Per-step ticks -> {"learn": [...], "query": [...]} by the golden steps' ops."""
    spec = registry.get(doc.get("model", "rkp"))
    ops = [op for op, _, _ in spec.golden.doc_steps(doc)]
    out = {}
    for op, t in zip(ops, times):
        out.setdefault("learn" if op == "L" else "predict", []).append(t)
    return out


def time_mp(doc, runtime):
    """Replay `doc` on a MicroPython runtime with step timing: ({kind: stats}, identical,
    error)."""
    runtime.timing = True
    try:
        rows = replay_doc(doc, runtime)
    except RuntimeFailure as e:
        return None, False, str(e)
    bad = compare(doc, runtime.name, rows)
    overhead, times = runtime.times
    split = _split(doc, [max(0, t - overhead) for t in times])
    return {k: _stats(v) for k, v in split.items()}, bad is None, str(bad) if bad else None


def time_avr(doc, board):
    """Replay `doc` on the simulated AVR board: ({kind: stats in cycles}, identical, error,
    sizes)."""
    runtime = catalog.get(board + "-sim")
    try:
        rows = replay_doc(doc, runtime)
    except RuntimeFailure as e:
        return None, False, str(e).splitlines()[0], None
    bad = compare(doc, runtime.name, rows)
    res = runtime.last_result
    spec = registry.get(doc.get("model", "rkp"))
    if spec.kind == "predictor":
        from kilobit.runtimes.avr import fw_predict
        out = {"predict": _stats(fw_predict.cycles(res))}
    else:
        out = {"learn": _stats(res.between(1, 2)), "predict": _stats(res.between(3, 4))}
    return ({k: v for k, v in out.items() if v}, bad is None, str(bad) if bad else None,
            runtime.last_sizes)


def run(out="docs/benchmarks/rp2040.md", quick=False, progress=print, only=None):
    t_start = time.time()
    results = []
    with tempfile.TemporaryDirectory(prefix="kb-bench-rp2040-") as tmp:
        for key, label, train, data_name, steps, boards in CASES:
            if only and key not in only:
                continue
            progress("%s: training/making the model" % label)
            blob = make_model(train, tmp, key)
            spec, _ = registry.of_file(blob), None
            doc = spec.golden.from_model(blob, data_name, steps=QUICK_STEPS if quick else steps)
            r = dict(key=key, label=label, train=train, data=data_name, steps=len(doc["steps"]),
                     model_bytes=len(blob), kind=spec.kind, runtimes={})
            for name in ("rp2040-sim", "kbit-unix"):
                rt = catalog.get(name)
                miss = rt.missing()
                if miss:
                    r["runtimes"][name] = dict(error="missing " + miss)
                    continue
                progress("  %s ..." % name)
                stats, same, err = time_mp(doc, rt)
                r["runtimes"][name] = dict(stats=stats, identical=same, error=err)
            for board in boards:
                progress("  %s-sim ..." % board)
                stats, same, err, sizes = time_avr(doc, board)
                r["runtimes"][board] = dict(stats=stats, identical=same, error=err, sizes=sizes)
            results.append(r)
            progress("  " + _line(r))
    text = report(results, quick, time.time() - t_start)
    write_page(out, text)
    progress("wrote %s" % out)
    return results


def _line(r):
    parts = []
    for name, v in r["runtimes"].items():
        if v.get("stats"):
            parts.append("%s %s" % (name, ", ".join("%s %.0f" % (k, s["mean"])
                                                     for k, s in v["stats"].items())))
        else:
            parts.append("%s: %s" % (name, v.get("error")))
    return "; ".join(parts)


def report(results, quick, seconds):
    lines = ["# kbit on the emulated Raspberry Pi Pico (RP2040, 125 MHz)", "",
             "Generated by `kilobit bench rp2040` (host/kilobit/bench/rp2040.py); do not edit by "
             "hand.", "",
             "- date: %s; %.0f s%s" % (datetime.datetime.now().strftime("%Y-%m-%d %H:%M"),
                                      seconds, "; QUICK (%d steps a case)" % QUICK_STEPS
                                      if quick else ""),
             "- machine: %s %s, Python %s" % (platform.system(), platform.release(),
                                             platform.python_version()),
             ""]
    lines += ["| model | steps | Pico learn mean / median / max [cycles] | Pico predict mean / "
              "median / max [cycles] | at 125 MHz | unix x64 [us] | AVR |",
              "|---|---|---|---|---|---|---|"]
    for r in results:
        pico = r["runtimes"].get("rp2040-sim", {})
        st = pico.get("stats") or {}

        def cyc(k):
            s = st.get(k)
            return "%.0f / %.0f / %d" % (s["mean"], s["median"], s["max"]) if s else "-"
        main = st.get("learn") or st.get("predict")
        at = "%.2f ms" % (1000.0 * main["mean"] / PICO_HZ) if main else pico.get("error", "-")
        ux = r["runtimes"].get("kbit-unix", {}).get("stats") or {}
        ux_s = ", ".join("%s %.1f" % (k, s["mean"]) for k, s in ux.items()) or "-"
        avr = []
        for b, v in r["runtimes"].items():
            if b in ("rp2040-sim", "kbit-unix"):
                continue
            if v.get("stats"):
                avr.append("%s: %s" % (b, ", ".join("%s %.0f" % (k, s["mean"])
                                                      for k, s in v["stats"].items())))
            else:
                avr.append("%s: %s" % (b, v.get("error")))
        lines.append("| %s | %d | %s | %s | %s | %s | %s |"
                     % (r["label"], r["steps"], cyc("learn"), cyc("predict"), at, ux_s,
                        "; ".join(avr)))
    lines.append("")
    return "\n".join(lines)


def write_page(out, text):
    d = os.path.dirname(os.path.abspath(out))
    os.makedirs(d, exist_ok=True)
    tmp = out + ".tmp"
    with open(tmp, "w") as f:
        f.write(text)
    os.replace(tmp, out)


# ---- `kilobit bench rp2040` (kilobit.cli finds every bench module by these three) ----
HELP = "kbit on the emulated Pico: cycles per step at 125 MHz, import time, heap, beside AVR and x64"


def add_args(b):
    b.add_argument("-o", "--output", default="docs/benchmarks/rp2040.md")
    b.add_argument("--quick", action="store_true", help="a smoke run: %d steps a case"
                   % QUICK_STEPS)
    b.add_argument("--only", action="append", help="only this case (repeatable): %s"
                   % ", ".join(c[0] for c in CASES))


def main(a):
    run(out=a.output, quick=a.quick, only=a.only)
    return 0
