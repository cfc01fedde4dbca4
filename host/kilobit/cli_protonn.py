"""The ProtoNN commands of the kilobit command line (issue 6).

    kilobit train protonn --data digits [--proj 10 --prototypes 20 --budget-bytes 2048 --bits 8
                          --in-bits 8 --epochs 30,5 --batch N --seed 0] -o m.kb
    kilobit eval m.kb --data digits            (cli.py dispatches here on the model type)
    kilobit bench protonn [--quick] [-o docs/benchmarks/protonn.md]

`--budget-bytes` bounds the bytes the device stores (the model file's payload without its
host-only scaler trailer: header, projection, kernel table, prototypes and labels with their
indices, docs/contract.md section 10.2); the trainer's hard thresholding keeps the three
matrices inside it. The split is drawn with --seed, as for `kilobit train bonsai`; evaluate
with the same --seed.
"""
import numpy as np

from .errors import KilobitError


def add_train_parser(tsub):
    from .protonn import TABLE_DEFAULT
    from .protonn_int import PROJ_MAX, PROTOS_MAX, TABLE_MAX
    t = tsub.add_parser("protonn", help="ProtoNN (a sparse projection and a few prototypes, "
                                        "trained on the host, int8/int16 on the device)")
    t.add_argument("--data", required=True,
                   help="digits, mnist-2, mnist16-2, pendigits-10, letter-26, mnist-10, ... or "
                        "a CSV")
    t.add_argument("--test", help="CSV test split (with a CSV --data)")
    t.add_argument("--proj", type=int, default=10,
                   help="projection dimension d (1-%d)" % PROJ_MAX)
    t.add_argument("--prototypes", type=int, default=20,
                   help="prototypes m (1-%d, at least one per class)" % PROTOS_MAX)
    t.add_argument("--budget-bytes", type=int, default=None,
                   help="bytes the model may take on the device (default: no limit)")
    t.add_argument("--bits", type=int, choices=(8, 16), default=8, help="weight bits")
    t.add_argument("--in-bits", type=int, default=8, help="input code bits B (1-8)")
    t.add_argument("--epochs", default="30,5",
                   help="alternating iterations T and epochs per block e (paper Algorithm 1)")
    t.add_argument("--batch", type=int, default=None,
                   help="minibatch size (default: full gradient descent)")
    t.add_argument("--gamma", type=float, default=None,
                   help="kernel parameter (default: 2.5 / median distance, the paper's)")
    t.add_argument("--table", type=int, default=TABLE_DEFAULT,
                   help="kernel table entries the budget reserves (1-%d)" % TABLE_MAX)
    t.add_argument("--seed", type=int, default=0, help="split shuffle and initialisation seed")
    t.add_argument("--quiet", action="store_true", help="no progress lines on stderr")
    t.add_argument("-o", "--output", required=True)
    return t


def add_bench_parser(bsub):
    b = bsub.add_parser("protonn", help="ProtoNN: float/int16/int8 accuracy, bytes, training "
                                        "time, seeds, Uno cycles and RAM (issue 6)")
    b.add_argument("-o", "--output", default="docs/benchmarks/protonn.md")
    b.add_argument("--quick", action="store_true", help="a smoke run: few rows and iterations")


def _epochs(text):
    try:
        ep = tuple(int(x) for x in text.split(","))
    except ValueError:
        ep = ()
    if len(ep) != 2 or min(ep) < 0:
        raise KilobitError("--epochs wants two non-negative counts T,e like 30,5, got %r" % text)
    return ep


def cmd_train(a):
    from . import data, kbfile
    from .protonn import ProtoNN, stderr_log

    epochs = _epochs(a.epochs)
    if a.batch is not None and a.batch < 1:
        raise KilobitError("--batch must be at least 1")
    if a.gamma is not None and not a.gamma > 0:
        raise KilobitError("--gamma must be positive")
    est = ProtoNN(d=a.proj, m=a.prototypes, budget=a.budget_bytes, gamma=a.gamma, wbits=a.bits,
                  in_bits=a.in_bits, epochs=epochs, batch=a.batch, nt=a.table, seed=a.seed,
                  log=None if a.quiet else stderr_log)
    split = data.load(a.data, seed=a.seed, test=a.test, binary=False)
    classes = int(max(split.y_train.max(), split.y_test.max())) + 1
    if len(np.unique(split.y_train)) < 2:
        raise KilobitError("%s: the training split has a single class" % split.name)
    try:
        est.fit(split.X_train, split.y_train)
    except ValueError as e:
        raise KilobitError("cannot train: %s" % e) from None
    m = est.int_[a.bits]
    nbytes = m.device_bytes()
    blob = est.to_bytes(a.bits)
    kbfile.write(a.output, blob)
    cte = est.codes(split.X_test)
    acc_f = float((est.float_.predict(cte / float(1 << a.in_bits)) == split.y_test).mean())
    acc_i = float((m.predict(cte) == split.y_test).mean())
    print("protonn d=%d m=%d int%d B=%d on %s: %d train / %d test rows, D=%d, %d classes"
          % (a.proj, a.prototypes, a.bits, a.in_bits, split.name, len(split.y_train),
             len(split.y_test), m.dims, classes))
    print("trained in %.1f s; %d B on the device (budget %s), model file %d B -> %s"
          % (est.train_seconds_, nbytes,
             "none" if a.budget_bytes is None else "%d B" % a.budget_bytes, len(blob),
             a.output))
    print("test accuracy: float %.4f, integer model %.4f" % (acc_f, acc_i))
    return 0


def cmd_eval(a, blob):
    """`kilobit eval` of a ProtoNN model file (bytes already read)."""
    from . import data
    from .protonn_int import ProtoNNInt
    from .quant import MinMaxScaler, quantize

    m, scaler = ProtoNNInt.from_bytes(blob)
    if m.multilabel:
        raise KilobitError("%s is a multilabel model; `kilobit eval` scores single-label data "
                           "sets" % a.model)
    split = data.load(a.data, seed=a.seed, test=a.test, binary=False)
    if split.X_test.shape[1] != m.dims:
        raise KilobitError("model expects %d features, %s has %d"
                           % (m.dims, split.name, split.X_test.shape[1]))
    top = int(max(split.y_train.max(), split.y_test.max()))
    if top >= max(m.classes, 2):
        raise KilobitError("model predicts %d classes, %s has labels up to %d"
                           % (m.classes, split.name, top))
    sc = MinMaxScaler()
    if scaler is not None:
        sc.lo_, sc.hi_ = scaler
    else:
        sc.fit(split.X_train)
    codes = quantize(sc.transform(split.X_test), m.in_bits)
    pred = m.predict(codes)
    acc = float((pred == split.y_test).mean())
    print("%s (protonn int%d, %d B on the device) on %s test split (%d rows): accuracy %.4f"
          % (a.model, m.wbits, m.device_bytes(), split.name, len(pred), acc))
    return 0


def cmd_bench(a):
    from .bench import protonn

    protonn.run(out=a.output, quick=a.quick)
    return 0
