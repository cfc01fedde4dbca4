"""`kilobit export` and the Arduino library (issue 21): the exported header compiles warning-free
for the AVR, the Cortex-M0+ and the host, as C and C++; two models share one program; export
refuses what it cannot do; and, with the real Arduino core (Debian arduino-core-avr built by
arduino-builder), every example sketch answers over the simulated Serial exactly what the host's
integer reference answers, for every model type, the RKP and CKP learners across a reset from
their EEPROM checkpoint.

Each sketch is built once (kilobit.runtimes.avr.arduino caches builds under build/), the models
are trained once per module.
"""
import json
import os
import shutil
import subprocess

import pytest

from conftest import need
from kilobit import arduino
from kilobit.cli import main as cli_main
from kilobit.core.paths import REPO
from kilobit.models import registry
from kilobit.runtimes import export
from kilobit.runtimes.avr import arduino as sketches, firmware

WORK = os.path.join(REPO, "build", "test-export")
TYPES = [t for ex in arduino.EXAMPLES for t, _ in ex.models]

#: (C compiler or C++ compiler, flags) per target: the firmware's warnings, as errors
WARN = ["-Wall", "-Wextra", "-Werror"]
COMPILERS = {
    "avr": (["avr-gcc", "-mmcu=atmega328p", "-std=c99", "-Os"] + WARN + list(firmware.WARN),
            ["avr-g++", "-mmcu=atmega328p", "-std=gnu++11", "-Os"] + WARN),
    "arm": (["arm-none-eabi-gcc", "-mcpu=cortex-m0plus", "-mthumb", "-std=c99", "-Os"] + WARN
            + list(firmware.WARN),
            ["arm-none-eabi-g++", "-mcpu=cortex-m0plus", "-mthumb", "-std=c++11", "-Os"] + WARN),
    "host": (["gcc", "-std=c99", "-O2"] + WARN + list(firmware.WARN),
             ["g++", "-std=c++11", "-O2", "-pedantic"] + WARN),
}


def _missing_compilers():
    lacks = [cmd[0] for c, cxx in COMPILERS.values() for cmd in (c, cxx)
             if shutil.which(cmd[0]) is None]
    return ", ".join(lacks) or None


@pytest.fixture(scope="module")
def models():
    """{model type: a model file} trained as the Arduino examples' models are."""
    return {t: arduino.train(arduino.example(t), t) for t in TYPES}


@pytest.fixture(scope="module")
def work():
    shutil.rmtree(WORK, ignore_errors=True)
    os.makedirs(WORK)
    return WORK


def _export(models, t, **kw):
    kw.setdefault("target", "host")
    return export.header(models[t], **kw)


@pytest.mark.parametrize("t", TYPES)
def test_header_compiles_warning_free_everywhere(models, work, t):
    need(_missing_compilers())
    text, sizes = _export(models, t, name="model")
    assert sizes["flash"] > 0 and sizes["ram"] > 0
    assert "measured by compiling" in text.replace("\n *", "")
    d = os.path.join(work, "compile-" + t)
    os.makedirs(d)
    with open(os.path.join(d, "model.h"), "w") as f:
        f.write(text)
    use = '#include "model.h"\nint main(void)\n{\n    model_init();\n    return 0;\n}\n'
    for ext in ("c", "cpp"):
        with open(os.path.join(d, "use." + ext), "w") as f:
            f.write(use)
    for target, (c, cxx) in COMPILERS.items():
        for cmd, src in ((c, "use.c"), (cxx, "use.cpp")):
            p = subprocess.run(cmd + ["-c", "-o", os.devnull, os.path.join(d, src)],
                               capture_output=True, text=True)
            assert p.returncode == 0 and not p.stderr, (target, cmd[0], p.stderr)


