"""ProtoNN's trainer and quantization (issue 6, host): gradients against finite differences,
hard thresholding and byte budgets, determinism, small end-to-end fits, the integer model
against the float one, refusals, and the CLI.

The integer contract itself (file format, runtimes, golden files) is tested in
tests/test_protonn_int.py and tests/test_golden.py.
"""
import numpy as np
import pytest

from conftest import need
from kilobit import data
from kilobit.cli import main
from kilobit.core import smat
from kilobit.core.errors import DataError, KilobitError
from kilobit.models.protonn.model import ProtoNNInt, fixed_bytes
from kilobit.models.protonn.train import (
    ProtoNN,
    ProtoNNFloat,
    armijo_step,
    hard_threshold,
    kernel_table,
    loss_and_grad,
    per_class_counts,
    quantize_model,
    split_budget,
    train,
)
from kilobit.runtimes.catalog import get


def _problem(L, seed=1, n=11, D=7, d=3, m=4):
    g = np.random.default_rng(seed)
    W = g.normal(size=(d, D)) * 0.5
    B = g.normal(size=(m, d))
    Z = g.normal(size=(m, L))
    X = g.normal(size=(n, D))
    Y = g.choice([-1.0, 1.0], (n, L))
    return W, B, Z, 0.7, X, Y


@pytest.mark.parametrize("L", [1, 3])
def test_gradient_matches_finite_differences(L):
    W, B, Z, gamma, X, Y = _problem(L)
    p = {"W": W, "B": B, "Z": Z}
    loss, grad = loss_and_grad(W, B, Z, gamma, X, Y)

    def f(q, gm=gamma):
        return loss_and_grad(q["W"], q["B"], q["Z"], gm, X, Y, blocks=())[0]

    assert abs(f(p) - loss) < 1e-12
    eps = 1e-6
    for k in p:
        for idx in np.ndindex(p[k].shape):
            q = {a: b.copy() for a, b in p.items()}
            q[k][idx] += eps
            up = f(q)
            q[k][idx] -= 2 * eps
            num = (up - f(q)) / (2 * eps)
            assert abs(num - grad[k][idx]) < 1e-6 * max(1.0, abs(num)), (k, idx, num,
                                                                         grad[k][idx])
    num = (f(p, gamma + eps) - f(p, gamma - eps)) / (2 * eps)
    assert abs(num - grad["gamma"]) < 1e-6 * max(1.0, abs(num))
    # the Z and B phases reuse the projection: same gradient from P as from X
    P = X @ W.T
    _, gp = loss_and_grad(W, B, Z, gamma, None, Y, ("B", "Z"), P=P)
    assert np.allclose(gp["B"], grad["B"]) and np.allclose(gp["Z"], grad["Z"])


def test_hard_threshold_keeps_the_largest_and_breaks_ties_by_position():
    A = np.array([[0.5, -3.0, 1.0], [1.0, 0.0, -2.0]])
    assert (hard_threshold(A, 2) == [[0, -3.0, 0], [0, 0, -2.0]]).all()
    # |1.0| twice: the lower position is kept
    assert (hard_threshold(A, 3) == [[0, -3.0, 1.0], [0, 0, -2.0]]).all()
    assert hard_threshold(A, None) is A and hard_threshold(A, 6) is A
    g = np.random.default_rng(0)
    M = g.normal(size=(30, 9))
    for s in (0, 1, 17, 200):
        H = hard_threshold(M, s)
        assert np.count_nonzero(H) == min(s, M.size)
        kept = np.abs(M[H != 0])
        dropped = np.abs(M[H == 0])
        assert not kept.size or not dropped.size or kept.min() >= dropped.max()


