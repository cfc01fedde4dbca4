"""A model file as one C header for the user's own firmware (`kilobit export`).

    from kilobit.runtimes import export
    text, sizes = export.header(model_bytes, name="banana", target="avr")

The header holds the model the way its UART firmware gets it (the model type's
kilobit.models.<type>.firmware.header: compile-time parameters, tables in flash, the learnt
state), the runtime that model needs (copied from firmware_c, or #included from the kilobit
Arduino library), and a short API under the prefix `name` (firmware_c/kb_export.h defines it):
init, predict, learn for the learners, save/restore of the learnt state to the EEPROM for the
learners on an AVR (avr/kb_persist.h). The same text compiles for any target: PROGMEM on an
AVR, const data elsewhere.

What the model needs is measured, not estimated: firmware_c/kb_export_size.c (a program calling
every API function) is compiled for the target with and without the header, and the difference
in flash and static RAM goes into the header's comment. A model that cannot fit the target's
board (avr: the Arduino Uno; arm: a Cortex-M0+ with the RP2040's memories) raises FitError.
"""
import json
import os
import re
import shutil
import tempfile
import textwrap

from kilobit import __version__
from kilobit.core import paths
from kilobit.core.errors import KilobitError
from kilobit.models import registry
from kilobit.runtimes import buildcache, cnames
from kilobit.runtimes.avr import firmware
from kilobit.runtimes.avr.firmware import FitError

FIRMWARE_C = firmware.FIRMWARE_C
CACHE = paths.cache("export")
SIZE_SOURCE = os.path.join(FIRMWARE_C, "kb_export_size.c")
API_SOURCE = "kb_export.h"

#: what --target compiles with and must fit: the board file whose memories bound it, the
#: stack kept free beside static RAM, the C compiler and its machine flags, size's name
TARGETS = {
    "avr": dict(title="the Arduino Uno's ATmega328P", board="uno", cc="avr-gcc",
                flags=("-mmcu=atmega328p", "-DF_CPU=16000000UL"), size="avr-size",
                # the link measures what it would refuse: check_fit says what does not fit
                ldflags=("-Wl,--defsym=__TEXT_REGION_LENGTH__=0x100000",
                         "-Wl,--defsym=__DATA_REGION_LENGTH__=0xff00"),
                setup="apt-get install gcc-avr avr-libc; scripts/setup.sh in a checkout"),
    "arm": dict(title="a Cortex-M0+ with the RP2040's memories", board="rp2040",
                cc="arm-none-eabi-gcc", flags=("-mcpu=cortex-m0plus", "-mthumb"),
                ldflags=("--specs=nano.specs", "--specs=nosys.specs"),
                size="arm-none-eabi-size", stack=1024,
                setup="apt-get install gcc-arm-none-eabi libnewlib-arm-none-eabi; "
                      "scripts/setup.sh in a checkout"),
    "host": dict(title="this computer", board=None, cc=None, flags=(), size="size",
                 setup="install a C compiler (gcc) and binutils"),
}
CFLAGS = ("-std=c99", "-Os", "-Wall", "-Wextra", "-Werror", "-ffunction-sections",
          "-fdata-sections") + firmware.WARN
LDFLAGS = ("-Wl,--gc-sections",)