def test_two_models_share_a_program(models, work):
    """Two rkp models (the same type: the same static runtime names) and a bonsai, each in its
    own source file, called from a third: the prefixes keep their API apart, and each answers
    as the host's reference."""
    need(None if shutil.which("gcc") else "gcc")
    d = os.path.join(work, "two")
    os.makedirs(d)
    rkp, _ = registry.get("rkp").load(models["rkp"])
    other = registry.get("rkp").int_class.from_bytes(models["rkp"])[0]
    other.learn([15, 0], int(other.score([15, 0]) <= 0))  # a mistake: now it differs
    files = {"left": models["rkp"], "right": other.to_bytes(), "digits": models["bonsai"]}
    for name, blob in files.items():
        text, _ = export.header(blob, name=name, target="host")
        with open(os.path.join(d, name + ".h"), "w") as f:
            f.write(text)
        with open(os.path.join(d, name + ".c"), "w") as f:
            f.write('#include "%s.h"\n' % name)
    with open(os.path.join(d, "main.c"), "w") as f:
        f.write("#include <stdio.h>\n#define LEFT_API_ONLY\n#define RIGHT_API_ONLY\n"
                "#define DIGITS_API_ONLY\n"
                '#include "left.h"\n#include "right.h"\n#include "digits.h"\n'
                "int main(void)\n{\n"
                "    static const uint8_t u[2] = {15, 0};\n"
                "    static const uint8_t pen[DIGITS_DIMS];\n"
                "    left_init();\n    right_init();\n    digits_init();\n"
                '    printf("%ld %ld %lu\\n", (long)left_score(u), (long)right_score(u),\n'
                "           (unsigned long)digits_classify(pen));\n"
                "    return 0;\n}\n")
    exe = os.path.join(d, "two")
    cc = ["gcc", "-std=c99", "-O2"] + WARN + list(firmware.WARN)
    p = subprocess.run(cc + ["-o", exe] + [os.path.join(d, n + ".c") for n in
                                            ("main", "left", "right", "digits")],
                       capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    got = subprocess.run([exe], capture_output=True, text=True, check=True).stdout.split()
    bonsai, _ = registry.get("bonsai").load(models["bonsai"])
    pred = bonsai.field_rows([[0] * bonsai.dims])[0][-1]
    assert [int(x) for x in got] == [rkp.score([15, 0]), other.score([15, 0]), pred]
    # both implementations in one file: refused with the rule, not a heap of redefinitions
    bad = os.path.join(d, "bad.c")
    with open(bad, "w") as f:
        f.write('#include "left.h"\n#include "right.h"\n')
    p = subprocess.run(cc + ["-c", "-o", os.devnull, bad], capture_output=True, text=True)
    assert p.returncode != 0 and "one kilobit model per source file" in p.stderr


def _cli(capsys, *argv):
    rc = cli_main(list(argv))
    out = capsys.readouterr()
    return rc, out.out, out.err


def test_export_cli_writes_the_header(models, tmp_path, capsys):
    m = tmp_path / "m.kb"
    m.write_bytes(models["ckp"])
    out = tmp_path / "ckp.h"
    rc, text, err = _cli(capsys, "export", str(m), "-o", str(out), "--name", "banana",
                         "--target", "host", "--checkpoint-every", "4")
    assert rc == 0, err
    h = out.read_text()
    assert "int8_t banana_learn(const uint8_t *codes, uint8_t label, int32_t *score);" in h
    assert "#define KB_PERSIST_EVERY 4" in h and "banana_save(void)" in h
    assert "B flash" in text


def test_export_refusals(models, tmp_path, capsys):
    """Too large for the target, a foreign or corrupt file, an -o that cannot be written: one
    `kilobit: error:` line, exit status 2, nothing written."""
    need(None if shutil.which("avr-gcc") else "avr-gcc (the default --target avr measures)")
    big = tmp_path / "big.kb"
    rc, _, err = _cli(capsys, "train", "rkp", "--data", "banana", "--budget", "4000",
                      "-o", str(big))
    assert rc == 0, err
    good = tmp_path / "m.kb"
    good.write_bytes(models["rkp"])
    foreign = tmp_path / "foreign.kb"
    foreign.write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(64))
    corrupt = tmp_path / "corrupt.kb"
    blob = bytearray(models["rkp"])
    blob[20] ^= 0x40
    corrupt.write_bytes(bytes(blob))
    out = tmp_path / "out.h"
    cases = [
        ([str(big), "-o", str(out)], "does not fit avr"),
        ([str(big), "-o", str(out), "--no-checkpoint"], "static RAM"),
        ([str(foreign), "-o", str(out)], "not a kilobit model file"),
        ([str(corrupt), "-o", str(out)], "CRC"),
        ([str(good), "-o", str(tmp_path / "no" / "such" / "dir.h")], "cannot write"),
        ([str(good), "-o", str(tmp_path)], "directory"),
        ([str(good), "-o", str(good)], "input"),
        ([str(good), "-o", str(out), "--name", "2fast"], "--name"),
    ]
    for argv, why in cases:
        rc, _, err = _cli(capsys, "export", *argv)
        assert rc == 2 and err.startswith("kilobit: error:") and why in err, (argv, err)
        assert not out.exists()
        assert err.count("\n") == 1, err
    assert good.read_bytes() == models["rkp"]


