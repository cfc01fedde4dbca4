"""Bad inputs to the command line (issue 23), tried as a hostile new user would type them.

Each case is a command line and what must come of it: exit status 2 and a last line
`kilobit: error: ...` on stderr that names the input (`says`), no traceback, and nothing written,
left behind or replaced: the scratch folder the case runs in is the same afterwards, and
/dev/null and /dev/full are still character devices. A few cases are not errors but hazards
(`-o` onto the null device, `-o` through a symlink) and must succeed without replacing what they
name; one is a golden file whose replay really differs, which keeps exit status 1. The device
cases write to nodes of /dev/null and /dev/full made in the scratch folder when root may make
them: before this issue, `-o /dev/full` as root replaced /dev/full with a regular file.

tests/test_bad_input.py runs every case (in-process through kilobit.cli.main, a few in a fresh
process); `kilobit bench faults --only bad-input` runs each in a fresh process and writes the
table of docs/benchmarks/faults.md. Both read CASES, so the page cannot drift from the tests.
The inputs the issue found mishandled are among them, kept as regression cases.
"""
import copy
import hashlib
import os
import stat
from collections import namedtuple

#: family: output paths, golden files, numbers, boards and ports; command: as the table groups
#: them; args: the command line, {name} a file of prepare(); code: the exit status it must end
#: with; says: a piece of its last stderr line (the output for code 0); after: what else to check
#: ("link": the symlink case's target written through, the link kept), needs: a toolchain
Case = namedtuple("Case", "family command args code says after needs")


def case(family, command, args, code=2, says="", after=None, needs=None):
    return Case(family, command, tuple(args.split(" ")) if isinstance(args, str) else
                tuple(args), code, says, after, needs)


OUT, GOLDEN, NUM, BOARD = "output paths", "golden files", "numbers", "boards and ports"
DATA = "data and model files"
TRAIN = "train rkp --data {csv} -o"
GMAKE = "golden make rkp --seed 1 --steps 20 -o"
GCHECK = "golden check --runtime host "

