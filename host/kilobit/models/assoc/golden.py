"""The assoc model's golden vectors and host replay (docs/contract.md sections 5 and 9).

A step is ("L", label, values) (predict, then learn) or ("Q", None, values), values the T int8
inputs; its fields are prediction, count, classes, anchors, then the CRC-32 of the memory.
"""
import zlib

import numpy as np

from kilobit.core import goldenfile, kbfile
from kilobit.core.errors import KilobitError
from kilobit.models.assoc.model import NO, AssocInt
from kilobit.models.draw import Draw

KIND = "classes"

#: the per-step fields of an assoc golden file, then the CRC-32 of the memory
FIELDS = ("prediction", "count", "classes", "anchors")
TYPE_ID = kbfile.MODEL_TYPES["assoc"]


def is_assoc(model_bytes):
    """True when a model file's header names the assoc type (byte 5)."""
    return len(model_bytes) > 5 and model_bytes[5] == TYPE_ID


def replay(model_bytes, steps):
    """The host runtime for assoc files: per step (prediction, count, classes, anchors, memory
    or None); the memory after every learning step and after the last step."""
    m, _ = AssocInt.from_bytes(model_bytes)
    out = []
    for op, y, values in steps:
        if op == "L":
            pred, cnt = m.learn(values, y)
        else:
            pred, cnt = m.predict(values)
        out.append((pred, cnt, m.nc, m.anchors_stored, m.memory() if op == "L" else None))
    if out:
        out[-1] = out[-1][:4] + (m.memory(),)
    return out


def step_text(step):
    op, y, values = step
    head = ["L", str(y)] if op == "L" else ["Q"]
    return " ".join(head + [str(int(v)) for v in values])


def parse_step(text, T, bits=8):
    """("L", label, values) or ("Q", None, values) from a golden step line."""
    parts = text.split()
    lo, hi = -(1 << (bits - 1)), (1 << (bits - 1)) - 1
    try:
        if parts[0] == "L":
            op, y, vals = "L", int(parts[1]), [int(v) for v in parts[2:]]
            if not 0 <= y <= 255:
                raise ValueError
        elif parts[0] == "Q":
            op, y, vals = "Q", None, [int(v) for v in parts[1:]]
        else:
            raise ValueError
        if any(v < lo or v > hi for v in vals):
            raise ValueError
    except (ValueError, IndexError):
        raise KilobitError("bad golden step %r" % text) from None
    if len(vals) != T:
        raise KilobitError("golden step has %d values, model has T = %d" % (len(vals), T))
    return op, y, vals


