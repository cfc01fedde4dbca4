"""The rkp model's commands (kilobit.models.commands):

    kilobit train rkp --data banana --bits 4 --budget 62 --width -6 --seed 0 -o m.kb
    kilobit train rkp --data pendigits-10 --budget 40 -o m.kb     (10 classes: one-vs-rest)
    kilobit eval m.kb --data banana
"""
from kilobit.core.options import integer, seed


def add_params(p, budget=62, seed_help="the train/test split's shuffle and the model's "
                                       "generator (random removal)"):
    """The model's parameters: kernel, bits, budget, width, C, seed (also `kilobit stream`'s
    for a fresh model)."""
    p.add_argument("--kernel", choices=("laplace", "rbf"), default="laplace",
                   help="the kernel, as a power table of the code distance")
    p.add_argument("--bits", type=integer(1, 8), default=4, help="input bits B (1-8)")
    p.add_argument("--budget", type=integer(1, 0xFFFF), default=budget,
                   help="support vectors T the memory holds (a mistake past it replaces one "
                        "at random); with K > 2 classes, each class's learner holds T")
    p.add_argument("--width", type=integer(-16, 16), default=-6,
                   help="kernel width exponent A (2^A)")
    p.add_argument("--C", type=integer(1, 255), default=255, help="weight scale C (1-255)")
    p.add_argument("--seed", type=seed(), default=0, help=seed_help)


def add_train_args(t):
    from kilobit.models.commands import add_data_args, add_output_args
    add_params(t)
    add_data_args(t)
    add_output_args(t)


def train(a):
    from kilobit import data
    from kilobit.core import kbfile
    from kilobit.models.commands import fit_online
    from kilobit.models.learner import classes_text, train_split
    from kilobit.models.rkp.model import RandomKernelPerceptron, mem_bytes

    split, K = train_split(a)
    scaler, Xtr, Xte = data.scale(split, a.bits)
    est = RandomKernelPerceptron(a.kernel, a.bits, a.budget, a.width, a.C, a.seed, classes=K)
    fit_online(est, Xtr, split.y_train, a.quiet, "train rkp")
    blob = est.model_.to_bytes(scaler=kbfile.Extras.of_split(scaler, split))
    kbfile.write(a.output, blob)
    acc = est.score(Xte, split.y_test)
    m = est.model_
    n = 1 if K == 2 else K
    print("rkp %s B=%d T=%d A=%d C=%d on %s (%s): %d train / %d test rows, M=%d"
          % (a.kernel, a.bits, a.budget, a.width, a.C, split.name, classes_text(m), len(Xtr),
             len(Xte), Xtr.shape[1]))
    print("support vectors %d/%d, memory %d B, model file %d B -> %s"
          % (m.count, n * m.budget, n * mem_bytes(m.budget, m.dims, m.bits), len(blob),
             a.output))
    print("test accuracy (integer model) %.4f" % acc)
    return 0


def evaluate(a, blob):
    from kilobit.core.quant import quantize
    from kilobit.models.commands import eval_perceptron
    from kilobit.models.rkp.model import RKPInt

    m, scaler = RKPInt.from_bytes(blob)
    return eval_perceptron(a, m, scaler, quantize)