NAME_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,30}\Z")
#: the API's constants and functions per model kind, {n}: the prefix, {U}: it in capitals
API = {
    "learner": """\
{inputs}
void {n}_init(void);                        /* once, before the rest */
int32_t {n}_score(const uint8_t *codes);    /* the kernel score: > 0 is class 1 */
uint8_t {n}_predict(const uint8_t *codes);  /* 1 or 0 (a score of 0 predicts 0) */
/* Predict, then learn label 0 or 1: returns 1 on a mistake (the model took the input), 0
 * when it was right, -1 for a label above 1 or a code of 2^{U}_BITS or more (nothing
 * learnt); *score (NULL: not wanted) gets the score before learning.{every} */
int8_t {n}_learn(const uint8_t *codes, uint8_t label, int32_t *score);
uint16_t {n}_count(void);                   /* support vectors stored */
const uint8_t *{n}_memory(void);            /* the support-vector memory, {U}_MEMORY_BYTES */
""",
    "classes": """\
{inputs}
/* Labels are 0 .. 255; a new label takes the next of {U}_CAP class slots. */
void {n}_init(void);                        /* once, before the rest */
int16_t {n}_predict(const int8_t *values);  /* the label, or {U}_NONE (no class yet) */
/* Predict, then learn the label: returns the prediction before learning, {U}_FULL for a
 * new label when every class slot is taken, {U}_INVALID for a value out of range (nothing
 * learnt in either case).{every} */
int16_t {n}_learn(const int8_t *values, uint8_t label);
uint8_t {n}_votes(void);                    /* subspaces that voted for the last prediction */
uint8_t {n}_classes(void);                  /* classes known */
uint16_t {n}_anchors(void);                 /* anchors stored */
const uint8_t *{n}_memory(void);            /* labels, fills, anchors, connections */
""",
    "predictor": """\
{inputs}
/* The features stream in, so no buffer of the whole input is needed. */
void {n}_init(void);                        /* once, before the rest */
int {n}_feature(uint16_t j, uint8_t code);  /* feature j (increasing): 0, or -1 if refused */
uint32_t {n}_predict(void);                 /* the class of the features given; starts anew */
uint32_t {n}_classify(const uint8_t *codes); /* all {U}_DIMS at once; {U}_INVALID: bad code */
void {n}_reset(void);                       /* forget the features given so far */
const int32_t *{n}_scores(void);            /* the last prediction's {U}_SCORES scores */
""",
}
CHECKPOINT_API = """\
#ifdef __AVR__
#define {U}_CHECKPOINTS 1
/* The learnt state in the EEPROM (the bytes the comment above names), crash-safe: a reset
 * or power cut at any moment leaves the last complete checkpoint or the new one. */
uint8_t {n}_restore(void); /* the newest checkpoint into the model: 1, or 0 when none */
uint8_t {n}_save(void);    /* checkpoint the model: 0 written, 1 unchanged (nothing written) */
#endif
"""


#: how the host turns a row scaled to [0, 1] into the model's inputs, per model type: the
#: model's own rounding (ckp floors, contract 6.1; the others round half up, section 1)
ROUNDING = {
    "ckp": "floored to B bits, as ckp's contract says (kilobit.models.ckp.model.quantize; not "
           "kilobit.core.quant.quantize, which rounds half up)",
    "assoc": "rounded half up to B bits, minus 2^(B-1) (kilobit.models.assoc.model.to_int8)",
}
ROUND_HALF_UP = "rounded half up to B bits (kilobit.core.quant.quantize)"


def _inputs_comment(spec, extras, name):
    """The API's comment on where an input comes from: the model's integer quantizer
    (NAME_quantize, below), or the host's float scaler and the model's own rounding."""
    U = name.upper()
    what = ("%s_DIMS int8 values, each %s_MIN .. %s_MAX" % (U, U, U) if spec.kind == "classes"
            else "%s_DIMS codes, each 0 .. 2^%s_BITS - 1" % (U, U))
    if extras is not None and extras.quant is not None:
        text = ("An input is %s: %s_quantize (below) makes them from %s_DIMS raw integer "
                "readings with the model's integer quantizer, bit for bit as the host made the "
                "inputs it trained on (docs/contract.md 1.1)." % (what, name, U))
    else:
        text = ("An input is %s: a row scaled to [0, 1] by the host's float scaler (the model "
                "file's lo and hi, kilobit.core.quant.MinMaxScaler), then %s." % (
                    what, ROUNDING.get(spec.name, ROUND_HALF_UP)))
        if extras is None or extras.scaler is None:
            text += " This model file holds no scaler: scale as its training did."
    return "\n".join(["/*"] + textwrap.wrap(text, 93, initial_indent=" * ",
                                             subsequent_indent=" * ") + [" */"])


