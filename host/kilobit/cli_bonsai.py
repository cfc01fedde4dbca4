"""The Bonsai commands of the kilobit command line (issue 5).

    kilobit train bonsai --data digits [--depth 3 --proj 10 --budget-bytes 2048 --bits 8
                         --in-bits 8 --epochs 30,60,30 --seed 0] -o m.kb
    kilobit eval m.kb --data digits            (cli.py dispatches here on the model type)

`--budget-bytes` bounds the bytes the device stores (the model file's payload without its
host-only scaler trailer: header, projection and tree with their indices, shifts and biases,
docs/contract.md section 8.3); the trainer's hard thresholding keeps the matrices inside it.
A CSV data set may have any number of classes (labels 0..K-1 in sorted order). The split is
drawn with --seed, as for `kilobit train rkp`; evaluate with the same --seed.
"""
import numpy as np

from .errors import KilobitError


def add_train_parser(tsub):
    from .bonsai import DEPTH_MAX, PROJ_MAX
    t = tsub.add_parser("bonsai", help="Bonsai (one shallow sparse tree in a learnt projection, "
                                       "trained on the host, int8/int16 on the device)")
    t.add_argument("--data", required=True,
                   help="digits, mnist-2, mnist16-2, pendigits-10, letter-26, ... or a CSV")
    t.add_argument("--test", help="CSV test split (with a CSV --data)")
    t.add_argument("--depth", type=int, default=3, help="tree depth h (0-%d)" % DEPTH_MAX)
    t.add_argument("--proj", type=int, default=10,
                   help="projection dimension d (1-%d)" % PROJ_MAX)
    t.add_argument("--budget-bytes", type=int, default=None,
                   help="bytes the model may take on the device (default: no limit)")
    t.add_argument("--bits", type=int, choices=(8, 16), default=8, help="weight bits")
    t.add_argument("--in-bits", type=int, default=8, help="input code bits B (1-8)")
    t.add_argument("--epochs", default="30,60,30",
                   help="epochs of the unconstrained start, hard thresholding, retraining")
    t.add_argument("--seed", type=int, default=0, help="split shuffle and initialisation seed")
    t.add_argument("--quiet", action="store_true", help="no progress lines on stderr")
    t.add_argument("-o", "--output", required=True)
    return t


def _epochs(text):
    try:
        ep = tuple(int(x) for x in text.split(","))
    except ValueError:
        ep = ()
    if len(ep) != 3 or min(ep) < 0 or sum(ep) == 0:
        raise KilobitError("--epochs wants three non-negative counts like 30,60,30, got %r"
                           % text)
    return ep


def cmd_train(a):
    from . import data, kbfile
    from .bonsai import Bonsai, check_params, overhead_bytes, stderr_log

    epochs = _epochs(a.epochs)
    err = check_params(a.bits, a.in_bits, 1, a.proj, a.depth, 2, 1)
    if err:
        raise KilobitError("bad Bonsai parameters: " + err)
    if a.budget_bytes is not None and a.budget_bytes <= overhead_bytes(a.proj, a.depth):
        raise KilobitError("--budget-bytes %d does not even hold the fixed %d B of a depth-%d, "
                           "projection-%d model" % (a.budget_bytes,
                                                    overhead_bytes(a.proj, a.depth), a.depth,
                                                    a.proj))
    split = data.load(a.data, seed=a.seed, test=a.test, binary=False)
    classes = int(max(split.y_train.max(), split.y_test.max())) + 1
    if len(np.unique(split.y_train)) < 2:
        raise KilobitError("%s: the training split has a single class" % split.name)
    if classes > 255:
        raise KilobitError("%s has %d classes; Bonsai models hold at most 255" % (split.name,
                                                                                 classes))
    if split.X_train.shape[1] > 0xFFFF:
        raise KilobitError("%s has %d features; at most 65535" % (split.name,
                                                                  split.X_train.shape[1]))
    est = Bonsai(depth=a.depth, proj=a.proj, budget=a.budget_bytes, wbits=a.bits,
                 in_bits=a.in_bits, epochs=epochs, seed=a.seed,
                 log=None if a.quiet else stderr_log)
    try:
        est.fit(split.X_train, split.y_train)
    except ValueError as e:
        raise KilobitError("cannot train: %s" % e) from None
    m = est.int_[a.bits]
    nbytes = m.device_bytes()
    if a.budget_bytes is not None and nbytes > a.budget_bytes:
        raise KilobitError("the trained model takes %d B on the device, over --budget-bytes %d "
                           "(nothing written)" % (nbytes, a.budget_bytes))
    blob = est.to_bytes(a.bits)
    kbfile.write(a.output, blob)
    cte = est.codes(split.X_test)
    acc_f = float((est.float_.predict(cte / float(1 << a.in_bits)) == split.y_test).mean())
    acc_i = float((m.predict(cte) == split.y_test).mean())
    print("bonsai depth=%d proj=%d int%d B=%d on %s: %d train / %d test rows, D=%d, %d classes"
          % (a.depth, a.proj, a.bits, a.in_bits, split.name, len(split.y_train),
             len(split.y_test), m.dims, classes))
    print("trained in %.1f s; %d B on the device (budget %s), model file %d B -> %s"
          % (est.train_seconds_, nbytes,
             "none" if a.budget_bytes is None else "%d B" % a.budget_bytes, len(blob),
             a.output))
    print("test accuracy: float %.4f, integer model %.4f" % (acc_f, acc_i))
    return 0


def cmd_eval(a, blob):
    """`kilobit eval` of a Bonsai model file (bytes already read)."""
    from . import data
    from .bonsai import BonsaiInt
    from .quant import MinMaxScaler, quantize

    m, scaler = BonsaiInt.from_bytes(blob)
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
    print("%s (bonsai int%d, %d B on the device) on %s test split (%d rows): accuracy %.4f"
          % (a.model, m.wbits, m.device_bytes(), split.name, len(pred), acc))
    return 0
