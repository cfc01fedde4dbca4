"""Golden vectors: one set, made by the host integer reference, replayed on every runtime.

A golden file is JSON:
    model        "rkp"
    params       the parameters it was made with (for people; the model file is authoritative)
    model_file   hex of the initial .kb model file every runtime loads
    steps        "L y c0 .. cM-1" (learn) or "Q c0 .. cM-1" (score only)
    expect       per step [score, prediction, mistake, count, crc32 of the memory after it]
    final_memory hex of the support-vector memory after the last step

The steps mix random codes with the hard cases on purpose: repeated inputs with the opposite
label (ties for the nearest support vector, scores of exactly 0), all-zero and all-maximum codes,
score-only queries, and enough mistakes to fill the budget so random removal runs.
"""
import json
import os
import zlib

import numpy as np

from kilobit.core.errors import KilobitError
from kilobit.models.rkp.model import RKPInt
from kilobit import runtimes as rt

FORMAT = "kilobit-golden"
VERSION = 1

# The checked-in set (tests/golden): both kernels, bits 1-8, budgets 1-200, M 1-64, A -8..+4,
# the paper's four 70-byte Banana configurations, weights that all round to zero, full budgets.
GOLDEN_SET = [
    dict(kernel="laplace", bits=4, budget=62, width=-6, dims=2, steps=400, seed=1),
    dict(kernel="laplace", bits=2, budget=112, width=-6, dims=2, steps=400, seed=2),
    dict(kernel="laplace", bits=6, budget=43, width=-6, dims=2, steps=300, seed=3),
    dict(kernel="laplace", bits=8, budget=32, width=-6, dims=2, steps=300, seed=4),
    dict(kernel="laplace", bits=1, budget=1, width=0, dims=1, steps=60, seed=5),
    dict(kernel="laplace", bits=5, budget=20, width=-8, dims=16, steps=120, seed=6),
    dict(kernel="laplace", bits=8, budget=200, width=4, dims=8, steps=500, seed=7),
    dict(kernel="laplace", bits=3, budget=10, width=-2, dims=64, steps=120, seed=8),
    dict(kernel="laplace", bits=8, budget=24, width=2, dims=64, steps=100, seed=9),
    dict(kernel="laplace", bits=5, budget=40, width=0, dims=3, steps=200, seed=10),
    dict(kernel="laplace", bits=7, budget=5, width=-4, dims=5, steps=80, seed=11),
    dict(kernel="rbf", bits=4, budget=62, width=-6, dims=2, steps=300, seed=12),
    dict(kernel="rbf", bits=8, budget=16, width=4, dims=64, steps=100, seed=13),
    dict(kernel="rbf", bits=1, budget=5, width=-8, dims=3, steps=80, seed=14),
    dict(kernel="rbf", bits=6, budget=50, width=-3, dims=4, steps=200, seed=15),
    dict(kernel="rbf", bits=2, budget=200, width=0, dims=1, steps=500, seed=16),
    dict(kernel="rbf", bits=3, budget=30, width=-1, dims=12, steps=150, seed=17),
    # ATtiny2313-sized (128 B of RAM: memory + state + stack): each takes another code path of
    # the compile-time build -- four scalar accumulators (J = 2) with the memory nearly filling
    # the RAM, rbf with three codes per 24-bit window, rbf through the field-stream reader.
    dict(kernel="laplace", bits=3, budget=90, width=-4, dims=2, steps=400, seed=18),
    dict(kernel="rbf", bits=3, budget=24, width=-4, dims=4, steps=200, seed=19),
    dict(kernel="rbf", bits=3, budget=12, width=0, dims=10, steps=150, seed=20),
]


def golden_name(p):
    model = p.get("model", "rkp")
    if model == "rkp":
        return "rkp-%s-b%d-t%d-m%d-a%d-s%d.json" % (
            p["kernel"], p["bits"], p["budget"], p["dims"], p["width"], p["seed"])
    return "-".join([model] + ["%s%s" % (k, v) for k, v in sorted(p.items()) if k != "model"]) \
        + ".json"


def make_doc(p):
    """The golden document of one GOLDEN_SET entry; "model" (default rkp) picks the maker."""
    p = dict(p)
    return MAKERS[p.pop("model", "rkp")](**p)


def make_steps(bits, dims, n, seed):
    """Random steps with the hard cases mixed in (see module docstring)."""
    gen = np.random.default_rng(seed)
    top = (1 << bits) - 1
    steps, seen = [], []
    for i in range(n):
        r = gen.random()
        if seen and r < 0.12:  # same point, opposite label: nearest-SV ties, zero scores
            op, y, codes = seen[int(gen.integers(len(seen)))]
            y = 1 - y
        elif r < 0.17:
            codes, y = [top] * dims, int(gen.integers(2))
        elif r < 0.21:
            codes, y = [0] * dims, int(gen.integers(2))
        else:
            codes, y = [int(c) for c in gen.integers(0, top + 1, dims)], int(gen.integers(2))
        op = "Q" if gen.random() < 0.1 else "L"
        steps.append((op, y if op == "L" else None, list(codes)))
        if op == "L":
            seen.append(("L", y, list(codes)))
    return steps


