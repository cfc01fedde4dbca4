"""`kilobit bench avr`: the RKP firmware on simulated AVRs, in the layout of the paper's
Tables 3-5 (Djuric & Vucetic 2010, section 3.1), written to docs/benchmarks/avr-rkp.md.

For each data set, board and bit length: the firmware (firmware_c/avr/rkp_stream.c) is built for
a fresh model (laplace, A = -6, C = 255, the paper's support-vector counts), the training split
is streamed to the simulated chip as learn frames, the test split as query frames, and then

- program bytes: .text + .data of the ELF (the whole firmware: learner, UART protocol, start-up);
- data bytes: static RAM (.data + .bss) plus the stack high-water mark measured by the simulator
  over the whole run (lowest stack pointer after any instruction);
- cycles per training example: from marker 1 to marker 2 of every learn frame (prediction plus
  update, including any store and random removal), exact; mean and max over the stream, and the
  paper's "time after 100 examples" both as the first 100 examples and as 100 examples at the
  stream's mean;
- cycles per prediction: marker 3 to 4 of every query frame;
- accuracy: of the chip's own replies to the query frames, checked to equal the host integer
  reference (kilobit.models.rkp.RKPInt) fed the same frames -- every score must be identical.

Shuffle s (s = 0..shuffles-1) draws the split with kilobit.data.load(name, seed=s) and seeds the
generator with s, as `kilobit bench rkp` does; accuracies are mean +- std over the shuffles,
sizes and cycles are those of shuffle 0 (sizes do not depend on the shuffle; cycles barely do,
the spread is listed).
"""
import datetime
import platform
import subprocess
import time

import numpy as np

from kilobit import data
from kilobit.bench import write_report
from kilobit.core.quant import quantize
from kilobit.models.rkp.model import RKPInt, mem_bytes
from kilobit.runtimes.avr import firmware, protocol
from kilobit.runtimes.avr.sim_runtimes import session

KERNEL, WIDTH, C = "laplace", -6, 255
BITS = (2, 4, 6, 8)
SVS = {"banana": {2: 112, 4: 62, 6: 43, 8: 32},
       "checkerboard": {2: 112, 4: 62, 6: 43, 8: 32},
       "pendigits": {2: 46, 4: 23, 6: 15, 8: 11}}
# The paper's Tables 3-5, fixed-point columns: program [B], data [B], time [ms] per 100 training
# examples at 4 MHz, accuracy [%].
PAPER = {
    "banana": dict(table=3, chip="ATtiny2313", flash=2048, ram=128,
                   program=(1744, 1720, 1720, 1748), data=(128, 128, 128, 128),
                   time=(1192, 1985, 1883, 1739), acc=(67.32, 81.08, 79.36, 78.00)),
    "checkerboard": dict(table=4, chip="ATtiny2313", flash=2048, ram=128,
                         program=(1744, 1720, 1720, 1748), data=(128, 128, 128, 128),
                         time=(1568, 2226, 2410, 2232), acc=(52.20, 72.60, 78.20, 74.04)),
    "pendigits": dict(table=5, chip="ATtiny48", flash=4096, ram=256,
                      program=(1836, 1810, 1812, 1816), data=(256, 256, 256, 256),
                      time=(3280, 3572, 4881, 5063), acc=(93.80, 92.76, 86.44, 80.72)),
}
# (data set, board): the paper's chips; Pendigits also on the Uno. simavr 1.6 has no ATtiny48
# core: the ATtiny4313 (same 4 KB flash and 256 B RAM, same multiplier-less AVR core as the
# ATtiny2313) stands in for it.
SETUPS = (("banana", "attiny2313"), ("checkerboard", "attiny2313"),
          ("pendigits", "attiny4313"), ("pendigits", "uno"))
QUICK_TRAIN = 600


