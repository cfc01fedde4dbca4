"""`kilobit bench faults` -> docs/benchmarks/faults.md: the fault-injection and fuzzing figures of
issue 15, each with the command that re-runs it.

    (a) the C model-file loaders and decoders under libFuzzer with AddressSanitizer and
        UndefinedBehaviorSanitizer (firmware_c/fuzz/kb_fuzz_file.c), seeded with every golden
        model file: executions, coverage, findings;
    (b) the host's and device/kbit's parsers against each other on mutated model files
        (tests/test_parsers_fuzz.py's strategy), the C runtime's on a share of them;
    (c) mutated frames to the firmwares on simulated chips (kilobit.runtimes.avr.framefuzz): each
        answered with its documented error reply, none learnt from, no hang;
    (d) power cuts during a save: kbit's checkpoints (device/kbit/checkpoint.py) cut at every
        write on a filesystem stand-in, under CPython and on real MicroPython; the AVR learners'
        EEPROM checkpoints (firmware_c/avr/kb_persist.h) cut at every EEPROM byte write in
        simavr (kilobit.runtimes.avr.powercut), and their EEPROM wear over a whole golden stream;
    (e) kbit's checkpoints on littlefs (MicroPython's unix port, vfs.VfsLfs2) cut at every block
        write and erase (kilobit.runtimes.micropython.littlefs, issue 23);
    (f) bad inputs to the command line, per command (kilobit.bench.badinput, issue 23).

`--only littlefs` (or bad-input) runs one of the last two alone and puts its section into the
page as it stands, leaving the rest of it as its last full run wrote it.
"""
import glob
import json
import os
import re
import subprocess
import tempfile
import time

from kilobit.bench import replace_section, run_lines, write_report
from kilobit.core import paths
from kilobit.core.paths import REPO

GOLDEN = paths.golden()
FUZZ_RUNS = 10 ** 7
FRAMES = 100000
PARSER_EXAMPLES, C_EXAMPLES = 5000, 500
#: (golden file pattern, board, checkpoint_every): the firmwares the frames go to (None: built
#: without EEPROM checkpoints)
FRAME_TARGETS = (("rkp-laplace-b4-t62-m2-a-6-s1.json", "attiny2313", None),
                 ("ckp-*seed21-*", "attiny2313", None),
                 ("rkp-laplace-b4-t62-m2-a-6-s1.json", "uno", None),
                 ("ckp-*seed21-*", "uno", None),
                 ("assoc-*seed41-*", "uno", None),
                 ("bonsai-*seed101-*", "uno", None),
                 ("protonn-*seed201-*", "uno", None),
                 ("rkp-laplace-b4-t62-m2-a-6-s1.json", "attiny2313", 1),
                 ("rkp-laplace-b4-t62-m2-a-6-s1.json", "uno", 1),
                 ("ckp-*seed21-*", "uno", 1),
                 ("assoc-*seed54-*", "uno", 1))
#: (golden file pattern, board, steps, every): the AVR learners whose EEPROM checkpoints are cut
#: at every byte write over the first `steps` steps (every 0: a checkpoint frame every 4 steps)
CUT_TARGETS = (("rkp-laplace-b4-t62-m2-a-6-s1.json", "attiny2313", 100, 1),
               ("rkp-laplace-b4-t62-m2-a-6-s1.json", "uno", 100, 1),
               ("rkp-laplace-b4-t62-m2-a-6-s1.json", "uno", 100, 0),
               ("ckp-*seed21-*", "uno", 60, 1),
               ("assoc-*seed54-*", "uno", 20, 1))
CUT_VALUES = (None, 0xFF, 0x00)  # the cut byte: its old value, torn to 0xFF (erased), to 0x00
#: (golden file pattern, saves): the learners whose kbit checkpoints are cut on littlefs, inline
#: files (up to 256 B here) and files of their own blocks
LITTLEFS_TARGETS = (("rkp-laplace-b4-t62-m2-a-6-s1.json", 500),
                    ("rkp-laplace-b8-t200-m8-a4-s7.json", 500),
                    ("ckp-*seed21-*", 500),
                    ("assoc-*seed54-*", 500),
                    ("assoc-*seed41-*", 500))
#: the sections `--only` runs alone
SECTIONS = ("littlefs", "bad-input")


def _golden_model(pattern):
    path = sorted(glob.glob(os.path.join(GOLDEN, pattern)))[0]
    return os.path.basename(path), bytes.fromhex(json.load(open(path))["model_file"])


