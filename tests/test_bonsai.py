"""Bonsai (issue 5): the trainer's gradient, the integer contract on every runtime, budgets.

Golden files (tests/golden/bonsai-*.json) are replayed on every runtime by test_golden.py; here:
finite-difference gradients, the host reference against kbit (CPython) and the C runtime on a
trained model (dense and sparse, int8 and int16), the file format round trip and refusals, and
the byte budget honoured on the device.
"""
import numpy as np
import pytest

from conftest import need
from kilobit import data
from kilobit.core import smat
from kilobit.core.errors import ModelFileError
from kilobit.core.fixedpoint import rshift_round
from kilobit.models.bonsai.golden import random_model
from kilobit.models.bonsai.model import Bonsai, BonsaiInt, init_params, loss_and_grad
from kilobit.runtimes.catalog import get


@pytest.mark.parametrize("classes,kind", [(1, "tanh"), (4, "tanh"), (1, "clamp"), (3, "clamp")])
def test_gradient_matches_finite_differences(classes, kind):
    g = np.random.default_rng(1)
    p = init_params(7, 3, 2, classes, seed=2)
    X = g.normal(size=(9, 7))
    Y = g.choice([-1.0, 1.0], 9) if classes == 1 else g.integers(0, classes, 9)
    lam = {"Z": 0.01, "theta": 0.02, "W": 0.03, "V": 0.04}
    f = lambda q: loss_and_grad(q, X, Y, 0.8, 2.0, lam, kind)[0]  # noqa: E731
    _, grad = loss_and_grad(p, X, Y, 0.8, 2.0, lam, kind)
    eps = 1e-6
    for k in p:
        for idx in list(np.ndindex(p[k].shape))[:12]:
            q = {a: b.copy() for a, b in p.items()}
            q[k][idx] += eps
            up = f(q)
            q[k][idx] -= 2 * eps
            num = (up - f(q)) / (2 * eps)
            assert abs(num - grad[k][idx]) < 1e-5 * max(1.0, abs(num)), (k, idx, num,
                                                                          grad[k][idx])


def test_rshift_round_is_round_half_up_without_overflow():
    for x in list(range(-40, 41)) + [(1 << 30) - 1, -(1 << 30)]:
        for s in range(0, 8):
            want = x if s == 0 else int(np.floor((x + 2 ** (s - 1)) / 2 ** s))
            assert rshift_round(x, s) == want


def test_sparse_encoding_round_trip_with_escapes():
    M = np.zeros((60, 10), dtype=np.int64)
    M[0, 3], M[40, 9], M[59, 0], M[59, 9] = 5, -7, 127, -127
    for wb in (1, 2):
        data_ = smat.encode(M, wb, smat.SPARSE)
        assert 0 in data_  # a gap over 255 positions: an escape
        assert (smat.decode(data_, 60, 10, wb, smat.SPARSE) == M).all()
        assert len(data_) == smat.sparse_bytes(np.flatnonzero(M), wb)


@pytest.fixture(scope="module")
def trained():
    s = data.load("digits")
    est = Bonsai(depth=2, proj=6, epochs=(2, 3, 2), budget_z=300, budget_theta=60,
                 seed=3).fit(s.X_train, s.y_train)
    return s, est


def test_budget_in_bytes_is_honoured(trained):
    s, est = trained
    m = est.int_[8]
    assert m.pj.enc == smat.SPARSE and m.tree_enc == smat.SPARSE
    assert len(smat.encode(m.pj.Zq, 1, smat.SPARSE)) <= 300
    blocks = sum(len(b) for b in m._blocks(smat.SPARSE))
    assert blocks <= 60


@pytest.mark.parametrize("wbits", [8, 16])
@pytest.mark.parametrize("runtime", ["kbit-cpython", "c-host"])
def test_trained_model_bit_exact(trained, wbits, runtime):
    s, est = trained
    r = get(runtime)
    need(r.missing())
    codes = est.codes(s.X_test[:60])
    blob = est.to_bytes(wbits)
    m, scaler = BonsaiInt.from_bytes(blob)
    assert scaler is not None
    want = [tuple(x) for x in m.field_rows(codes)]
    got = r.replay(blob, [("P", None, [int(c) for c in u]) for u in codes])
    assert got == want


def test_model_file_round_trip_and_refusals():
    m = random_model(40, 5, 2, 3, 8, 8, smat.SPARSE, smat.SPARSE, seed=4)
    blob = m.to_bytes()
    m2, _ = BonsaiInt.from_bytes(blob)
    assert m2.to_bytes() == blob
    bad = bytearray(blob)
    bad[20] ^= 1
    with pytest.raises(ModelFileError):
        BonsaiInt.from_bytes(bytes(bad))  # CRC
    from kbit.bonsai import Bonsai as KB
    from kbit.kbfile import ModelFileError as KE
    with pytest.raises(KE):
        KB.load(bytes(bad))
    with pytest.raises(KE):
        KB.load(blob[:-5])


def test_kbit_refuses_out_of_order_updates():
    from kbit.bonsai import Bonsai as KB
    m = random_model(10, 3, 1, 2, 8, 8, smat.DENSE, smat.DENSE, seed=5)
    k = KB.load(m.to_bytes())
    k.update(3, 7)
    with pytest.raises(ValueError):
        k.update(3, 1)
    with pytest.raises(ValueError):
        k.update(10, 1)
    k.update(9, 255)
    assert k.predict() in (0, 1)