CASES = [
    # -o: checked before the work, written all or nothing, never replacing what it must not
    case(OUT, "train", TRAIN + " {tmp}/missing/m.kb", says="no directory"),
    case(OUT, "train", TRAIN + " {dir}", says="is a directory"),
    case(OUT, "train", TRAIN.split(" ") + [""], says="output file name is empty"),
    case(OUT, "train", TRAIN + " /sys/kilobit-m.kb", says="cannot create a file in /sys"),
    case(OUT, "train", TRAIN + " {csv}", says="also an input"),
    case(OUT, "train", TRAIN + " {dangling}", says="symlink to nothing"),
    case(OUT, "train", TRAIN + " {link}", code=0, says="model file", after="link"),
    case(OUT, "train", "train ckp --data {csv} -o {full}", says="No space left on device"),
    case(OUT, "golden make", GMAKE + " {dir}", says="is a directory"),
    case(OUT, "golden make", GMAKE + " {full}", says="No space left on device"),
    case(OUT, "golden make", GMAKE + " {null}", code=0, says="wrote"),
    case(OUT, "golden make", "golden make --model {model} --data {csv} -o {model}",
         says="also an input"),
    case(OUT, "golden make", "golden make --model {model} --data {csv} -o {csv}",
         says="also an input"),
    case(OUT, "golden make-set", "golden make-set {csv}", says="not a directory"),
    case(OUT, "golden make-set", "golden make-set {tmp}/a/b", says="no directory"),
    case(OUT, "bench", "bench faults -o /sys/kilobit-faults.md", says="cannot create a file in"),
    case(OUT, "bench", "bench ckp --quick -o {dir}", says="is a directory"),
    case(OUT, "bench", ["bench", "rkp", "-o", ""], says="output file name is empty"),
    case(OUT, "demo", "demo -o {tmp}/missing/demo.kb", says="no directory"),
    case(OUT, "demo", "demo -o {dir}", says="is a directory"),
    # golden files: the whole file checked before any runtime starts
    case(GOLDEN, "golden check", GCHECK + "{g_list}", says="not a kilobit golden file"),
    case(GOLDEN, "golden check", GCHECK + "{g_notjson}", says="cannot read golden file"),
    case(GOLDEN, "golden check", GCHECK + "{tmp}/nosuch.json", says="cannot read golden file"),
    case(GOLDEN, "golden check", GCHECK + "{g_nomodel}", says="no 'model' key"),
    case(GOLDEN, "golden check", GCHECK + "{g_nosteps}", says="no 'steps' key"),
    case(GOLDEN, "golden check", GCHECK + "{g_noexpect}", says="no 'expect' key"),
    case(GOLDEN, "golden check", GCHECK + "{g_nonhex}", says="'model_file' is not hex"),
    case(GOLDEN, "golden check", GCHECK + "{g_memhex}", says="'final_memory' is not hex"),
    case(GOLDEN, "golden check", GCHECK + "{g_shortrow}", says="expect row 3 is not 5 integers"),
    case(GOLDEN, "golden check", GCHECK + "{g_strfield}", says="expect row 0 is not 5 integers"),
    case(GOLDEN, "golden check", GCHECK + "{g_rows}", says="20 steps but 19 expect rows"),
    case(GOLDEN, "golden check", GCHECK + "{g_stepint}", says="step 2 is a int"),
    case(GOLDEN, "golden check", GCHECK + "{g_empty}", says="no steps"),
    case(GOLDEN, "golden check", GCHECK + "{g_code}", says="input 200 is outside"),
    case(GOLDEN, "golden check", GCHECK + "{g_negative}", says="outside"),
    case(GOLDEN, "golden check", GCHECK + "{g_badop}", says="do not parse"),
    case(GOLDEN, "golden check", GCHECK + "{g_label}", says="do not parse"),
    case(GOLDEN, "golden check", GCHECK + "{g_dims}", says="do not parse"),
    case(GOLDEN, "golden check", GCHECK + "{g_truncated}", says="model_file: truncated"),
    case(GOLDEN, "golden check", GCHECK + "{g_crc}", says="model_file: corrupt"),
    case(GOLDEN, "golden check", GCHECK + "{g_unknown}", says="unknown model 'svm'"),
    case(GOLDEN, "golden check", GCHECK + "{g_othertype}", says="model_file is a ckp model"),
    case(GOLDEN, "golden check", "golden check {g_nomodel}", says="no 'model' key"),
    case(GOLDEN, "golden check", GCHECK + "{g_good} {g_shortrow}", says="expect row 3"),
    case(GOLDEN, "golden check", GCHECK + "{g_diff}", code=1, says="agree"),
    case(GOLDEN, "deploy", "deploy {model} --board rp2040 --port /dev/null --golden {g_nomodel} "
                           "--dry-run", says="no 'model' key"),
    # numbers: range and finiteness at parse time, the bound in the message
    *[case(NUM, "train", "train ckp --data {csv} --A %s -o {out}" % v, says=s)
      for v, s in (("inf", "not a finite number"), ("1e999", "not a finite number"),
                   ("nan", "not a finite number"), ("0", "0.001 to 65.535"),
                   ("-1", "0.001 to 65.535"), ("x", "not a number"))],
    *[case(NUM, "train", "train protonn --data {csv} --gamma %s -o {out}" % v, says=s)
      for v, s in (("inf", "not a finite number"), ("nan", "not a finite number"),
                   ("0", "greater than 0"), ("-2", "greater than 0"))],
    *[case(NUM, "train", "train rkp --data {csv} %s -o {out}" % v, says=s)
      for v, s in (("--bits 0", "1 to 8"), ("--bits 9", "1 to 8"), ("--budget 0", "1 to 65535"),
                   ("--budget -1", "1 to 65535"), ("--C 256", "1 to 255"),
                   ("--width 99", "-16 to 16"), ("--seed -1", "0 to 4294967295"),
                   ("--seed 1.5", "not a whole number"), ("--bits 1e9", "not a whole number"))],
    case(NUM, "train", "train ckp --data {csv} --L 0 -o {out}", says="2 to 65535"),
    case(NUM, "train", "train bonsai --data {csv} --epochs 1,1000000,1 -o {out}",
         says="each count at most 10000"),
    case(NUM, "train", "train bonsai --data {csv} --epochs 0,0,0 -o {out}",
         says="three non-negative counts"),
    case(NUM, "train", "train bonsai --data {csv} --depth 99 -o {out}", says="0 to 6"),
    case(NUM, "train", "train protonn --data {csv} --epochs 30 -o {out}", says="two non-negative"),
    case(NUM, "train", "train protonn --data {csv} --epochs 5,99999 -o {out}",
         says="each count at most 10000"),
    case(NUM, "train", "train protonn --data {csv} --batch 0 -o {out}", says="at least 1"),
    case(NUM, "train", "train assoc --data {csv} --P 0 -o {out}", says="1 to 255"),
    case(NUM, "train", "train assoc --data {csv} --cap 0 -o {out}", says="1 to 255"),
    case(NUM, "train", "train rkp --data {bigcsv} -o {out}", says="beyond a model file's float32"),
    case(NUM, "train", "train rkp --data {infcsv} -o {out}", says="NaN or infinite"),
    case(NUM, "eval", "eval {model} --data {csv} --seed -3", says="0 to 4294967295"),
    case(NUM, "golden make", "golden make rkp --steps 0 -o {out}", says="1 to 100000"),
    case(NUM, "golden make", "golden make rkp --steps -5 -o {out}", says="1 to 100000"),
    case(NUM, "golden make", "golden make rkp --steps 10000000 -o {out}", says="1 to 100000"),
    case(NUM, "golden make", "golden make rkp --budget inf -o {out}",
         says="--budget wants a whole number"),
    case(NUM, "golden make", "golden make rkp --budget 99999999 -o {out}", says="budget must be"),
    case(NUM, "bench", "bench ckp --reps 0", says="1 to 1000"),
    case(NUM, "bench", "bench ckp --reps 100000", says="1 to 1000"),
    case(NUM, "bench", "bench rkp --shuffles -1", says="1 to 1000"),
    case(NUM, "stream", "stream --board uno --data {csv} --limit -1", says="at least 0"),
    case(NUM, "stream", "stream --board uno --data {csv} --baud 0", says="1 to 10000000"),
    case(NUM, "fit", "fit {model} --board uno --checkpoint-every -1", says="0 to 255"),
    case(NUM, "fit", "fit {model} --board uno --checkpoint-every 256", says="0 to 255"),
    # boards and ports: refused in kilobit's words before any tool or board starts
    case(BOARD, "golden check", GCHECK.replace("host", "rp2040@/dev/nosuch") + "{g_good}",
         says="no serial port /dev/nosuch"),
    case(BOARD, "golden check", GCHECK.replace("host", "uno@/dev/nosuch") + "{g_good}",
         says="no serial port /dev/nosuch"),
    case(BOARD, "golden check", GCHECK.replace("host", "rp2040@") + "{g_good}",
         says="no port after @"),
    case(BOARD, "golden check", GCHECK.replace("host", "nosuch") + "{g_good}",
         says="unknown runtime"),
    case(BOARD, "run", "run {script} --board rp2040 --port /dev/nosuch",
         says="no serial port /dev/nosuch"),
    case(BOARD, "run", "run {script} --board uno --port /dev/null", says="runs the C firmware"),
    case(BOARD, "deploy", "deploy {model} --board rp2040 --port /dev/nosuch",
         says="no serial port /dev/nosuch"),
    case(BOARD, "deploy", "deploy {bigmodel} --board uno --port /dev/null --dry-run",
         says="does not fit uno", needs="avr"),
    case(BOARD, "deploy", "deploy {model} --board rp2040 --port /dev/null --checkpoint-every 1 "
                          "--dry-run", says="kbit.checkpoint"),
    case(BOARD, "fit", "fit {model} --board rp2040 --checkpoint-every 1", says="kbit.checkpoint"),
    case(BOARD, "fit", "fit {model} --board nosuch", says="unknown board"),
    case(BOARD, "board virtual", "board virtual --tcp 70000", says="0 to 65535"),
    case(BOARD, "board virtual", "board virtual --tcp -1", says="0 to 65535"),
    case(BOARD, "board virtual", "board virtual --link {tmp}/missing/pty", says="no directory"),
    case(BOARD, "board virtual", "board virtual --link {csv}", says="not a symlink"),
    case(BOARD, "board sim", "board sim --board uno --link {tmp}/missing/pty",
         says="no directory"),
    case(BOARD, "stream", "stream --board uno --port /dev/nosuch --data {csv}",
         says="cannot open serial port /dev/nosuch"),
    case(BOARD, "demo", "demo --runtime nosuch -o {out}", says="unknown runtime"),
    case(BOARD, "demo", "demo --board rp2040 -o {out}", says="needs both --board and --port"),
    case(BOARD, "demo", "demo --board rp2040 --port /dev/nosuch -o {out}",
         says="no serial port /dev/nosuch"),
    case(BOARD, "inspect", "inspect {model} --board nosuch", says="unknown board 'nosuch'"),
    case(BOARD, "predict", "predict {model} --data {csv} --runtime nosuch",
         says="unknown runtime 'nosuch'"),
    # data and model files (issue 24): named as the user gave them, one wording per mistake
    case(DATA, "inspect", "inspect {tmp}/nosuch.kb", says="cannot read model file"),
    case(DATA, "inspect", "inspect {csv}", says="not a kilobit model file"),
    case(DATA, "inspect", "inspect {g_good}", says="not a kilobit model file"),
    case(DATA, "predict", "predict {tmp}/nosuch.kb --data {csv}", says="cannot read model file"),
    case(DATA, "predict", "predict {model} --data {tmp}/nosuch.csv",
         says="/nosuch.csv (a CSV file, or one of the data sets"),
    case(DATA, "predict", "predict {model} --data nosuch", says="unknown data set 'nosuch'"),
    case(DATA, "predict", "predict {model} --data pendigits",
         says="pendigits has 16 feature columns, the model expects 2"),
    case(DATA, "predict", "predict {model} --data {widecsv}",
         says="has 5 feature columns, the model expects 2"),
    case(DATA, "predict", "predict {model} --data {bigcodecsv}", says="whole numbers 0 .. 15"),
    case(DATA, "predict", "predict {model} --data {pipecsv}", says="separated by '|' (pipes)"),
    case(DATA, "predict", "predict {model} --data {csv} -o {model}", says="also an input"),
    case(DATA, "predict", "predict {model} --data {csv} -o {dir}", says="is a directory"),
    case(NUM, "predict", "predict {model} --data {csv} --limit 0", says="at least 1"),
    case(NUM, "predict", "predict {model} --data banana --seed -1", says="0 to 4294967295"),
    case(DATA, "train", "train rkp --data {tmp}/nosuch.csv -o {out}",
         says="/nosuch.csv (a CSV file, or one of the data sets"),
    case(DATA, "train", "train rkp --data {pipecsv} -o {out}", says="separated by '|' (pipes)"),
    case(DATA, "train", "train rkp --data {spacecsv} -o {out}", says="separated by spaces"),
    case(DATA, "train", "train rkp --data {deccsv} -o {out}", says="decimal commas"),
    case(DATA, "eval", "eval {model} --data {tmp}/nosuch.csv", says="no such file"),
    case(DATA, "eval", "eval {model} --data pendigits", says="16 feature columns, the model"),
    case(OUT, "eval", "eval {model} --data {csv} --plot {dir}", says="is a directory"),
    case(OUT, "eval", "eval {model} --data {csv} --plot {csv}", says="also an input"),
    case(OUT, "stream", "stream --board uno --data {csv} --plot {tmp}/missing/c.png",
         says="no directory"),
    case(DATA, "data", "data list --task regression", says="invalid choice"),
    case(DATA, "data", "data show banana", says="invalid choice"),
]

