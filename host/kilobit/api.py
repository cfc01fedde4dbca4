"""kilobit as a Python library: the five model types as scikit-learn classifiers.

    from kilobit import RKP, CKP, Bonsai, ProtoNN, Assoc, load, export
    est = RKP(budget=40).fit(X, y)        # raw X: the input map is fitted on X and kept
    est.score(X_test, y_test)             # accuracy of the integer model (what a board runs)
    est.save("m.kb")                      # the file `kilobit train` writes
    load("m.kb").predict(X_test)          # any .kb file, the CLI's too
    export(est, "model.h", target="host") # one C header (kilobit export)

Every estimator predicts with the model type's integer reference, so its answers are the
board's. The online learners (RKP, CKP, Assoc) also take partial_fit(X, y, classes=None) and
river's learn_one(x: dict, y) / predict_one(x); a label first seen on the way grows the model
(one more one-vs-rest learner, one more class slot) instead of being refused.

Labels may be anything numpy sorts (strings, {-1, +1}, ...): the model learns class ids
0 .. K-1 and its file stores their text (contract 4.1), so load() gives numbers back as numbers
and anything else as strings. Checks of scikit-learn's check_estimator that an integer model
cannot pass are each estimator's expected_failed_checks(), with the reason.
"""
import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted

try:
    from sklearn.utils.validation import validate_data
except ImportError:  # scikit-learn < 1.6 validates through the estimator
    def validate_data(est, *args, **kwargs):
        return est._validate_data(*args, **kwargs)

from kilobit.core import kbfile, pipeline
from kilobit.core.errors import KilobitError
from kilobit.core.quant import MinMaxScaler, fit_inputs
from kilobit.models import ovr, registry

try:  # river's evaluate.* accepts only its own classifiers: the online learners register
    from river import base as _river_base
except ImportError:  # river is optional
    _river_base = None

#: the most classes a model file's label table holds (contract 4.1)
MAX_CLASSES = kbfile.LABELS_MAX


def _as_value_error(fn, *args, **kwargs):
    """fn(*args, **kwargs) with a KilobitError (bad data, a budget that cannot fit) raised as
    the ValueError scikit-learn's tools expect of a bad input."""
    try:
        return fn(*args, **kwargs)
    except KilobitError as e:
        raise ValueError(str(e)) from None


def _label_texts(classes):
    """The labels a model file stores for classes_ (None: they are the ids 0 .. K-1), as
    `kilobit train` stores a CSV's."""
    from kilobit.data import user_labels
    c = np.asarray(classes)
    if c.dtype.kind in "iuf":
        c = c.astype(np.float64)
    labels = user_labels(c)
    if labels is not None:
        bad = [v for v in labels if not kbfile.label_ok(v.encode("utf-8", "replace"))]
        if bad:
            raise ValueError("label %r: a model file stores labels of 1..%d printable ASCII "
                             "characters" % (bad[0], kbfile.LABEL_LEN))
    return labels


def _classes_of_file(labels, K):
    """classes_ of a model file: its labels (numbers when every one reads as a number), else
    the ids 0 .. K-1."""
    if labels is None:
        return np.arange(K)
    for kind in (int, float):
        try:
            return np.array([kind(v) for v in labels])
        except ValueError:
            pass
    return np.array(labels)