def libfuzzer(runs, progress=print):
    """Build and run kb_fuzz_file for `runs` executions on the golden seeds (and the kept
    regression inputs): a dict of its final statistics and findings."""
    build = paths.cache("firmware_c")
    r = subprocess.run(["make", "-s", "-C", paths.firmware_c(), "BUILD=" + build,
                        "fuzz"], capture_output=True, text=True)
    if r.returncode != 0:
        return {"error": (r.stdout + r.stderr).strip()[-500:]}
    exe = os.path.join(build, "fuzz", "kb_fuzz_file")
    with tempfile.TemporaryDirectory(prefix="kb-fuzz-") as tmp:
        corpus, art = os.path.join(tmp, "corpus"), os.path.join(tmp, "artifacts")
        os.makedirs(corpus)
        os.makedirs(art)
        for path in sorted(glob.glob(os.path.join(GOLDEN, "*.json"))):
            model = bytes.fromhex(json.load(open(path))["model_file"])
            for mode in (0, 2):
                with open(os.path.join(corpus, "%s-%d" % (os.path.basename(path), mode)),
                          "wb") as f:
                    f.write(bytes([mode]) + model)
        progress("libFuzzer: %d executions" % runs)
        t0 = time.time()
        p = subprocess.run([exe, "-runs=%d" % runs, "-seed=1", "-timeout=10",
                            "-print_final_stats=1", "-artifact_prefix=%s/" % art, corpus,
                            os.path.join(REPO, "tests", "fuzz", "kb_file")],
                           capture_output=True, text=True)
        seconds = time.time() - t0
        stats = dict(re.findall(r"stat::(\w+):\s+(\d+)", p.stderr))
        cov = re.findall(r"cov: (\d+) ft: (\d+)", p.stderr)
        findings = sorted(os.listdir(art))
    return dict(runs=int(stats.get("number_of_executed_units", 0)), seconds=seconds,
                exec_per_sec=int(stats.get("average_exec_per_sec", 0)),
                new_units=int(stats.get("new_units_added", 0)),
                cov=int(cov[-1][0]) if cov else 0, features=int(cov[-1][1]) if cov else 0,
                findings=findings, status=p.returncode,
                tail="" if p.returncode == 0 else p.stderr[-1500:])


def fix_container(b):
    """The file with its payload length and CRC recomputed (the container then passes)."""
    import struct
    import zlib
    b = bytearray(b)
    if len(b) >= 16:
        struct.pack_into("<I", b, 8, len(b) - 16)
        struct.pack_into("<I", b, len(b) - 4, zlib.crc32(bytes(b[:-4])) & 0xFFFFFFFF)
    return bytes(b)


def mutated_files():
    """A hypothesis strategy: golden model files truncated, with bytes flipped, with the payload
    changed behind a fixed container, with a foreign type byte, or grown."""
    from hypothesis import strategies as st
    models = [_golden_model(os.path.basename(p))[1]
              for p in sorted(glob.glob(os.path.join(GOLDEN, "*.json")))]

    @st.composite
    def mutated(draw):
        base = bytearray(draw(st.sampled_from(models)))
        kind = draw(st.sampled_from(["truncate", "flip", "payload", "payload", "type", "grow"]))
        if kind == "truncate":
            return bytes(base[:draw(st.integers(0, len(base) - 1))])
        if kind == "type":  # another model's type byte on this payload
            base[5] = draw(st.integers(0, 7))
            return fix_container(base)
        if kind == "grow":
            base[-4:-4] = draw(st.binary(min_size=1, max_size=64))
            return fix_container(base)
        for _ in range(draw(st.integers(1, 8))):
            lo = 12 if kind == "payload" else 0
            i = draw(st.integers(lo, len(base) - 5 if kind == "payload" else len(base) - 1))
            base[i] = draw(st.integers(0, 255))
        return fix_container(base) if kind == "payload" else bytes(base)

    return mutated()


def host_verdict(b):
    """"loaded", or "refused: <the host's model-file error>"."""
    from kilobit.core.errors import KilobitError
    from kilobit.models import registry
    try:
        registry.of_file(b).load(b)
    except KilobitError as e:  # ModelFileError, or a model type it does not know
        return "refused: %s" % e
    return "loaded"