def step_text(step):
    op, y, codes = step
    head = ["L", str(y)] if op == "L" else ["Q"]
    return " ".join(head + [str(c) for c in codes])


def parse_step(text, dims):
    parts = text.split()
    try:
        if parts[0] == "L":
            op, y, codes = "L", int(parts[1]), [int(c) for c in parts[2:]]
            if y not in (0, 1):
                raise ValueError
        elif parts[0] == "Q":
            op, y, codes = "Q", None, [int(c) for c in parts[1:]]
        elif parts[0] == "P":  # a predictor's input (kilobit.runtimes.predictors)
            op, y, codes = "P", None, [int(c) for c in parts[1:]]
        else:
            raise ValueError
    except (ValueError, IndexError):
        raise KilobitError("bad golden step %r" % text) from None
    if len(codes) != dims:
        raise KilobitError("golden step has %d codes, model has %d dims" % (len(codes), dims))
    return op, y, codes


def make(kernel, bits, budget, width, dims, steps, seed, C=255):
    """Run the host integer reference and return the golden document (a dict)."""
    model = RKPInt(kernel, bits, dims, budget, width, C, seed=seed)
    model_file = model.to_bytes()
    seq = make_steps(bits, dims, steps, seed)
    out = rt.get("host").replay(model_file, seq)
    expect, mem = [], None
    for s, pred, mistake, count, m in out:
        if m is not None:
            mem = m
        expect.append([int(s), pred, mistake, count,
                       zlib.crc32(mem if mem is not None else model.memory()) & 0xFFFFFFFF])
    return {
        "format": FORMAT, "version": VERSION, "model": "rkp",
        "params": dict(kernel=kernel, bits=bits, budget=budget, width=width, dims=dims,
                       C=C, seed=seed, steps=steps),
        "model_file": model_file.hex(),
        "steps": [step_text(s) for s in seq],
        "expect": expect,
        "final_memory": mem.hex() if mem is not None else model.memory().hex(),
    }


def dump(doc, path):
    """Write atomically, one step per line so diffs stay readable."""
    lines = ["{"]
    keys = list(doc)
    for i, k in enumerate(keys):
        v = doc[k]
        comma = "," if i < len(keys) - 1 else ""
        if k in ("steps", "expect"):
            body = ",\n    ".join(json.dumps(x) for x in v)
            lines.append('  "%s": [\n    %s\n  ]%s' % (k, body, comma))
        else:
            lines.append("  %s: %s%s" % (json.dumps(k), json.dumps(v), comma))
    lines.append("}")
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        f.write("\n".join(lines) + "\n")
    os.replace(tmp, path)


def load(path):
    try:
        with open(path) as f:
            doc = json.load(f)
    except (OSError, ValueError) as e:
        raise KilobitError("cannot read golden file %s: %s" % (path, e)) from None
    if doc.get("format") != FORMAT or doc.get("version") != VERSION:
        raise KilobitError("%s is not a kilobit golden file (version %d)" % (path, VERSION))
    return doc


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


def replay_doc(doc, runtime):
    if doc.get("model") == "assoc":  # its own step format (label 0..255, int8 values)
        from kilobit.models.assoc import model as assoc
        p = doc["params"]
        steps = [assoc.parse_step(t, p["P"] * p["d"], p["bits"]) for t in doc["steps"]]
        return runtime.replay(bytes.fromhex(doc["model_file"]), steps)
    dims = doc["params"]["dims"]
    steps = [parse_step(t, dims) for t in doc["steps"]]
    return runtime.replay(bytes.fromhex(doc["model_file"]), steps)


def check(path, runtime_names, log=print):
    """Replay one golden file on each runtime. Return a list of failure texts (empty: all agree)."""
    doc = load(path)
    failures = []
    for name in runtime_names:
        runtime = rt.get(name)
        missing = runtime.missing()
        if missing:
            failures.append("%s: not available here (%s)" % (name, missing))
            log("  %-18s MISSING  %s" % (name, missing))
            continue
        try:
            bad = compare(doc, name, replay_doc(doc, runtime))
        except rt.RuntimeFailure as e:
            bad = "%s: runtime failed: %s" % (name, e)
        if bad:
            failures.append(str(bad))
            log("  %-18s DIFFERS  %s" % (name, bad))
        else:
            log("  %-18s ok       %d steps bit for bit" % (name, len(doc["steps"])))
    return failures


def make_set(directory, log=print):
    os.makedirs(directory, exist_ok=True)
    names = []
    for p in GOLDEN_SET:
        name = golden_name(p)
        dump(make_doc(p), os.path.join(directory, name))
        names.append(name)
        log("wrote %s" % os.path.join(directory, name))
    return names