class _Model(ClassifierMixin, BaseEstimator):
    """What the five share: validation, label encoding, the input map, the integer model's
    predictions, the model file. A subclass names its model type (NAME), trains in
    _train(X, ids) -> (integer model, input map) and reads its parameters back from an integer
    model in _params_of(m)."""
    NAME = None

    # --- scikit-learn's protocol ---
    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = False
        tags.classifier_tags.multi_class = True
        return tags

    def expected_failed_checks(self):
        """{check_estimator's check name: why an integer model cannot pass it}."""
        return {}

    def _validate(self, X, y="no_validation", reset=False):
        if isinstance(y, str) and y == "no_validation":
            return validate_data(self, X, reset=reset, dtype=np.float64)
        X, y = validate_data(self, X, y, reset=reset, dtype=np.float64)
        check_classification_targets(y)
        return X, y

    def _encode(self, y):
        """classes_ (sorted) and the class id of each label; ValueError past the file's limits."""
        classes, ids = np.unique(y, return_inverse=True)
        if not 2 <= len(classes) <= MAX_CLASSES:
            raise ValueError("%s needs 2..%d classes to learn from, y has %d class%s"
                             % (type(self).__name__, MAX_CLASSES, len(classes),
                                "" if len(classes) == 1 else "es"))
        self.classes_ = classes
        return ids.astype(np.int64)

    def fit(self, X, y):
        X, y = self._validate(X, y, reset=True)
        ids = self._encode(y)
        self.pipeline_ = None
        self.model_, self.inputs_ = _as_value_error(self._train, X, ids)
        return self

    # --- the board's answers ---
    @property
    def _spec(self):
        return registry.get(self.NAME)

    def device_inputs(self, X):
        """The rows of X as the board's inputs (codes, or int8 values for Assoc): the window
        features when the model takes windows, then the model's input map and quantizer."""
        check_is_fitted(self)
        X = self._validate(X)
        if self.pipeline_ is not None:
            X = _as_value_error(self.pipeline_.features, X)
        if self.inputs_ is None:  # a file without a map (golden make): X is the inputs
            lo, hi = (int(self._spec.inputs(self.model_, np.full((1, 1), v))[0, 0])
                      for v in (0.0, 1.0))
            if not np.all((X == np.round(X)) & (X >= lo) & (X <= hi)):
                raise ValueError("the model has no input map: its rows are the device's "
                                 "inputs, whole numbers %d .. %d" % (lo, hi))
            return X.astype(np.int64)
        return self._spec.inputs(self.model_, _as_value_error(self.inputs_.transform, X))

    def predict(self, X):
        ids = self._ids(self.device_inputs(X))
        return self.classes_[ids]

    # --- the model file ---
    def to_bytes(self):
        """The .kb model file (kilobit train's): the integer model, its input map, the labels
        and the window pipeline (contract 4.1)."""
        check_is_fitted(self)
        labels = _label_texts(self.classes_)
        extras = kbfile.Extras.of(self.inputs_, labels, self.pipeline_)
        return self.model_.to_bytes(scaler=extras)

    def save(self, path):
        """Write the model file to path (whole or not at all); returns path."""
        kbfile.write(path, self.to_bytes())
        return path

    @classmethod
    def _from_file(cls, m, extras):
        est = cls(**cls._params_of(m))
        est.model_ = m
        est.pipeline_ = pipeline.of(extras)
        est.inputs_ = None if extras is None or (extras.scaler is None and extras.quant is None) \
            else MinMaxScaler.stored_or_fitted(extras, None)
        est.n_features_in_ = est.pipeline_.width if est.pipeline_ is not None else m.dims
        est.classes_ = _classes_of_file(None if extras is None else extras.labels,
                                        est._file_classes(m))
        return est


class _Scores:
    """decision_function of the models with a score per row (binary) or per class."""

    def decision_function(self, X):
        """The integer model's scores: one per row (binary: > 0 is classes_[1]) or one per
        class (n x K)."""
        return self._scores(self.device_inputs(X))


class _Predictor(_Scores, _Model):
    """Bonsai and ProtoNN: trained on the host in a batch, then quantized."""

    def _file_classes(self, m):
        return max(m.classes, 2)

    def _fields(self, U):
        return self.model_.fields(U)

    def _ids(self, U):
        return self._fields(U)["pred"]

    def _scores(self, U):
        S = self._fields(U)["scores"]
        return S[:, 0] if S.shape[1] == 1 else S

    def _train(self, X, ids):
        est = self._trainer()
        est.fit(X, ids)
        if self.budget_bytes is not None and est.int_[self.bits].device_bytes() > \
                self.budget_bytes:
            raise ValueError("the trained model takes %d B on the device, over budget_bytes %d"
                             % (est.int_[self.bits].device_bytes(), self.budget_bytes))
        return est.int_[self.bits], est.scaler_


