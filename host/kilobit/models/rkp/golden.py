"""The rkp model's golden cases (docs/contract.md, golden files): the checked-in set, a case
from parameters, a case drawn from a seed, and a case from a trained model and real data."""
from kilobit.models import learner
from kilobit.models.draw import Draw
from kilobit.models.rkp.model import RKPInt, new_model

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
    # several classes, one-vs-rest (contract 3.6): a budget that fills in every learner, ten
    # classes of pendigits' shape, and 255 one-slot learners (the most a file holds)
    dict(kernel="laplace", bits=4, budget=12, width=-4, dims=4, steps=300, seed=40, classes=3),
    dict(kernel="rbf", bits=3, budget=6, width=-2, dims=6, steps=250, seed=41, classes=5),
    dict(kernel="laplace", bits=4, budget=10, width=-3, dims=16, steps=250, seed=42, classes=10),
    dict(kernel="rbf", bits=1, budget=1, width=0, dims=1, steps=120, seed=43, classes=255),
]


def make(kernel, bits, budget, width, dims, steps, seed, C=255, classes=2):
    """The golden document of a fresh RKP model of `classes` classes (more than 2:
    one-vs-rest) run through random steps with hard cases."""
    model = new_model(kernel, bits, dims, budget, width, C, seed, classes)
    seq = learner.make_steps(bits, dims, steps, seed, classes)
    params = dict(kernel=kernel, bits=bits, budget=budget, width=width, dims=dims, C=C,
                  seed=seed, steps=steps)
    if classes != 2:
        params["classes"] = classes
    return learner.make_doc("rkp", RKPInt, model.to_bytes(), seq, params)


def random_params(seed, steps=None, given=None):
    """Parameters drawn from `seed` (numpy's generator, so the same seed gives the same case):
    either kernel, 1-8 bits, 1-255 dims weighted to small, a budget that fills (about a third
    of the steps), widths -8..4; those `given` ({name: value}) are taken instead of drawn,
    the others drawn as without them (kilobit.models.draw)."""
    d = Draw(seed, dict(given or {}, **({} if steps is None else {"steps": steps})))
    steps = d.integers("steps", 80, 400)
    return dict(kernel=d.take("kernel", ("laplace", "rbf")[int(d.g.integers(2))]),
                bits=d.integers("bits", 1, 9),
                budget=d.integers("budget", 1, max(2, steps // 3)),
                width=d.integers("width", -8, 5), dims=d.choice("dims", [1, 2, 3, 4, 8, 16, 64]),
                steps=steps, seed=int(seed), **learner.given_classes(d))


KIND = learner.KIND


def doc_steps(doc):
    return learner.doc_steps(doc, RKPInt)


def from_model(model_bytes, data_name, test=None, steps=None, seed=0):
    """A trained rkp model on real data (kilobit.models.learner.from_model)."""
    return learner.from_model("rkp", RKPInt, None, model_bytes, data_name, test, steps, seed)