def kbit_verdict(b):
    """device/kbit's verdict, its class picked by the header as kbit's users do."""
    from kbit.kbfile import ModelFileError
    from kilobit.models import registry
    spec = registry.peek(b) or registry.get("rkp")
    try:
        spec.kbit_class().load(bytes(b))
    except ModelFileError as e:
        return "refused: %s" % e
    return "loaded"


def c_verdict(runtime, b):
    """The C runtime's verdict (the c-host runtime's tools, a replay of no step)."""
    from kilobit.runtimes.base import RuntimeFailure
    try:
        runtime.replay(b, [])
    except RuntimeFailure as e:
        return "refused: %s" % e
    return "loaded"


def parsers(n_host, n_c, progress=print):
    """Host and device/kbit verdicts on n_host mutated files, the C runtime's on n_c of them:
    (examples, disagreements, loaded, c examples, c disagreements)."""
    from hypothesis import HealthCheck, given, settings

    from kilobit.runtimes.catalog import get

    progress("parsers: %d mutated model files (C: %d)" % (n_host, n_c))
    tally = dict(n=0, bad=[], loaded=0, cn=0, cbad=[])
    c_host = get("c-host")

    @settings(derandomize=True, max_examples=n_host, deadline=None, database=None,
              suppress_health_check=list(HealthCheck))
    @given(mutated_files())
    def run(b):
        h, k = host_verdict(b), kbit_verdict(b)
        tally["n"] += 1
        tally["loaded"] += h == "loaded"
        if (h == "loaded") != (k == "loaded"):
            tally["bad"].append((h, k))
        if tally["cn"] < n_c:
            tally["cn"] += 1
            c = c_verdict(c_host, b)
            if (h == "loaded") != (c == "loaded"):
                tally["cbad"].append((h, c))

    run()
    return tally


def frames(n, progress=print):
    from kilobit.runtimes.avr import framefuzz
    rows = []
    for pattern, board, every in FRAME_TARGETS:
        name, model = _golden_model(pattern)
        progress("frames: %d to %s (%s%s)" % (n, board, name,
                                            "" if every is None else ", checkpoints"))
        t0 = time.time()
        r = framefuzz.run(model, board, n=n, seed=1, checkpoint_every=every)
        r.update(golden=name, seconds=time.time() - t0)
        rows.append(r)
    return rows


def eeprom_cuts(quick=False, progress=print):
    """The AVR learners' EEPROM checkpoints cut at every byte write: powercut.run rows."""
    from kilobit.runtimes.avr import kb_sim, powercut
    miss = kb_sim.missing()
    rows = []
    for pattern, board, steps, every in CUT_TARGETS:
        path = sorted(glob.glob(os.path.join(GOLDEN, pattern)))[0]
        steps = min(steps, 12) if quick else steps
        progress("power cuts: %s on %s, %d steps, every %d" % (os.path.basename(path), board,
                                                               steps, every))
        if miss:
            rows.append({"model": os.path.basename(path), "board": board, "error": miss})
            continue
        t0 = time.time()
        r = powercut.run(path, board, steps=steps, every=every, values=CUT_VALUES,
                         log=progress)
        r.update(seconds=time.time() - t0, every=every)
        rows.append(r)
    return rows


def eeprom_wear(progress=print):
    """Writes per learnt example and the lifetime of the most-written cell, whole streams."""
    from kilobit.runtimes.avr import kb_sim, powercut
    if kb_sim.missing():
        return []
    rows = []
    for pattern, board, _, every in CUT_TARGETS:
        if every == 0:  # the same chip and model as with every 1, fewer checkpoints
            continue
        path = sorted(glob.glob(os.path.join(GOLDEN, pattern)))[0]
        progress("wear: %s on %s" % (os.path.basename(path), board))
        rows.append(powercut.wear(path, board, every=every))
    return rows


def checkpoints(progress=print):
    """kbit checkpoint cut points per runtime: [(runtime, tried, recovered or None, note)]."""
    from kbit import test_checkpoint as T
    from kilobit.runtimes.micropython import kbit_unix, kbit_wasm
    progress("power cuts: kbit checkpoints")
    rows = []
    tried, recovered = T.cut_points()
    rows.append(("kbit under CPython", tried, recovered, ""))
    script = paths.kbit("test_checkpoint.py")
    for name, run_, miss in (("kbit on MicroPython 1.27 (WebAssembly)", kbit_wasm.run,
                              kbit_wasm.missing_wasm()),
                             ("kbit on MicroPython 1.29 (unix port)", kbit_unix.run,
                              kbit_unix.missing())):
        if miss:
            rows.append((name, 0, None, "not run: missing %s" % miss))
            continue
        p = run_([script], timeout=600)
        m = re.search(r"power cuts tried (\d+), recovered (\d+)", p.stdout)
        rows.append((name, int(m.group(1)) if m else 0, int(m.group(2)) if m else None,
                     "" if m and p.returncode == 0 else "failed: %s" % p.stderr[-200:]))
    return rows