# Issue 30, hostile input round two: each block is one area's regression cases (its own test
# file beside tests/test_bad_input.py holds what a command line cannot express).
# --- issue 30: inputs (pipes, FIFOs, /dev/stdin, endless and absurd files, values in files) ---
# (a FIFO or a pipe needs a writer beside the command: tests/test_bad_input_inputs.py)
ENDLESS_MODEL = "past the 64 MiB a model file may be"
CASES += [
    # a character device with no end, as a model file (every command that reads one), as data,
    # as a golden file, as a script: refused at the reader's cap, before memory runs out
    *[case(DATA, " ".join(c.split(" ")[:2 if c[0] in "bg" else 1]), c, says=ENDLESS_MODEL)
      for c in (
        "inspect /dev/zero", "predict /dev/zero --data {csv}", "eval /dev/zero --data {csv}",
        "export /dev/zero -o {tmp}/m.h", "fit /dev/zero --board uno",
        "deploy /dev/zero --board rp2040 --port /dev/null --dry-run --as m.kb",
        "deploy /dev/zero --board uno --port /dev/null --dry-run",
        "stream --board uno --port sim --model /dev/zero --data {csv}",
        "golden make --model /dev/zero --data {csv} -o {out}",
        "board sim --board uno --model /dev/zero")],
    case(DATA, "predict", "predict {model} --data /dev/zero",
         says="past the 256 MiB a CSV file may be"),
    case(DATA, "golden check", GCHECK + "/dev/zero", says="past the 160 MiB a golden file"),
    case(DATA, "golden check", GCHECK + "{g_nested}", says="JSON nested deeper than 64 levels"),
    case(DATA, "inspect", "inspect {dir}", says="cannot read model file"),
    case(DATA, "run", "run {dir} --board rp2040 --port /dev/null",
         says="cannot read script"),
    case(DATA, "run", "run /dev/zero --board rp2040 --port /dev/null",
         says="past the 1 MiB a script may be"),
    # a float scaler that holds inf or NaN under a valid CRC: a bad trailer (contract 4.1)
    case(DATA, "inspect", "inspect {infmodel}", says="infmodel.kb: bad rkp trailer"),
    case(DATA, "predict", "predict {infmodel} --data {csv}", says="bad rkp trailer"),
    case(DATA, "eval", "eval {nanmodel} --data {csv}", says="nanmodel.kb: bad rkp trailer"),
    case(DATA, "stream", "stream --board uno --port sim --model {infmodel} --data {csv}",
         says="bad rkp trailer"),
    case(DATA, "fit", "fit {nanmodel} --board uno", says="bad rkp trailer"),
    case(DATA, "golden make", "golden make --model {infmodel} --data {csv} -o {out}",
         says="bad rkp trailer"),
    # golden make: a parameter it cannot honour is refused, never ignored
    *[case(NUM, "golden make", "golden make rkp --C %s -o {out}" % v, says="C must be in 1..255")
      for v in ("999", "0", "-5")],
    case(NUM, "golden make", "golden make rkp --C x -o {out}", says="--C wants a whole number"),
    case(NUM, "golden make", "golden make ckp --pretrain -5 -o {out}",
         says="--pretrain must be a whole number 0 to 100000"),
    case(NUM, "golden make", "golden make ckp --norm 4294967296 -o {out}",
         says="--norm must be a whole number"),
    case(DATA, "golden make", "golden make --model {model} --data {csv} --C 5 -o {out}",
         says="a model file's parameters are its own"),
    case(DATA, "golden make", "golden make rkp --test {csv} -o {out}",
         says="--test goes with --model"),
    case(DATA, "golden make", "golden make features --window 4 --axes 1 --test {csv} -o {out}",
         says="steps or parameters, no --test"),
]


