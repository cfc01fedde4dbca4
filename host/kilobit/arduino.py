"""The kilobit Arduino library, made from firmware_c: `kilobit export --arduino-library DIR`.

    from kilobit import arduino
    arduino.make_library("build/arduino/kilobit")

DIR/
  library.properties   the Arduino IDE's (library format 1.5)
  library.json         PlatformIO's
  LICENSE, README.md   the licence (kilobit's LICENSE) and what the folder holds
  src/                 kilobit.h, the C runtime (firmware_c's headers and avr/kb_persist.h),
                       kb_lines.h (the examples' Serial requests): copies, never edited
  examples/<Sketch>/   the sketches of firmware_c/arduino/examples, each with its model: trained
                       here with fixed seeds and exported with `--runtime include`

The examples (EXAMPLES): BananaLearner, an RKP learning a stream online with an EEPROM
checkpoint that survives a reset; PendigitsClassifier, a Bonsai tree fed features over Serial;
NewClass, the associative memory learning a class it has never seen. Their models are the ones
`kilobit bench export` measures.
"""
import argparse
import contextlib
import io
import json
import os
import shutil
import tempfile
from typing import NamedTuple

import numpy as np

from kilobit import __version__
from kilobit.core import about, outfile
from kilobit.core.errors import KilobitError
from kilobit.models import registry
from kilobit.runtimes import export
from kilobit.runtimes.export import FIRMWARE_C

NAME = "kilobit"
SKETCHES = os.path.join(FIRMWARE_C, "arduino", "examples")
#: the Arduino-only header beside the C runtime
LINES_H = os.path.join(FIRMWARE_C, "arduino", "kb_lines.h")
#: the classes NewClass's model knows when it leaves the host, of pendigits-10's ten
KNOWN_DIGITS = (0, 1, 2)
NEW_DIGIT = 3


class Example(NamedTuple):
    sketch: str    # its folder under firmware_c/arduino/examples
    name: str      # the --name its sketch calls the model by
    data: str      # a data set name, or "digits012" (KNOWN_DIGITS of pendigits-10, a CSV)
    models: tuple  # ((model type, `kilobit train` arguments besides --data and -o), ...):
    #                the first is the library's; the others are of the same kind and run in
    #                the same sketch unchanged (the tests and `kilobit bench export` use them)


EXAMPLES = (
    Example("BananaLearner", "banana", "banana", (
        ("rkp", ("--bits", "4", "--budget", "62", "--width", "-6", "--seed", "0")),
        ("ckp", ("--L", "560", "--bits", "6", "--seed", "0")))),
    Example("PendigitsClassifier", "pendigits", "pendigits-10", (
        ("bonsai", ("--depth", "1", "--proj", "6", "--epochs", "3,6,3", "--seed", "0",
                    "--quiet")),
        ("protonn", ("--proj", "6", "--prototypes", "10", "--epochs", "3,2", "--seed", "0",
                     "--quiet")))),
    Example("NewClass", "digits", "digits012", (
        ("assoc", ("--P", "4", "--kt", "4", "--bits", "4", "--cap", "4", "--seed", "0")),)),
)


def example(model_type):
    """The example whose sketch runs a model of `model_type`."""
    return next(e for e in EXAMPLES if model_type in dict(e.models))


def write_digits_csv(path, digits, seed=0):
    """pendigits-10's rows (both splits) of the given digits as a CSV, label last."""
    from kilobit import data
    split = data.load("pendigits-10", seed=seed, binary=False)
    X = np.vstack([split.X_train, split.X_test])
    y = np.concatenate([split.y_train, split.y_test])
    keep = np.isin(y, digits)
    with open(path, "w") as f:
        for row, label in zip(X[keep], y[keep]):
            f.write(",".join("%g" % v for v in row) + ",%d\n" % label)
    return path


def _data_path(name, tmp):
    if name != "digits012":
        return name
    return write_digits_csv(os.path.join(tmp, "digits012.csv"), KNOWN_DIGITS)


def train(ex, model_type=None):
    """The model file of an example (`model_type`: one of its other models), trained as its
    sketch's comment says, quietly."""
    models = dict(ex.models)
    model_type = model_type or ex.models[0][0]
    spec = registry.get(model_type)
    with tempfile.TemporaryDirectory(prefix="kilobit-example-") as tmp:
        out = os.path.join(tmp, "model.kb")
        p = argparse.ArgumentParser()
        spec.commands.add_train_args(p)
        argv = ["--data", _data_path(ex.data, tmp), "-o", out] + list(models[model_type])
        with contextlib.redirect_stdout(io.StringIO()):
            spec.commands.train(p.parse_args(argv))
        with open(out, "rb") as f:
            return f.read()


def sketch_with_model(sketch_src, model_bytes, name, dest, **export_args):
    """A copy of the sketch folder `sketch_src` in `dest` (made) with the model exported into
    it as <name>.h (kilobit.runtimes.export.header's options); returns (the copy, sizes)."""
    sketch = os.path.basename(os.path.normpath(sketch_src))
    out = os.path.join(dest, sketch)
    os.makedirs(out, exist_ok=True)
    shutil.copyfile(os.path.join(sketch_src, sketch + ".ino"), os.path.join(out, sketch + ".ino"))
    text, sizes = export.header(model_bytes, name=name, **export_args)
    with open(os.path.join(out, name + ".h"), "w") as f:
        f.write(text)
    return out, sizes