def littlefs_cuts(quick=False, progress=print):
    """kilobit.runtimes.micropython.littlefs.run rows of LITTLEFS_TARGETS (quick: 10 saves)."""
    from kilobit.runtimes.micropython import littlefs
    rows = []
    for pattern, saves in LITTLEFS_TARGETS:
        path = sorted(glob.glob(os.path.join(GOLDEN, pattern)))[0]
        saves = 10 if quick else saves
        progress("littlefs: %s, %d saves" % (os.path.basename(path), saves))
        if littlefs.missing():
            rows.append({"model": os.path.basename(path), "error": littlefs.missing()})
            continue
        rows.append(littlefs.run(path, saves=saves))
    return rows


def littlefs_lines(rows):
    from kilobit.runtimes.micropython import littlefs
    L = ["## (e) kbit checkpoints on littlefs, cut at every block write and erase", "",
         "MicroPython 1.29's unix port (PyPI) with `vfs.VfsLfs2` (littlefs v2 and MicroPython's "
         "VFS glue, what the rp2 port mounts on its flash, here with the rp2 port's progsize "
         "%d) on a block device written in MicroPython (tools/littlefs/powercut.py): %d blocks "
         "of 4,096 bytes, NOR semantics (an erase sets 0xFF, a write only clears bits; *over "
         "unerased*: bytes written where littlefs had not erased). kbit.checkpoint saves through "
         "the built-in open and os.rename, as on a board. Each save starts from a fresh mount "
         "(as after a reset) of the flash the previous save left; an uncut save counts its "
         "block writes and erases, then for each of them the same save runs again with the power "
         "cut as it starts (nothing lands) and torn (the first half of its bytes land), every "
         "later operation failing. After each cut the flash is mounted again: the loader must "
         "return the last complete checkpoint (the deployed model before the first) or the one "
         "under way; from it the learner learns the next %d examples and saves, and a second "
         "restart loads that checkpoint: the results and the state must be the host integer "
         "reference's from the same state, bit for bit (kilobit.runtimes.micropython.littlefs). "
         "A checkpoint every 4 examples of the golden file's learning steps (from its first "
         "again when they run out; where 4 examples left the state as it was, the two "
         "checkpoints are one and count as the last)." % (
             littlefs.PROGSIZE, littlefs.BLOCKS, littlefs.CONT), "",
         "| model (golden file) | file | saves | block writes + erases = cut points | of them "
         "erases | cuts tried (before, torn) | recovered | to the last checkpoint | to the one "
         "under way | over unerased | time |", "|---|---|---|---|---|---|---|---|---|---|---|"]

    def cells(r):
        return (["%s `%s`" % (r["name"], r["model"]), "%d B" % r["file_bytes"]]
                + ["%d" % r[k] for k in ("saves", "ops", "erases", "tried", "recovered", "last",
                                         "under_way")]
                + [str(r["violations"]), "%.0f s" % r["seconds"]])

    L += result_rows(rows, 11, cells, lambda r: ["`%s`" % r["model"],
                                                 "not run: missing %s" % r["error"]])
    L += ["", "Re-run: `kilobit bench faults --only littlefs`. CI: tests/test_littlefs.py cuts ten "
          "saves of the first rkp, the ckp and the larger assoc learner, and checks that the same "
          "cuts catch a save that is not atomic (the file written in two opens, no NAME.new and "
          "rename: some restarts find a truncated checkpoint).", ""]
    return L


def littlefs_ok(rows):
    return all("error" not in r and r["tried"] and r["recovered"] == r["tried"]
               and r["violations"] == 0 for r in rows)


def bad_inputs(progress=print):
    """Every case of kilobit.bench.badinput in a fresh process."""
    from kilobit.bench import badinput
    from kilobit.runtimes.avr import kb_sim
    progress("bad inputs: %d command lines" % len(badinput.CASES))
    with tempfile.TemporaryDirectory(prefix="kilobit-bad-input-") as tmp:
        return badinput.run_all(badinput.in_fresh_process, tmp,
                                needs=lambda name: kb_sim.missing(), progress=progress)