def _input_files(tmp):
    """The inputs block's files: a golden file nested 200,000 deep, and the small model with a
    float scaler holding +inf, or NaN, under a valid CRC."""
    import numpy as np

    from kilobit.models.rkp.model import RKPInt
    p = {"g_nested": os.path.join(tmp, "g_nested.json")}
    with open(p["g_nested"], "w") as f:
        f.write('{"format": "kilobit-golden", "x": ' + "[" * 200000 + "]" * 200000 + "}\n")
    for name, bad in (("infmodel", np.inf), ("nanmodel", np.nan)):
        p[name] = os.path.join(tmp, name + ".kb")
        lo, hi = np.zeros(2, np.float32), np.array([1, bad], np.float32)
        with open(p[name], "wb") as f:
            f.write(RKPInt("laplace", 4, 2, 62, -6, 255, seed=0).to_bytes((lo, hi)))
    return p
# --- issue 30: outputs (Arduino library, golden sets, firmware to a drive, board file names) ---
FLASH = "flash-firmware {uf2} --board rp2040 --port"
DEPLOY_AS = "deploy {model} --board rp2040 --port /dev/null --dry-run --as"
CASES += [
    case(BOARD, "flash-firmware", FLASH.split(" ") + [""], says="--port is empty"),
    case(BOARD, "flash-firmware", FLASH + " /", says="not the RPI-RP2 boot drive (it has no"),
    case(BOARD, "flash-firmware", FLASH + " {tmp}", says="not the RPI-RP2 boot drive"),
    case(BOARD, "flash-firmware", FLASH + " {otherdrive}", says="says Board-ID RP2350"),
    case(BOARD, "flash-firmware", FLASH + " {csv}", says="is not a folder"),
    case(BOARD, "flash-firmware", "flash-firmware {csv} --board rp2040 --port {drive}",
         says="is not a UF2 file for the RP2040"),
    case(BOARD, "flash-firmware", "flash-firmware {model} --board rp2040 --port {drive}",
         says="is not a UF2 file for the RP2040"),
    case(BOARD, "flash-firmware", ["flash-firmware", "{csv}", "--board", "esp32", "--port", ""],
         says="--port is empty"),
    case(BOARD, "deploy", "deploy {mainpy} --board rp2040 --port /dev/null --dry-run",
         says="cannot store the model on the board as 'main.py'"),
    case(BOARD, "deploy", "deploy {libmodel} --board rp2040 --port /dev/null --dry-run",
         says="cannot store the model on the board as 'lib'"),
    *[case(BOARD, "deploy", DEPLOY_AS + " " + name, says="board as %r" % name)
      for name in ("main.py", "boot.py", "lib", "lib/m.kb", "../m.kb")],
    case(OUT, "export", "export --arduino-library {csv}", says="it is not a directory"),
    case(OUT, "export", "export --arduino-library {dangling}", says="a symlink to nothing"),
    case(OUT, "export", "export --arduino-library {tmp}/missing/lib", says="no directory"),
    case(OUT, "export", "export --arduino-library {tmp}", says="not a kilobit library"),
    case(OUT, "golden make-set", "golden make-set {dangling}", says="a symlink to nothing"),
    case(OUT, "golden make-set", "golden make-set {link}", says="it is not a directory"),
    case(OUT, "golden make-set", "golden make-set --raw {csv}", says="it is not a directory"),
    case(OUT, "golden make-set", "golden make-set --features {tmp}/a/b", says="no directory"),
]
# --- issue 30: builds and export (cache races, toolchain failures, --name, fit) ---
BUILDS = "builds and export"
CASES += [
    # --name: a prefix that would not compile, or would break the user's program, or collide
    *[case(BUILDS, "export", "export {model} -o {tmp}/m.h --target host --name " + n, says=s)
      for n, s in (("NULL", "a macro of the C library"), ("INT8_MAX", "a macro of the C library"),
                   ("CHAR_BIT", "a macro of the C library"), ("EOF", "a macro of the C library"),
                   ("PORTB", "a macro of avr-libc"), ("SREG", "a macro of avr-libc"),
                   ("SP", "a macro of avr-libc"), ("F_CPU", "a macro of avr-libc"),
                   ("PROGMEM", "a macro of avr-libc"), ("AVR", "a macro of the compiler"),
                   ("linux", "a macro of the compiler"), ("unix", "a macro of the compiler"),
                   ("HIGH", "a macro of the Arduino core"), ("constrain", "the Arduino core"),
                   ("while", "a C keyword"), ("class", "a C++ keyword"),
                   ("int8", "macro INT8_"), ("A", "lower case only"), ("_x", "begin with _"))],
    # a model too big for the board: fit's sentence, the model named, never a compiler's log
    case(BUILDS, "export", "export {bigmodel} -o {tmp}/m.h",
         says="bigmodel.kb does not fit avr (the Arduino Uno's ATmega328P): static RAM",
         needs="avr"),
    case(BUILDS, "stream", "stream --board uno --port sim --model {bigmodel} --data {csv}",
         says="bigmodel.kb does not fit uno: static RAM", needs="avr"),
    case(BUILDS, "stream", "stream --board uno --port sim --bits 8 --budget 65535 --data {csv}",
         says="the rkp model does not fit uno: its firmware does not build (size of array",
         needs="avr"),
    case(BUILDS, "stream", "stream --board attiny2313 --port sim --bits 8 --budget 30000 "
                           "--data {csv}", says="does not fit attiny2313: its firmware does not "
                                                "build", needs="avr"),
]
# --- issue 30: signals (Ctrl-C, SIGTERM, SIGHUP) ---
# none: a Case runs to its end, a signal needs a moment and a process of its own
# (tests/test_bad_input_signals.py sends them at each moment of a command)
CASES += [
]


