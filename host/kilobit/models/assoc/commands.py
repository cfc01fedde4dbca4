"""The assoc model's commands (kilobit.models.commands):

    kilobit train assoc --data pendigits-10 [--approach I-I --P 1 --kt 10 --R 1 --bits 8
                        --cap N --seed 0] -o m.kb
    kilobit eval m.kb --data pendigits-10

Training is what the device does: the integer memory (AssocInt, docs/contract.md section 9)
learns the training split one example at a time in a seeded order (predict, then learn; a new
label takes the next class slot), so a trained file continues on a board exactly as it would
have there. Rows become the device's int8 values through a min-max scaler fitted on the training
split and stored in the file. The input width T = P * d must be the data's feature count: P must
divide it. Image data go through fixed features (HOG + Walsh-Hadamard, kilobit.data.features) in
the benchmark; the model file stores no feature step, so train on a CSV of those features to use
them (`kilobit eval`, `golden make --model` and `stream` then take that CSV too).
"""
import numpy as np

from kilobit.core.errors import KilobitError
from kilobit.core.options import integer

#: the approaches a host-trained file can start from: N-O's anchors are drawn by the host in
#: advance (the paper's non-incremental variant), which `train` does not do
APPROACHES = ("I-I", "N-I")


def add_train_args(t):
    from kilobit.models.commands import add_data_args, add_run_args
    add_data_args(t)
    t.add_argument("--approach", choices=APPROACHES, default="I-I",
                   help="I-I: anchors and connections per class (default); N-I: anchors per "
                        "class, connections to every class")
    t.add_argument("--P", type=integer(1, 255), default=1,
                   help="subspaces P; must divide the features")
    t.add_argument("--kt", type=integer(1, 255), default=10,
                   help="anchors per class k~ (1: one-shot)")
    t.add_argument("--R", type=integer(1, 255), default=1, help="output neurons per class R")
    t.add_argument("--bits", type=integer(1, 8), default=8, help="bits of the int8 values B (1-8)")
    t.add_argument("--cap", type=integer(1, 255), default=None,
                   help="class slots (default: the classes of the data)")
    add_run_args(t, "the train/test split's shuffle, the learning order and the generator")


def _values(split, m, scaler):
    """(train values, test values): the split's rows as the device's int8 values."""
    from kilobit.core.quant import MinMaxScaler
    from kilobit.models.assoc.model import to_int8
    sc = MinMaxScaler.stored_or_fitted(scaler, split.X_train)
    return (to_int8(sc.transform(split.X_train), m.bits),
            to_int8(sc.transform(split.X_test), m.bits))


def train(a):
    from kilobit import data
    from kilobit.core import kbfile, pipeline, progress
    from kilobit.core.quant import fit_inputs
    from kilobit.models.assoc.model import AssocInt
    split = data.load(a.data, seed=a.seed, test=a.test, binary=False,
                      pipeline=pipeline.from_args(a))
    dims = split.X_train.shape[1]
    classes = int(max(split.y_train.max(), split.y_test.max())) + 1
    if a.P < 1 or dims % a.P:
        raise KilobitError("--P %d does not divide the %d features of %s (T = P * d)"
                           % (a.P, dims, split.name))
    if classes > 256:
        raise KilobitError("%s has %d classes; assoc labels are 0..255" % (split.name, classes))
    cap = classes if a.cap is None else a.cap
    if cap < classes:
        raise KilobitError("--cap %d is smaller than the %d classes of %s (nothing written)"
                           % (cap, classes, split.name))
    if dims > 255:
        raise KilobitError("%s has %d features; the devices take at most 255 values per input"
                           % (split.name, dims))
    try:
        m = AssocInt(a.approach, a.bits, a.P, dims // a.P, cap, a.kt, a.R, seed=a.seed)
    except ValueError as e:
        raise KilobitError("bad assoc parameters: %s" % e) from None
    scaler = kbfile.Extras.of_split(fit_inputs(split.X_train, a.bits), split)
    Utr, Ute = _values(split, m, scaler)
    right = 0
    with progress.bar(len(Utr), "train assoc", quiet=a.quiet) as bar:
        for i in np.random.default_rng(a.seed).permutation(len(Utr)):
            pred, _ = m.learn(Utr[i], int(split.y_train[i]))
            right += pred == int(split.y_train[i])
            bar.update(1)
    blob = m.to_bytes(scaler=scaler)
    kbfile.write(a.output, blob)
    pred, _ = m.predict_many(Ute)
    acc = float(np.mean(pred == split.y_test))
    print("assoc %s B=%d P=%d d=%d k~=%d R=%d cap=%d on %s: %d train / %d test rows, T=%d, "
          "%d classes" % (a.approach, a.bits, a.P, m.d, a.kt, a.R, cap, split.name, len(Utr),
                          len(Ute), m.T, classes))
    print("memory %d B, model file %d B -> %s; prequential accuracy %.4f"
          % (len(m.memory()), len(blob), a.output, right / max(len(Utr), 1)))
    print("test accuracy (integer model) %.4f" % acc)
    return 0


def evaluate(a, blob):
    from kilobit import data
    from kilobit.core import pipeline
    from kilobit.models.assoc.model import AssocInt
    m, scaler = AssocInt.from_bytes(blob)
    split = data.load(a.data, seed=a.seed, test=a.test, binary=False,
                      pipeline=pipeline.of(scaler))
    data.check_dims(split.X_test, m.T, what=split.name, source="the model %s" % a.model)
    _, Ute = _values(split, m, scaler)
    pred, _ = m.predict_many(Ute)
    acc = float(np.mean(pred == split.y_test))
    print("%s (assoc %s, %d B of memory) on %s test split (%d rows): accuracy %.4f"
          % (a.model, ("I-I", "N-I", "N-O")[m.approach], len(m.memory()), split.name,
             len(pred), acc))
    return 0