def _quantizer_api(spec, quant, name, embed):
    """The integer quantizer's part of the API: its constants in flash (PROGMEM on an AVR) and
    static inline NAME_quantize / NAME_quantize32 over firmware_c/kb_quant.h."""
    U = name.upper()
    S, M, R = quant.params()
    n = len(quant.lo_)
    signed = spec.kind == "classes"
    out_t, loop = ("int8_t *values", "values") if signed else ("uint8_t *codes", "codes")
    head = os.path.join(FIRMWARE_C, "kb_quant.h")
    lines = ["",
             "/* The model's integer quantizer (docs/contract.md 1.1): raw readings -> inputs. */",
             "#define %s_QUANTIZER 1" % U,
             "#if defined(__AVR__) && !defined(KB_QUANT_PROGMEM)",
             "#define KB_QUANT_PROGMEM /* the constants below in flash */",
             "#endif",
             _expand(head, {head}, set()) if embed else '#include "kb_quant.h"', ""]

    def table(c_type, suffix, field, values):
        body = textwrap.wrap(", ".join("%d%s" % (int(v), suffix) for v in values), 92,
                             initial_indent="    ", subsequent_indent="    ")
        lines.extend(["static const %s %s_quant_%s[%d] KB_QUANT_FLASH = {" % (
            c_type, name, field, n)] + body + ["};"])

    table("int32_t", "L", "lo", quant.lo_)
    table("int32_t", "L", "hi", quant.hi_)
    table("uint32_t", "UL", "M", M)
    init = "%d, %dU, %dU, %dUL, %dU, %s_quant_lo, %s_quant_hi, %s_quant_M" % (
        n, (1 << quant.bits) - 1, S, R, (1 << (quant.bits - 1)) if signed else 0, name, name,
        name)
    for suffix, raw_t in (("", "int16_t"), ("32", "int32_t")):
        lines += ["/* %s_DIMS %s readings -> %s_DIMS %s */" % (U, raw_t, U, loop),
                  "static inline void %s_quantize%s(const %s *raw, %s)" % (
                      name, suffix, raw_t, out_t),
                  "{",
                  "    const kb_quant_t q = {%s};" % init,
                  "    kb_quant_%s%s(&q, raw, %s);" % (loop, suffix, loop),
                  "}"]
    return "\n".join(lines)


def _window_api(pipe, name, embed):
    """A model trained on windows (contract 12.1): NAME_window over firmware_c/kb_features.h,
    a window of raw int16 readings -> its features -> NAME_quantize32's inputs."""
    U = name.upper()
    sp = pipe.spec
    heads = [os.path.join(FIRMWARE_C, "kb_features.h")]
    for h in heads:  # and every firmware_c file it includes, itself or through another
        with open(h) as f:
            for inc in re.findall(r'^\s*#\s*include\s+"([^"]+)"', f.read(), re.M):
                t = os.path.normpath(os.path.join(os.path.dirname(h), inc))
                if t not in heads:
                    heads.append(t)
    lines = ["",
             "/* The model's window pipeline (docs/contract.md 12.1): %s. */" % pipe,
             "#define %s_WINDOW_SAMPLES %d" % (U, pipe.window),
             "#define %s_WINDOW_AXES %d" % (U, pipe.axes),
             "#define %s_WINDOW_READINGS %d /* int16, interleaved: x0 y0 z0 x1 ... */"
             % (U, pipe.width),
             _expand(heads[0], set(heads), set()) if embed else '#include "kb_features.h"', "",
             "/* A window of %s_WINDOW_READINGS readings -> the model's inputs; KB_OK, or the"
             % U,
             " * kb_features_extract error (a window cannot cause one: only its parameters). */",
             "static inline kb_err_t %s_window(const int16_t *window, %s)" % (
                 name, "uint8_t *codes"),
             "{",
             "    static int16_t scratch[%d]; /* the FFT's */" % max(2 * sp.fft, 1),
             "    static int32_t features[%s_DIMS];" % U,
             "    const kb_err_t err = kb_features_extract(window, %d, %d, %d, %d, %d, scratch, "
             "features);" % (pipe.window, pipe.axes, sp.mask, sp.p, sp.bands),
             "    if (err == KB_OK)",
             "        %s_quantize32(features, codes);" % name,
             "    return err;",
             "}"]
    return "\n".join(lines)


def constants(spec, m):
    """[(NAME, value, comment)] of the API's constants for model m of `spec`'s kind."""
    if spec.kind == "learner":
        return [("DIMS", m.dims, "codes per input"), ("BITS", m.bits, "bits per code"),
                ("MEMORY_BYTES", len(m.memory()), "support-vector memory")]
    if spec.kind == "classes":
        lo, hi = -(1 << (m.bits - 1)), (1 << (m.bits - 1)) - 1
        return [("DIMS", m.T, "values per input"), ("BITS", m.bits, "bits per value"),
                ("MIN", lo, "smallest value"), ("MAX", hi, "largest value"),
                ("CAP", m.cap, "class slots"), ("NONE", -1, "no class known"),
                ("FULL", -2, "a new label, every slot taken"),
                ("INVALID", -3, "a value out of range"),
                ("MEMORY_BYTES", len(m.memory()), "the memory")]
    return [("DIMS", m.dims, "codes per input"), ("BITS", m.in_bits, "bits per code"),
            ("CLASSES", m.classes, "classes"), ("SCORES", m.L, "scores per prediction"),
            ("INVALID", "0xFFFFFFFFUL", "classify: a code out of range")]