def bad_input_lines(rows):
    from kilobit.bench import badinput
    return (["## (f) Bad inputs to the command line", "",
             "Each command line of kilobit.bench.badinput.CASES (the inputs issue 23 found "
             "mishandled among them), run in a fresh process in a scratch folder of the files it "
             "names ({csv}: a small CSV, {model}: an rkp model file, {g_*}: golden files broken "
             "one way each, {null}/{full}: nodes of /dev/null and /dev/full, {link}: a symlink, "
             "...). *Handled cleanly*: exit status 2 with a last line `kilobit: error: ...` that "
             "names the input, no traceback, the scratch folder as it was (nothing written, left "
             "behind or replaced) and /dev/null, /dev/full still character devices; `-o` onto the "
             "null device and through a symlink succeed (the symlink written through), and a "
             "golden file whose replay differs keeps exit status 1.", ""]
            + badinput.table(rows)
            + ["", "Re-run: `kilobit bench faults --only bad-input`. CI: tests/test_bad_input.py "
               "runs the same list in-process (a few in a fresh process).", ""])


def result_rows(rows, ncols, cells, missing):
    """Table rows of cut runs: cells(r) for each run, missing(r) (its first cells) for one that
    could not start, then a run's first failures, each on a row of its own."""
    out = []
    for r in rows:
        got = missing(r) if "error" in r else cells(r)
        out.append("| " + " | ".join(got) + " |" + " |" * (ncols - len(got)))
        out += ["| | **%s** |" % f + " |" * (ncols - 2) for f in r.get("failures", [])[:3]]
    return out


