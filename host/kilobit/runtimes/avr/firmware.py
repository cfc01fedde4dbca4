"""Firmware for the AVR boards: a model's firmware built with avr-gcc, cached.

    from kilobit.runtimes.avr import firmware
    elf, sizes = firmware.build(model_bytes, "attiny2313")

Each model type names its firmware in its package (kilobit.models.<name>.firmware: SOURCE,
DEPENDS, header(model_bytes), optionally EXTRA_SOURCES, MCUS, STACK_RESERVE and
stack_extra(model_bytes): {mcu: bytes} this model needs above it); the source is
compiled with `-include` of the header generated from the model file, so the model's parameters
are compile-time constants, its tables sit in flash and its learnt state comes along.

Builds are cached under build/avr-<model>/<board>/<hash>/, the hash covering the header, the
firmware sources, the MCU, the clock and the compiler flags: the same model never compiles
twice. A model that cannot fit the board raises FitError ("does not fit attiny2313: ...") with
the numbers: a failed link (flash), or static RAM plus the stack reserve above the board's RAM.

A learner built with checkpoint_every=N (0: on a checkpoint frame only) keeps its state in the
EEPROM across resets and power cuts (firmware_c/avr/kb_persist.h, docs/contract.md section 11);
its sizes then carry the EEPROM layout (checkpoint_layout), and a state that no crash-safe
scheme fits into the board's EEPROM raises FitError ("does not fit attiny2313: no crash-safe
checkpoint fits its EEPROM: ...").
"""
import hashlib
import json
import os
import re
import tempfile

from kilobit.core import paths
from kilobit.core.errors import KilobitError
from kilobit.models import registry
from kilobit.runtimes import buildcache
from kilobit.runtimes.avr import kb_sim

FIRMWARE_C = paths.firmware_c()
BUILD = paths.cache()
BOARDS_DIR = paths.boards()

#: Stack the learner firmwares need at most, bytes, per MCU (a model's firmware module may set
#: its own): the deepest call chain (main -> score ->
#: libgcc's division or the rbf square, with the registers each saves; up to 4 one-byte
#: accumulators on the small chips, 16 on the Uno) plus return addresses. The most measured in
#: simulation over every golden file and benchmark stream is 37 B on the ATtinys (log-method
#: weights) and 42 B on the Uno; most models use 17-24 B. tests/test_avr_firmware.py holds
#: every run to this reserve, and the simulator fails any run whose stack reaches static RAM.
STACK_RESERVE = {"attiny2313": 40, "attiny4313": 40, "atmega328p": 64}

#: the firmware's extra warnings: those of firmware_c/Makefile (AVR int is 16-bit signed)
WARN = ("-pedantic", "-Wconversion", "-Wsign-conversion", "-Wshadow", "-Wstrict-prototypes",
        "-Wmissing-prototypes", "-Wcast-qual", "-Wdouble-promotion")

BAUD = 250000


class FitError(KilobitError):
    """The model does not fit the board (flash or RAM), with the numbers."""


def boards():
    """{name: board dict} of the boards/*.json files whose runtime is the C firmware."""
    out = {}
    for name in sorted(os.listdir(BOARDS_DIR)):
        if name.endswith(".json"):
            with open(os.path.join(BOARDS_DIR, name)) as f:
                b = json.load(f)
            if b.get("runtime") == "c":
                out[b["name"]] = b
    return out


def board(name):
    """A board by its name (attiny2313, attiny4313, uno) or its MCU (atmega328p)."""
    bs = boards()
    if name in bs:
        return bs[name]
    for b in bs.values():
        if b["mcu"] == name:
            return b
    raise KilobitError("unknown board %r (known: %s)" % (name, ", ".join(bs)))


def digest(parts):
    """A short hex digest of texts and byte strings: cache keys and fingerprints."""
    h = hashlib.sha256()
    for p in parts:
        h.update(p if isinstance(p, bytes) else p.encode())
        h.update(b"\0")
    return h.hexdigest()[:20]