def make_steps(m, n, seed, labels):
    """Random steps with the hard cases mixed in: repeated inputs (distance 0, ties between
    anchors), the same input under another label (ties between classes), all-minimum and
    all-maximum values, queries, and every label of `labels` (the capacity filled)."""
    gen = np.random.default_rng(seed)
    lo, hi = -(1 << (m.bits - 1)), (1 << (m.bits - 1)) - 1
    steps, seen = [], []
    order = list(labels)
    for i in range(n):
        r = gen.random()
        if seen and r < 0.15:
            _, y, vals = seen[int(gen.integers(len(seen)))]
            if gen.random() < 0.5:
                y = order[int(gen.integers(len(order)))]
        elif r < 0.2:
            vals, y = [hi] * m.T, order[int(gen.integers(len(order)))]
        elif r < 0.25:
            vals, y = [lo] * m.T, order[int(gen.integers(len(order)))]
        else:
            # a few distinct values per coordinate, so that anchors collide exactly at times
            pool = [lo, -1, 0, 1, hi, int(gen.integers(lo, hi + 1))]
            vals = [min(hi, max(lo, int(v))) for v in gen.choice(pool, size=m.T)]
            # classes arrive over time: early steps use the first labels only
            k = min(len(order), 1 + (i * len(order)) // max(1, n // 2))
            y = order[int(gen.integers(k))]
        op = "Q" if gen.random() < 0.12 else "L"
        steps.append((op, y if op == "L" else None, list(vals)))
        if op == "L":
            seen.append(("L", y, list(vals)))
    return steps


#: The checked-in assoc files: every approach, R = 1 and R > 1 (the generator), P from 1 to
#: 16, d from 1 to 40, 1 to 8 bits, one-shot (k~ = 1), the capacity filled, the Uno's pendigits
#: configuration, a host-trained snapshot continuing, and classes left full, partly filled
#: (rows valid for some subspaces only) and with a single example (k~ > 1).
GOLDEN_SET = [
    dict(model="assoc", approach="I-I", bits=8, P=1, d=16, cap=10, kt=10, R=1, steps=160,
         seed=41),  # the Uno's pendigits build
    dict(model="assoc", approach="I-I", bits=8, P=8, d=2, cap=10, kt=4, R=1, steps=160,
         seed=42),
    dict(model="assoc", approach="I-I", bits=4, P=4, d=3, cap=5, kt=1, R=1, steps=100,
         seed=43),  # one-shot
    dict(model="assoc", approach="I-I", bits=6, P=2, d=4, cap=4, kt=3, R=5, steps=150,
         seed=44),
    dict(model="assoc", approach="N-I", bits=8, P=4, d=4, cap=6, kt=3, R=1, steps=150,
         seed=45),
    dict(model="assoc", approach="N-I", bits=3, P=16, d=1, cap=3, kt=2, R=3, steps=120,
         seed=46),
    dict(model="assoc", approach="N-O", bits=8, P=2, d=8, cap=4, kt=5, R=1, steps=120,
         seed=47),
    dict(model="assoc", approach="N-O", bits=1, P=3, d=2, cap=2, kt=2, R=2, steps=80,
         seed=48),
    dict(model="assoc", approach="I-I", bits=5, P=2, d=40, cap=8, kt=2, R=1, steps=100,
         seed=49, pretrain=60),
    dict(model="assoc", approach="I-I", bits=2, P=1, d=1, cap=1, kt=1, R=1, steps=40,
         seed=50),
    dict(model="assoc", approach="I-I", bits=4, P=3, d=2, cap=6, kt=3, R=1, steps=40,
         seed=54),  # the fill rule (9.4): at the end fill counters 7 7 4 6 3 1 of at most 7
]


def make_golden(approach, bits, P, d, cap, kt, R, steps, seed, pretrain=0):
    """The golden document of one assoc configuration (a dict, kilobit.core.goldenfile's format
    with "fields"). N-O files start with anchors drawn by the host (random values); `pretrain`
    learns that many steps first, so the file is a snapshot that continues on the runtime."""
    m = AssocInt(approach, bits, P, d, cap, kt, R, seed=seed)
    gen = np.random.default_rng(seed + 7)
    lo, hi = -(1 << (bits - 1)), (1 << (bits - 1)) - 1
    if m.approach == NO:
        m.anchors[:] = gen.integers(lo, hi + 1, size=m.anchors.shape)
        m.anchors[-1] = m.anchors[0]  # two equal anchors: the lower row must win
    labels = [int(v) for v in gen.choice(256, size=cap, replace=False)]
    labels[0] = 255 if cap > 1 else labels[0]
    for op, y, vals in make_steps(m, pretrain, seed + 1000, labels):
        if op == "L":
            m.learn(vals, y)
    seq = make_steps(m, steps, seed, labels)
    params = dict(approach=approach, bits=bits, P=P, d=d, cap=cap, kt=kt, R=R, seed=seed,
                  steps=steps)
    if pretrain:
        params["pretrain"] = pretrain
    return make_doc(m.to_bytes(), seq, params)


def make_doc(model_file, seq, params):
    """The golden document of an assoc model file replayed through `seq` by the host."""
    m, _ = AssocInt.from_bytes(model_file)
    expect, mem = [], m.memory()
    for pred, cnt, nc, na, mm in replay(model_file, seq):
        if mm is not None:
            mem = mm
        expect.append([int(pred), int(cnt), int(nc), int(na), zlib.crc32(mem) & 0xFFFFFFFF])
    return {
        "format": goldenfile.FORMAT, "version": goldenfile.VERSION, "model": "assoc",
        "params": params,
        "fields": list(FIELDS),
        "model_file": bytes(model_file).hex(),
        "steps": [step_text(s) for s in seq],
        "expect": expect,
        "final_memory": mem.hex(),
    }


make = make_golden


def doc_steps(doc):
    """The steps of an assoc golden document."""
    p = doc["params"]
    if "P" in p:
        T, bits = p["P"] * p["d"], p["bits"]
    else:  # a trained model's file: its params name the data, the model file the shape
        m, _ = AssocInt.from_bytes(bytes.fromhex(doc["model_file"]))
        T, bits = m.T, m.bits
    return [parse_step(t, T, bits) for t in doc["steps"]]


#: the most memory a drawn case takes: its firmware then fits the Uno's 2 KB of RAM
DRAW_MEMORY = 1600


def random_params(seed, steps=None, given=None):
    """Parameters drawn from `seed` across make()'s space: every approach, 1-8 bits, P 1-16
    subspaces of d 1-40 values, capacities 1-10 filled by the steps, k~ 1-10 (one-shot
    included), R 1-5, sometimes a pretrained snapshot; memory at most DRAW_MEMORY bytes and at
    most 255 values per input (the UART firmware's frame).
    Those `given` ({name: value}) are taken instead of drawn, the others drawn as without
    them (kilobit.models.draw)."""
    from kilobit.models.assoc.model import check_params, mem_layout
    dr = Draw(seed, dict(given or {}, **({} if steps is None else {"steps": steps})))
    steps = dr.integers("steps", 60, 161)

    def once():
        p = dict(approach=str(dr.choice("approach", ["I-I", "I-I", "N-I", "N-O"])),
                 bits=dr.integers("bits", 1, 9), P=dr.choice("P", [1, 2, 3, 4, 8, 16]),
                 d=dr.choice("d", [1, 2, 3, 4, 8, 16, 40]), cap=dr.integers("cap", 1, 11),
                 kt=dr.choice("kt", [1, 2, 3, 5, 10]), R=dr.choice("R", [1, 1, 2, 3, 5]),
                 steps=steps, seed=int(seed))
        if dr.g.random() < 0.2:  # a pretrained snapshot, sometimes (always when given)
            p["pretrain"] = dr.integers("pretrain", 10, 80)
        elif "pretrain" in dr.given:
            p["pretrain"] = dr.given["pretrain"]
        return p

    def valid(p):
        try:
            check_params(p["approach"], p["bits"], p["P"], p["d"], p["cap"], p["kt"], p["R"])
        except ValueError:
            return False
        return p["P"] * p["d"] <= 255 and \
            mem_layout(p["P"], p["d"], p["cap"], p["kt"], p["R"])[1] <= DRAW_MEMORY

    return dr.until(once, valid)


#: steps of a golden file from a trained model when --steps is not given
DATA_STEPS = 400


def from_model(model_bytes, data_name, test=None, steps=None, seed=0):
    """A trained assoc model on real data: it learns the first 4/5 of the steps from the
    training split (predict, then learn; labels are the data's classes) and answers the rest
    as queries from the test split; rows become the device's int8 values through the model
    file's scaler (fitted on the training split when it has none)."""
    from kilobit.models.learner import split_codes

    m, scaler = AssocInt.from_bytes(model_bytes)
    # the device's values are to_int8's: the B-bit codes split_codes makes, minus 2^(B-1)
    split, ctr, cte = split_codes(m, scaler, data_name, test, seed, binary=False)
    half = 1 << (m.bits - 1)
    n = DATA_STEPS if steps is None else steps
    if n < 1:
        raise ValueError("--steps must be at least 1")
    if int(split.y_train.max()) > 255:
        raise ValueError("%s has labels above 255; assoc labels are 0..255" % split.name)
    nq = min(n // 5, len(cte))
    nl = min(n - nq, len(ctr))
    seq = [("L", int(y), [int(v) - half for v in u]) for u, y in zip(ctr[:nl], split.y_train)]
    seq += [("Q", None, [int(v) - half for v in u]) for u in cte[:nq]]
    from kilobit.models.learner import with_raw
    doc = make_doc(bytes(model_bytes), seq, dict(data=split.name, seed=seed, steps=len(seq),
                                                 learn=nl, query=nq))
    return with_raw(doc, scaler, split.raw_train[:nl], split.raw_test[:nq])
