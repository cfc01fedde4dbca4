"""What the online learners (rkp, ckp) share: their training split, their golden steps and the
replay of the integer reference that defines each step's fields (docs/contract.md, golden
files). Each is binary, or K >= 3 one-vs-rest learners (kilobit.models.ovr).

A step is ("L", y, codes) (predict, then learn class y in 0 .. K-1, 0/1 for a binary learner)
or ("Q", None, codes) (score only); its fields are score, prediction, mistake, count, then the
memory after it (one-vs-rest: the largest score, its class, whether any learner stored a
support vector, the support vectors of all, the K memories back to back).

The random steps mix in the hard cases on purpose: repeated inputs with the opposite label
(ties for the nearest support vector, scores of exactly 0), all-zero and all-maximum codes,
score-only queries, and enough mistakes to fill the budget so random removal runs.
"""
import zlib

import numpy as np

from kilobit.core import goldenfile
from kilobit.core.errors import KilobitError

KIND = "learner"


def make_steps(bits, dims, n, seed, classes=2):
    """Random steps with the hard cases mixed in (see the module docstring)."""
    gen = np.random.default_rng(seed)
    top = (1 << bits) - 1
    K = classes
    steps, seen = [], []
    for _ in range(n):
        r = gen.random()
        if seen and r < 0.12:  # same point, another label: nearest-SV ties, zero scores
            op, y, codes = seen[int(gen.integers(len(seen)))]
            y = 1 - y if K == 2 else (y + 1 + int(gen.integers(K - 1))) % K
        elif r < 0.17:
            codes, y = [top] * dims, int(gen.integers(K))
        elif r < 0.21:
            codes, y = [0] * dims, int(gen.integers(K))
        else:
            codes, y = [int(c) for c in gen.integers(0, top + 1, dims)], int(gen.integers(K))
        op = "Q" if gen.random() < 0.1 else "L"
        steps.append((op, y if op == "L" else None, list(codes)))
        if op == "L":
            seen.append(("L", y, list(codes)))
    return steps


def given_classes(d):
    """{"classes": K} of a case's draw (kilobit.models.draw.Draw) when given; never drawn, so
    every seed's drawn case stays the binary one it was."""
    return {"classes": d.given["classes"]} if "classes" in d.given else {}


def data_steps(codes, labels, queries=()):
    """Steps from real data: learn each (codes, label) in order, then query each of `queries`."""
    steps = [("L", int(y), [int(c) for c in u]) for u, y in zip(codes, labels)]
    return steps + [("Q", None, [int(c) for c in u]) for u in queries]


def step_text(step):
    op, y, codes = step
    head = ["L", str(y)] if op == "L" else ["Q"]
    return " ".join(head + [str(c) for c in codes])


def parse_step(text, dims, classes=2):
    parts = text.split()
    try:
        if parts[0] == "L":
            op, y, codes = "L", int(parts[1]), [int(c) for c in parts[2:]]
            if not 0 <= y < classes:
                raise ValueError
        elif parts[0] == "Q":
            op, y, codes = "Q", None, [int(c) for c in parts[1:]]
        else:
            raise ValueError
    except (ValueError, IndexError):
        raise KilobitError("bad golden step %r" % text) from None
    if len(codes) != dims:
        raise KilobitError("golden step has %d codes, model has %d dims" % (len(codes), dims))
    return op, y, codes


def doc_steps(doc, int_class):
    """The steps of a learner's golden document (the width from its params, else its model)."""
    dims, K = doc["params"].get("dims"), doc["params"].get("classes")
    if dims is None or K is None:
        m = int_class.from_bytes(bytes.fromhex(doc["model_file"]))[0]
        dims, K = m.dims, getattr(m, "classes", 2)
    return [parse_step(t, dims, K) for t in doc["steps"]]


def replay(m, steps):
    """Run the integer reference m (RKPInt, CKPInt) through the steps: the Runtime tuples
    (score, prediction, mistake, count, memory after a mistake and after the last step)."""
    out = []
    for op, y, codes in steps:
        if hasattr(m, "step"):  # one-vs-rest: the prediction is a class, not the score's sign
            s, pred, mistake = m.step(op, y, codes)
        elif op == "L":
            s, mistake = m.learn(codes, y)
            pred = int(s > 0)
        else:
            s, mistake = m.score(codes), False
            pred = int(s > 0)
        out.append((s, pred, int(mistake), m.count, m.memory() if mistake else None))
    if out:
        out[-1] = out[-1][:4] + (m.memory(),)
    return out