def test_armijo_step_is_the_largest_power_of_two_meeting_the_condition():
    # f(x) = 3 |x|^2, g = 6x: f(x - eta g) <= f(x) - eta/2 |g|^2 holds for eta <= 1/6;
    # searched up from 1/64 or down from 1, the rule returns 1/8
    f = lambda x: float(3.0 * (x * x).sum())  # noqa: E731
    x = np.array([1.0, -2.0])
    assert armijo_step(f, x, 6.0 * x) == 0.125
    assert armijo_step(f, x, 6.0 * x, eta=1.0 / 64) == 0.125
    assert armijo_step(f, x, 0.0 * x) == 0.0


@pytest.mark.parametrize("wbits", [8, 16])
def test_budget_split_fits_any_placement_of_the_weights(wbits):
    dims, d, m, L, nt = 784, 10, 20, 1, 128
    wb = wbits // 8
    for budget in (700, 1100, 2048, 4096):
        sW, sB, sZ = split_budget(budget, dims, d, m, L, wbits, nt)
        worst = fixed_bytes(d, nt)
        for s, rows, cols in ((sW, dims, d), (sB, m, d), (sZ, m, L)):
            if s is None:
                worst += rows * cols * wb
                continue
            # the costliest positions: spread out, every gap an escape when it can be
            pos = np.linspace(0, rows * cols - 1, s).astype(np.int64)
            M = np.zeros(rows * cols, dtype=np.int64)
            M[pos] = 1
            worst += min(len(smat.encode(M.reshape(rows, cols), wb, smat.SPARSE)),
                         rows * cols * wb)
        assert worst <= budget, (budget, worst)
    assert split_budget(10 ** 6, dims, d, m, L, wbits, nt) == (None, None, None)


def test_budget_too_small_is_refused_with_a_clear_message():
    with pytest.raises(KilobitError, match="does not even hold the model's fixed"):
        split_budget(100, 64, 10, 20, 1, 8)
    with pytest.raises(KilobitError, match="non-zero weights in W"):
        split_budget(fixed_bytes(10, 128) + 40, 64, 10, 4, 1, 8)
    with pytest.raises(KilobitError, match="prototypes for 3 classes"):
        per_class_counts(np.array([0, 1, 2, 2]), 3, 2)


def test_kernel_table_follows_the_exponential():
    gamma, eP = 0.65, 12
    for nt_max in (32, 128, 255):
        dshift, kshift, table = kernel_table(gamma, eP, nt_max)
        assert 1 <= len(table) <= nt_max and table[0] <= 32767
        assert (np.diff(table) <= 0).all() and table[-1] > 0
        a = gamma ** 2 * 2.0 ** (dshift - 2 * eP)
        w = 2 ** kshift
        mid = np.exp(-a * w * (np.arange(len(table)) + 0.5)) * 32767
        # a bin's entry lies between the kernel at its two ends
        hi = np.exp(-a * w * np.arange(len(table))) * 32767 + 0.5
        lo = np.exp(-a * w * (np.arange(len(table)) + 1)) * 32767 - 0.5
        assert (table <= hi).all() and (table >= lo).all()
        assert np.abs(table - mid).max() <= 32767 * (1 - np.exp(-a * w / 2)) + 1
        # the table reaches the cut-off where 32767 exp(-t) rounds to 0
        assert a * w * len(table) >= np.log(2 * 32767) - a * w
    # finer tables for more entries
    assert kernel_table(gamma, eP, 255)[1] <= kernel_table(gamma, eP, 32)[1]


@pytest.fixture(scope="module")
def digits():
    return data.load("digits")


@pytest.fixture(scope="module")
def fitted(digits):
    s = digits
    est = ProtoNN(d=8, m=12, budget=700, epochs=(8, 3), seed=3).fit(s.X_train, s.y_train)
    return est, est.codes(s.X_test), s


def test_end_to_end_digits_binary_beats_a_floor(fitted):
    est, cte, s = fitted
    majority = max(s.y_test.mean(), 1 - s.y_test.mean())
    acc_f = (est.float_.predict(cte / 256.0) == s.y_test).mean()
    acc_8 = (est.predict(s.X_test) == s.y_test).mean()
    assert majority < 0.62 and acc_f >= 0.9 and acc_8 >= 0.9, (acc_f, acc_8)


