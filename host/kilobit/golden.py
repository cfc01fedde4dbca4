"""Golden vectors: one set, made by the host integer reference, replayed on every runtime.

The file format is kilobit.core.goldenfile's; each model type makes its own cases
(kilobit.models.<name>.golden) and this module only reads the registry:

    make_doc(params)          one case of the checked-in set (params["model"] picks the type)
    make_random(name, seed)   a case with parameters drawn from the seed
    make_set(directory)       the checked-in set, every model type
    read(path)                a golden file checked whole, before any runtime starts
    check(path, runtimes)     replay one file on runtimes, bit for bit
    make_features_set(dir)    the checked-in features set (kind "features": windows of raw
                              readings and their features, kilobit.core.goldenfeatures)
"""
import os

import numpy as np

from kilobit.core import goldenfeatures, outfile
from kilobit.core.errors import KilobitError
from kilobit.core.goldenfile import FIELDS, FORMAT, VERSION, Mismatch, compare, dump, load  # noqa: F401
from kilobit.models import registry
from kilobit.runtimes import catalog as rt
from kilobit.runtimes.base import RuntimeFailure


def golden_name(p):
    model = p.get("model", "rkp")
    if model == "rkp":
        return "rkp-%s-b%d-t%d-m%d-a%d%s-s%d.json" % (
            p["kernel"], p["bits"], p["budget"], p["dims"], p["width"],
            "-k%d" % p["classes"] if p.get("classes", 2) != 2 else "", p["seed"])
    return "-".join([model] + ["%s%s" % (k, v) for k, v in sorted(p.items()) if k != "model"]) \
        + ".json"


def golden_set():
    """The checked-in set (tests/golden): every model type's GOLDEN_SET, in registry order."""
    out = []
    for spec in registry.REGISTRY:
        out += [dict(p, model=spec.name) if "model" not in p else p
                for p in spec.golden.GOLDEN_SET]
    return out


def make_doc(p):
    """The golden document of one golden-set entry; "model" (default rkp) picks the type."""
    p = dict(p)
    return registry.get(p.pop("model", "rkp")).golden.make(**p)


def make_random(name, seed, steps=None):
    """A case of model type `name` whose parameters are drawn from `seed`."""
    spec = registry.get(name)
    return spec.golden.make(**spec.golden.random_params(seed, steps))


def replay_doc(doc, runtime, from_raw=False):
    """The runtime's rows for the document's steps; from_raw: the steps carry the raw rows
    instead of their inputs and the runtime quantizes them itself (Runtime.replays_raw)."""
    spec = registry.get(doc["model"])
    steps = spec.golden.doc_steps(doc)
    if from_raw:
        steps = [(op, y, row) for (op, y, _), row in zip(steps, doc["raw"])]
        return runtime.replay(bytes.fromhex(doc["model_file"]), steps, raw=True)
    return runtime.replay(bytes.fromhex(doc["model_file"]), steps)


def read(path):
    """(doc, steps) of a golden file checked whole: its format (kilobit.core.goldenfile.load),
    its model file (valid, and of the type its "model" key names), its steps (parsed by that
    type, every input inside the model's range: codes 0 .. 2^B-1, values of B bits).
    KilobitError naming the file and what is wrong. A features file (kind "features") is
    checked whole by its load; its steps are its windows."""
    doc = load(path)
    if is_features(doc):
        return doc, doc["windows"]

    def bad(what):
        return KilobitError("golden file %s: %s" % (path, what))

    if doc["model"] not in registry.NAMES:
        raise bad("unknown model %r (known: %s)" % (doc["model"], ", ".join(registry.NAMES)))
    spec = registry.get(doc["model"])
    blob = bytes.fromhex(doc["model_file"])
    try:
        m, _ = registry.of_file(blob).load(blob)
    except (KilobitError, ValueError) as e:
        raise bad("model_file: %s" % e) from None
    if registry.of_file(blob) is not spec:
        raise bad("model_file is a %s model, its model key says %s"
                  % (registry.of_file(blob).name, spec.name))
    try:
        steps = spec.golden.doc_steps(doc)
    except (KilobitError, ValueError, KeyError, TypeError, IndexError) as e:
        raise bad("its steps do not parse as %s steps: %s" % (spec.name, e)) from None
    lo, hi = (int(spec.inputs(m, np.full((1, 1), v))[0, 0]) for v in (0.0, 1.0))
    for i, (_, _, codes) in enumerate(steps):
        out = [c for c in codes if not lo <= c <= hi]
        if out:
            raise bad("step %d: input %d is outside the model's %d .. %d" % (i, out[0], lo, hi))
    if doc.get("raw") is not None:
        i = raw_mismatch(doc, steps, rt.get("host"))
        if i is not None:
            raise bad("raw row %d does not quantize to its step's inputs (contract 1.1)" % i)
    return doc, steps


