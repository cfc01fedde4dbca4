"""The ckp model's golden cases (docs/contract.md sections 6 and golden files)."""
from kilobit.models import learner, ovr
from kilobit.models.ckp.model import CKPInt, new_model
from kilobit.models.draw import Draw

# Every code path of the CKP contract: precision lowered again and again (and not at all when the
# input precision caps it), random replacement, the budget at B_max (1 and 13 support vectors),
# an empty power table (only w(0)), a full 32-entry one, ||w||^2 saturating high and starting
# negative (it never adds), a host-trained snapshot continuing, 1 to 21 attributes, 1 to 8 bits.
# The first is the ATtiny2313 build's model: Banana, 70 bytes (L = 560), 6 bits, A = 0.1.
GOLDEN_SET = [
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
    # several classes, one-vs-rest (contract 6.8): precision lowered and replacements in every
    # learner, a trained snapshot of ten classes continuing, 255 learners of 2 bits each
    dict(model="ckp", bits=6, dims=2, L=120, width=100, steps=300, seed=33, classes=3),
    dict(model="ckp", bits=4, dims=16, L=300, width=1000, steps=250, seed=34, classes=10,
         pretrain=300),
    dict(model="ckp", bits=1, dims=1, L=2, width=1000, steps=120, seed=35, classes=255),
]


def make(bits, dims, L, width, steps, seed, C=255, norm=None, pretrain=0, classes=2):
    """The golden document of a CKP model of `classes` classes (more than 2: one-vs-rest).
    `norm` starts ||w||^2 * C at a chosen value (a snapshot may hold any); `pretrain` random
    learning steps first, so the file is a host-trained model that continues on the
    runtime."""
    model = new_model(bits, dims, L, width, C, seed, classes)
    for op, y, codes in learner.make_steps(bits, dims, pretrain, seed + 1000, classes):
        if op == "L":
            model.learn(codes, y)
    if norm is not None:
        for m in ovr.learners_of(model):
            m.norm = norm
    seq = learner.make_steps(bits, dims, steps, seed, classes)
    params = dict(bits=bits, dims=dims, L=L, width=width, C=C, seed=seed, steps=steps)
    if classes != 2:
        params["classes"] = classes
    if norm is not None:
        params["norm"] = norm
    if pretrain:
        params["pretrain"] = pretrain
    return learner.make_doc("ckp", CKPInt, model.to_bytes(), seq, params)


def random_params(seed, steps=None, given=None):
    """Parameters drawn from `seed`: 1-8 bits, 1-21 attributes, a budget L of 2 bits to 1 KB
    that the steps overrun, widths A = 0.001 .. 65.535; those `given` taken instead of drawn
    (kilobit.models.draw)."""
    d = Draw(seed, dict(given or {}, **({} if steps is None else {"steps": steps})))
    steps = d.integers("steps", 80, 400)
    dims = d.choice("dims", [1, 2, 3, 4, 9, 16, 21])
    return dict(bits=d.integers("bits", 1, 9), dims=dims, L=d.integers("L", dims + 1, 1025),
                width=d.choice("width", [1, 100, 250, 500, 1000, 2000, 65535]), steps=steps,
                seed=int(seed), **learner.given_classes(d))


KIND = learner.KIND


def doc_steps(doc):
    return learner.doc_steps(doc, CKPInt)


def from_model(model_bytes, data_name, test=None, steps=None, seed=0):
    """A trained ckp model on real data (kilobit.models.learner.from_model)."""
    from kilobit.models.ckp.model import quantize
    return learner.from_model("ckp", CKPInt, quantize, model_bytes, data_name, test, steps, seed)
