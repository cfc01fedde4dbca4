"""The golden-file format (docs/contract.md): one JSON document per case, the same for every model.

    format, version  "kilobit-golden", 1
    model            the model type's name (kilobit.models.registry)
    params           what it was made with (for people; the model file is authoritative)
    model_file       hex of the .kb model file every runtime loads
    steps            one text line per step, in the model kind's step format
    fields           the integer fields of a step (default FIELDS, a binary learner's)
    expect           per step the fields, then the CRC-32 of the memory when it has one
    final_memory     hex of the memory after the last step, or absent (a predictor)
    raw              optional, for a model file with an integer quantizer (contract 1.1): per
                     step the raw integer readings its inputs were quantized from; every
                     runtime that quantizes (Runtime.quantize_rows) must make the same inputs

Made by the models (kilobit.models.*.golden), read by every runtime (kilobit.golden.check).
"""
import json
import re
import zlib

from kilobit.core import inputs, outfile
from kilobit.core.errors import KilobitError

FORMAT = "kilobit-golden"
VERSION = 1


def dump(doc, path):
    """Write (kilobit.core.outfile: all or nothing), one step per line so diffs stay readable."""
    lines = ["{"]
    keys = list(doc)
    for i, k in enumerate(keys):
        v = doc[k]
        comma = "," if i < len(keys) - 1 else ""
        if k in ("steps", "expect", "windows"):
            body = ",\n    ".join(json.dumps(x) for x in v)
            lines.append('  "%s": [\n    %s\n  ]%s' % (k, body, comma))
        else:
            lines.append("  %s: %s%s" % (json.dumps(k), json.dumps(v), comma))
    lines.append("}")
    outfile.write(path, "\n".join(lines) + "\n")


def load(path):
    """The document of a golden file, refused (KilobitError naming the file and the key) unless
    it follows the format above; what only the model type can check (the model file, the steps)
    is kilobit.golden.read's."""
    doc = inputs.json_document(path, "golden file", inputs.GOLDEN_CAP)
    if not isinstance(doc, dict) or doc.get("format") != FORMAT or doc.get("version") != VERSION:
        raise KilobitError("%s is not a kilobit golden file (version %d)" % (path, VERSION))
    problem = _problem_of_kind(doc)
    if problem:
        raise KilobitError("golden file %s: %s" % (path, problem))
    return doc


def _problem_of_kind(doc):
    """A model's golden document, or another kind's (kilobit.core.goldenfeatures: windows and
    their features) checked by its own module."""
    kind = doc.get("kind")
    if kind is None:
        return schema_problem(doc)
    from kilobit.core import goldenfeatures
    if kind != goldenfeatures.KIND:
        return "unknown kind %r (known: %s)" % (kind, goldenfeatures.KIND)
    return goldenfeatures.schema_problem(doc)


_HEX = re.compile(r"(?:[0-9a-fA-F]{2})*")


def _is_int(v):
    return isinstance(v, int) and not isinstance(v, bool)


def schema_problem(doc):
    """What is wrong with a golden document's keys and their types, or None."""
    for key, kind in (("model", str), ("params", dict), ("model_file", str), ("steps", list),
                      ("expect", list)):
        if key not in doc:
            return "no %r key" % key
        if not isinstance(doc[key], kind):
            return "%r is a %s, not a %s" % (key, type(doc[key]).__name__, kind.__name__)
    for key in ("model_file", "final_memory"):
        v = doc.get(key)
        if v is not None and not (isinstance(v, str) and _HEX.fullmatch(v)):
            return "%r is not hex bytes" % key
    if not doc["model_file"]:
        return "'model_file' is empty"
    fields = doc.get("fields", FIELDS)
    if "fields" in doc and not (isinstance(fields, list) and fields
                                and all(isinstance(f, str) for f in fields)):
        return "'fields' is not a list of names"
    steps, expect = doc["steps"], doc["expect"]
    if not steps:
        return "no steps (a golden file replays at least one)"
    bad = next((i for i, t in enumerate(steps) if not isinstance(t, str)), None)
    if bad is not None:
        return "step %d is a %s, not a text line" % (bad, type(steps[bad]).__name__)
    if len(expect) != len(steps):
        return "%d steps but %d expect rows" % (len(steps), len(expect))
    raw = doc.get("raw")
    if raw is not None:
        if not isinstance(raw, list) or len(raw) != len(steps):
            return "'raw' is not a list of %d rows (one a step)" % len(steps)
        bad = next((i for i, r in enumerate(raw) if not isinstance(r, list) or not r
                    or not all(_is_int(v) for v in r)), None)
        if bad is not None:
            return "raw row %d is not a list of integers" % bad
    width = len(fields) + (doc.get("final_memory") is not None)
    for i, row in enumerate(expect):
        if not isinstance(row, list) or len(row) != width or not all(_is_int(v) for v in row):
            return "expect row %d is not %d integers (%s%s)" % (
                i, width, ", ".join(fields),
                ", CRC-32 of the memory" if width > len(fields) else "")
    return None


class Mismatch:
    def __init__(self, runtime, step, field, expected, got):
        self.runtime, self.step, self.field = runtime, step, field
        self.expected, self.got = expected, got

    def __str__(self):
        return "%s: step %d, field %s: expected %s, got %s" % (
            self.runtime, self.step, self.field, self.expected, self.got)


# The integer fields of a step, in order, for a learner's golden file. A model whose steps give
# other fields (a predictor's class scores, say) names them in its document's "fields"; the
# CRC-32 of the memory follows them in "expect" when the model has a memory ("final_memory").
FIELDS = ("score", "prediction", "mistake", "count")


def compare(doc, runtime_name, results):
    """The first difference between a runtime's replay and the golden file, or None.

    A result is the step's fields (ints), then the memory (bytes) or None where unreported."""
    expect = doc["expect"]
    fields = doc.get("fields", FIELDS)
    nf = len(fields)
    has_memory = doc.get("final_memory") is not None
    if len(results) != len(expect):
        return Mismatch(runtime_name, len(results), "steps", len(expect), len(results))
    mem = None
    for i, (got, exp) in enumerate(zip(results, expect)):
        # None: a field this runtime does not report (the Uno's ProtoNN leaves out D and k);
        # the prediction and at least one other field must always be there
        if len(got) < nf or got[nf - 1] is None or all(g is None for g in got[:nf - 1]):
            return Mismatch(runtime_name, i, "fields", "%d reported" % nf, "too few")
        for f, g, e in zip(fields, got[:nf], exp[:nf]):
            if g is not None and int(g) != e:
                return Mismatch(runtime_name, i, f, e, g)
        if has_memory and got[nf] is not None:
            mem = got[nf]
            crc = zlib.crc32(mem) & 0xFFFFFFFF
            if crc != exp[nf]:
                return Mismatch(runtime_name, i, "memory", "crc32 %08x" % exp[nf],
                                "crc32 %08x" % crc)
    if not has_memory:
        return None
    final = bytes.fromhex(doc["final_memory"])
    if mem is None:
        return Mismatch(runtime_name, len(expect) - 1, "memory", "reported", "never reported")
    if mem != final:
        where = next((j for j in range(min(len(mem), len(final))) if mem[j] != final[j]),
                     min(len(mem), len(final)))
        return Mismatch(runtime_name, len(expect) - 1, "final memory byte %d" % where,
                        final[where:where + 1].hex() or "end",
                        mem[where:where + 1].hex() or "end")
    return None
