"""What the model types' command modules (kilobit.models.<name>.commands) share: the evaluation
split of `kilobit eval`, the kernel perceptrons' evaluation, and for the host-trained predictors
on the streamed projection (bonsai, protonn) the train arguments, the split, the fit, the model
file and the report lines.

A model's commands module has add_train_args(parser), train(args) and evaluate(args,
model_bytes); kilobit.cli builds `kilobit train NAME` and `kilobit eval` from them. They take
argparse's namespace and print their report; they import nothing above the models layer.
"""
import numpy as np

from kilobit.core.errors import KilobitError
from kilobit.core.options import integer, seed


def add_size_args(t):
    """The train parser's --budget-bytes, --bits and --in-bits."""
    t.add_argument("--budget-bytes", type=integer(1), default=None,
                   help="bytes the model may take on the device (default: no limit)")
    t.add_argument("--bits", type=int, choices=(8, 16), default=8, help="weight bits")
    t.add_argument("--in-bits", type=integer(1, 8), default=8, help="input code bits B (1-8)")


def add_run_args(t, seed_help="the train/test split's shuffle and the initialisation"):
    """The train parser's --seed, then add_output_args's (its last arguments)."""
    t.add_argument("--seed", type=seed(), default=0, help=seed_help)
    add_output_args(t)


def add_output_args(t):
    """The train parser's --quiet and -o/--output."""
    t.add_argument("--quiet", action="store_true", help="no progress on stderr")
    t.add_argument("-o", "--output", required=True, metavar="MODEL.kb",
                   help="the model file to write")


