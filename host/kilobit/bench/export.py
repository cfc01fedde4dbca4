"""`kilobit bench export`: what a model costs inside an Arduino sketch, per model type
(docs/benchmarks/export.md; the README's "Use kilobit in your own firmware" cites it).

For each model of the Arduino examples (kilobit.arduino.EXAMPLES: rkp and ckp on Banana,
bonsai and protonn on pendigits, assoc on pendigits digits 0-2), `kilobit export` writes its
header into firmware_c/arduino/footprint/Footprint.ino, a sketch holding only the model; the
real Arduino AVR core builds it and Empty.ino (the same Serial loop without a model) for the Uno
with arduino-builder. The table gives the differences in flash and static RAM (avr-size of the
two .elf), and the most stack either needed in simavr (kb_sim) while it answered two inputs over
the simulated Serial: the sketch's own, its interrupts' included. The learners are built twice:
without EEPROM checkpoints, and saving one after every input.
"""
import os
import shutil
import time

from kilobit import arduino
from kilobit.bench import must_show_lines, run_lines, write_report
from kilobit.core import paths
from kilobit.core.errors import KilobitError
from kilobit.models import registry
from kilobit.runtimes.avr import arduino as sketches, kb_sim

HELP = "flash, RAM and stack of each model type in an Arduino sketch (Uno, real core)"
FOOTPRINT = os.path.join(arduino.FIRMWARE_C, "arduino", "footprint")
WORK = paths.cache("bench-export")


def add_args(b):
    b.add_argument("-o", "--output", default="docs/benchmarks/export.md")


def _input_bytes(spec, doc_step):
    """A golden step line as Footprint.ino's raw input: the label first for a learning step,
    then the codes (int8 values as their bytes)."""
    parts = doc_step.split()
    nums = [int(x) for x in parts[1:]]
    if spec.kind == "predictor":
        return bytes(nums)
    return bytes([nums[0]] + [v & 0xFF for v in nums[1:]])


def _footprint(spec, model_bytes, ex, checkpoints):
    """(elf, sizes, stack bytes) of Footprint.ino holding the model."""
    dest = os.path.join(WORK, "%s-%s" % (spec.name, "cp" if checkpoints else "plain"))
    shutil.rmtree(dest, ignore_errors=True)
    folder, _ = arduino.sketch_with_model(
        os.path.join(FOOTPRINT, "Footprint"), model_bytes, "model", dest, target="avr",
        checkpoint_every=0 if checkpoints else None,
        source_name="%s trained on %s" % (spec.name, ex.data))
    elf, sizes, _ = sketches.build(folder)
    data = ex.data
    if data == "digits012":
        data = arduino.write_digits_csv(os.path.join(dest, "digits.csv"), arduino.KNOWN_DIGITS)
    doc = spec.golden.from_model(model_bytes, data, steps=10)
    step = [s for s in doc["steps"] if s[0] in "LP"][0]
    r = kb_sim.run(elf, "atmega328p", 16000000, _input_bytes(spec, step) * 2,
                   idle_cycles=2000000)
    if len(r.output) != 2:
        raise KilobitError("Footprint.ino with %s answered %d bytes for 2 inputs"
                           % (spec.name, len(r.output)))
    return elf, sizes, r.stack_bytes


def run(out):
    miss = sketches.missing()
    if miss:
        raise KilobitError("bench export needs the Arduino core: missing %s" % miss)
    t0 = time.time()
    os.makedirs(WORK, exist_ok=True)
    elf, empty, _ = sketches.build(os.path.join(FOOTPRINT, "Empty"))
    r = kb_sim.run(elf, "atmega328p", 16000000, b"\x01\x02" * 2, idle_cycles=2000000)
    empty_stack = r.stack_bytes
    rows, checks = [], []
    for ex in arduino.EXAMPLES:
        for model_type, _ in ex.models:
            spec = registry.get(model_type)
            model = arduino.train(ex, model_type)
            _, plain, stack = _footprint(spec, model, ex, False)
            row = [spec.name, "%s (%s)" % (ex.data, ex.sketch),
                   plain["flash"] - empty["flash"], plain["ram"] - empty["ram"], stack]
            if spec.learns_online:
                _, cp, cp_stack = _footprint(spec, model, ex, True)
                row += [cp["flash"] - plain["flash"], cp["ram"] - plain["ram"], cp_stack]
            else:
                row += [None, None, None]
            rows.append(row + [plain["flash"], plain["ram"]])
            checks.append(("%s fits the Uno with the core: flash <= 32,256 B, static RAM + "
                           "stack <= 2,048 B" % spec.name,
                           "%d B, %d + %d B" % (plain["flash"], plain["ram"], stack),
                           plain["flash"] <= 32256 and plain["ram"] + stack <= 2048))
    lines = ["# The models inside an Arduino sketch (`kilobit bench export`)", ""]
    lines += run_lines(time.time() - t0)
    lines += [
        "Each model type in `firmware_c/arduino/footprint/Footprint.ino` (the model, one input "
        "buffer, its step called from `loop()`) against `Empty.ino` (the same `setup()`/"
        "`loop()` with Serial, no model), both built by Debian's arduino-builder 1.3.25 "
        "against the Arduino AVR core 1.8.7 for arduino:avr:uno (avr-gcc 5.4, -Os, LTO). "
        "flash and RAM: the difference in avr-size's text + data and data + bss; stack: the "
        "most the Footprint sketch took in simavr (kb_sim, lowest SP) while it answered two "
        "inputs over the simulated Serial, its interrupts included (Empty.ino: %d B). The "
        "learners again with EEPROM checkpoints (`kilobit export` without --no-checkpoint; "
        "the sketch restores at reset and saves after every input): what that adds." %
        empty_stack, "",
        "The models are the Arduino examples' (`kilobit export --arduino-library`; "
        "`kilobit.arduino.EXAMPLES`), trained with fixed seeds: sizes, not accuracy. The "
        "empty sketch takes %s B of flash and %s B of RAM." % (
            format(empty["flash"], ","), format(empty["ram"], ",")), "",
        "| model | trained on (example) | flash B | RAM B | stack B | checkpoints: + flash B "
        "| + RAM B | stack B | sketch flash B | sketch RAM B |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for row in rows:
        lines.append("| " + " | ".join("-" if v is None else format(v, ",")
                                       if isinstance(v, int) else v for v in row) + " |")
    lines += [""] + must_show_lines(checks)
    write_report(out, "\n".join(lines))
    return rows


def main(a):
    run(a.output)
    print("wrote %s" % a.output)
    return 0