def measure(name, board, bits, budget, seed, limit=None):
    """One stream through the simulated board. Returns a dict of figures."""
    split = data.load(name, seed=seed)
    _, Xtr, Xte = data.scale(split)
    ctr, cte = quantize(Xtr, bits), quantize(Xte, bits)
    ytr, yte = split.y_train, split.y_test
    if limit:
        ctr, ytr = ctr[:limit], ytr[:limit]
    m = RKPInt(KERNEL, bits, Xtr.shape[1], budget, WIDTH, C, seed=seed)
    blob = m.to_bytes()
    frames = [protocol.learn_frame(int(y), u) for u, y in zip(ctr, ytr)]
    frames += [protocol.query_frame(u) for u in cte] + [protocol.dump_frame(),
                                                         protocol.stop_frame()]
    replies, res, sizes = session(blob, b"".join(frames), board)
    n, q = len(ctr), len(cte)
    if len(replies) != n + q + 2 or any(r.code == "E" for r in replies):
        raise RuntimeError("%s on %s: unexpected replies" % (name, board))
    # the host integer reference, same frames
    same = 0
    for r, u, y in zip(replies[:n], ctr, ytr):
        s, mistake = m.learn(u, int(y))
        same += (r.score, r.mistake, r.count) == (s, int(mistake), m.count)
    ref_scores = [m.score(u) for u in cte]
    same += sum(r.score == s for r, s in zip(replies[n:n + q], ref_scores))
    dump = replies[n + q]
    mem_ok = (dump.memory, dump.rng, dump.count) == (m.memory(), m.rng.state, m.count)
    chip_pred = np.array([r.pred for r in replies[n:n + q]])
    host_pred = (np.array(ref_scores) > 0).astype(int)
    learn, query = res.between(1, 2), res.between(3, 4)
    if len(learn) != n or len(query) != q:
        raise RuntimeError("%s on %s: %d/%d learn and %d/%d query markers"
                           % (name, board, len(learn), n, len(query), q))
    return dict(
        flash=sizes["flash"], static=sizes["ram"], stack=res.stack_bytes,
        freq=res.report["freq"], mcu=sizes["mcu"],
        learn_mean=float(np.mean(learn)), learn_max=int(max(learn)),
        first100=int(sum(learn[:100])), query_mean=float(np.mean(query)),
        query_max=int(max(query)), acc=float(np.mean(chip_pred == yte)),
        host_acc=float(np.mean(host_pred == yte)),
        preq=float(np.mean([r.pred == y for r, y in zip(replies[:n], ytr)])),
        identical=same == n + q and mem_ok, frames=n + q, mistakes=sum(r.mistake for r in
                                                                     replies[:n]),
        count=replies[n - 1].count if n else 0, mem=mem_bytes(budget, Xtr.shape[1], bits),
    )


def _tool_versions():
    out = []
    for cmd in (["avr-gcc", "--version"],):
        try:
            out.append(subprocess.run(cmd, capture_output=True, text=True).stdout.splitlines()[0])
        except (OSError, IndexError):
            pass
    try:
        v = subprocess.run(["dpkg-query", "-W", "-f=${Version}", "libsimavr-dev"],
                           capture_output=True, text=True).stdout.strip()
        if v:
            out.append("simavr " + v)
    except OSError:
        pass
    return ", ".join(out)


def run(out="docs/benchmarks/avr-rkp.md", shuffles=10, quick=False, progress=print):
    t0 = time.time()
    if quick:
        shuffles = 1
    limit = QUICK_TRAIN if quick else None
    res = {}
    for name, board in SETUPS:
        for bits in BITS:
            runs = []
            for s in range(shuffles):
                runs.append(measure(name, board, bits, SVS[name][bits], s, limit))
            res[name, board, bits] = runs
            r0 = runs[0]
            progress("%-12s %-10s B=%d: program %d B, data %d+%d B, %.0f cycles/example, "
                     "accuracy %.2f%% (%d shuffles)%s"
                     % (name, board, bits, r0["flash"], r0["static"], r0["stack"],
                        r0["learn_mean"], 100 * np.mean([r["acc"] for r in runs]), len(runs),
                        "" if all(r["identical"] for r in runs) else "  NOT IDENTICAL"))
    text = _report(res, shuffles, quick, time.time() - t0)
    write_report(out, text)
    return res


def _ms(cycles, freq):
    return 1000.0 * cycles / freq