class Bonsai(_Predictor):
    """Bonsai (Kumar, Goyal & Varma 2017): one shallow sparse tree in a learnt sparse
    projection, trained on the host (kilobit train bonsai's parameters: depth, proj,
    budget_bytes, bits = weight bits 8 or 16, in_bits, epochs of the three phases, seed)."""
    NAME = "bonsai"

    def __init__(self, depth=3, proj=10, budget_bytes=None, bits=8, in_bits=8,
                 epochs=(30, 60, 30), seed=0):
        self.depth, self.proj, self.budget_bytes = depth, proj, budget_bytes
        self.bits, self.in_bits, self.epochs, self.seed = bits, in_bits, epochs, seed

    def _trainer(self):
        from kilobit.models.bonsai.model import Bonsai as Trainer, check_params
        err = check_params(self.bits, self.in_bits, 1, self.proj, self.depth, 2, 1)
        if err:
            raise ValueError("bad Bonsai parameters: " + err)
        return Trainer(depth=self.depth, proj=self.proj, budget=self.budget_bytes,
                       wbits=self.bits, in_bits=self.in_bits, epochs=tuple(self.epochs),
                       seed=self.seed)

    @staticmethod
    def _params_of(m):
        return dict(depth=m.depth, proj=m.d, bits=m.wbits, in_bits=m.in_bits)


class ProtoNN(_Predictor):
    """ProtoNN (Gupta et al. 2017): a sparse projection and a few prototypes with RBF scores,
    trained on the host (kilobit train protonn's parameters: proj, prototypes, budget_bytes,
    bits = weight bits 8 or 16, in_bits, epochs (T, e), batch, gamma, table, seed)."""
    NAME = "protonn"

    def __init__(self, proj=10, prototypes=20, budget_bytes=None, bits=8, in_bits=8,
                 epochs=(30, 5), batch=None, gamma=None, table=None, seed=0):
        self.proj, self.prototypes, self.budget_bytes = proj, prototypes, budget_bytes
        self.bits, self.in_bits, self.epochs, self.batch = bits, in_bits, epochs, batch
        self.gamma, self.table, self.seed = gamma, table, seed

    def _trainer(self):
        from kilobit.models.protonn.train import TABLE_DEFAULT, ProtoNN as Trainer
        return Trainer(d=self.proj, m=self.prototypes, budget=self.budget_bytes,
                       gamma=self.gamma, wbits=self.bits, in_bits=self.in_bits,
                       epochs=tuple(self.epochs), batch=self.batch,
                       nt=TABLE_DEFAULT if self.table is None else self.table, seed=self.seed)

    @staticmethod
    def _params_of(m):
        if m.multilabel:
            raise KilobitError("a multilabel ProtoNN model is not a classifier of one label "
                               "per row")
        return dict(proj=m.d, prototypes=m.m, bits=m.wbits, in_bits=m.in_bits)