def _csv(path, rows):
    with open(path, "w") as f:
        f.write("x1,x2,label\n" + "".join("%s,%s,%d\n" % r for r in rows))


def _golden_docs():
    """{name: document or text} of the golden files the cases read: a good one (a small rkp
    case made by the host), one whose replay differs, and the good one broken one way each."""
    from kilobit.models import registry
    rkp, ckp = registry.get("rkp").golden, registry.get("ckp").golden
    good = rkp.make(kernel="laplace", bits=4, budget=6, width=-2, dims=2, steps=20, seed=3)
    other = ckp.make(**ckp.random_params(2, 5))
    blob = bytes.fromhex(good["model_file"])

    def edit(fn):
        d = copy.deepcopy(good)
        fn(d)
        return d

    def set_(key, value):
        return edit(lambda d: d.__setitem__(key, value))

    def drop(key):
        return edit(lambda d: d.pop(key))

    def step(i, text):
        return edit(lambda d: d["steps"].__setitem__(i, text))

    flipped = bytearray(blob)
    flipped[20] ^= 0x40
    docs = {
        "g_good": good,
        "g_diff": edit(lambda d: d["expect"][4].__setitem__(0, d["expect"][4][0] + 1)),
        "g_list": "[1, 2, 3]\n",
        "g_notjson": "{\"format\": \"kilobit-golden\",\n",
        "g_nomodel": drop("model"), "g_nosteps": drop("steps"), "g_noexpect": drop("expect"),
        "g_nonhex": set_("model_file", "zz" + good["model_file"][2:]),
        "g_memhex": set_("final_memory", "xyz"),
        "g_shortrow": edit(lambda d: d["expect"][3].pop()),
        "g_strfield": edit(lambda d: d["expect"][0].__setitem__(1, "1")),
        "g_rows": edit(lambda d: d["expect"].pop()),
        "g_stepint": step(2, 7),
        "g_empty": edit(lambda d: (d.__setitem__("steps", []), d.__setitem__("expect", []))),
        "g_code": step(1, "L 1 200 3"), "g_negative": step(1, "Q -1 3"),
        "g_badop": step(0, "X 1 2 3"), "g_label": step(0, "L 7 1 2"),
        "g_dims": step(0, "Q 1 2 3"),
        "g_truncated": set_("model_file", blob[:len(blob) - 9].hex()),
        "g_crc": set_("model_file", bytes(flipped).hex()),
        "g_unknown": set_("model", "svm"),
        "g_othertype": set_("model_file", other["model_file"]),
    }
    return docs