def check_name(name):
    """The prefix, refused unless a C identifier that kilobit's own names cannot clash with."""
    if not NAME_RE.match(name or "") or name.lower().startswith("kb_"):
        raise KilobitError("--name %r: the prefix of C names: a letter or _, then letters, "
                           "digits or _, at most 31, not starting with kb_" % (name,))
    why = cnames.why_reserved(name)
    if why:
        raise KilobitError("--name %r: %s, so the header would not compile or would break the "
                           "program that includes it: choose another prefix" % (name, why))
    if name != name.lower():
        raise KilobitError("--name %r: lower case only: the header's macros and include guard "
                           "are the prefix in capitals (%s_DIMS), which %r would share with %r"
                           % (name, name.upper(), name, name.lower()))
    if name.startswith("_"):
        raise KilobitError("--name %r: C reserves names that begin with _ for the compiler and "
                           "its library" % (name,))
    return name


def _expand(path, active, seen):
    """The text of firmware_c file `path` with each quoted #include of a file in `active` (the
    files the model's build includes) replaced by that file's text, each file once (`seen`).
    An include of any other file stays as it is: it sits in a branch this model does not take
    (kb_ckp.h's model-file loader, kb_predictor_fw.h's other type)."""
    out = ["/* ---- firmware_c/%s ---- */" % os.path.relpath(path, FIRMWARE_C)]
    with open(path) as f:
        lines = f.read().splitlines()
    for line in lines:
        inc = re.match(r'\s*#\s*include\s+"([^"]+)"', line)
        if inc:
            target = os.path.normpath(os.path.join(os.path.dirname(path), inc.group(1)))
            if target in seen:
                out.append("/* %s: above */" % inc.group(1))
                continue
            if target in active:
                seen.add(target)
                out.append(_expand(target, active, seen))
                continue
        out.append(line)
    return "\n".join(out)


def _includes(spec, model_bytes, cc):
    """The firmware_c files an exported model of `spec` compiles, as the compiler finds them
    (its runtime header, the API and what they include): what the header copies in, and what
    the fingerprint of its checkpoints covers."""
    with tempfile.TemporaryDirectory(prefix="kilobit-export-") as tmp:
        src = os.path.join(tmp, "deps.c")
        with open(src, "w") as f:
            f.write("#define KB_EXPORT_NAME deps\n%s\n%s" % (
                spec.firmware.header(model_bytes, frames=False), _runtime_text(spec, None)))
        cmd = [cc, "-MM", "-I", FIRMWARE_C, src]
        out = buildcache.run(cmd, "listing the exported model's includes with %s" % cc)
    if ":" not in out:  # a "compiler" that printed no rule: nothing to parse
        raise buildcache.failure("listing the exported model's includes with %s" % cc, cmd, 0,
                                 out, "printed no dependency rule")
    deps = out.replace("\\\n", " ").split(":", 1)[1].split()
    return sorted(os.path.normpath(d) for d in deps if os.path.abspath(d) != src)


def _runtime_text(spec, active):
    """The runtime of the header: the model's runtime header and the API, #included (`active`
    None) or copied in with what they include (`active`: the files to copy)."""
    names = (spec.firmware.RUNTIME, API_SOURCE)
    if active is None:
        return "".join('#include "%s"\n' % n for n in names)
    seen = set()
    parts = []
    for n in names:
        p = os.path.normpath(os.path.join(FIRMWARE_C, n))
        if p not in seen:
            seen.add(p)
            parts.append(_expand(p, active, seen))
    return "\n".join(parts) + "\n"