class _Online(_Model):
    """The online learners: fit is one pass over X, partial_fit and learn_one continue.

    fit learns the input map from X. Learning that starts with partial_fit or learn_one cannot
    see the data's range in advance, so it takes features already scaled to [0, 1] (values
    outside are clipped), e.g. behind a MinMaxScaler of scikit-learn or river."""
    _supervised = True  # river's flag: learn_one takes y

    def _shuffle(self, n):
        return np.arange(n)

    def fit(self, X, y):
        X, y = self._validate(X, y, reset=True)
        ids = self._encode(y)
        self.pipeline_ = None
        self._given_classes = False
        self.inputs_ = _as_value_error(fit_inputs, X, self.bits, self._floor)
        self.model_ = _as_value_error(self._new, X.shape[1], len(self.classes_))
        order = self._shuffle(len(ids))
        self._learn(self.device_inputs(X[order]), ids[order])
        return self

    def partial_fit(self, X, y, classes=None):
        """Learn the rows in order. The first call (before fit) fixes the classes when
        `classes` lists them (then another label is refused), else labels seen later are added."""
        first = not hasattr(self, "model_")
        X, y = self._validate(X, y, reset=first)
        if first:
            self.classes_ = np.unique(y if classes is None else classes)
            if len(self.classes_) > MAX_CLASSES:
                raise ValueError("at most %d classes, got %d" % (MAX_CLASSES,
                                                                 len(self.classes_)))
            self._given_classes = classes is not None
            self.pipeline_ = None
            self.inputs_ = MinMaxScaler()
            self.inputs_.lo_ = np.zeros(X.shape[1], dtype=np.float32)
            self.inputs_.hi_ = np.ones(X.shape[1], dtype=np.float32)
            self.model_ = _as_value_error(self._new, X.shape[1], len(self.classes_))
        elif classes is not None and not np.array_equal(np.unique(classes),
                                                         np.unique(self.classes_)):
            raise ValueError("classes %r differ from the classes of the first call %r"
                             % (list(classes), list(self.classes_)))
        ids = self._ids_of(y)
        self._learn(self.device_inputs(X), ids)
        return self

    def _ids_of(self, y):
        index = {v: i for i, v in enumerate(self.classes_.tolist())}
        new = [v for v in dict.fromkeys(np.asarray(y).tolist()) if v not in index]
        if new and getattr(self, "_given_classes", True):
            raise ValueError("y has labels %r outside classes_ %r" % (new, list(self.classes_)))
        if len(self.classes_) + len(new) > MAX_CLASSES:
            raise ValueError("at most %d classes" % MAX_CLASSES)
        for v in new:  # the model first: a memory that cannot grow leaves classes_ as it was
            self._grow(len(self.classes_) + 1)
            index[v] = len(self.classes_)
            self.classes_ = np.concatenate([self.classes_, np.asarray([v])])
        return np.array([index[v] for v in np.asarray(y).tolist()], dtype=np.int64)

    def _learn(self, U, ids):
        for u, k in zip(U, ids.tolist()):
            self.model_.learn(u, k)

    # --- river ---
    def _row(self, x):
        keys = getattr(self, "feature_keys_", None)
        if keys is None:
            keys = self.feature_keys_ = list(x)
        if len(x) != len(keys) or any(k not in x for k in keys):
            raise ValueError("x has keys %s; the model learnt from %s"
                             % (sorted(x, key=str), keys))
        return np.array([[float(x[k]) for k in keys]])

    def learn_one(self, x, y):
        """river: learn one example, x a dict (its keys' order is fixed by the first call)."""
        self.partial_fit(self._row(x), [y])

    def predict_one(self, x):
        """river: the label of one example, None before anything was learnt."""
        if not hasattr(self, "model_"):
            return None
        v = self.predict(self._row(x))[0]
        return v.item() if hasattr(v, "item") else v


class _Perceptron(_Scores, _Online):
    """RKP and CKP: a binary learner, or one-vs-rest learners for 3 or more classes."""

    def _file_classes(self, m):
        return getattr(m, "classes", 2)

    def _new(self, dims, K):
        return self._module().new_model(**self._model_params(dims), seed=self.seed,
                                        classes=max(K, 2))

    def _grow(self, K):
        """One more class: a binary learner becomes one-vs-rest (its copy with the labels
        flipped answers class 0, itself class 1), or one more learner joins."""
        import copy
        if K <= 2:
            return
        new = self._module().new_model(**self._model_params(self.model_.dims),
                                       seed=ovr.learner_seed(self.seed, K - 1))
        if K == 3:
            zero = copy.deepcopy(self.model_)
            zero.labels[:zero.count] *= -1  # class 0's learner: the same support vectors
            self.model_ = ovr.OneVsRest([zero, self.model_, new])
        else:
            self.model_ = ovr.OneVsRest(self.model_.learners + [new])

    def _scores(self, U):
        m = self.model_
        if isinstance(m, ovr.OneVsRest):
            return np.array([m.scores(u) for u in U], dtype=np.int64).reshape(len(U), -1)
        return np.array([m.score(u) for u in U], dtype=np.int64)

    def _ids(self, U):
        return ovr.predict(self._scores(U))