def run(out="docs/benchmarks/faults.md", quick=False, progress=print, only=()):
    if only:
        return run_only(out, only, quick, progress)
    t0 = time.time()
    cps = checkpoints(progress)
    fz = libfuzzer(200000 if quick else FUZZ_RUNS, progress)
    ps = parsers(*((300, 50) if quick else (PARSER_EXAMPLES, C_EXAMPLES)), progress=progress)
    fr = frames(5000 if quick else FRAMES, progress)
    cuts = eeprom_cuts(quick, progress)
    wear = eeprom_wear(progress)
    lfs = littlefs_cuts(quick, progress)
    bad = bad_inputs(progress)
    L = ["# Faults: fuzzing and fault injection (issue 15)", "",
         "Generated by `kilobit bench faults%s`." % (" --quick" if quick else "")]
    L += run_lines(time.time() - t0)
    L += ["## (a) C model-file loaders and decoders under libFuzzer", "",
          "`firmware_c/fuzz/kb_fuzz_file.c`: every loader (rkp, ckp, bonsai, protonn, assoc) on "
          "any bytes, then learn/score steps or a streamed prediction when the file loads; "
          "AddressSanitizer + UndefinedBehaviorSanitizer, which stop at the first finding. "
          "Seeds: the 54 golden model files, each as is and with its container fixed up (the "
          "harness's first byte), and tests/fuzz/kb_file (the kept regression inputs).", ""]
    if "error" in fz:
        L += ["**not run**: the fuzzer did not build: `%s`" % fz["error"], ""]
    else:
        L += ["| target | executions | exec/s | edges covered | features | new units | "
              "findings |", "|---|---|---|---|---|---|---|",
              "| kb_fuzz_file | %d | %d | %d | %d | %d | %s |"
              % (fz["runs"], fz["exec_per_sec"], fz["cov"], fz["features"], fz["new_units"],
                 ", ".join(fz["findings"]) or "none"), "",
              "Re-run: `make -C firmware_c fuzz && build/firmware_c/fuzz/kb_fuzz_file "
              "-runs=%d -seed=1 CORPUS tests/fuzz/kb_file` with CORPUS the golden model files "
              "as this bench writes them (kilobit.bench.faults.libfuzzer)." % fz["runs"], ""]
        if fz["status"]:
            L += ["```", fz["tail"], "```", ""]
    L += ["## (b) Host, device/kbit and C parsers against each other", "",
          "Mutated golden model files (truncated, bytes flipped, payload changed behind a fixed "
          "length and CRC, a foreign type byte, grown): each parser loads a file or refuses it "
          "with its model-file error, and all agree on which (hypothesis, derandomized; the "
          "strategy of tests/test_parsers_fuzz.py).", "",
          "| parsers | files | loaded | disagreements |", "|---|---|---|---|",
          "| host vs device/kbit | %d | %d | %d |" % (ps["n"], ps["loaded"], len(ps["bad"])),
          "| host vs C (kb_replay, kb_predict, kb_assoc_replay) | %d | | %d |"
          % (ps["cn"], len(ps["cbad"])), ""]
    if ps["bad"] or ps["cbad"]:
        L += ["First disagreements: %s" % (ps["bad"] + ps["cbad"])[:3], ""]
    L += ["## (c) Mutated frames to the firmwares (simulated chips)", "",
          "Each frame complete and wrong in one way (a broken CRC, an unknown op, a wrong "
          "length, a label or a code out of range; kilobit.runtimes.avr.framefuzz), sent between "
          "two dumps, then one valid learning step (a predictor: then one sparse input, its zeros "
          "not sent, so a code a refused update had written would show in its prediction). "
          "*Right*: answered with exactly the error code docs/uart-protocol.md names for it.", "",
          "*EEPROM*: on a firmware built with checkpoints (`C` is then an op, and a `C` with a "
          "payload one more bad frame), the run wrote exactly the EEPROM bytes of its one valid "
          "step: no bad frame wrote any.", "",
          "| chip | model (golden file) | frames | right | state after = before | EEPROM | "
          "valid step after = host | cycles | time |", "|---|---|---|---|---|---|---|---|---|"]
    for r in fr:
        ee = "-" if "eeprom_same" not in r else ("untouched" if r["eeprom_same"] else "**WRITTEN**")
        L.append("| %s | %s (`%s`) | %d | %d | %s | %s | %s | %d | %.1f s |"
                 % (r["board"], r["model"], r["golden"], r["frames"], r["right"],
                    "yes" if r["same"] else "**NO**", ee, "yes" if r["step_ok"] else "**NO**",
                    r["cycles"], r["seconds"]))
    L += ["", "Re-run: `kilobit bench faults` (or kilobit.runtimes.avr.framefuzz.run(model, board, "
          "n, seed) for one chip).", "",
          "## (d) Power cuts during a save", "",
          "kbit checkpoints (device/kbit/checkpoint.py: the model file to NAME.new, then a "
          "rename over NAME; the loader takes the newest file whose CRC holds). The power is cut "
          "at every write and at the rename of a save that follows a complete one (a write "
          "lands half); each restart must come back to the complete save or the one being "
          "written and then learn exactly as that state does (device/kbit/test_checkpoint.py; "
          "tests/test_checkpoint.py also checks rkp, ckp and assoc restarts against the host "
          "reference).", "",
          "| runtime | cut points tried | recovered | |", "|---|---|---|---|"]
    for name, tried, rec, note in cps:
        L.append("| %s | %d | %s | %s |" % (name, tried, "-" if rec is None else rec, note))
    L += ["", "AVR learners' EEPROM checkpoints (firmware_c/avr/kb_persist.h, docs/contract.md "
          "section 11; a checkpoint after every learning step that changed the state, or with "
          "*every 0* a checkpoint frame every 4 steps). A reference run from a blank EEPROM; then "
          "for every EEPROM byte write of it, and each of three ways the cut leaves that byte "
          "(its old value, torn to 0xFF, torn to 0x00), the same input with the power cut as "
          "that write starts (kb_sim --cut-eeprom-write). The chip restarts from its EEPROM: it "
          "must hold the last complete checkpoint or the one under way, then answer the "
          "remaining steps exactly as the golden file's host rows and end in the reference "
          "state (kilobit.runtimes.avr.powercut).", "",
          "| chip | model (golden file) | scheme | steps | checkpoints | EEPROM writes = cut "
          "points | cuts tried | recovered | time |", "|---|---|---|---|---|---|---|---|---|"]

    def cells(r):
        return ([r["board"], "`%s`%s" % (r["model"], " (every 0)" if r["every"] == 0 else ""),
                 r["scheme"]]
                + ["%d" % r[k] for k in ("steps", "checkpoints", "writes", "tried", "recovered")]
                + ["%.0f s" % r["seconds"]])

    L += result_rows(cuts, 9, cells, lambda r: [r["board"], "`%s`" % r["model"],
                                                "not run: missing %s" % r["error"]])
    L += ["", "Re-run one: `python -c \"from kilobit.runtimes import powercut; "
          "print(powercut.run('tests/golden/rkp-laplace-b4-t62-m2-a-6-s1.json', 'attiny2313', "
          "steps=100))\"`; CI cuts the first 4-12 steps of the same cases "
          "(tests/test_powercut.py).", ""]
    if wear:
        L += ["EEPROM wear over the whole golden stream (no cut; kb_sim counts every byte write "
              "and the writes per cell). Lifetime: learnt examples until the most-written cell "
              "reaches the datasheet's 100,000 writes, at this stream's rate of state changes.",
              "", "| chip | model | scheme | examples learnt | checkpoints | EEPROM writes | "
              "writes per example | most-written cell (address) | lifetime, examples |",
              "|---|---|---|---|---|---|---|---|---|"]
        for w in wear:
            L.append("| %s | `%s` | %s | %d | %d | %d | %.2f | %d (%d) | %s |" % (
                w["board"], w["model"], w["scheme"], w["learnt"], w["checkpoints"],
                w["writes"], w["writes_per_example"], w["cell_max"], w["cell_max_addr"],
                "{:,}".format(w["lifetime_examples"]) if w["lifetime_examples"] else "-"))
        L.append("")
    L += littlefs_lines(lfs) + bad_input_lines(bad)
    ok = "error" not in fz and not fz["findings"] and not fz["status"] and not ps["bad"] and \
        not ps["cbad"] and all(r["right"] == r["frames"] and r["same"] and r["step_ok"]
                               and r.get("eeprom_same", True) for r in fr)
    cut_ok = all(rec == tried and tried for _, tried, rec, _ in cps)
    ee_ok = all("error" not in r and r["tried"] and r["recovered"] == r["tried"] for r in cuts)
    L += ["## Verdict", "", "Fuzzing and frame injection: %s. kbit checkpoints: %s. AVR EEPROM "
          "checkpoints: %s. kbit checkpoints on littlefs: %s. Bad inputs: %s." % (
              "no finding" if ok else "**findings, see above**",
              "every cut point recovered" if cut_ok else "**NOT all recovered**",
              "every cut point recovered (%d)" % sum(r["tried"] for r in cuts)
              if ee_ok else "**NOT all recovered**",
              "every cut recovered (%d)" % sum(r["tried"] for r in lfs) if littlefs_ok(lfs)
              else "**NOT all recovered**",
              "all %d handled cleanly" % len(bad) if all(p is None for _, p in bad)
              else "**%d not handled cleanly**" % sum(p is not None for _, p in bad)), ""]
    write_report(out, "\n".join(L))
    return dict(fuzz=fz, parsers=ps, frames=fr, checkpoints=cps, eeprom=cuts, wear=wear,
                littlefs=lfs, bad_inputs=bad)


