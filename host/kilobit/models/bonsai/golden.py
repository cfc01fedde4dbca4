"""The bonsai model's golden cases: random integer models inside the contract that reach the hard
cases (P saturating, tanh clamping, branch ties), fed golden_inputs (kilobit.core.proj)."""
import numpy as np

from kilobit.core import smat
from kilobit.core.fixedpoint import ACT_MAX, SMALL, qmax
from kilobit.core.proj import SHIFT_MAX, golden_doc, random_projection
from kilobit.models import predictor
from kilobit.models.bonsai.model import BonsaiInt, n_internal, n_nodes
from kilobit.models.draw import Draw


def random_model(dims, proj, depth, classes, wbits, in_bits, zenc, tenc, seed, zero_bias=False):
    """A random BonsaiInt inside the contract, scaled so that P saturates on large inputs, tanh
    clamps, and (sparse tree) some internal node has theta = 0: a branch tie on every input."""
    g = np.random.default_rng(seed)
    q = qmax(wbits)
    L = 1 if classes <= 2 else classes
    N, ni = n_nodes(depth), n_internal(depth)
    pj = random_projection(g, dims, proj, wbits, in_bits, zenc, zero_bias)
    wq = min(q, (SMALL // ACT_MAX) // proj)
    tdens = 0.5 if tenc == smat.SPARSE else 1.0

    def mat(*shape):
        return g.integers(-wq, wq + 1, shape) * (g.random(shape) < tdens)

    theta, W, V = mat(ni, proj), mat(N, L, proj), mat(N, L, proj)
    if tenc == smat.SPARSE and ni:
        theta[ni - 1] = 0
    eT = int(g.choice([1, 7, 14]))
    # |W.P| reaches about wq * 2^15 * sqrt(d): shifted to about 2^13, with spread
    lw = int(np.floor(np.log2(wq * 32768 * np.sqrt(proj)))) - 13
    wshift = np.clip(lw + g.integers(-2, 2, N), 0, SHIFT_MAX)
    vshift = np.clip(lw + 13 - eT + g.integers(-3, 1, N), 0, SHIFT_MAX)
    return BonsaiInt(pj, theta, W, V, wshift, vshift, eT, depth, classes, tree_enc=tenc)


def make_golden(dims, proj, depth, classes, wbits, in_bits, zenc, tenc, steps, seed,
                zero_bias=0):
    """The golden document of a random Bonsai model ."""
    m = random_model(dims, proj, depth, classes, wbits, in_bits, zenc, tenc, seed,
                     bool(zero_bias))
    params = dict(dims=dims, proj=proj, depth=depth, classes=classes, wbits=wbits,
                  in_bits=in_bits, zenc=zenc, tenc=tenc, steps=steps, seed=seed)
    if zero_bias:
        params["zero_bias"] = 1
    return golden_doc("bonsai", m, params)


GOLDEN_SET = [
    dict(model="bonsai", dims=64, proj=10, depth=3, classes=2, wbits=8, in_bits=8, zenc=0,
         tenc=0, steps=40, seed=101),
    dict(model="bonsai", dims=300, proj=6, depth=2, classes=2, wbits=8, in_bits=8, zenc=1,
         tenc=1, steps=24, seed=102),
    dict(model="bonsai", dims=16, proj=8, depth=2, classes=10, wbits=16, in_bits=4, zenc=1,
         tenc=0, steps=50, seed=103),
    dict(model="bonsai", dims=5, proj=1, depth=0, classes=2, wbits=16, in_bits=1, zenc=0,
         tenc=0, steps=30, seed=104, zero_bias=1),
    dict(model="bonsai", dims=20, proj=16, depth=4, classes=26, wbits=8, in_bits=8, zenc=1,
         tenc=1, steps=30, seed=105, zero_bias=1),
]


make = make_golden
KIND = predictor.KIND
doc_steps = predictor.doc_steps


def random_params(seed, steps=None, given=None):
    """Parameters drawn from `seed` across make()'s space: 1-300 inputs, projections 1-16,
    depths 0-4, 2-26 classes, int8/int16 weights, 1-8-bit codes, dense or sparse matrices, with
    or without biases; at most predictor.DRAW_WEIGHTS weights (the Uno's flash).
    Those `given` ({name: value}) are taken instead of drawn, the others drawn as without
    them (kilobit.models.draw)."""
    from kilobit.models.bonsai.model import check_params
    d = Draw(seed, dict(given or {}, **({} if steps is None else {"steps": steps})))
    steps = d.integers("steps", 20, 61)

    def once():
        return dict(dims=d.choice("dims", [1, 2, 5, 16, 64, 100, 256, 300]),
                    proj=d.integers("proj", 1, 17), depth=d.integers("depth", 0, 5),
                    classes=d.choice("classes", [2, 2, 3, 10, 26]),
                    wbits=d.choice("wbits", [8, 16]), in_bits=d.integers("in_bits", 1, 9),
                    zenc=d.integers("zenc", 0, 2), tenc=d.integers("tenc", 0, 2), steps=steps,
                    seed=int(seed), zero_bias=d.flag("zero_bias", 0.25))

    def valid(p):
        L = 1 if p["classes"] <= 2 else p["classes"]
        weights = p["proj"] * (p["dims"] + n_internal(p["depth"]) + 2 * n_nodes(p["depth"]) * L)
        return weights <= predictor.DRAW_WEIGHTS and check_params(
            p["wbits"], p["in_bits"], p["dims"], p["proj"], p["depth"], p["classes"], 1) is None

    return d.until(once, valid)


def from_model(model_bytes, data_name, test=None, steps=None, seed=0):
    """A trained bonsai model on real data (kilobit.models.predictor.from_model)."""
    return predictor.from_model("bonsai", BonsaiInt, model_bytes, data_name, test, steps, seed)
