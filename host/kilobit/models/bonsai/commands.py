"""The Bonsai commands of the kilobit command line (issue 5).

    kilobit train bonsai --data digits [--depth 3 --proj 10 --budget-bytes 2048 --bits 8
                         --in-bits 8 --epochs 30,60,30 --seed 0] -o m.kb
    kilobit eval m.kb --data digits

`--budget-bytes` bounds the bytes the device stores (the model file's payload without its
host-only scaler trailer: header, projection and tree with their indices, shifts and biases,
docs/contract.md section 8.3); the trainer's hard thresholding keeps the matrices inside it.
A CSV data set may have any number of classes (labels 0..K-1 in sorted order). The split is
drawn with --seed, as for `kilobit train rkp`; evaluate with the same --seed.
"""
from kilobit.core.errors import KilobitError
from kilobit.core.options import counts, integer
from kilobit.models import commands as cli_predictor


def add_train_args(t):
    from kilobit.models.bonsai.model import DEPTH_MAX, PROJ_MAX
    cli_predictor.add_data_args(t)
    t.add_argument("--depth", type=integer(0, DEPTH_MAX), default=3,
                   help="tree depth h (0-%d)" % DEPTH_MAX)
    t.add_argument("--proj", type=integer(1, PROJ_MAX), default=10,
                   help="projection dimension d (1-%d)" % PROJ_MAX)
    cli_predictor.add_size_args(t)
    t.add_argument("--epochs", default="30,60,30",
                   type=counts(3, "three non-negative counts like 30,60,30", nonzero=True),
                   help="epochs of the unconstrained start, hard thresholding, retraining")
    cli_predictor.add_run_args(t)


def train(a):
    from kilobit.models.bonsai.model import Bonsai, check_params, overhead_bytes, stderr_log

    err = check_params(a.bits, a.in_bits, 1, a.proj, a.depth, 2, 1)
    if err:
        raise KilobitError("bad Bonsai parameters: " + err)
    if a.budget_bytes is not None and a.budget_bytes <= overhead_bytes(a.proj, a.depth):
        raise KilobitError("--budget-bytes %d does not even hold the fixed %d B of a depth-%d, "
                           "projection-%d model" % (a.budget_bytes,
                                                    overhead_bytes(a.proj, a.depth), a.depth,
                                                    a.proj))
    split, classes = cli_predictor.load_split(a)
    if classes > 255:
        raise KilobitError("%s has %d classes; Bonsai models hold at most 255" % (split.name,
                                                                                 classes))
    if split.X_train.shape[1] > 0xFFFF:
        raise KilobitError("%s has %d features; at most 65535" % (split.name,
                                                                  split.X_train.shape[1]))
    est = Bonsai(depth=a.depth, proj=a.proj, budget=a.budget_bytes, wbits=a.bits,
                 in_bits=a.in_bits, epochs=a.epochs, seed=a.seed,
                 log=None if a.quiet else stderr_log)
    cli_predictor.fit(est, split)
    cli_predictor.save_and_report(a, est, split, classes,
                                  "bonsai depth=%d proj=%d" % (a.depth, a.proj),
                                  check_budget=True)
    return 0


def evaluate(a, blob):
    """`kilobit eval` of a Bonsai model file (bytes already read)."""
    from kilobit.models.bonsai.model import BonsaiInt

    m, scaler = BonsaiInt.from_bytes(blob)
    return cli_predictor.evaluate(a, m, scaler, "bonsai")