def build(model_bytes, board_name, baud=BAUD, checkpoint_every=None):
    """Build the firmware of a model file for `board_name`: its type's firmware source with the
    header made from the file. Returns (elf, sizes), sizes as kilobit.runtimes.avr.kb_sim.avr_size
    plus board, mcu, clock_hz, flash_bytes, ram_bytes and stack_reserve (and "checkpoint", the
    EEPROM layout, when checkpoint_every is given: a checkpoint every N learning steps that
    changed the state, 0 for checkpoint frames only). Raises FitError when the model cannot fit,
    ModelFileError for a bad file."""
    spec = registry.of_file(model_bytes)
    fw = spec.firmware
    b = board(board_name)
    mcus = getattr(fw, "MCUS", None)
    if mcus is not None and b["mcu"] not in mcus:
        raise FitError("does not fit %s: the %s firmware is for the %s, not the %s"
                       % (b["name"], spec.name, " or ".join(mcus), b["mcu"]))
    source = os.path.join(FIRMWARE_C, fw.SOURCE)
    extra = [os.path.join(FIRMWARE_C, p) for p in getattr(fw, "EXTRA_SOURCES", ())]
    depends = [source] + extra + [os.path.join(FIRMWARE_C, p) for p in fw.DEPENDS]
    reserve = dict(getattr(fw, "STACK_RESERVE", STACK_RESERVE))
    if hasattr(fw, "stack_extra"):
        for mcu, more in fw.stack_extra(model_bytes).items():
            reserve[mcu] += more
    why = fw.refuse(model_bytes, b["mcu"]) if hasattr(fw, "refuse") else None  # cannot run
    if why:
        raise FitError("does not fit %s: %s" % (b["name"], why))
    header = fw.header(model_bytes)
    if checkpoint_every is not None:
        if spec.kind == "predictor":
            raise FitError("does not fit %s: a %s model does not learn on the chip, "
                           "it has no state to checkpoint" % (b["name"], spec.name))
        header = checkpoint_header(header, depends, checkpoint_every)
    return build_source(header, board_name, source, depends,
                        os.path.join(BUILD, "avr-" + spec.name), baud, extra_sources=extra,
                        stack_reserve=reserve)


def checkpoint_header(header, depends, every):
    """The model header with the checkpoint defines: KB_PERSIST_EVERY and the fingerprint that
    seeds the EEPROM copies' CRC. The fingerprint covers the header and every firmware source,
    so a chip flashed with another model, or another firmware, does not restore the old EEPROM
    (it would be another struct layout or another model's state)."""
    every = int(every)
    if not 0 <= every <= 255:
        raise KilobitError("checkpoint every %d learning steps: must be 0 (on request only) to "
                           "255" % every)
    fp = fingerprint(header, depends)
    return header + ("\n/* checkpoints in EEPROM (firmware_c/avr/kb_persist.h) */\n"
                     "#define KB_PERSIST_EVERY %d\n#define KB_PERSIST_FP 0x%04XU\n" % (every, fp))


def fingerprint(header, depends):
    """The 16-bit fingerprint of a build that checkpoints (KB_PERSIST_FP): a digest of its
    header and of every source file in `depends`."""
    parts = [header]
    for path in depends:
        with open(path, "rb") as f:
            parts.append(f.read())
    return int(digest(parts)[:4], 16)


def checkpoint_layout(state_bytes, step_bytes, eeprom_bytes, every):
    """The EEPROM layout kb_persist.h builds for a state of `state_bytes` of which one learning
    step changes at most `step_bytes`: {"scheme": "slots" | "journal" | None, "eeprom_bytes",
    "used_bytes", ...}. The same arithmetic as kb_persist.h's KB_USE_SLOTS / KB_USE_JOURNAL
    (tests build both and compare the scheme the chip reports)."""
    every = int(every)
    out = {"state_bytes": state_bytes, "step_bytes": step_bytes, "eeprom_bytes": eeprom_bytes,
           "every": every}
    slots = 2 * (state_bytes + 4)
    cap = (eeprom_bytes - (state_bytes + 3) - 3) // 2
    if slots <= eeprom_bytes:
        out.update(scheme="slots", used_bytes=slots)
    elif eeprom_bytes <= 256 and every >= 1 and every * step_bytes <= cap:
        out.update(scheme="journal", used_bytes=state_bytes + 6 + 2 * every * step_bytes,
                   journal_entries=cap)
    else:
        out.update(scheme=None, used_bytes=None, slots_need=slots,
                   journal_need=state_bytes + 6 + 2 * max(every, 1) * step_bytes)
    return out


def layout_text(lay):
    """One line on an EEPROM layout, for `kilobit fit` and the errors."""
    s, e = lay["state_bytes"], lay["eeprom_bytes"]
    if lay["scheme"] == "slots":
        return "two slots of %d B state + 4 B (seq, its check byte, check): %d B of %d B" % (
            s, lay["used_bytes"], e)
    if lay["scheme"] == "journal":
        return ("one copy of %d B state + 3 B and a redo journal of %d entries (a checkpoint "
                "every %d learning step(s), each changing at most %d B): %d B of %d B" % (
                    s, lay["journal_entries"], lay["every"], lay["step_bytes"],
                    lay["used_bytes"], e))
    why = []
    if e > 256:
        why.append("a journal needs an EEPROM of at most 256 B")
    if lay["every"] == 0:
        why.append("a journal needs a checkpoint every N >= 1 learning steps")
    return ("learnt state %d B: two slots need %d B, one copy with a journal for %d learning "
            "step(s) of at most %d changed bytes needs %d B%s; the EEPROM has %d B" % (
                s, lay["slots_need"], max(lay["every"], 1), lay["step_bytes"],
                lay["journal_need"], " (%s)" % "; ".join(why) if why else "", e))