def fit_online(est, X, y, quiet, desc):
    """est.partial_fit over the rows in order (an online learner: the same as est.fit), a
    hundredth at a time under a progress bar (kilobit.core.progress); a ValueError becomes a
    KilobitError."""
    from kilobit.core import progress
    n = len(y)
    step = max(1, n // 100)
    try:
        with progress.bar(n, desc, quiet=quiet) as bar:
            for i in range(0, n, step):
                est.partial_fit(X[i:i + step], y[i:i + step])
                bar.update(min(step, n - i))
    except ValueError as e:
        raise KilobitError(str(e)) from None
    return est


def load_split(a):
    """(split, classes) of --data/--test drawn with --seed, refusing a single-class training
    split."""
    from kilobit import data
    from kilobit.core import pipeline

    split = data.load(a.data, seed=a.seed, test=a.test, binary=False,
                      pipeline=pipeline.from_args(a))
    classes = int(max(split.y_train.max(), split.y_test.max())) + 1
    if len(np.unique(split.y_train)) < 2:
        raise KilobitError("%s: the training split has a single class" % split.name)
    return split, classes


def fit(est, split):
    """est fitted on the training split; a trainer's ValueError becomes a KilobitError."""
    try:
        est.fit(split.X_train, split.y_train)
    except ValueError as e:
        raise KilobitError("cannot train: %s" % e) from None


def save_and_report(a, est, split, classes, what, check_budget=False):
    """Write the --bits integer model to --output and print the three report lines; `what`
    starts the first (the model and its shape). check_budget: refuse (write nothing) a model
    over --budget-bytes."""
    from kilobit.core import kbfile

    m = est.int_[a.bits]
    nbytes = m.device_bytes()
    if check_budget and a.budget_bytes is not None and nbytes > a.budget_bytes:
        raise KilobitError("the trained model takes %d B on the device, over --budget-bytes %d "
                           "(nothing written)" % (nbytes, a.budget_bytes))
    blob = est.to_bytes(a.bits, labels=split.labels, pipeline=split.pipeline)
    kbfile.write(a.output, blob)
    cte = est.codes(split.X_test)
    acc_f = float((est.float_.predict(cte / float(1 << a.in_bits)) == split.y_test).mean())
    acc_i = float((m.predict(cte) == split.y_test).mean())
    print("%s int%d B=%d on %s: %d train / %d test rows, D=%d, %d classes"
          % (what, a.bits, a.in_bits, split.name, len(split.y_train), len(split.y_test),
             m.dims, classes))
    print("trained in %.1f s; %d B on the device (budget %s), model file %d B -> %s"
          % (est.train_seconds_, nbytes,
             "none" if a.budget_bytes is None else "%d B" % a.budget_bytes, len(blob),
             a.output))
    print("test accuracy: float %.4f, integer model %.4f" % (acc_f, acc_i))


def evaluate(a, m, scaler, name):
    """`kilobit eval`: the accuracy of the integer model m (its scaler, or None: fitted on the
    training split) on the test split of --data; `name` is the model's in the report line."""
    from kilobit.core.quant import quantize

    split, codes = eval_codes(a, m, scaler, quantize, m.in_bits, binary=False)
    top = int(max(split.y_train.max(), split.y_test.max()))
    if top >= max(m.classes, 2):
        raise KilobitError("model predicts %d classes, %s has labels up to %d"
                           % (m.classes, split.name, top))
    pred = m.predict(codes)
    acc = float((pred == split.y_test).mean())
    print("%s (%s int%d, %d B on the device) on %s test split (%d rows): accuracy %.4f"
          % (a.model, name, m.wbits, m.device_bytes(), split.name, len(pred), acc))
    return 0


def add_data_args(t, task=None):
    """--data and --test, the first arguments of every `kilobit train MODEL` (task: "binary"
    lists the binary data sets only)."""
    from kilobit import data
    t.add_argument("--data", required=True, help=data.help_text(task))
    t.add_argument("--test", help="CSV test split (with a CSV --data; without it a CSV is "
                                  "shuffled with --seed and split 80/20)")
    g = t.add_argument_group("windows of raw readings (docs/contract.md 12): the model file "
                             "records them, and predict, eval and the board follow")
    g.add_argument("--window", type=integer(1, 256), default=None, metavar="N",
                   help="each --data row is a window of N samples x --axes readings "
                        "(interleaved x0 y0 z0 x1 ..., then the label)")
    g.add_argument("--axes", type=integer(1, 16), default=None, metavar="A",
                   help="axes per sample (default 1)")
    g.add_argument("--features", default=None, metavar="LIST",
                   help="the features of each axis: names of mean,mad,min,max,energy,diff,"
                        "cross, 'time' for all seven, and fftP:B for B band energies of a "
                        "P-point FFT (P 32..256), e.g. time,fft64:8 (default: time)")


def eval_codes(a, m, scaler, quantize, bits, binary=True):
    """(split, codes) for `kilobit eval`: --data's split, refused unless it has the model's
    m.dims features, and its test rows as `bits`-bit codes through the model file's scaler (or
    one fitted on the training split when the file has none) and the model's `quantize`."""
    from kilobit import data
    from kilobit.core import pipeline
    from kilobit.core.quant import MinMaxScaler

    split = data.load(a.data, seed=a.seed, test=a.test, binary=binary,
                      pipeline=pipeline.of(scaler))
    data.check_dims(split.X_test, m.dims, what=split.name, source="the model %s" % a.model)
    sc = MinMaxScaler.stored_or_fitted(scaler, split.X_train)
    return split, quantize(sc.transform(split.X_test), bits)


def eval_perceptron(a, m, scaler, quantize):
    """`kilobit eval` of a kernel perceptron (RKP, CKP): class 1 where the score is > 0, or
    with K > 2 classes the class of the largest score (kilobit.models.ovr)."""
    K = getattr(m, "classes", 2)
    split, codes = eval_codes(a, m, scaler, quantize, m.bits, binary=K == 2)
    if int(max(split.y_train.max(), split.y_test.max())) >= K:
        raise KilobitError("model predicts %d classes, %s has more" % (K, split.name))
    pred = [m.predict_class(u) if K > 2 else int(m.score(u) > 0) for u in codes]
    acc = sum(int(p == t) for p, t in zip(pred, split.y_test)) / len(pred)
    print("%s on %s test split (%d rows): accuracy %.4f" % (a.model, split.name, len(pred), acc))
    return 0
