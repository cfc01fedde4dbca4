"""`kilobit predict MODEL.kb --data CSV|NAME`: a trained model's predictions (issue 24).

    kilobit predict m.kb --data banana                    # the test split, integer reference
    kilobit predict m.kb --data new.csv -o pred.csv       # every row of a CSV
    kilobit predict m.kb --data banana --runtime virtual-board   # on a (virtual) board

The rows become the device's inputs as everywhere else (the model file's scaler, then the model
type's quantization: its spec's inputs()), and each is one step that predicts without learning:
a query for the online learners (so a learner's state is the file's for every row), an input
streamed to a predictor. The steps run on the integer reference (runtime `host`) or on any
runtime of `kilobit golden check` (kilobit.runtimes.catalog, BOARD@PORT included), whose
predictions are then compared with the host's.

A data set's name predicts its test split (drawn with --seed), with its labels. A CSV predicts
every row: a row is the model's features, or the features then a label. Labels count as the
model's classes when they are 0 .. K-1 already, or when the file holds exactly K distinct values
(then mapped in sorted order, as training maps them); otherwise no accuracy is given. A model
file without a scaler (kilobit golden make writes none) takes a CSV's numbers as the device's
inputs themselves.
"""
import numpy as np

from kilobit import data
from kilobit.core import pipeline
from kilobit.core.errors import DataError, KilobitError
from kilobit.core.quant import MinMaxScaler
from kilobit.models import registry
from kilobit.runtimes import catalog
from kilobit.runtimes.base import PREDICTION, RuntimeFailure


def classes_of(spec, m):
    """The labels a model can answer: a learner's 0/1, a predictor's classes, the labels an
    associative memory has learnt."""
    if spec.kind == "learner":  # binary, or K one-vs-rest classes (kilobit.models.ovr)
        return list(range(getattr(m, "classes", 2)))
    if spec.kind == "classes":
        return sorted(int(v) for v in m.labels[:m.nc])
    return list(range(max(m.classes, 2)))


def test_split(spec, m, scaler, name, test=None, seed=0):
    """(what, device inputs (n, dims) ints, labels) of the test split of --data (a CSV's too,
    as `kilobit eval` draws it)."""
    binary = spec.kind == "learner" and getattr(m, "classes", 2) == 2
    split = data.load(name, seed=seed, test=test, binary=binary, pipeline=pipeline.of(scaler))
    data.check_dims(split.X_test, m.dims, what=split.name, source="the model")
    sc = MinMaxScaler.stored_or_fitted(scaler, split.X_train)
    return ("%s test split" % split.name, spec.inputs(m, sc.transform(split.X_test)),
            split.y_test.astype(np.int64))


def inputs(spec, m, scaler, name, test=None, seed=0):
    """(what, device inputs (n, dims) ints, labels or None, note) of --data for model m."""
    if name in data.DATASETS:
        return test_split(spec, m, scaler, name, test, seed) + (None,)
    if test is not None:
        raise KilobitError("--test goes with eval and train; predict takes one --data")
    import os
    if not os.path.exists(name):
        raise data.missing(name)
    A, last = data.read_matrix(name, min_rows=1, min_cols=1, text_labels=True)
    pipe = pipeline.of(scaler)
    if pipe is not None:  # a row is a window of raw readings (then a label)
        X, last = _windows(pipe, A, last, name)
        raw = None if last is None else np.array([_label_id(v, scaler, name) for v in last],
                                                 dtype=np.float64)
    elif A.shape[1] == m.dims:  # features, then a label (a number or, with labels, a name)
        X, raw = A, np.array([_label_id(v, scaler, name) for v in last], dtype=np.float64)
    else:
        if any(isinstance(v, str) for v in last):
            raise DataError("%s: expected %d features and a label per row" % (name, m.dims))
        X, raw = np.column_stack([A, np.array(last, dtype=np.float64)]), None
        data.check_dims(X, m.dims, what=name, source="the model")
    if scaler is None:  # the file's numbers are the device's inputs
        lo, hi = (int(spec.inputs(m, np.full((1, 1), v))[0, 0]) for v in (0.0, 1.0))
        if not np.all((X == np.round(X)) & (X >= lo) & (X <= hi)):
            raise DataError("%s: the model file has no scaler, so its rows must be the device's "
                            "inputs: whole numbers %d .. %d" % (name, lo, hi))
        U = X.astype(np.int64)
    else:
        U = spec.inputs(m, MinMaxScaler.stored_or_fitted(scaler, X).transform(X))
    labels, note = map_labels(raw, classes_of(spec, m))
    return "%d rows of %s" % (len(U), name), U, labels, note


