"""The ProtoNN commands of the kilobit command line (issue 6).

    kilobit train protonn --data digits [--proj 10 --prototypes 20 --budget-bytes 2048 --bits 8
                          --in-bits 8 --epochs 30,5 --batch N --seed 0] -o m.kb
    kilobit eval m.kb --data digits
    kilobit bench protonn [--quick] [-o docs/benchmarks/protonn.md]

`--budget-bytes` bounds the bytes the device stores (the model file's payload without its
host-only scaler trailer: header, projection, kernel table, prototypes and labels with their
indices, docs/contract.md section 10.2); the trainer's hard thresholding keeps the three
matrices inside it. The split is drawn with --seed, as for `kilobit train bonsai`; evaluate
with the same --seed.
"""
from kilobit.core.errors import KilobitError
from kilobit.core.options import counts, integer, real
from kilobit.models import commands as cli_predictor


def add_train_args(t):
    from kilobit.models.protonn.model import PROJ_MAX, PROTOS_MAX, TABLE_MAX
    from kilobit.models.protonn.train import TABLE_DEFAULT
    cli_predictor.add_data_args(t)
    t.add_argument("--proj", type=integer(1, PROJ_MAX), default=10,
                   help="projection dimension d (1-%d)" % PROJ_MAX)
    t.add_argument("--prototypes", type=integer(1, PROTOS_MAX), default=20,
                   help="prototypes m (1-%d, at least one per class)" % PROTOS_MAX)
    cli_predictor.add_size_args(t)
    t.add_argument("--epochs", default="30,5",
                   type=counts(2, "two non-negative counts T,e like 30,5"),
                   help="alternating iterations T and epochs per block e (paper Algorithm 1)")
    t.add_argument("--batch", type=integer(1), default=None,
                   help="minibatch size (default: full gradient descent)")
    t.add_argument("--gamma", type=real(above=0), default=None,
                   help="kernel parameter (default: 2.5 / median distance, the paper's)")
    t.add_argument("--table", type=integer(1, TABLE_MAX), default=TABLE_DEFAULT,
                   help="kernel table entries the budget reserves (1-%d)" % TABLE_MAX)
    cli_predictor.add_run_args(t)


def train(a):
    from kilobit.models.protonn.train import ProtoNN, stderr_log

    est = ProtoNN(d=a.proj, m=a.prototypes, budget=a.budget_bytes, gamma=a.gamma, wbits=a.bits,
                  in_bits=a.in_bits, epochs=a.epochs, batch=a.batch, nt=a.table, seed=a.seed,
                  log=None if a.quiet else stderr_log)
    split, classes = cli_predictor.load_split(a)
    cli_predictor.fit(est, split)
    cli_predictor.save_and_report(a, est, split, classes,
                                  "protonn d=%d m=%d" % (a.proj, a.prototypes))
    return 0


def evaluate(a, blob):
    """`kilobit eval` of a ProtoNN model file (bytes already read)."""
    from kilobit.models.protonn.model import ProtoNNInt

    m, scaler = ProtoNNInt.from_bytes(blob)
    if m.multilabel:
        raise KilobitError("%s is a multilabel model; `kilobit eval` scores single-label data "
                           "sets" % a.model)
    return cli_predictor.evaluate(a, m, scaler, "protonn")