# ---- the Arduino library, against the real core ----

@pytest.fixture(scope="module")
def library(work):
    need(sketches.missing())
    root = os.path.join(work, "libraries")
    os.makedirs(root)
    return arduino.make_library(os.path.join(root, "kilobit"))


def _sketch(library, models, t, work, **export_args):
    """The example sketch that runs model type t: the library's own, or (another model of the
    same kind) a copy with that model exported under the example's name (`export_args`)."""
    ex = arduino.example(t)
    if t == ex.models[0][0]:
        folder = os.path.join(library, "examples", ex.sketch)
    else:
        folder, _ = arduino.sketch_with_model(
            os.path.join(arduino.SKETCHES, ex.sketch), models[t], ex.name,
            os.path.join(work, "sketch-" + t), target="avr", embed=False, **export_args)
    elf, sizes, log = sketches.build(folder, libraries=os.path.dirname(library))
    ours = [line for line in log.splitlines() if "warning" in line and
            (folder in line or library in line)]
    assert not ours, "\n".join(ours)
    return elf


def test_library_layout(library):
    with open(os.path.join(library, "library.properties")) as f:
        props = dict(line.split("=", 1) for line in f.read().splitlines()
                     if not line.startswith("#"))
    assert props["name"] == "kilobit" and props["architectures"] == "*"
    with open(os.path.join(library, "library.json")) as f:
        assert json.load(f)["name"] == "kilobit"
    for src, rel in arduino.runtime_files():  # copies of firmware_c, not versions of them
        with open(src) as a, open(os.path.join(library, "src", rel)) as b:
            assert a.read() == b.read(), rel
    for ex in arduino.EXAMPLES:
        names = sorted(os.listdir(os.path.join(library, "examples", ex.sketch)))
        assert names == sorted([ex.sketch + ".ino", ex.name + ".h"])


def _fields(line):
    return [int(x) for x in line.split()]


def _golden(models, t, tmp_path, steps):
    """(step lines, the replies the sketches and the host replay must give) for model type t on
    its example's data: the host integer reference's golden fields (learners: score,
    prediction, mistake, count; assoc: prediction, votes, classes, anchors; predictors: the
    class, then the scores). NewClass's data adds the digit it has never seen."""
    data = arduino.example(t).data
    if data == "digits012":
        data = arduino.write_digits_csv(str(tmp_path / "digits0123.csv"),
                                        arduino.KNOWN_DIGITS + (arduino.NEW_DIGIT,))
    doc = registry.get(t).golden.from_model(models[t], data, steps=steps)
    names = doc.get("fields")
    if names is None or "pred" not in names:
        return doc["steps"], [row[:4] for row in doc["expect"]]
    scores = [i for i, n in enumerate(names) if n.startswith("s") and n[1:].isdigit()]
    return doc["steps"], [[row[names.index("pred")]] + [row[i] for i in scores]
                          for row in doc["expect"]]