def _device(tmp, name):
    """{null} and {full}: as root, nodes of the same devices in tmp, so that a regression that
    replaces what -o names (as root it replaced /dev/full) replaces only them; else the real
    ones, which a user without root cannot replace."""
    path = os.path.join(tmp, name)
    try:
        os.mknod(path, 0o666 | stat.S_IFCHR, os.stat("/dev/" + name).st_rdev)
        return path
    except OSError:
        return "/dev/" + name


#: the UF2 families of the RP2040 and of the RP2350's Arm cores (the UF2 specification's list)
UF2_RP2040, UF2_RP2350_ARM = 0xE48BFF56, 0xE48BFF59


def uf2(image, family=UF2_RP2040, payload=256):
    """A UF2 file of `image` at the RP2040's flash (0x10000000), made as MicroPython's are."""
    import struct
    chunks = [image[i:i + payload] for i in range(0, len(image), payload)]
    out = b""
    for n, chunk in enumerate(chunks):
        out += struct.pack("<8I", 0x0A324655, 0x9E5D5157, 0x2000, 0x10000000 + n * payload,
                           len(chunk), n, len(chunks), family)
        out += chunk.ljust(476, b"\0") + struct.pack("<I", 0x0AB16F30)
    return out


def boot_drive(folder, board_id="RPI-RP2"):
    """The folder `folder` (made) as the RP2040's boot ROM shows its USB drive."""
    os.mkdir(folder)
    with open(os.path.join(folder, "INFO_UF2.TXT"), "w") as f:
        f.write("UF2 Bootloader v3.0\nModel: Raspberry Pi RP2\nBoard-ID: %s\n" % board_id)
    return folder


