"""The protonn model's golden cases: random integer models inside the contract (every encoding,
saturation, the kernel table overrun, multilabel), fed golden_inputs (kilobit.core.proj)."""
import numpy as np

from kilobit.core import smat
from kilobit.core.fixedpoint import ACT_MAX, SMALL, qmax, sat
from kilobit.core.proj import SHIFT_MAX, Projection, golden_doc, random_projection
from kilobit.models import predictor
from kilobit.models.draw import Draw
from kilobit.models.protonn.model import BSHIFT_MAX, TABLE_MAX, ProtoNNInt, n_scores


def random_model(dims, d, m, classes, wbits, in_bits, multilabel=0, zenc=smat.DENSE,
                 penc=smat.DENSE, lenc=smat.DENSE, seed=0, nt=64):
    """A random ProtoNNInt inside the contract that reaches the hard cases of 10.3: P saturating
    on large inputs (kilobit.core.proj.random_projection with two columns scaled up), prototypes at
    +-32767 after the shift (e saturates against an opposite P), dshift small enough that D
    saturates at SMALL on far inputs, kshift putting the median distance of random inputs at the
    middle of the table (far ones index past it: k = 0, and all-zero k ties every score), two
    label columns alike (tied scores for the first-argmax rule). SPARSE prototypes and labels
    get runs of zero rows long enough for gap-0 escapes."""
    g = np.random.default_rng(seed)
    pj = random_projection(g, dims, d, wbits, in_bits, zenc)
    shift = pj.shift.copy()
    shift[0] = max(0, shift[0] - 3)
    shift[-1] = max(0, shift[-1] - 2)
    pj = Projection(pj.Zq, shift, pj.bias, in_bits, wbits, enc=zenc)
    q = qmax(wbits)
    L = n_scores(classes, multilabel)
    bshift = 0 if wbits == 16 else int(g.integers(6, BSHIFT_MAX + 1))
    bq = min(q, ACT_MAX >> bshift)
    dens = 0.4 if penc == smat.SPARSE else 1.0
    protos = g.integers(-bq, bq + 1, (m, d)) * (g.random((m, d)) < dens)
    if penc == smat.SPARSE and m * d > 600:
        protos[m // 3: m // 3 + max(1, 600 // d)] = 0
    protos[0, 0] = bq
    protos[-1, -1] = -bq
    nt = int(min(max(nt, 1), TABLE_MAX))
    table = np.clip(np.round(ACT_MAX * np.exp(-3.0 * np.arange(nt) / nt)
                             + g.integers(-200, 201, nt)), 0, ACT_MAX).astype(np.int64)
    table[0] = ACT_MAX
    if nt > 2:
        table[-1] = 0
    zq = min(q, (SMALL // ACT_MAX) // m)
    ldens = 0.3 if lenc == smat.SPARSE else 1.0
    zmat = g.integers(-zq, zq + 1, (m, L)) * (g.random((m, L)) < ldens)
    if lenc == smat.SPARSE and m * L > 600:
        zmat[m // 2: m // 2 + max(1, 600 // L)] = 0
    if L >= 3:
        zmat[:, 2] = zmat[:, 1]
    zmat[0, 0] = zq
    if zmat.size > 1:
        zmat[-1, -1] = -zq
    # the scales from random inputs: the median squared distance maps to SMALL / 2 or SMALL
    # (the far inputs saturate), and the median D to a quarter of the table (farther ones
    # index past it)
    P = pj.project(g.integers(0, 1 << in_bits, (64, dims)))
    e = sat(P[:, None, :] - (protos << bshift)[None, :, :])
    med = float(np.median((e * e).sum(axis=2)))
    dshift = int(np.clip(np.ceil(np.log2(max(med, 1.0) / (SMALL / 2))) + g.integers(-1, 1),
                         0, SHIFT_MAX))
    kshift = int(np.clip(np.floor(np.log2(max(med / 2.0 ** dshift, 1.0) / max(nt / 4, 1)))
                         + g.integers(-1, 1), 0, SHIFT_MAX))
    return ProtoNNInt(pj, protos, bshift, dshift, kshift, table, zmat, classes,
                      bool(multilabel), proto_enc=penc, z_enc=lenc)


def make_golden(dims, d, m, classes, wbits, in_bits, steps, seed, multilabel=0, zenc=0, penc=0,
                lenc=0, nt=64):
    """The golden document of a random ProtoNN model (kilobit.golden.make_doc["protonn"])."""
    model = random_model(dims, d, m, classes, wbits, in_bits, multilabel, zenc, penc, lenc,
                         seed, nt)
    params = dict(dims=dims, d=d, m=m, classes=classes, wbits=wbits, in_bits=in_bits,
                  steps=steps, seed=seed, zenc=zenc, penc=penc, lenc=lenc, nt=nt)
    if multilabel:
        params["multilabel"] = 1
    return golden_doc("protonn", model, params)


GOLDEN_SET = [
    # the Uno's shape: binary, int8, everything dense
    dict(model="protonn", dims=64, d=10, m=20, classes=2, wbits=8, in_bits=8, steps=40,
         seed=201),
    # multi-class, int16, sparse prototypes
    dict(model="protonn", dims=16, d=8, m=30, classes=10, wbits=16, in_bits=4, steps=50,
         seed=202, penc=1, nt=40),
    # multilabel, a sparse projection with escapes, sparse labels
    dict(model="protonn", dims=300, d=6, m=12, classes=5, wbits=8, in_bits=8, steps=30,
         seed=203, multilabel=1, zenc=1, lenc=1, nt=100),
    # the smallest: d = 1, m = 1, one-bit codes, a one-entry table
    dict(model="protonn", dims=5, d=1, m=1, classes=2, wbits=16, in_bits=1, steps=30,
         seed=204, nt=1),
    # the largest: d = 64, m = 255, 26 classes, sparse everything with gap-0 escapes
    dict(model="protonn", dims=20, d=64, m=255, classes=26, wbits=8, in_bits=8, steps=24,
         seed=205, zenc=1, penc=1, lenc=1, nt=255),
    # multilabel over 3 classes, int16, sparse labels
    dict(model="protonn", dims=40, d=16, m=40, classes=3, wbits=16, in_bits=6, steps=40,
         seed=206, multilabel=1, lenc=1, nt=16),
]


make = make_golden
KIND = predictor.KIND
doc_steps = predictor.doc_steps


def random_params(seed, steps=None, given=None):
    """Parameters drawn from `seed` across make()'s space: 1-300 inputs, projections 1-64,
    1-255 prototypes, 2-26 classes or multilabel, int8/int16, 1-8-bit codes, dense or sparse
    projection, prototypes and labels, kernel tables of 1-255 entries (overrun by far inputs);
    at most predictor.DRAW_WEIGHTS weights (the Uno's flash).
    Those `given` ({name: value}) are taken instead of drawn, the others drawn as without
    them (kilobit.models.draw)."""
    from kilobit.models.protonn.model import check_params
    dr = Draw(seed, dict(given or {}, **({} if steps is None else {"steps": steps})))
    steps = dr.integers("steps", 20, 61)

    def once():
        multilabel = dr.flag("multilabel", 0.25)
        return dict(dims=dr.choice("dims", [1, 2, 5, 16, 40, 64, 100, 300]),
                    d=dr.choice("d", [1, 2, 4, 6, 8, 10, 16, 32, 64]),
                    m=dr.choice("m", [1, 2, 5, 12, 20, 40, 100, 255]),
                    classes=dr.choice("classes", [2, 3, 5, 10, 26]),
                    wbits=dr.choice("wbits", [8, 16]), in_bits=dr.integers("in_bits", 1, 9),
                    steps=steps, seed=int(seed), multilabel=multilabel,
                    zenc=dr.integers("zenc", 0, 2), penc=dr.integers("penc", 0, 2),
                    lenc=dr.integers("lenc", 0, 2),
                    nt=dr.choice("nt", [1, 16, 40, 64, 100, 255]))

    def valid(p):
        L = n_scores(p["classes"], p["multilabel"])
        weights = p["d"] * (p["dims"] + p["m"]) + p["m"] * L
        return weights <= predictor.DRAW_WEIGHTS and check_params(
            p["wbits"], p["in_bits"], p["dims"], p["d"], p["m"], p["classes"],
            p["multilabel"]) is None

    return dr.until(once, valid)


def from_model(model_bytes, data_name, test=None, steps=None, seed=0):
    """A trained protonn model on real data (kilobit.models.predictor.from_model)."""
    return predictor.from_model("protonn", ProtoNNInt, model_bytes, data_name, test, steps,
                                seed)