#: the examples' requests and replies, one a line, through the exported header's API: on the
#: host (stdin, stdout) or, with REPLAY_FLOOR, on the emulated RP2040 (tools/pico/floor's
#: start-up and I/O: the requests in flash, the replies on UART0)
REPLAY = r"""
#include "model.h"
#ifdef REPLAY_FLOOR
#include "floor.h"
static floor_input_t in;
#define LINE_MAX_ FLOOR_LINE_MAX
#define READ_LINE(buf) floor_next_line(&in, buf)
#define PUT_LONG(v) floor_put_long((long)(v))
#define PUT_CHAR(c) floor_putc(c)
#define FAIL() floor_die(3, "bad number", in.step)
#else
#include <stdio.h>
#include <stdlib.h>
#define LINE_MAX_ 16384
#define READ_LINE(buf) (fgets(buf, LINE_MAX_, stdin) != NULL)
#define PUT_LONG(v) printf("%ld", (long)(v))
#define PUT_CHAR(c) putchar(c)
#define FAIL() exit(1)
#endif

static char line[LINE_MAX_];

static long next_int(const char **s)
{
    const char *p = *s;
    long v = 0;
    int neg;
    while (*p == ' ')
        p++;
    neg = *p == '-';
    if (neg)
        p++;
    if (*p < '0' || *p > '9')
        FAIL();
    while (*p >= '0' && *p <= '9')
        v = 10 * v + (*p++ - '0');
    *s = p;
    return neg ? -v : v;
}

int main(void)
{
    unsigned j;
#ifdef REPLAY_FLOOR
    floor_init(&in);
#endif
    model_init();
    while (READ_LINE(line)) {
        const char *s = line;
        char op;
        long y = 0;
#if defined(MODEL_KIND_CLASSES)
        int8_t u[MODEL_DIMS];
        int16_t p;
#else
        uint8_t u[MODEL_DIMS];
#endif
        while (*s == ' ')
            s++;
        op = *s++;
        if (op == 'L')
            y = next_int(&s);
        (void)y; /* a predictor has no labels */
        for (j = 0; j < MODEL_DIMS; j++)
            u[j] = (__typeof__(u[0]))next_int(&s);
#if defined(MODEL_KIND_LEARNER)
        {
            int32_t sc = 0;
            int8_t mistake = 0;
            if (op == 'L')
                mistake = model_learn(u, (uint8_t)y, &sc);
            else
                sc = model_score(u);
            PUT_LONG(sc);
            PUT_CHAR(' ');
            PUT_LONG(sc > 0);
            PUT_CHAR(' ');
            PUT_LONG(mistake);
            PUT_CHAR(' ');
            PUT_LONG(model_count());
        }
#elif defined(MODEL_KIND_CLASSES)
        p = op == 'L' ? model_learn(u, (uint8_t)y) : model_predict(u);
        PUT_LONG(p);
        PUT_CHAR(' ');
        PUT_LONG(model_votes());
        PUT_CHAR(' ');
        PUT_LONG(model_classes());
        PUT_CHAR(' ');
        PUT_LONG(model_anchors());
#else
        PUT_LONG(model_classify(u));
        for (j = 0; j < MODEL_SCORES; j++) {
            PUT_CHAR(' ');
            PUT_LONG(model_scores()[j]);
        }
#endif
        PUT_CHAR('\n');
    }
    return 0;
}
"""


def _replay_source(models, work, t, target):
    """A folder holding model t exported for `target` (model.h) and the REPLAY program."""
    d = os.path.join(work, target + "-" + t)
    os.makedirs(d)
    text, _ = export.header(models[t], name="model", target=target)
    with open(os.path.join(d, "model.h"), "w") as f:
        f.write(text)
    with open(os.path.join(d, "replay.c"), "w") as f:
        f.write(REPLAY)
    return d


@pytest.mark.parametrize("t", TYPES)
def test_host_replay_bit_exact(models, work, t, tmp_path):
    """The header that goes to the AVR, compiled by the host's gcc: its API answers the
    examples' requests as the host's integer reference does."""
    need(None if shutil.which("gcc") else "gcc")
    d = _replay_source(models, work, t, "host")
    exe = os.path.join(d, "replay")
    subprocess.run(["gcc", "-std=gnu99", "-O2"] + WARN + ["-o", exe, os.path.join(d, "replay.c")],
                   check=True)
    steps, expect = _golden(models, t, tmp_path, 60)
    out = subprocess.run([exe], input="\n".join(steps) + "\n", capture_output=True,
                         text=True, check=True).stdout
    assert [_fields(line) for line in out.splitlines()] == expect