def _output_files(tmp, model):
    """Issue 30's output cases' files: a UF2 firmware, an RP2040 boot drive and another chip's,
    and the model file `model` copied under names a board must not get (main.py, lib)."""
    p = {"uf2": os.path.join(tmp, "fw.uf2"),
         "drive": boot_drive(os.path.join(tmp, "RPI-RP2")),
         "otherdrive": boot_drive(os.path.join(tmp, "RP2350"), "RP2350"),
         "mainpy": os.path.join(tmp, "main.py"), "libmodel": os.path.join(tmp, "lib")}
    with open(p["uf2"], "wb") as f:
        f.write(uf2(bytes(range(256)) * 3))
    with open(model, "rb") as f:
        blob = f.read()
    for name in ("mainpy", "libmodel"):
        with open(p[name], "wb") as f:
            f.write(blob)
    return p


def prepare(tmp):
    """Make the files the cases name in the folder tmp; {name: path} for CASES' args."""
    from kilobit.core import goldenfile
    from kilobit.models.rkp.model import RKPInt
    p = {"tmp": tmp, "dir": os.path.join(tmp, "adir"), "out": os.path.join(tmp, "out.kb"),
         "null": _device(tmp, "null"), "full": _device(tmp, "full")}
    os.mkdir(p["dir"])
    rows = [((i * 7) % 10, (i * 3) % 10, ((i * 7) % 10 > 4) ^ ((i * 3) % 10 > 4))
            for i in range(40)]
    for name, bad in (("csv", None), ("bigcsv", "1e39"), ("infcsv", "1e999")):
        p[name] = os.path.join(tmp, name + ".csv")
        _csv(p[name], rows[:20] + [(bad, 1, 0)] + rows[20:] if bad else rows)
    for name, text in (("widecsv", "1,2,3,4,0\n5,6,7,8,1\n"), ("bigcodecsv", "1,99,0\n3,4,1\n"),
                       ("pipecsv", "x1|x2|label\n1|2|0\n3|4|1\n"),
                       ("spacecsv", "1 2 0\n3 4 1\n"), ("deccsv", "1,5;2,0;1\n3;4;0\n")):
        p[name] = os.path.join(tmp, name + ".csv")
        with open(p[name], "w") as f:
            f.write(text)
    for name, m in (("model", RKPInt("laplace", 4, 2, 62, -6, 255, seed=0)),
                    ("bigmodel", RKPInt("laplace", 8, 2, 2000, -6, 255, seed=0))):
        p[name] = os.path.join(tmp, name + ".kb")
        with open(p[name], "wb") as f:
            f.write(m.to_bytes())
    p["script"] = os.path.join(tmp, "s.py")
    with open(p["script"], "w") as f:
        f.write("print(1)\n")
    p.update(_output_files(tmp, p["model"]))
    p.update(_input_files(tmp))
    with open(os.path.join(tmp, "target.kb"), "w") as f:
        f.write("the file the symlink names\n")
    p["link"] = os.path.join(tmp, "link.kb")
    os.symlink("target.kb", p["link"])
    p["dangling"] = os.path.join(tmp, "dangling.kb")
    os.symlink("nowhere.kb", p["dangling"])
    for name, doc in _golden_docs().items():
        p[name] = os.path.join(tmp, name + ".json")
        if isinstance(doc, str):
            with open(p[name], "w") as f:
                f.write(doc)
        else:
            goldenfile.dump(doc, p[name])
    return p