# model name -> function(**params) -> golden document; each model registers its maker here
MAKERS = {"rkp": make}


# ---- ckp (docs/contract.md section 6): the same steps and fields as rkp ----

# Every code path of the CKP contract: precision lowered again and again (and not at all when the
# input precision caps it), random replacement, the budget at B_max (1 and 13 support vectors),
# an empty power table (only w(0)), a full 32-entry one, ||w||^2 saturating high and starting
# negative (it never adds), a host-trained snapshot continuing, 1 to 21 attributes, 1 to 8 bits.
# The first is the ATtiny2313 build's model: Banana, 70 bytes (L = 560), 6 bits, A = 0.1.
CKP_GOLDEN_SET = [
    dict(model="ckp", bits=6, dims=2, L=560, width=100, steps=500, seed=21),
    dict(model="ckp", bits=3, dims=2, L=40, width=500, steps=200, seed=22),
    dict(model="ckp", bits=1, dims=1, L=2, width=1000, steps=60, seed=23),
    dict(model="ckp", bits=8, dims=16, L=800, width=1000, steps=150, seed=24),
    dict(model="ckp", bits=4, dims=9, L=450, width=100, steps=250, seed=25),
    dict(model="ckp", bits=8, dims=21, L=1050, width=1000, steps=120, seed=26),
    dict(model="ckp", bits=2, dims=3, L=120, width=1, steps=150, seed=27),
    dict(model="ckp", bits=8, dims=2, L=300, width=65535, steps=200, seed=28),
    dict(model="ckp", bits=5, dims=3, L=300, width=250, steps=200, seed=29, norm=(1 << 30) - 600),
    dict(model="ckp", bits=7, dims=4, L=200, width=300, steps=150, seed=30, norm=-5000),
    dict(model="ckp", bits=6, dims=2, L=560, width=100, steps=300, seed=31, pretrain=1500),
    dict(model="ckp", bits=4, dims=2, L=30, width=2000, steps=150, seed=32),
]
GOLDEN_SET += CKP_GOLDEN_SET


def make_ckp(bits, dims, L, width, steps, seed, C=255, norm=None, pretrain=0):
    """The golden document of a CKP model (kilobit.ckp.CKPInt). `norm` starts ||w||^2 * C at a
    chosen value (a snapshot may hold any); `pretrain` random learning steps first, so the file
    is a host-trained model that continues on the runtime."""
    from kilobit.models.ckp.model import CKPInt

    model = CKPInt(bits, dims, L, width, C, seed=seed)
    for op, y, codes in make_steps(bits, dims, pretrain, seed + 1000):
        if op == "L":
            model.learn(codes, y)
    if norm is not None:
        model.norm = norm
    model_file = model.to_bytes()
    seq = make_steps(bits, dims, steps, seed)
    out = rt.get("host").replay(model_file, seq)
    expect, mem = [], model.memory()
    for s, pred, mistake, count, m in out:
        if m is not None:
            mem = m
        expect.append([int(s), pred, mistake, count, zlib.crc32(mem) & 0xFFFFFFFF])
    params = dict(bits=bits, dims=dims, L=L, width=width, C=C, seed=seed, steps=steps)
    if norm is not None:
        params["norm"] = norm
    if pretrain:
        params["pretrain"] = pretrain
    return {
        "format": FORMAT, "version": VERSION, "model": "ckp", "params": params,
        "model_file": model_file.hex(),
        "steps": [step_text(s) for s in seq],
        "expect": expect,
        "final_memory": mem.hex(),
    }


MAKERS["ckp"] = make_ckp


# ---- bonsai (docs/contract.md section 8): "P x0 .. xD-1" steps, per-step fields ----
def _make_bonsai(**p):
    from kilobit.models.bonsai.model import make_golden
    return make_golden(**p)


def _bonsai_set():
    from kilobit.models.bonsai.model import GOLDEN_SET as BONSAI_GOLDEN_SET
    return BONSAI_GOLDEN_SET


MAKERS["bonsai"] = _make_bonsai
GOLDEN_SET += _bonsai_set()


# ---- assoc (docs/contract.md section 9): its maker and files live in kilobit.assoc ----
def _make_assoc(**p):
    from kilobit.models.assoc.model import make_golden
    return make_golden(**p)


def _assoc_set():
    from kilobit.models.assoc.model import GOLDEN_SET as ASSOC_GOLDEN_SET
    return ASSOC_GOLDEN_SET


MAKERS["assoc"] = _make_assoc
GOLDEN_SET += _assoc_set()


# ---- protonn (docs/contract.md section 10): Bonsai's steps, its own fields ----
def _make_protonn(**p):
    from kilobit.models.protonn.model import make_golden
    return make_golden(**p)


def _protonn_set():
    from kilobit.models.protonn.model import GOLDEN_SET as PROTONN_GOLDEN_SET
    return PROTONN_GOLDEN_SET


MAKERS["protonn"] = _make_protonn
GOLDEN_SET += _protonn_set()