def _source(spec, m, model_bytes, name, files, embed, checkpoint_every, eeprom_at,
            extras=None):
    """(API part, implementation part) of the header, before the comment of its sizes;
    `files`: the firmware_c files its model compiles (_includes), copied in with `embed`;
    `extras`: the model file's (kilobit.core.kbfile.Extras), whose integer quantizer becomes
    NAME_quantize."""
    U = name.upper()
    every = ""
    learns = spec.kind != "predictor"
    if learns and checkpoint_every:
        every = (" On an AVR a\n * mistake%s also checkpoints the model (%s_save) every %d." % (
            "" if spec.kind == "learner" else " or a new anchor", name, checkpoint_every))
    api = ["#include <stdint.h>", "",
           "#define %s_KIND_%s 1" % (U, spec.kind.upper())]
    for c, v, why in constants(spec, m):
        api.append("#define %s_%s %s /* %s */" % (U, c, v, why))
    api += ["", "#ifdef __cplusplus", 'extern "C" {', "#endif",
            API[spec.kind].format(n=name, U=U, every=every,
                                  inputs=_inputs_comment(spec, extras, name)).rstrip("\n")]
    if learns and checkpoint_every is not None:
        api.append(CHECKPOINT_API.format(n=name, U=U).rstrip("\n"))
    api += ["#ifdef __cplusplus", "}", "#endif"]
    if extras is not None and extras.quant is not None:
        api.append(_quantizer_api(spec, extras.quant, name, embed))
    if extras is not None and extras.pipeline is not None and spec.kind != "classes":
        api.append(_window_api(extras.pipeline, name, embed))

    impl = ["#ifndef %s_API_ONLY" % U,
            "#ifdef KB_EXPORT_NAME",
            '#error "one kilobit model per source file: define %s_API_ONLY before this one"'
            % U,
            "#endif",
            "#define KB_EXPORT_NAME %s" % name,
            "#define KB_EXPORT_INPUTS %s_DIMS" % U,
            "",
            "/* the model, as its UART firmware gets it (kilobit.models.%s.firmware) */"
            % spec.name,
            spec.firmware.header(model_bytes, frames=False).rstrip("\n")]
    if learns and checkpoint_every is not None:
        fp = firmware.fingerprint(spec.firmware.header(model_bytes, frames=False), files)
        impl += ["",
                 "/* checkpoints in the EEPROM (avr/kb_persist.h); the fingerprint of this",
                 " * model and runtime keeps another build's EEPROM from being restored */",
                 "#ifdef __AVR__",
                 "#define KB_PERSIST_EVERY %d" % checkpoint_every,
                 "#define KB_PERSIST_FP 0x%04XU" % fp,
                 "#define KB_PERSIST_BASE %d" % eeprom_at,
                 "#define KB_PERSIST_IRQ /* interrupts on: Serial, millis() */",
                 "#endif"]
    impl += ["", _runtime_text(spec, files if embed else None).rstrip("\n"),
             "#endif /* %s_API_ONLY */" % U]
    return "\n".join(api) + "\n", "\n".join(impl) + "\n"


def _wrap(name, api, impl, comment):
    guard = "KB_EXPORT_%s_H" % name.upper()
    return ("%s\n#ifndef %s\n#define %s\n\n%s\n%s#endif /* %s */\n"
            % (comment, guard, guard, api, impl, guard))


def compiler(target):
    """The target's C compiler (host: $CC or cc); KilobitError when it is missing."""
    t = TARGETS[target]
    cc = t["cc"] or os.environ.get("CC", "cc")
    for tool in (cc, t["size"]):
        if shutil.which(tool) is None:
            raise KilobitError("cannot measure the model for --target %s: %s not found (%s)"
                               % (target, tool, t["setup"]))
    return cc


def _compile(target, header_path, out):
    """Link kb_export_size.c for the target, with -include of header_path (None: the
    baseline); {"flash", "ram"} from size's text, data and bss."""
    t = TARGETS[target]
    cmd = [compiler(target)] + list(t["flags"]) + list(CFLAGS) + ["-I", FIRMWARE_C]
    if header_path:
        cmd += ["-include", header_path]
    cmd += ["-o", out, SIZE_SOURCE] + list(LDFLAGS) + list(t.get("ldflags", ()))
    try:
        buildcache.run(cmd, "compiling the exported header for --target %s" % target, [out])
    except buildcache.ToolchainError as e:
        return None, e
    what = "measuring the exported header for --target %s with %s" % (target, t["size"])
    cmd = [t["size"], "-B", out]
    got = buildcache.run(cmd, what).splitlines()
    fields = got[1].split()[:3] if len(got) > 1 else []
    if len(fields) != 3 or not all(f.isdigit() for f in fields):
        raise buildcache.failure(what, cmd, 0, "\n".join(got), "printed no text, data and bss")
    text, data, bss = (int(x) for x in fields)
    return {"flash": text + data, "ram": data + bss}, None