def argv(c, paths):
    return [a.format(**paths) for a in c.args]


def snapshot(tmp):
    """{relative path: what it is}: a file by its content's hash, a symlink by its target."""
    out = {}
    for root, dirs, files in os.walk(tmp):
        for n in dirs + files:
            path = os.path.join(root, n)
            rel = os.path.relpath(path, tmp)
            mode = os.lstat(path).st_mode
            if stat.S_ISLNK(mode):
                out[rel] = "-> " + os.readlink(path)
            elif stat.S_ISDIR(mode):
                out[rel] = "dir"
            elif stat.S_ISCHR(mode):
                out[rel] = "character device %d" % os.lstat(path).st_rdev
            else:
                with open(path, "rb") as f:
                    out[rel] = hashlib.sha1(f.read()).hexdigest()
    return out


def verdict(c, code, out, err, before, after):
    """None when the case was handled cleanly, else what went wrong."""
    lines = err.strip().splitlines()
    for dev in ("/dev/null", "/dev/full"):
        if not stat.S_ISCHR(os.lstat(dev).st_mode):
            return "%s is no longer a character device" % dev
    if "Traceback" in err or "Traceback" in out:
        return "a traceback: %s" % (lines[-1] if lines else "")
    if code != c.code:
        return "exit status %s, not %d: %s" % (code, c.code, lines[-1] if lines else out[-200:])
    if c.code == 2 and not (lines and lines[-1].startswith("kilobit: error: ")):
        return "its last line is not `kilobit: error: ...`: %r" % (lines[-1:] or "")
    said = (lines[-1] if c.code == 2 and lines else out)
    if c.says not in said:
        return "%r does not say %r" % (said[-300:], c.says)
    changed = sorted(k for k in set(before) | set(after) if before.get(k) != after.get(k))
    if c.after == "link":
        if changed != ["target.kb"] or after["link.kb"] != "-> target.kb":
            return "the symlink was not written through (changed: %s)" % changed
    elif changed:
        return "files changed, appeared or vanished: %s" % ", ".join(changed)
    return None


def shown(c):
    """The case's command line as the table shows it."""
    return "kilobit " + " ".join(a if a else '""' for a in c.args)


def run_all(run, tmp_root, needs=lambda name: None, progress=print):
    """Every case through `run(argv) -> (code, stdout, stderr)`, each in a fresh folder under
    tmp_root: [(case, problem or None, or "not run: ..." for a missing toolchain)]."""
    import tempfile
    rows = []
    for c in CASES:
        miss = needs(c.needs) if c.needs else None
        if miss:
            rows.append((c, "not run: missing %s" % miss))
            continue
        with tempfile.TemporaryDirectory(dir=tmp_root) as tmp:
            paths = prepare(tmp)
            before = snapshot(tmp)
            code, out, err = run(argv(c, paths))
            rows.append((c, verdict(c, code, out, err, before, snapshot(tmp))))
    progress("bad inputs: %d cases, %d handled cleanly"
             % (len(rows), sum(p is None for _, p in rows)))
    return rows


def table(rows):
    """The faults page's lines: per command, the cases tried and handled cleanly, the inputs."""
    lines = ["| command | family | tried | handled cleanly | the inputs (scratch files in {}) |",
             "|---|---|---|---|---|"]
    groups = {}
    for c, problem in rows:
        groups.setdefault((c.command, c.family), []).append((c, problem))
    for (command, family), got in groups.items():
        ok = sum(p is None for _, p in got)
        inputs = "; ".join("`%s`" % " ".join(a if a else '""' for a in c.args[len(
            command.split(" ")):]).replace("|", "\\|") for c, _ in got)
        lines.append("| %s | %s | %d | %s | %s |" % (command, family, len(got),
                                                    ok if ok == len(got) else "**%d**" % ok,
                                                    inputs))
    bad = [(c, p) for c, p in rows if p is not None]
    if bad:
        lines += [""] + ["- **%s**: %s" % (shown(c), p) for c, p in bad]
    return lines


def in_fresh_process(args, timeout=300):
    """run() for run_all: `python -m kilobit.cli ARGS` in a new process."""
    import subprocess
    import sys
    try:
        p = subprocess.run([sys.executable, "-m", "kilobit.cli"] + list(args),
                           capture_output=True, text=True, timeout=timeout,
                           stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        return None, "", "timed out after %d s" % timeout
    return p.returncode, p.stdout, p.stderr