def raw_mismatch(doc, steps, runtime):
    """The first step whose raw row `runtime` quantizes to other inputs than the step's, or
    None (RuntimeFailure when the runtime cannot: no quantizer in the file, a crash)."""
    got = runtime.quantize_rows(bytes.fromhex(doc["model_file"]), doc["raw"])
    return next((i for i, (g, (_, _, codes)) in enumerate(zip(got, steps))
                 if list(g) != list(codes)), None)


def runtimes(names):
    """The runtimes of names (a BOARD@PORT's port checked), KilobitError for an unknown one."""
    return [rt.get(name) for name in names]


def is_features(doc):
    return doc.get("kind") == goldenfeatures.KIND


def features_job(doc):
    """((axes, n, mask, p, bands), windows) of a features document: Runtime.replay_features's
    arguments, a job of its replay_features_many."""
    return (doc["A"], doc["N"], doc["mask"], doc["p"], doc["B"]), doc["windows"]


def replay_features(doc, runtime):
    """The runtime's features of a features document's windows (one list a window)."""
    selection, windows = features_job(doc)
    return runtime.replay_features(windows, *selection)


def _model_verdict(doc, steps, name, runtime):
    has_raw = doc.get("raw") is not None
    from_raw = has_raw and getattr(runtime, "replays_raw", False)
    raw = has_raw and (from_raw or runtime.quantize_rows is not None)
    bad = compare(doc, name, replay_doc(doc, runtime, from_raw))
    i = raw_mismatch(doc, steps, runtime) if raw and not from_raw and not bad else None
    if i is not None:
        bad = "%s: raw row %d quantized to other inputs than step %d's" % (name, i, i)
    return bad, "%d steps bit for bit%s" % (len(doc["steps"]), ", quantized from raw" if raw
                                            else "")


def _features_verdict(doc, windows, name, runtime):
    bad = goldenfeatures.compare(doc, name, replay_features(doc, runtime))
    return bad, "%d windows of %d x %d readings, %s, bit for bit" % (
        len(windows), doc["A"], doc["N"], goldenfeatures.spec_of(doc))


def check(path, runtime_names, log=print):
    """Replay one golden file on each runtime. Return a list of failure texts (empty: all agree)."""
    doc, steps = read(path)
    verdict = _features_verdict if is_features(doc) else _model_verdict
    failures = []
    for name, runtime in zip(runtime_names, runtimes(runtime_names)):
        missing = runtime.missing()
        if missing:
            failures.append("%s: not available here (%s)" % (name, missing))
            log("  %-18s MISSING  %s" % (name, missing))
            continue
        try:
            bad, what = verdict(doc, steps, name, runtime)
        except RuntimeFailure as e:
            bad = "%s: runtime failed: %s" % (name, e)
        if bad:
            failures.append(str(bad))
            log("  %-18s DIFFERS  %s" % (name, bad))
        else:
            path = getattr(runtime, "path", None)  # the MicroPython runtimes say which ran
            log("  %-18s ok       %s%s" % (name, what, "; " + path if path else ""))
    return failures