def make_doc(name, int_class, model_file, seq, params):
    """The golden document of the learner in `model_file` replayed through `seq` by its integer
    reference (a fresh copy loaded from the file, as every runtime loads it)."""
    m, _ = int_class.from_bytes(model_file)
    mem = m.memory()
    expect = []
    for s, pred, mistake, count, after in replay(m, seq):
        if after is not None:
            mem = after
        expect.append([int(s), pred, mistake, count, zlib.crc32(mem) & 0xFFFFFFFF])
    return {
        "format": goldenfile.FORMAT, "version": goldenfile.VERSION, "model": name,
        "params": params,
        "model_file": model_file.hex(),
        "steps": [step_text(s) for s in seq],
        "expect": expect,
        "final_memory": mem.hex(),
    }


def split_codes(m, scaler, data_name, test=None, seed=0, quantize=None, binary=None):
    """(split, train codes, test codes) of a data set for model m: its rows scaled by the model
    file's scaler (or one fitted on the training split when the file has none) and quantized to
    the model's input codes; refused unless it has the model's m.dims features."""
    from kilobit import data
    from kilobit.core.quant import MinMaxScaler, quantize as default_quantize

    q = quantize or default_quantize
    if binary is None:
        binary = getattr(m, "classes", 2) == 2
    from kilobit.core import pipeline
    split = data.load(data_name, seed=seed, test=test, binary=binary,
                      pipeline=pipeline.of(scaler))
    data.check_dims(split.X_train, m.dims, what=split.name, source="the model")
    sc = MinMaxScaler.stored_or_fitted(scaler, split.X_train)
    bits = getattr(m, "in_bits", None) or m.bits
    return split, q(sc.transform(split.X_train), bits), q(sc.transform(split.X_test), bits)


def train_split(a):
    """(split, K) of `kilobit train rkp|ckp`'s --data/--test/--seed: labels 0 .. K-1, K >= 2
    (a binary learner for 2, one-vs-rest for more); refused past 255 classes or with a single
    class in the training split."""
    from kilobit import data
    from kilobit.core import pipeline
    from kilobit.models.ovr import MAX_CLASSES

    split = data.load(a.data, seed=a.seed, test=a.test, binary=False,
                      pipeline=pipeline.from_args(a))
    K = max(2, int(max(split.y_train.max(), split.y_test.max())) + 1)
    if len(np.unique(split.y_train)) < 2:
        raise KilobitError("%s: the training split has a single class" % split.name)
    if K > MAX_CLASSES:
        raise KilobitError("%s has %d classes; a learner takes at most %d"
                           % (split.name, K, MAX_CLASSES))
    return split, K


def classes_text(m):
    """The report's words for a model's classes and memory bytes per learner."""
    K = getattr(m, "classes", 2)
    return "binary" if K == 2 else "%d classes one-vs-rest" % K


#: steps of a golden file from a trained model when --steps is not given
DATA_STEPS = 400


def from_model(name, int_class, quantize, model_bytes, data_name, test=None, steps=None, seed=0):
    """The golden document of a trained learner on real data: it learns the first 4/5 of the
    steps from the training split (predict, then learn) and answers the rest as queries from the
    test split, from the state in the model file."""
    m, scaler = int_class.from_bytes(model_bytes)
    split, ctr, cte = split_codes(m, scaler, data_name, test, seed, quantize)
    n = DATA_STEPS if steps is None else steps
    if n < 1:
        raise ValueError("--steps must be at least 1")
    nq = min(n // 5, len(cte))
    nl = min(n - nq, len(ctr))
    seq = data_steps(ctr[:nl], split.y_train[:nl], cte[:nq])
    params = dict(data=split.name, dims=m.dims, seed=seed, steps=len(seq), learn=nl, query=nq)
    if getattr(m, "classes", 2) > 2:
        params["classes"] = m.classes
    doc = make_doc(name, int_class, bytes(model_bytes), seq, params)
    return with_raw(doc, scaler, split.raw_train[:nl], split.raw_test[:nq])


def with_raw(doc, scaler, *Xs):
    """doc with its "raw" rows (kilobit.core.goldenfile) when the model quantizes raw readings."""
    from kilobit.core.quant import raw_rows
    raw = raw_rows(scaler, *Xs)
    if raw is not None:
        doc["raw"] = raw
    return doc