def build_source(header, board_name, source, depends, cache, baud=BAUD, extra_sources=(),
                 stack_reserve=None):
    """Build `source` (and `extra_sources`, e.g. assembly, linked with it) for `board_name` with
    `-include` of the generated `header`, cached under cache/<board>/<hash>/ (the hash covers the
    header, every file of `depends`, the MCU, the clock and the flags). `stack_reserve` is
    {mcu: bytes} (default STACK_RESERVE). Returns (elf, sizes); raises FitError when it cannot
    fit."""
    b = board(board_name)
    mcu, f_cpu = b["mcu"], b["clock_hz"]
    reserves = STACK_RESERVE if stack_reserve is None else stack_reserve
    if mcu not in reserves:
        raise FitError("does not fit %s: this firmware is not built for the %s" % (b["name"], mcu))
    reserve = reserves[mcu]
    flags = list(kb_sim.AVR_CFLAGS) + list(WARN) + list(kb_sim.AVR_LDFLAGS)
    sources = []
    for path in depends:
        with open(path, "rb") as f:
            sources.append(f.read())
    key = digest([header, mcu, str(f_cpu), str(baud), str(reserve),
                   " ".join(flags)] + sources)
    elf_name = os.path.splitext(os.path.basename(source))[0] + ".elf"

    def make_it(tmp):  # a link that failed for flash is kept too: no need to try again
        try:
            sizes = _compile(header, tmp, os.path.join(tmp, elf_name), mcu, f_cpu, baud, b,
                             source, extra_sources, reserve)
        except FitError as e:
            with open(os.path.join(tmp, REFUSED), "w") as f:
                f.write(str(e) + "\n")
            return
        with open(os.path.join(tmp, "sizes.json"), "w") as f:
            json.dump(sizes, f)

    out_dir = buildcache.entry(os.path.join(cache, b["name"]), key, make_it, _complete)
    if os.path.exists(os.path.join(out_dir, REFUSED)):
        with open(os.path.join(out_dir, REFUSED)) as f:
            raise FitError(f.read().strip())
    with open(os.path.join(out_dir, "sizes.json")) as f:
        sizes = json.load(f)
    _check_fit(sizes, b, reserve)
    return os.path.join(out_dir, elf_name), sizes


REFUSED = "does-not-fit.txt"


def _complete(out_dir):
    """A firmware cache entry that is whole: its sizes (and its ELF) or its refusal."""
    return os.path.exists(os.path.join(out_dir, REFUSED)) or os.path.exists(
        os.path.join(out_dir, "sizes.json"))


def _compile(header, out_dir, elf, mcu, f_cpu, baud, b, source, extra_sources, reserve):
    """Build into out_dir (buildcache's private folder): model.h, the ELF; its sizes."""
    hpath = os.path.join(out_dir, "model.h")
    with open(hpath, "w") as f:
        f.write(header)
    try:
        _, sizes = kb_sim.avr_build([source] + list(extra_sources), mcu, elf,
                                    defines=["BAUD=%dUL" % baud],
                                    f_cpu=f_cpu, extra_flags=list(WARN) + ["-include", hpath])
    except kb_sim.SimError as e:
        if "is too large" in str(e):  # before the EEPROM: its probe would fail the same way
            raise _build_failure(str(e), b, source) from None
        if "kb_persist_does_not_fit_eeprom" in str(e):
            lay = probe_layout(hpath, source, mcu, f_cpu, baud, b)
            raise FitError("does not fit %s: no crash-safe checkpoint fits its EEPROM: %s"
                           % (b["name"], layout_text(lay))) \
                from None
        over = re.search(r"region `text' overflowed by (\d+) bytes", str(e))
        if over:
            need = b["flash_bytes"] + int(over.group(1))
            raise FitError("does not fit %s: program %d B > %d B flash"
                           % (b["name"], need, b["flash_bytes"])) from None
        over = re.search(r"region `data' overflowed by (\d+) bytes", str(e))
        if over:
            static = b["ram_bytes"] + int(over.group(1))
            raise FitError("does not fit %s: static RAM %d B + stack reserve %d B = %d B > %d B RAM"
                           % (b["name"], static, reserve, static + reserve,
                              b["ram_bytes"])) from None
        ram = re.search(r"address 0x([0-9a-f]+) of \S+ section `\.(?:bss|data|noinit)' is not "
                        r"within region `data'", str(e))
        if ram:
            static = int(ram.group(1), 16) - 0x800000 - kb_sim.RAMSTART[mcu]
            raise FitError("does not fit %s: static RAM %d B + stack reserve %d B = %d B > %d B RAM"
                           % (b["name"], static, reserve, static + reserve,
                              b["ram_bytes"])) from None
        raise _build_failure(str(e), b, source) from None
    sizes = dict(sizes, board=b["name"], mcu=mcu, clock_hz=f_cpu, flash_bytes=b["flash_bytes"],
                 ram_bytes=b["ram_bytes"], stack_reserve=reserve)
    if "KB_PERSIST_EVERY" in header:
        sizes["checkpoint"] = probe_layout(hpath, source, mcu, f_cpu, baud, b)
    return sizes