#: the raw-readings golden set (tests/golden/raw): a model of each type trained by its own
#: `kilobit train` on pendigits' integer features (pen coordinates 0..100, as an ADC gives
#: integers), so its file carries the integer quantizer, and steps made from the data's rows with
#: their raw readings; training is float (numpy), so these files are checked for what they say,
#: not remade by every test run
RAW_DATA = {"learner": "pendigits"}  # binary learners; the rest take the ten digits
RAW_STEPS = 40


def _raw_doc(spec, data_name, tmp):
    """The raw-readings golden document of model type `spec`: its model trained by its own
    `kilobit train` on `data_name` in the folder tmp."""
    import argparse
    model = os.path.join(tmp, spec.name + ".kb")
    p = argparse.ArgumentParser()
    spec.commands.add_train_args(p)
    a = p.parse_args(["--data", data_name, "--quiet", "-o", model])
    with open(os.devnull, "w") as quiet, _stdout(quiet):
        spec.commands.train(a)
    with open(model, "rb") as f:
        blob = f.read()
    doc = spec.golden.from_model(blob, data_name, steps=RAW_STEPS)
    if doc.get("raw") is None:
        raise KilobitError("%s on %s: no integer quantizer" % (spec.name, data_name))
    return doc


def make_raw_set(directory, log=print):
    """Write the raw-readings golden set into `directory` (every model type; write_set)."""
    import tempfile
    with tempfile.TemporaryDirectory(prefix="kilobit-raw-") as tmp:
        docs = []
        for spec in registry.REGISTRY:
            data_name = RAW_DATA.get(spec.kind, "pendigits-10")
            docs.append(("%s-raw-%s.json" % (spec.name, data_name),
                         lambda spec=spec, d=data_name: _raw_doc(spec, d, tmp)))
        return write_set(directory, docs, log)


def _stdout(f):
    import contextlib
    return contextlib.redirect_stdout(f)


def write_set(directory, docs, log=print):
    """Write the golden files `docs` ((name, a function making its document), ...) into
    `directory` all or nothing (kilobit.core.outfile.directory: a full disk or an interrupt
    leaves the folder as it was); the names."""
    names = []
    with outfile.directory(directory) as work:
        for name, make in docs:
            dump(make(), os.path.join(work, name))
            names.append(name)
            log("made %s" % name)
    log("wrote %d golden files to %s" % (len(names), directory))
    return names


def make_set(directory, log=print):
    """Write the checked-in set into `directory` (write_set)."""
    return write_set(directory, [(golden_name(p), lambda p=p: make_doc(p))
                                 for p in golden_set()], log)


#: the checked-in features set (tests/golden/features): time-domain selections alone and with
#: the bands of every FFT size, one to twelve axes, N from 1 to 256; every file's firmware fits
#: the Uno (window, FFT scratch and features in its 2 KB); the largest FFTs hold 12 windows,
#: still every edge shape on every axis, as the emulated Pico's bytecode takes ~0.4 s a window
FEATURES_SET = [
    dict(window=100, axes=3, features="time", seed=1),
    dict(window=1, axes=2, features="time", seed=2),
    dict(window=16, axes=12, features="min,max,diff,cross", seed=3),
    dict(window=40, axes=6, features="mean,energy,fft32:4", seed=4),
    dict(window=100, axes=3, features="time,fft64:8", seed=5, count=12),
    dict(window=128, axes=2, features="mad,fft128:16", seed=6, count=12),
    dict(window=256, axes=1, features="mean,max,fft256:8", seed=7, count=12),
    dict(window=64, axes=1, features="fft64:32", seed=8),
]


def features_name(p):
    """The file name of a features case: its sizes, its selection (',' -> '+', ':' -> 'b')."""
    return "features-n%d-a%d-%s-s%d.json" % (
        p["window"], p["axes"], p["features"].replace(",", "+").replace(":", "b"), p["seed"])


def make_features_set(directory, log=print):
    """Write the features golden set into `directory` (write_set)."""
    return write_set(directory, [(features_name(p), lambda p=p: goldenfeatures.make(**p))
                                 for p in FEATURES_SET], log)