@pytest.mark.parametrize("t", TYPES)
def test_arm_replay_bit_exact_on_the_emulated_rp2040(models, work, t, tmp_path):
    """--target arm run, not only compiled: the header in a bare Cortex-M0+ program
    (arm-none-eabi-gcc, tools/pico's start-up) on the emulated RP2040 (rp2040js) answers the
    examples' requests as the host's integer reference does."""
    from kilobit.runtimes.c import rp2040_floor
    need(rp2040_floor.missing())
    pico = os.path.join(REPO, "tools", "pico")
    d = _replay_source(models, work, t, "arm")
    elf, image = os.path.join(d, "replay.elf"), os.path.join(d, "replay.bin")
    cpu = ["-mcpu=cortex-m0plus", "-mthumb"]
    subprocess.run(["arm-none-eabi-gcc"] + cpu + ["-Os", "-std=c99", "-DREPLAY_FLOOR"] + WARN
                   + list(firmware.WARN)
                   + ["-ffreestanding", "-fno-tree-loop-distribute-patterns",
                      "-ffunction-sections", "-fdata-sections", "-I" + d, "-I" + pico,
                      "-I" + os.path.join(pico, "floor"), "-nostdlib", "-T",
                      os.path.join(pico, "pico.ld"), "-Wl,--gc-sections", "-o", elf,
                      os.path.join(d, "replay.c"), os.path.join(pico, "floor", "floor.c"),
                      os.path.join(pico, "startup.c"), os.path.join(pico, "divider.S"), "-lgcc"],
                   check=True)
    subprocess.run(["arm-none-eabi-objcopy", "-O", "binary", elf, image], check=True)
    model = os.path.join(d, "model.kb")
    with open(model, "wb") as f:
        f.write(models[t])
    steps, expect = _golden(models, t, tmp_path, 60)
    r = subprocess.run(["node", rp2040_floor.RUNNER, "--timeout-s", "300", image, model],
                       input="\n".join(steps) + "\n", capture_output=True, text=True, timeout=400)
    assert r.returncode == 0, r.stderr
    assert [_fields(line) for line in r.stdout.splitlines()] == expect


@pytest.mark.parametrize("t", ["rkp", "ckp"])
def test_learner_sketch_bit_exact_across_a_reset(library, models, work, t, tmp_path):
    """BananaLearner learns a stream; the chip is reset mid-stream and goes on from its last
    EEPROM checkpoint (every 16 learning steps): every reply, before and after, is the host's.
    The ckp model keeps its checkpoints from EEPROM byte 100 on (--eeprom-at)."""
    base = 100 if t == "ckp" else 0
    elf = _sketch(library, models, t, work, **({"eeprom_at": base} if base else {}))
    spec = registry.get(t)
    steps, expect = _golden(models, t, tmp_path, 60)
    first, saved = 40, 32  # all learning steps; the sketch saved after its 16th and 32nd
    assert all(s.startswith("L ") for s in steps[:first])
    ee = str(tmp_path / "eeprom.bin")
    count0 = spec.load(models[t])[0].count
    with sketches.Session(elf, eeprom=ee) as s:
        assert s.readline() == "new %d" % count0
        got = [_fields(s.request(line)) for line in steps[:first]]
    assert got == expect[:first]
    with open(ee, "rb") as f:
        eeprom = f.read()
    assert eeprom[:base] == b"\xff" * base and eeprom[base:base + 4] != b"\xff" * 4
    with sketches.Session(elf, eeprom=ee) as s:
        assert s.readline() == "restored %d" % expect[saved - 1][3]
        got = [_fields(s.request(line)) for line in steps[saved:]]
        assert s.request("L 2 0 0") == "error"  # a bad step is refused, nothing learnt
        assert s.request("S") in ("saved", "unchanged")
    assert got == expect[saved:]
    assert s.result.stack_bytes < 200