#: what avr-gcc says when the model, not the toolchain, is what cannot be built: an array past
#: what the compiler's objects can be, a link past the chip's memories that _compile's
#: patterns do not measure
TOO_BIG = re.compile(r"is too large|overflowed by|not within region|relocation truncated")


def too_big(output):
    """The compiler's first errors (one line) when its output says the model is what cannot be
    built (TOO_BIG), else None."""
    if not TOO_BIG.search(output):
        return None
    errors = [ln.split("error: ", 1)[1].strip() for ln in output.splitlines()
              if "error: " in ln and "[-Werror" not in ln and "ld returned" not in ln]
    return "; ".join(errors[:2]) or "the link failed"


def _build_failure(output, b, source):
    """The error of a failed firmware build: FitError in `kilobit fit`'s words when the model
    is what cannot be built, else a ToolchainError (one sentence and the log's path)."""
    why = too_big(output)
    if why:
        return FitError("does not fit %s: its firmware does not build (%s)" % (b["name"], why))
    return buildcache.failure("building the %s firmware for %s" % (
        os.path.basename(source), b["name"]), ["avr-gcc"], 1, output)


def probe_layout(hpath, source, mcu, f_cpu, baud, b, include_dirs=()):
    """The EEPROM layout of a checkpointing build (`source` compiled with -include of the header
    file `hpath`, which defines KB_PERSIST_EVERY): the state's sizes are the compiler's, read
    as the symbol sizes of kb_persist.h's probe arrays (compiled with -c, never linked)."""
    with open(hpath) as f:
        every = int(re.search(r"#define KB_PERSIST_EVERY (\d+)", f.read()).group(1))
    with tempfile.TemporaryDirectory() as tmp:
        obj = os.path.join(tmp, "probe.o")
        cmd = (["avr-gcc", "-mmcu=" + mcu, "-DF_CPU=%dUL" % f_cpu, "-DBAUD=%dUL" % baud,
                "-DKB_PERSIST_PROBE"] + list(kb_sim.AVR_CFLAGS)
               + ["-I" + d for d in include_dirs]
               + ["-w", "-Wno-error", "-include", hpath, "-c", "-o", obj, source])
        what = "measuring the checkpointed state for the %s" % mcu
        buildcache.run(cmd, what, [obj])
        names = buildcache.run(["avr-nm", "-S", "--defined-only", obj], what)
    sizes = {}
    for line in names.splitlines():
        parts = line.split()
        if len(parts) == 4 and parts[3] in ("kb_probe_state", "kb_probe_step"):
            sizes[parts[3]] = int(parts[1], 16)
    if len(sizes) != 2:
        raise kb_sim.SimError("avr-nm found no probe sizes in %s: %s" % (source, names))
    return checkpoint_layout(sizes["kb_probe_state"], sizes["kb_probe_step"],
                             b["eeprom_bytes"], every)


def _check_fit(sizes, b, reserve):
    if sizes["flash"] > b["flash_bytes"]:
        raise FitError("does not fit %s: program %d B > %d B flash"
                       % (b["name"], sizes["flash"], b["flash_bytes"]))
    if sizes["ram"] + reserve > b["ram_bytes"]:
        raise FitError("does not fit %s: static RAM %d B + stack reserve %d B = %d B > %d B RAM"
                       % (b["name"], sizes["ram"], reserve, sizes["ram"] + reserve,
                          b["ram_bytes"]))


def fits(model_bytes, board_name, checkpoint_every=None):
    """(True, "") when the model's firmware fits the board, else (False, the reason)."""
    try:
        build(model_bytes, board_name, checkpoint_every=checkpoint_every)
    except FitError as e:
        return False, str(e)
    return True, ""