# ----------------------------------------------------------------------------------------------
# kilobit train bonsai / kilobit eval (a Bonsai model file)

def test_cli_train_and_eval_bonsai(tmp_path, capsys):
    from kilobit.cli import main
    out = tmp_path / "m.kb"
    assert main(["train", "bonsai", "--data", "digits", "--depth", "2", "--proj", "5",
                 "--budget-bytes", "400", "--epochs", "2,3,2", "--seed", "1", "--quiet",
                 "-o", str(out)]) == 0
    text = capsys.readouterr().out
    m, scaler = BonsaiInt.from_bytes(out.read_bytes())
    assert scaler is not None and (m.depth, m.d, m.wbits, m.dims) == (2, 5, 8, 64)
    assert m.device_bytes() <= 400
    assert "%d B on the device" % m.device_bytes() in text
    acc = float(text.split("integer model ")[1].split()[0])
    # eval recomputes the same accuracy from the file alone (scaler from the file)
    assert main(["eval", str(out), "--data", "digits", "--seed", "1"]) == 0
    ev = capsys.readouterr().out
    assert "accuracy %.4f" % acc in ev
    s = data.load("digits", seed=1)
    from kilobit.core.quant import MinMaxScaler, quantize
    # digits' pixels come scaled to [0, 1] (not integers): the float scaler, as before
    assert scaler.quant is None and scaler.scaler is not None
    sc = MinMaxScaler.stored_or_fitted(scaler, None)
    want = float((m.predict(quantize(sc.transform(s.X_test), 8)) == s.y_test).mean())
    assert "%.4f" % want == "%.4f" % acc and acc > 0.7


def test_cli_train_bonsai_16_bit_multiclass(tmp_path, capsys):
    from kilobit.cli import main
    out = tmp_path / "m16.kb"
    assert main(["train", "bonsai", "--data", "pendigits-10", "--depth", "1", "--proj", "4",
                 "--bits", "16", "--epochs", "1,1,1", "--quiet", "-o", str(out)]) == 0
    m, _ = BonsaiInt.from_bytes(out.read_bytes())
    assert (m.wbits, m.classes, m.L, m.dims) == (16, 10, 10, 16)
    capsys.readouterr()
    assert main(["eval", str(out), "--data", "pendigits-10"]) == 0
    assert "accuracy" in capsys.readouterr().out


@pytest.mark.parametrize("args,msg", [
    (["--budget-bytes", "50"], "does not even hold"),
    (["--depth", "9"], "argument --depth: 9 is out of range: 0 to 6"),
    (["--proj", "0"], "argument --proj: 0 is out of range: 1 to"),
    (["--epochs", "1,2"], "argument --epochs: wants three"),
    (["--in-bits", "9"], "argument --in-bits: 9 is out of range: 1 to 8"),
    (["--data", "no-such-set"], "unknown data set"),
])
def test_cli_train_bonsai_refuses_bad_input(tmp_path, capsys, args, msg):
    from kilobit.cli import main
    out = tmp_path / "x.kb"
    base = ["train", "bonsai", "--data", "digits", "--epochs", "1,1,1", "--quiet",
            "-o", str(out)]
    assert main(base + args) == 2
    err = capsys.readouterr().err
    assert err.startswith("kilobit: error:") and msg in err, err
    assert not out.exists()


def test_cli_eval_bonsai_refuses_mismatched_data(tmp_path, capsys):
    from kilobit.cli import main
    m = random_model(16, 3, 1, 2, 8, 8, smat.DENSE, smat.DENSE, seed=6)
    f = tmp_path / "r.kb"
    f.write_bytes(m.to_bytes())
    assert main(["eval", str(f), "--data", "digits"]) == 2
    assert "digits has 64 feature columns, the model" in capsys.readouterr().err
    # 16 features but 10 classes: a binary model cannot be scored on it
    assert main(["eval", str(f), "--data", "pendigits-10"]) == 2
    assert "labels up to 9" in capsys.readouterr().err
    f.write_bytes(m.to_bytes()[:-3])
    assert main(["eval", str(f), "--data", "pendigits-10"]) == 2
    assert "kilobit: error:" in capsys.readouterr().err


@pytest.mark.parametrize("zenc,wbits", [(smat.SPARSE, 8), (smat.DENSE, 8), (smat.SPARSE, 16)])
def test_uno_update_frames_that_skip_zero_runs(zenc, wbits):
    """The firmware's run update (one walk of Z per frame) with frames that skip features: runs
    of zeros never sent, short frames, inputs with no update at all; bit for bit as the host."""
    from kilobit.models.bonsai.model import golden_inputs
    from kilobit.runtimes.avr import fw_predict as predict_fw
    r = get("uno-sim")
    need(r.missing())
    m = random_model(300, 6, 2, 3, wbits, 8, zenc, smat.SPARSE, seed=7)
    blob = m.to_bytes()
    inputs = golden_inputs(300, 8, 12, seed=8)
    assert any(0 < sum(1 for c in u if c) < 100 for u in inputs)
    assert inputs[0] == [0] * 300 and predict_fw.update_frames(inputs[0], skip_zeros=True) == []
    assert any(len(predict_fw.update_frames(u, skip_zeros=True)) < len(predict_fw.update_frames(u))
               for u in inputs)
    rows, res, _ = predict_fw.replay(blob, inputs, "uno", skip_zeros=True)
    assert rows == m.field_rows(inputs)
    assert len(predict_fw.cycles(res)) == len(inputs)