@pytest.mark.parametrize("t", ["rkp", "ckp"])
def test_automatic_checkpoints_across_a_reset(library, models, work, t, tmp_path):
    """Exported with --checkpoint-every 2: besides BananaLearner's own save every 16 learning
    steps, every second mistake writes a checkpoint by itself (KB_LEARN_FLAGS). Reset after 40
    steps, the chip restores the later of the two and goes on bit-exact with the host."""
    every, first = 2, 40
    ex = arduino.example(t)
    folder, _ = arduino.sketch_with_model(
        os.path.join(arduino.SKETCHES, ex.sketch), models[t], ex.name,
        os.path.join(work, "auto-" + t), target="avr", embed=False, checkpoint_every=every)
    elf, _, _ = sketches.build(folder, libraries=os.path.dirname(library))
    steps, expect = _golden(models, t, tmp_path, 60)
    assert all(s.startswith("L ") for s in steps[:first])
    mistakes = [i + 1 for i, row in enumerate(expect[:first]) if row[2]]
    auto = mistakes[every - 1::every]  # the steps (1-based) whose mistake checkpoints
    last = max([16, 32] + auto)
    assert last > 32, "no automatic checkpoint after the sketch's last save: nothing tested"
    ee = str(tmp_path / "eeprom.bin")
    with sketches.Session(elf, eeprom=ee) as s:
        s.readline()
        got = [_fields(s.request(line)) for line in steps[:first]]
    assert got == expect[:first]
    with sketches.Session(elf, eeprom=ee) as s:
        assert s.readline() == "restored %d" % expect[last - 1][3]
        got = [_fields(s.request(line)) for line in steps[last:]]
    assert got == expect[last:]


@pytest.mark.parametrize("t", ["bonsai", "protonn"])
def test_classifier_sketch_bit_exact(library, models, work, t, tmp_path):
    """PendigitsClassifier, features streamed over Serial: class and scores are the host's."""
    elf = _sketch(library, models, t, work)
    steps, expect = _golden(models, t, tmp_path, 20)
    with sketches.Session(elf) as s:
        assert s.readline() == "ready"
        got = [_fields(s.request(line)) for line in steps]
        assert s.request("P 1 2") == "error"
    assert got == expect


def test_assoc_sketch_learns_a_new_class(library, models, work, tmp_path):
    """NewClass, trained on digits 0-2 on the host, meets digit 3 on the board: it takes the
    free class slot, and every reply (prediction, votes, classes, anchors) is the host's."""
    elf = _sketch(library, models, "assoc", work)
    steps, expect = _golden(models, "assoc", tmp_path, 60)
    known = len(arduino.KNOWN_DIGITS)
    with sketches.Session(elf, eeprom=str(tmp_path / "ee.bin")) as s:
        assert s.readline() == "new %d" % known
        got = [_fields(s.request(line)) for line in steps]
    assert got == expect
    assert {row[2] for row in got} == {known, known + 1}  # the new class arrived
    assert any(row[0] == arduino.NEW_DIGIT for row, step in zip(got, steps)
               if step.startswith("Q "))


def test_readme_sketch_builds(models, work):
    """The README's sketch, with an exported Banana model, builds against the real core."""
    need(sketches.missing())
    with open(os.path.join(REPO, "README.md")) as f:
        text = f.read()
    section = text[text.index("## Use kilobit in your own firmware"):]
    code = section.split("```cpp\n", 1)[1].split("```", 1)[0]
    folder = os.path.join(work, "readme", "Readme")
    os.makedirs(folder)
    with open(os.path.join(folder, "Readme.ino"), "w") as f:
        f.write(code)
    header, _ = export.header(models["rkp"], name="banana", target="avr")
    with open(os.path.join(folder, "banana.h"), "w") as f:
        f.write(header)
    _, sizes, log = sketches.build(folder)
    assert sizes["flash"] < 32256
    assert not [line for line in log.splitlines() if "warning" in line and folder in line]