def _cached(target, key, header_text, checkpoint=False):
    """Sizes of kb_export_size.c with header_text (None: without), cached under
    build/export/<target>/<key>/; with `checkpoint` on an AVR also the EEPROM layout. Raises
    FitError for a state no crash-safe checkpoint fits in the EEPROM, KilobitError for any
    other compiler error."""
    d = buildcache.entry(os.path.join(CACHE, target), key,
                         lambda tmp: _measure_into(tmp, target, header_text, checkpoint),
                         lambda d: os.path.exists(os.path.join(d, "sizes.json")))
    with open(os.path.join(d, "sizes.json")) as f:
        return json.load(f)


def _measure_into(d, target, header_text, checkpoint):
    """_cached's work in its private folder d: model.h, size.elf, sizes.json."""
    hpath = None
    if header_text is not None:
        hpath = os.path.join(d, "model.h")
        with open(hpath, "w") as f:
            f.write(header_text)
    sizes, err = _compile(target, hpath, os.path.join(d, "size.elf"))
    if sizes is None:
        if "kb_persist_does_not_fit_eeprom" in err.output or firmware.too_big(err.output):
            buildcache.discard(err)  # said in fit's words below: no log to keep
        why = firmware.too_big(err.output)  # before the EEPROM: its probe would fail the same
        if why:
            raise FitError("does not fit %s (%s): its header does not build (%s)"
                           % (target, TARGETS[target]["title"], why))
        if "kb_persist_does_not_fit_eeprom" in err.output:
            b = firmware.board(TARGETS[target]["board"])
            lay = firmware.probe_layout(hpath, SIZE_SOURCE, b["mcu"], b["clock_hz"],
                                        firmware.BAUD, b, [FIRMWARE_C])
            raise FitError("does not fit %s: no crash-safe checkpoint fits its EEPROM: %s "
                           "(--no-checkpoint exports it without)"
                           % (b["name"], firmware.layout_text(lay)))
        raise err
    if checkpoint and target == "avr":
        b = firmware.board(TARGETS[target]["board"])
        sizes["checkpoint"] = firmware.probe_layout(hpath, SIZE_SOURCE, b["mcu"], b["clock_hz"],
                                                    firmware.BAUD, b, [FIRMWARE_C])
    with open(os.path.join(d, "sizes.json"), "w") as f:
        json.dump(sizes, f)


def measure(target, api, impl, name, checkpoint=False):
    """{"flash", "ram"} the model adds to a program on the target (the header's API and
    implementation parts), its program's totals ("program_flash", "program_ram") and, for an
    AVR learner with checkpoints, the EEPROM layout ("checkpoint")."""
    cc = compiler(target)
    text = _wrap(name, api, impl, "/* measured by kilobit.runtimes.export */")
    with open(SIZE_SOURCE) as f:
        src = f.read()
    flags = " ".join([cc] + list(TARGETS[target]["flags"]) + list(CFLAGS))
    base = _cached(target, firmware.digest(["baseline", src, flags]), None)
    got = _cached(target, firmware.digest([text, src, flags] + _firmware_texts()), text,
                  checkpoint)
    out = {"flash": got["flash"] - base["flash"], "ram": got["ram"] - base["ram"],
           "program_flash": got["flash"], "program_ram": got["ram"]}
    if "checkpoint" in got:
        out["checkpoint"] = got["checkpoint"]
    return out


def _firmware_texts():
    """The texts of every firmware_c header: the cache key of a measurement (a header that
    #includes its runtime compiles whatever firmware_c holds now)."""
    out = []
    for root, _, files in sorted(os.walk(FIRMWARE_C)):
        for f in sorted(files):
            if f.endswith(".h"):
                with open(os.path.join(root, f)) as fh:
                    out.append(fh.read())
    return out


def check_fit(target, sizes, spec):
    """FitError when the program with the model exceeds the target board's flash, or its
    static RAM plus the stack the model's firmware reserves exceeds its RAM."""
    t = TARGETS[target]
    if t["board"] is None:
        return
    b = board_file(t["board"])
    flash = b["flash_bytes"] - b.get("bootloader_bytes", 0)
    reserve = stack_reserve(target, spec)
    where = "%s (%s)" % (target, t["title"])
    if sizes["program_flash"] > flash:
        raise FitError("does not fit %s: program %d B > %d B flash" % (
            where, sizes["program_flash"], flash))
    if sizes["program_ram"] + reserve > b["ram_bytes"]:
        raise FitError("does not fit %s: static RAM %d B + stack reserve %d B = %d B > %d B RAM"
                       % (where, sizes["program_ram"], reserve, sizes["program_ram"] + reserve,
                          b["ram_bytes"]))