def _report(res, shuffles, quick, elapsed):
    L = []
    add = L.append
    add("# The RKP firmware on simulated AVRs: the paper's Tables 3-5")
    add("")
    add("Generated by `kilobit bench avr` (host/kilobit/bench/avr.py, run from the repository "
        "root); do not edit by hand.")
    add("")
    add("- date: %s" % datetime.datetime.now().strftime("%Y-%m-%d %H:%M"))
    add("- machine: %s %s, Python %s; %s" % (platform.system(), platform.release(),
                                              platform.python_version(), _tool_versions()))
    add("- runtime: %.0f s; %d shuffle%s%s" % (elapsed, shuffles, "" if shuffles == 1 else "s",
                                              " (QUICK: %d training examples per stream)"
                                              % QUICK_TRAIN if quick else ""))
    add("- paper: N. Djuric, S. Vucetic, *Random Kernel Perceptron on ATTiny2313 "
        "Microcontroller*, SensorKDD 2010, section 3.1, Tables 3-5 (fixed-point columns)")
    add("- firmware: firmware_c/avr/rkp_stream.c with the header kilobit.runtimes.avr.firmware "
        "generates from "
        "the model; UART protocol docs/uart-protocol.md; simulator firmware_c/sim/kb_sim.c "
        "(simavr, cycle-exact)")
    add("")
    add("Protocol. Laplace kernel, A = %d, C = %d, the paper's support-vector counts (the 2-D "
        "sets fill the paper's 70-byte budget). The training split is streamed to the chip as "
        "learn frames (it predicts, then learns: one online pass, as the paper), then the test "
        "split as query frames; accuracy is computed from the chip's replies and is required to "
        "equal the host integer reference's, reply by reply. *Program* is the whole firmware "
        "(learner, UART protocol with CRC, start-up code); *data* is static RAM plus the stack "
        "high-water mark measured over the whole run. *Time* is per 100 training examples at "
        "4 MHz, from the exact cycle count of each learning step (prediction plus update); the "
        "paper measured 'after 100 observed examples': *first 100* is that literally (the "
        "budget is still filling), *stream mean* is 100 examples at the mean over the whole "
        "stream (full budget). Accuracies are mean +- std over %d shuffle%s; sizes and cycles "
        "are shuffle 0's." % (WIDTH, C, shuffles, "" if shuffles == 1 else "s"))
    add("")

    b4 = res.get(("banana", "attiny2313", 4))
    if b4:
        r = b4[0]
        add("## Must show (ATtiny2313, Banana, 4 bits, 62 SVs in 70 bytes)")
        add("")
        checks = [
            ("program <= 1700 B (paper 1720 B)", "%d B" % r["flash"], r["flash"] <= 1700),
            ("static RAM + measured stack <= 128 B", "%d + %d = %d B"
             % (r["static"], r["stack"], r["static"] + r["stack"]),
             r["static"] + r["stack"] <= 128),
            ("mean cycles per training example <= 8,000 (2 ms at 4 MHz)",
             "%.0f cycles = %.3f ms (max %d)" % (r["learn_mean"], _ms(r["learn_mean"], 4e6),
                                                r["learn_max"]), r["learn_mean"] <= 8000),
            ("cycles per prediction (query), reported", "mean %.0f, max %d"
             % (r["query_mean"], r["query_max"]), True),
            ("chip accuracy equals the host integer reference's, every shuffle",
             ", ".join("%.2f%%" % (100 * x["acc"]) for x in b4),
             all(x["identical"] and x["acc"] == x["host_acc"] for x in b4)),
        ]
        for what, got, ok in checks:
            add("- %s: %s: **%s**" % (what, got, "PASS" if ok else "FAIL"))
        add("")

    for name, board in SETUPS:
        runs = {bits: res[name, board, bits] for bits in BITS if (name, board, bits) in res}
        if not runs:
            continue
        p = PAPER[name]
        r0 = runs[BITS[0]][0]
        mcu_name = {"attiny2313": "ATtiny2313", "attiny4313": "ATtiny4313 (for the ATtiny48)",
                    "uno": "ATmega328P (Arduino Uno)"}[board]
        b = firmware.board(board)
        mhz = r0["freq"] / 1e6
        add("## %s on the %s, %g MHz (paper Table %d: %s, 4 MHz)"
            % (name.capitalize(), mcu_name, mhz, p["table"], p["chip"]))
        add("")
        head = "| %s | " % name.capitalize() + " | ".join(
            "%d bits: kilobit | paper" % bits for bits in BITS) + " |"
        add(head)
        add("|---" * (1 + 2 * len(BITS)) + "|")

        # the table helpers are this iteration's: its runs (and paper p) bound as defaults
        def row(label, ours, paper, runs=runs):
            cells = []
            for i, bits in enumerate(BITS):
                cells += [ours(runs[bits]), paper[i] if paper else ""]
            add("| %s | %s |" % (label, " | ".join(str(c) for c in cells)))

        row("Program [B] (%d B)" % b["flash_bytes"], lambda rs: rs[0]["flash"], p["program"])
        row("Data [B] (%d B): static + stack" % b["ram_bytes"],
            lambda rs: "%d = %d + %d" % (rs[0]["static"] + rs[0]["stack"], rs[0]["static"],
                                         rs[0]["stack"]), p["data"])
        row("Time [ms] / 100 examples at 4 MHz, stream mean",
            lambda rs: "%.0f" % (_ms(100 * rs[0]["learn_mean"], 4e6)), p["time"])
        row("Time [ms] / 100 examples at 4 MHz, first 100",
            lambda rs: "%.0f" % _ms(rs[0]["first100"], 4e6), p["time"])
        if board == "uno":
            row("Time [ms] / 100 examples at 16 MHz (the Uno's clock)",
                lambda rs: "%.1f" % _ms(100 * rs[0]["learn_mean"], rs[0]["freq"]), None)
        row("Accuracy [%%] (%d shuffle%s)" % (len(runs[BITS[0]]),
                                              "" if len(runs[BITS[0]]) == 1 else "s"),
            lambda rs: "%.2f +- %.2f" % (100 * np.mean([r["acc"] for r in rs]),
                                         100 * np.std([r["acc"] for r in rs])),
            ["%.2f" % a for a in p["acc"]])
        row("# of SVs", lambda rs: rs[0]["count"], [SVS[name][bits] for bits in BITS])
        add("")
        add("| cycles | " + " | ".join("%d bits" % bits for bits in BITS) + " |")
        add("|---" * (1 + len(BITS)) + "|")

        def crow(label, f, runs=runs):
            add("| %s | %s |" % (label, " | ".join(f(runs[bits]) for bits in BITS)))

        crow("per training example, mean (shuffle 0)", lambda rs: "%.0f" % rs[0]["learn_mean"])
        crow("per training example, max (shuffle 0)", lambda rs: "%d" % rs[0]["learn_max"])
        crow("per training example, mean over shuffles (min - max)",
             lambda rs: "%.0f - %.0f" % (min(r["learn_mean"] for r in rs),
                                         max(r["learn_mean"] for r in rs)))
        crow("per prediction (query), mean", lambda rs: "%.0f" % rs[0]["query_mean"])
        crow("per prediction (query), max", lambda rs: "%d" % rs[0]["query_max"])
        crow("speed-up vs the paper (time, stream mean)",
             lambda rs, p=p, runs=runs: "%.1fx" % (p["time"][BITS.index(_bits(runs, rs))] /
                                                   _ms(100 * rs[0]["learn_mean"], 4e6)))
        crow("support-vector memory [B]", lambda rs: "%d" % rs[0]["mem"])
        crow("prequential accuracy [%] (shuffle 0)", lambda rs: "%.2f" % (100 * rs[0]["preq"]))
        crow("identical to the host reference (all shuffles)",
             lambda rs: "yes" if all(r["identical"] and r["acc"] == r["host_acc"] for r in rs)
             else "**NO**")
        add("")
    add("Notes.")
    add("")
    add("- The accuracies are those of the integer model of docs/contract.md on kilobit's copies "
        "of the data sets (river's Banana, a generated Checkerboard, keel's Pendigits), so they "
        "track `kilobit bench rkp` (docs/benchmarks/rkp.md), not the paper's own copies; the "
        "chip's are identical to the host reference's by construction and by check.")
    add("- Time at 4 MHz for the Uno rows is the ATmega328P's cycle count (it has a hardware "
        "multiplier) divided by 4 MHz, for comparison with the paper; the Uno runs at 16 MHz.")
    add("- simavr 1.6 has no ATtiny48; the ATtiny4313 has the same 4 KB of flash and 256 B of "
        "RAM and the ATtiny2313's core without a multiplier.")
    add("")
    return "\n".join(L) + "\n"


def _bits(runs, rs):
    for bits, v in runs.items():
        if v is rs:
            return bits
    raise KeyError


# ---- `kilobit bench avr` (kilobit.cli finds every bench module by these three) ----
HELP = 'the RKP firmware on simulated AVRs (paper Tables 3-5)'


def add_args(b):
    b.add_argument("-o", "--output", default="docs/benchmarks/avr-rkp.md")
    b.add_argument("--quick", action="store_true", help="a smoke run: short streams")


def main(a):
    run(out=a.output, quick=a.quick)
    print("wrote %s" % a.output)
    return 0