class RKP(_Perceptron):
    """Random Kernel Perceptron (Djuric & Vucetic 2010): a budget of support vectors, random
    removal, a fixed-point Laplace or RBF kernel; learns on the board too (kilobit train rkp's
    parameters: kernel, bits of the input codes, budget, width exponent, C, seed)."""
    NAME = "rkp"
    _floor = False

    def __init__(self, kernel="laplace", bits=4, budget=62, width=-6, C=255, seed=0):
        self.kernel, self.bits, self.budget, self.width = kernel, bits, budget, width
        self.C, self.seed = C, seed

    @staticmethod
    def _module():
        from kilobit.models.rkp import model
        return model

    def _model_params(self, dims):
        return dict(kernel=self.kernel, bits=self.bits, dims=dims, budget=self.budget,
                    width=self.width, C=self.C)

    @staticmethod
    def _params_of(m):
        return dict(kernel=m.kernel, bits=m.bits, budget=m.budget, width=m.width, C=m.C)


class CKP(_Perceptron):
    """Compressed Kernel Perceptron (Vucetic, Coric & Wang 2009): a budget of L bits shared
    between support vectors and their precision; learns on the board too (kilobit train ckp's
    parameters: L, A the RBF width, bits P of the input codes, C, seed)."""
    NAME = "ckp"
    _floor = True  # contract 6.1: ckp's codes round down

    def __init__(self, L=560, A=0.1, bits=6, C=255, seed=0):
        self.L, self.A, self.bits, self.C, self.seed = L, A, bits, C, seed

    @staticmethod
    def _module():
        from kilobit.models.ckp import model
        return model

    def _model_params(self, dims):
        return dict(bits=self.bits, dims=dims, L=self.L,
                    width=self._module().width_milli(self.A), C=self.C)

    @staticmethod
    def _params_of(m):
        return dict(L=m.L, A=m.width / 1000.0, bits=m.bits, C=m.C)


class Assoc(_Online):
    """Binary associative memory with product random sampling (Boukli Hacene et al. 2017):
    class-incremental, learns on the board too (kilobit train assoc's parameters: approach
    I-I or N-I, P subspaces (must divide the features), kt anchors per class, R output neurons
    per class, bits of the int8 values, cap class slots (None: as many as the classes seen,
    grown as new ones come), seed: fit's learning order and the generator)."""
    NAME = "assoc"
    _floor = False

    def __init__(self, approach="I-I", P=1, kt=10, R=1, bits=8, cap=None, seed=0):
        self.approach, self.P, self.kt, self.R = approach, P, kt, R
        self.bits, self.cap, self.seed = bits, cap, seed

    def _shuffle(self, n):
        # `kilobit train assoc`'s order, so that fit writes the file the command writes
        return np.random.default_rng(self.seed).permutation(n)

    def _file_classes(self, m):
        return int(m.labels[:m.nc].max()) + 1 if m.nc else 0

    def _new(self, dims, K):
        from kilobit.models.assoc.commands import APPROACHES
        from kilobit.models.assoc.model import AssocInt
        if self.approach not in APPROACHES:
            raise ValueError("approach must be one of %s, got %r" % (APPROACHES, self.approach))
        if self.P < 1 or dims % self.P:
            raise ValueError("P=%d does not divide the %d features (T = P * d)"
                             % (self.P, dims))
        cap = max(K, 1) if self.cap is None else self.cap
        if cap < K:
            raise ValueError("cap %d is smaller than the %d classes" % (cap, K))
        return AssocInt(self.approach, self.bits, self.P, dims // self.P, cap, self.kt,
                        self.R, seed=self.seed)

    def _grow(self, K):
        """Room for class K - 1 when the slots are full and cap was not given: the same state
        in a memory of K slots (class slot c keeps its rows c*kt .., so learning is unchanged)."""
        m = self.model_
        if K <= m.cap:
            return
        if self.cap is not None:
            raise ValueError("cap %d class slots are full: cannot learn class %d"
                             % (self.cap, K))
        g = self._new(m.T, K)
        g.rng, g.nc = m.rng, m.nc
        g.labels[:m.cap], g.nf[:m.cap], g.anchors[:m.S] = m.labels, m.nf, m.anchors
        g.conn[:, :m.S, :m.cap * m.R] = m.conn
        self.model_ = g

    def _ids(self, U):
        if self.model_.nc == 0:
            raise ValueError("the associative memory has learnt no class yet")
        return self.model_.predict_many(U)[0]

    @staticmethod
    def _params_of(m):
        from kilobit.models.assoc.model import APPROACHES
        return dict(approach=APPROACHES[m.approach], P=m.P, kt=m.kt, R=m.R, bits=m.bits,
                    cap=m.cap)