def run_only(out, only, quick=False, progress=print):
    """Run the sections `only` names alone and put them into the page at out as it stands (a
    page of them alone when there is none yet); the rest keeps what its last full run wrote."""
    t0 = time.time()
    try:
        with open(out, encoding="utf-8") as f:
            text = f.read()
    except FileNotFoundError:
        text = "# Faults: fuzzing and fault injection (issue 15)\n"
    res = {}
    for name in only:
        if name == "littlefs":
            res[name] = littlefs_cuts(quick, progress)
            lines = littlefs_lines(res[name])
        else:
            res[name] = bad_inputs(progress)
            lines = bad_input_lines(res[name])
        lines[1:1] = ["", "This section alone: `kilobit bench faults --only %s%s`, %s, %.0f s "
                      "(the page's header and verdict are its last full run's)."
                      % (name, " --quick" if quick else "",
                         time.strftime("%Y-%m-%d %H:%M"), time.time() - t0)]
        text = replace_section(text, lines)
    write_report(out, text)
    return res


# ---- `kilobit bench faults` (kilobit.cli finds every bench module by these three) ----
HELP = "fuzzing (libFuzzer, hypothesis) and mutated UART frames (issue 15)"


def add_args(b):
    b.add_argument("-o", "--output", default="docs/benchmarks/faults.md")
    b.add_argument("--quick", action="store_true", help="a smoke run: short fuzzing, 5000 frames")
    b.add_argument("--only", action="append", choices=SECTIONS, default=[],
                   help="run this section alone and put it into the page (repeatable)")


def main(a):
    run(out=a.output, quick=a.quick, only=a.only)
    print("wrote %s" % a.output)
    return 0