def _windows(pipe, A, last, path):
    """(the features of a CSV's windows, its last column): with a label, a row holds one
    window and the label; without, the last column is the window's last reading."""
    if A.shape[1] + 1 == pipe.width and not any(isinstance(v, str) for v in last):
        return pipe.features(np.column_stack([A, np.array(last, dtype=np.float64)]), path), None
    return pipe.features(A, path), last


def _label_id(v, extras, path):
    """A label cell as the model's class id: a number stays itself; a name is looked up in the
    model file's labels."""
    if not isinstance(v, str):
        return v
    names = extras.labels if extras is not None else None
    if names is None or v not in names:
        raise DataError("%s: label %r is not one of the model's labels (%s)" % (
            path, v, ", ".join(names) if names else "it has none: its classes are numbers"))
    return names.index(v)


def map_labels(raw, classes):
    """(labels as the model's classes or None, a note on how they were read or None)."""
    if raw is None:
        return None, None
    if np.all(raw == np.round(raw)) and set(raw.astype(np.int64)) <= set(classes):
        return raw.astype(np.int64), None
    distinct = np.unique(raw)
    if len(distinct) == len(classes):
        return np.asarray(classes)[np.searchsorted(distinct, raw)], \
            "labels %s read as classes %s" % (" ".join("%g" % v for v in distinct),
                                              " ".join(map(str, classes)))
    return None, "labels not the model's classes (%s): no accuracy" % " ".join(map(str, classes))


def steps_of(spec, U):
    op = "P" if spec.kind == "predictor" else "Q"
    return [(op, None, [int(c) for c in u]) for u in U]


def run(path, data_name, test=None, seed=0, runtime="host", limit=None, split=False):
    """The predictions: a dict with what, predictions (np.int64), labels (or None), note,
    runtime, agree (rows equal to the host's; None on the host itself). split: a CSV's test
    split as `kilobit eval` draws it instead of its every row."""
    spec, blob = registry.read(path)
    m, scaler = spec.load(blob)
    if split:
        what, U, labels = test_split(spec, m, scaler, data_name, test, seed)
        note = None
    else:
        what, U, labels, note = inputs(spec, m, scaler, data_name, test, seed)
    if limit is not None:
        U = U[:limit]
        labels = None if labels is None else labels[:limit]
    rt = catalog.get(runtime)
    miss = rt.missing()
    if miss:
        raise KilobitError("runtime %s is not available here: missing %s" % (runtime, miss))
    steps = steps_of(spec, U)
    k = PREDICTION[spec.kind]
    want = [int(r[k]) for r in catalog.get("host").replay(blob, steps)] if steps else []
    agree = None
    if runtime == "host":
        pred = want
    else:
        try:
            rows = rt.replay(blob, steps) if steps else []
        except RuntimeFailure as e:
            raise KilobitError("%s: %s" % (runtime, e)) from None
        pred = [int(r[k]) for r in rows]
        agree = sum(int(a == b) for a, b in zip(pred, want))
    return dict(spec=spec, what=what, predictions=np.asarray(pred, dtype=np.int64),
                labels=labels, note=note, runtime=runtime, agree=agree,
                classes=classes_of(spec, m), extras=scaler)


def csv_text(result):
    """The predictions as CSV: a header, then one row per input (its label after it)."""
    labels, extras = result["labels"], result.get("extras")
    text = (lambda c: str(extras.label(c))) if extras is not None else str  # the user's labels
    lines = ["prediction" + (",label" if labels is not None else "")]
    for i, p in enumerate(result["predictions"]):
        lines.append(text(int(p)) + ("," + text(int(labels[i])) if labels is not None else ""))
    return "\n".join(lines) + "\n"


def summary(result):
    """The report line(s): rows, accuracy when labelled, agreement with the host."""
    n = len(result["predictions"])
    out = ["%s model on %s: %d predictions by %s" % (result["spec"].name, result["what"], n,
                                                    result["runtime"])]
    if result["labels"] is not None and n:
        right = int((result["predictions"] == result["labels"]).sum())
        out.append("accuracy %.4f (%d of %d right)" % (right / n, right, n))
    if result["note"]:
        out.append(result["note"])
    if result["agree"] is not None:
        out.append("%s agrees with the host integer reference on %d of %d rows"
                   % (result["runtime"], result["agree"], n))
    return out


def confusion(result):
    """(matrix, class labels) of labelled predictions: rows the true class, columns the
    predicted one (an associative memory's "no class", -1, its own last column)."""
    y, p = result["labels"], result["predictions"]
    classes = sorted(set(result["classes"]) | set(int(v) for v in y) |
                     set(int(v) for v in p if v >= 0))
    cols = classes + ([-1] if (p < 0).any() else [])
    index = {c: i for i, c in enumerate(cols)}
    cm = np.zeros((len(cols), len(cols)), dtype=np.int64)
    for t, q in zip(y, p):
        cm[index[int(t)], index[int(q)]] += 1
    return cm, ["none" if c < 0 else str(c) for c in cols]