ESTIMATORS = (RKP, CKP, Bonsai, ProtoNN, Assoc)
_BY_NAME = {c.NAME: c for c in ESTIMATORS}
assert set(_BY_NAME) == set(registry.NAMES)

if _river_base is not None:
    for _c in (RKP, CKP, Assoc):
        _river_base.Classifier.register(_c)


def from_bytes(blob):
    """The estimator of a model file's bytes (any of the five types), fitted: predict,
    partial_fit (the learners continue from the file's state), save."""
    spec = _as_value_error(registry.of_file, blob)
    m, extras = _as_value_error(spec.load, blob)
    return _as_value_error(_BY_NAME[spec.name]._from_file, m, extras)


def load(path):
    """The estimator of the model file at path (kilobit train's, or an estimator's save)."""
    _, blob = _as_value_error(registry.read, path)
    return from_bytes(blob)


def _file_of(model):
    """(model file bytes, its name for messages) of an estimator, a .kb path or its bytes."""
    import os
    if isinstance(model, _Model):
        return model.to_bytes(), "%s.kb" % model.NAME
    if isinstance(model, (bytes, bytearray)):
        return bytes(model), "model.kb"
    _, blob = _as_value_error(registry.read, os.fspath(model))
    return blob, os.path.basename(os.fspath(model))


def export(model, header, name=None, target="avr", embed=True, checkpoint_every=0,
           eeprom_at=0):
    """`kilobit export`: the model (an estimator, a path to a .kb file, or its bytes) as one C
    header for your own firmware, written to `header`. target "avr" (Arduino Uno), "arm"
    (Cortex-M0+) or "host" needs that C compiler: it measures what the model takes and refuses
    a model that does not fit (ValueError). Returns {"flash": bytes, "ram": bytes}."""
    import os

    from kilobit.core import outfile
    from kilobit.runtimes import export as exporter

    blob, source = _file_of(model)
    try:
        text, sizes = exporter.header(blob, name=name, target=target, embed=embed,
                                      checkpoint_every=checkpoint_every, eeprom_at=eeprom_at,
                                      source_name=source)
    except exporter.FitError as e:
        raise ValueError("%s %s" % (source, e)) from None
    outfile.write(os.fspath(header), text)
    return sizes


def golden_check(model, data, path, runtimes=("host", "kbit-cpython"), steps=None, seed=0):
    """`kilobit golden make --model` then `kilobit golden check`: the golden file of the model
    on `data` (a data set's name, or a CSV of features then the label) written to `path`, then
    replayed on each runtime (kilobit golden check's names), bit for bit. Returns the failures,
    one text each (empty: every runtime agrees)."""
    import os

    from kilobit import golden
    from kilobit.core import goldenfile

    blob, _ = _file_of(model)
    spec = registry.of_file(blob)
    doc = _as_value_error(spec.golden.from_model, blob, data, steps=steps, seed=seed)
    goldenfile.dump(doc, os.fspath(path))
    return _as_value_error(golden.check, os.fspath(path), list(runtimes), log=lambda line: None)