def stack_reserve(target, spec):
    """The stack kept free beside static RAM: the model's AVR firmware's reserve on the Uno."""
    t = TARGETS[target]
    if "stack" in t:
        return t["stack"]
    mcu = board_file(t["board"])["mcu"]
    return getattr(spec.firmware, "STACK_RESERVE", firmware.STACK_RESERVE)[mcu]


def board_file(name):
    """A board file by name (boards/*.json), whatever its runtime."""
    with open(os.path.join(firmware.BOARDS_DIR, name + ".json")) as f:
        return json.load(f)


def _comment(spec, name, target, sizes, source_name, eeprom_at, embed):
    """The header's opening comment: what it is, what it needs (measured), how to include it."""
    t = TARGETS[target]
    paras = [
        "%s.h - an exported %s model (%s) for your own firmware, made by `kilobit export` "
        "(kilobit %s) from %s. Do not edit: export again." % (
            name, spec.name, spec.title, __version__, source_name),
        "On %s it needs %s B of flash and %s B of static RAM (one input buffer included) "
        "beside its stack: measured by compiling firmware_c/kb_export_size.c, which calls every "
        "function below, with and without this header (%s -Os)." % (
            t["title"], format(sizes["flash"], ","), format(sizes["ram"], ","),
            t["cc"] or "cc")]
    if "checkpoint" in sizes:
        lay = sizes["checkpoint"]
        paras[-1] += " Checkpoints take EEPROM bytes %d .. %d (%s)." % (
            eeprom_at, eeprom_at + lay["used_bytes"] - 1, lay["scheme"])
    paras.append("Include it in one source file: the model is compiled there. Another file "
                 "that calls it defines %s_API_ONLY before its #include. Several models: one "
                 "per source file, each exported with its own --name." % name.upper())
    if not embed:
        paras[-1] += (" The C runtime comes from the kilobit Arduino library (or firmware_c/ "
                      "on the include path).")
    lines = ["/*"]
    for i, para in enumerate(paras):
        if i:
            lines.append(" *")
        lines += textwrap.wrap(para, 96, initial_indent=" * ", subsequent_indent=" * ")
    return "\n".join(lines + [" */"])


def header(model_bytes, name=None, target="avr", embed=True, checkpoint_every=0, eeprom_at=0,
           source_name="a model file"):
    """(text of the exported header, sizes) for a model file. `checkpoint_every`: None for no
    EEPROM checkpoints, 0 for checkpoints on request (NAME_save) only, N for one after every N
    learning steps that changed the model too. Raises ModelFileError for a bad file, FitError
    when the model cannot fit the target, KilobitError for bad options or a missing compiler."""
    if target not in TARGETS:
        raise KilobitError("unknown target %r (known: %s)" % (target, ", ".join(TARGETS)))
    spec, m, extras = registry.load(model_bytes)
    name = check_name(spec.name if name is None else name)
    if checkpoint_every is not None and not 0 <= int(checkpoint_every) <= 255:
        raise KilobitError("--checkpoint-every %s: must be 0 (on request only) to 255"
                           % checkpoint_every)
    if spec.kind == "predictor":
        checkpoint_every = None  # nothing learnt on the device, nothing to keep
    ee = board_file(TARGETS["avr"]["board"])["eeprom_bytes"]
    if not 0 <= int(eeprom_at) < ee:
        raise KilobitError("--eeprom-at %s: the Uno's EEPROM is bytes 0 .. %d"
                           % (eeprom_at, ee - 1))
    files = _includes(spec, model_bytes, compiler(target))
    api, impl = _source(spec, m, model_bytes, name, files, embed, checkpoint_every,
                        int(eeprom_at), extras)
    try:
        sizes = measure(target, api, impl, name, checkpoint_every is not None)
    except FitError:
        # a state too big for the EEPROM may be too big for the RAM first: say that
        api0, impl0 = _source(spec, m, model_bytes, name, files, embed, None, 0, extras)
        check_fit(target, measure(target, api0, impl0, name), spec)
        raise
    check_fit(target, sizes, spec)
    comment = _comment(spec, name, target, sizes, source_name, int(eeprom_at), embed)
    return _wrap(name, api, impl, comment), sizes