def runtime_files():
    """(source, path under src/) of the C runtime the library ships."""
    out = []
    for f in sorted(os.listdir(FIRMWARE_C)):
        if f.startswith("kb_") and f.endswith(".h"):
            out.append((os.path.join(FIRMWARE_C, f), f))
    out.append((os.path.join(FIRMWARE_C, "avr", "kb_persist.h"), os.path.join("avr",
                                                                            "kb_persist.h")))
    out.append((LINES_H, os.path.basename(LINES_H)))
    return out


def _properties():
    return "\n".join([
        # the library format has no licence field, and a comment is the one line the IDE and
        # arduino-lint read past; the LICENSE file beside it is what arduino-lint looks for
        "# SPDX-License-Identifier: %s" % about.LICENSE,
        "name=%s" % NAME,
        "version=%s" % __version__,
        "author=%s" % about.AUTHOR,
        "maintainer=%s <%s>" % (about.AUTHOR, about.AUTHOR_EMAIL),
        "sentence=Tiny machine-learning models that predict and keep learning on the chip, "
        "integer only.",
        "paragraph=Kernel perceptrons (RKP, CKP), Bonsai, ProtoNN and a binary associative "
        "memory, trained on the host with kilobit and exported as one header each "
        "(kilobit export); the learners keep learning on the board and checkpoint to the "
        "EEPROM.",
        "category=Data Processing",
        "url=%s" % about.HOMEPAGE,
        "architectures=*",
        "includes=kilobit.h",
    ]) + "\n"


def _library_json():
    return json.dumps({
        "name": NAME, "version": __version__, "license": about.LICENSE,
        "homepage": about.HOMEPAGE,
        "authors": [{"name": about.AUTHOR, "email": about.AUTHOR_EMAIL}],
        "description": "Tiny machine-learning models that predict and keep learning on the "
                       "chip, integer only: kilobit's C runtime and the models `kilobit "
                       "export` makes.",
        "keywords": ["machine learning", "perceptron", "online learning", "classifier"],
        "frameworks": ["arduino"], "platforms": ["*"],
        "headers": ["kilobit.h"],
        "examples": ["examples/*/*.ino"],
    }, indent=2) + "\n"


def _readme():
    def data(name):
        if name == "digits012":
            return "the digits %s of pendigits-10" % ", ".join(map(str, KNOWN_DIGITS))
        return name

    examples = "\n".join("- `examples/%s`: %s (`%s.h`), trained on %s" % (
        ex.sketch, registry.get(ex.models[0][0]).title, ex.name, data(ex.data))
        for ex in EXAMPLES)
    return "\n".join([
        "# kilobit %s for Arduino" % __version__,
        "",
        "Tiny machine-learning models that predict, and some that keep learning, on the chip "
        "with integer arithmetic only: kilobit's C99 runtime (`src/`) and example sketches, "
        "each with a model exported by `kilobit export --runtime include`.",
        "",
        examples,
        "",
        "A sketch includes its model's header, which includes the runtime. To run a model of "
        "your own, train it with the kilobit Python package (`kilobit train ...`; see the home "
        "page) and export it with `kilobit export MODEL.kb -o model.h "
        "--runtime include --target avr`. This folder was written by `kilobit export "
        "--arduino-library` and is replaced whole when written again.",
        "",
        "Home: %s" % about.HOMEPAGE,
        "",
        "Licence: %s (see LICENSE)." % about.LICENSE,
    ]) + "\n"


def _kilobit_h():
    return "\n".join([
        "/*",
        " * kilobit.h - the kilobit Arduino library: kilobit's C runtime (the kb_*.h beside",
        " * this file) for the models `kilobit export MODEL.kb -o model.h --runtime include`",
        " * makes. A sketch includes its model's header; this one only names the library for",
        " * the IDE. See the examples.",
        " */",
        "#ifndef KILOBIT_H",
        "#define KILOBIT_H",
        '#define KILOBIT_VERSION "%s"' % __version__,
        "#endif",
    ]) + "\n"


def make_library(path, progress=None):
    """Write the library into the folder `path` (made; an earlier kilobit library there is
    replaced whole, any other non-empty folder refused; a symlink is written through). The
    examples' models are trained and exported on the way; nothing lands in `path` unless all of
    it could be made (kilobit.core.outfile.directory)."""
    inputs = (FIRMWARE_C,)
    target = outfile.check_directory(path, inputs, replace=True)
    if os.path.isdir(target) and os.listdir(target) and not _is_ours(target):
        raise KilobitError("cannot write the library into %s: a non-empty folder that is not "
                           "a kilobit library" % path)
    with outfile.directory(path, inputs, replace=True) as work:
        _write(work, progress)
    return path


def _is_ours(path):
    try:
        with open(os.path.join(path, "library.properties")) as f:
            return "name=%s\n" % NAME in f.read()
    except OSError:
        return False


def _write(root, progress):
    def put(rel, text):
        p = os.path.join(root, rel)
        os.makedirs(os.path.dirname(p), exist_ok=True)
        outfile.write(p, text)

    put("library.properties", _properties())
    put("library.json", _library_json())
    put("LICENSE", about.license_text())
    put("README.md", _readme())
    put(os.path.join("src", "kilobit.h"), _kilobit_h())
    for src, rel in runtime_files():
        with open(src) as f:
            put(os.path.join("src", rel), f.read())
    for ex in EXAMPLES:
        model_type = ex.models[0][0]
        if progress:
            progress("%s: training %s on %s, exporting" % (ex.sketch, model_type, ex.data))
        sketch_with_model(os.path.join(SKETCHES, ex.sketch), train(ex), ex.name,
                          os.path.join(root, "examples"), target="avr", embed=False,
                          source_name="%s trained on %s" % (model_type, ex.data))