def test_budget_is_honoured_and_w_is_sparse(fitted):
    est, _, _ = fitted
    sW, sB, sZ = est.s_
    m8 = est.int_[8]
    assert m8.device_bytes() <= 700
    assert sW is not None and np.count_nonzero(est.float_.W) <= sW
    assert np.count_nonzero(m8.pj.Zq) <= sW
    # the file's payload is what the budget counts, plus the host-only scaler
    m, scaler = ProtoNNInt.from_bytes(est.to_bytes(8))
    assert m.device_bytes() == m8.device_bytes() and scaler is not None
    assert est.int_[16].device_bytes() > m8.device_bytes()


def test_integer_models_agree_with_the_float_model(fitted):
    est, cte, s = fitted
    pf = est.float_.predict(cte / 256.0)
    assert (est.int_[16].predict(cte) == pf).mean() >= 0.99
    assert (est.int_[8].predict(cte) == pf).mean() >= 0.97
    # the scores too, in the float model's units: the table's and weights' rounding only
    f = est.int_[16].fields(cte)
    S = f["scores"][:, 0] / (32767.0 * 2.0 ** est.int_[16].scales["eZ"])
    Sf = est.float_.scores(cte / 256.0)[:, 0]
    assert np.abs(S - Sf).max() <= 0.1 * np.abs(Sf).max()


@pytest.mark.parametrize("wbits", [8, 16])
@pytest.mark.parametrize("runtime", ["kbit-cpython", "c-host"])
def test_trained_model_bit_exact_on_the_runtimes(fitted, wbits, runtime):
    est, cte, _ = fitted
    r = get(runtime)
    need(r.missing())
    blob = est.to_bytes(wbits)
    m, _ = ProtoNNInt.from_bytes(blob)
    codes = cte[:40]
    want = [tuple(x) for x in m.field_rows(codes)]
    got = r.replay(blob, [("P", None, [int(c) for c in u]) for u in codes])
    assert got == want


def test_folded_projection_is_the_standardised_one(fitted):
    est, cte, _ = fitted
    fm = est.float_
    X01 = cte / 256.0
    Wf, bf = fm.folded()
    assert np.allclose(X01 @ Wf.T + bf, fm.standardise(X01) @ fm.W.T)


def test_same_seed_same_bytes_other_seed_other_model(digits):
    s = digits
    X, y = s.X_train[:300], s.y_train[:300]
    kw = dict(d=4, m=6, budget=600, epochs=(3, 2))
    a = ProtoNN(seed=5, **kw).fit(X, y).to_bytes(8)
    b = ProtoNN(seed=5, **kw).fit(X, y).to_bytes(8)
    c = ProtoNN(seed=6, **kw).fit(X, y).to_bytes(8)
    assert a == b and a != c


def test_multiclass_and_multilabel(digits):
    s = data.load("digits-10")
    X, y = s.X_train[:500], s.y_train[:500]
    est = ProtoNN(d=10, m=30, epochs=(5, 3), batch=100, seed=0).fit(X, y)
    cte = est.codes(s.X_test)
    assert est.float_.L == 10 and est.int_[8].L == 10
    acc = (est.int_[8].predict(cte) == s.y_test).mean()
    assert acc >= 0.8, acc
    # multilabel: "round digit" and "digit >= 5" as two labels; predictions are bit masks
    Yml = np.stack([np.isin(y, data.ROUND_DIGITS), y >= 5], axis=1).astype(np.int64)
    yte = np.stack([np.isin(s.y_test, data.ROUND_DIGITS), s.y_test >= 5], axis=1)
    est = ProtoNN(d=8, m=16, epochs=(5, 3), seed=0).fit(X, Yml)
    want = (yte * np.array([1, 2])).sum(axis=1)
    pf = est.float_.predict(est.codes(s.X_test) / 256.0)
    p8 = est.int_[8].predict(est.codes(s.X_test))
    assert est.int_[8].multilabel and set(np.unique(p8)) <= {0, 1, 2, 3}
    assert (p8 == want).mean() >= 0.75 and (p8 == pf).mean() >= 0.95


def test_bad_input_is_refused(digits):
    s = digits
    X, y = s.X_train[:200].copy(), s.y_train[:200]
    X[3, 4] = np.nan
    with pytest.raises(DataError, match="NaN"):
        ProtoNN(epochs=(1, 1)).fit(X, y)
    est = ProtoNN(d=3, m=4, epochs=(1, 1)).fit(s.X_train[:200], y)
    with pytest.raises(DataError, match="expected 64 features"):
        est.predict(s.X_test[:, :10])
    with pytest.raises(KilobitError, match="does not even hold"):
        ProtoNN(budget=200).fit(s.X_train[:200], y)
    with pytest.raises(KilobitError, match="labels must be integers"):
        ProtoNN().fit(s.X_train[:200], y - 1)
    with pytest.raises(KilobitError, match="need at least 2 classes"):
        ProtoNN(epochs=(1, 1)).fit(s.X_train[:200], np.zeros(200, dtype=np.int64))
    with pytest.raises(KilobitError, match="proj 65"):
        ProtoNN(d=65)


def test_quantize_model_of_a_hand_made_float_model():
    # one prototype per class on a line: the integer model must rank them as the float does
    W = np.array([[1.0, 0.0]])
    fm = ProtoNNFloat(W, np.array([[-0.3], [0.3]]), np.array([[-1.0], [1.0]]), 2.0,
                      mu=np.zeros(2), g=1.0, in_bits=8, classes=2)
    codes = np.stack([np.arange(256), np.zeros(256, dtype=np.int64)], axis=1)
    for wbits in (8, 16):
        m = quantize_model(fm, codes, wbits)
        pf, pi = fm.predict(codes / 256.0), m.predict(codes)
        assert (pf != pi).sum() <= 2 and pi[0] == 0 and pi[-1] == 1


def test_train_rejects_a_single_class():
    with pytest.raises(KilobitError):
        train(np.random.default_rng(0).random((10, 3)), np.ones(10, dtype=np.int64), d=2, m=2,
              iters=1, epochs=1)


def test_cli_train_eval_and_refusals(tmp_path, capsys):
    out = tmp_path / "m.kb"
    rc = main(["train", "protonn", "--data", "digits", "--budget-bytes", "900", "--proj", "6",
               "--prototypes", "10", "--epochs", "4,2", "--quiet", "-o", str(out)])
    txt = capsys.readouterr().out
    assert rc == 0 and out.exists() and "B on the device (budget 900 B)" in txt
    m, _ = ProtoNNInt.from_bytes(out.read_bytes())
    assert m.device_bytes() <= 900 and (m.d, m.m, m.wbits) == (6, 10, 8)
    assert main(["eval", str(out), "--data", "digits"]) == 0
    assert "(protonn int8, %d B on the device)" % m.device_bytes() in capsys.readouterr().out
    # a budget that cannot fit: exit 2, one clear line, nothing written
    bad = tmp_path / "bad.kb"
    rc = main(["train", "protonn", "--data", "digits", "--budget-bytes", "320", "--quiet",
               "-o", str(bad)])
    err = capsys.readouterr().err
    assert rc == 2 and not bad.exists() and "kilobit: error:" in err and "non-zero weights" \
        in err
    assert main(["train", "protonn", "--data", "digits", "--epochs", "4", "-o", str(bad)]) == 2
    assert "argument --epochs: wants two" in capsys.readouterr().err and not bad.exists()
    assert main(["eval", str(out), "--data", "pendigits-10"]) == 2
    assert "pendigits-10 has 16 feature columns, the model" in capsys.readouterr().err
