"""`kilobit inspect`, `kilobit predict` and `kilobit eval --plot` on every model type (issue 24).

inspect says what the file holds (its spec's describe()) and, per board, exactly what `kilobit
fit` measures there; predict gives the integer reference's predictions (those of `kilobit eval`
on a data set's test split), of any CSV's rows, with or without labels, and the same
predictions from other runtimes; eval --plot draws the confusion matrix of those predictions.
Bad input is in kilobit.bench.badinput (tests/test_bad_input.py).
"""
import contextlib
import io
import os
import re

import numpy as np
import pytest

from conftest import need
from kilobit.cli import main
from kilobit.models import registry

#: a quick model of each type and its data set (as tests/test_golden_make.py trains them)
TRAIN = {
    "rkp": (["--data", "banana"], "banana"),
    "ckp": (["--data", "banana", "--L", "300"], "banana"),
    "bonsai": (["--data", "digits", "--epochs", "2,2,2"], "digits"),
    "protonn": (["--data", "digits", "--epochs", "2,2"], "digits"),
    "assoc": (["--data", "pendigits-10", "--kt", "4", "--P", "2"], "pendigits-10"),
}


def run(*args):
    """(exit status, stdout, stderr) of kilobit.cli.main(args)."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main([str(a) for a in args])
    return code, out.getvalue(), err.getvalue()


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("models")
    out = {}
    for name, (args, _) in TRAIN.items():
        path = tmp / (name + ".kb")
        code, _, err = run("train", name, *args, "--quiet", "-o", path)
        assert code == 0, err
        out[name] = str(path)
    return out


def need_avr():
    from kilobit.runtimes.avr import kb_sim
    need(kb_sim.missing())


@pytest.mark.parametrize("name", sorted(TRAIN))
def test_inspect_every_model_type(name, models):
    """Type, parameters, learnt state, scaler; per board the rows `kilobit fit` prints, and the
    boards it fits."""
    need_avr()
    from kilobit.runtimes import boards
    spec = registry.get(name)
    blob = open(models[name], "rb").read()
    m, scaler = spec.load(blob)
    code, out, err = run("inspect", models[name], "--board", "uno", "--board", "attiny2313")
    assert code == 0, err
    lines = out.splitlines()
    assert lines[0] == "%s: %s model (%s, %s), model file %d B, CRC-32 ok" % (
        models[name], name, spec.title, spec.paper, len(blob))
    for k, v in spec.describe(m):
        assert re.search(r"^  %s +%s$" % (re.escape(k), re.escape(str(v))), out, re.M), (k, v)
    if scaler.quant is not None:  # trained on integer features: the integer quantizer
        assert "quantizer: integer, %d features" % len(scaler.quant.lo_) in out
    else:
        assert "scaler: min-max of %d features" % len(scaler.scaler[0]) in out
    uno = [ln for ln in lines if ln.startswith("  uno ")][0]
    f = boards.fit(blob, boards.get("uno"))
    assert uno.split()[1] == "fits" and f.ok
    for what, used, budget, _ in f.rows:  # the numbers of `kilobit fit`
        assert "%s %d/%d B" % (what, used, budget) in uno, (what, uno)
    if spec.learns_online:
        assert "EEPROM" in uno  # the checkpoints' layout, or why there is none
    tiny = [ln for ln in lines if ln.startswith("  attiny2313 ")][0]
    if "attiny2313" not in spec.boards:
        assert "no firmware for %s models (they run on uno)" % name in tiny
    assert lines[-1].startswith("fits uno")
    assert "\r" not in err  # progress in a log: lines (kilobit.core.progress), none with --quiet
    assert run("inspect", models[name], "--board", "uno", "--quiet")[2] == ""


def test_inspect_on_every_board_says_what_does_not_fit(tmp_path):
    """The README's ATtiny2313 misfit: a 120-vector Banana model fits the Uno, not the tiny."""
    need_avr()
    from kilobit.models.rkp.model import RKPInt
    path = tmp_path / "big.kb"
    path.write_bytes(RKPInt("laplace", 4, 2, 120, -6, 255, seed=0).to_bytes())
    code, out, err = run("inspect", path, "--quiet")
    assert code == 0, err
    tiny = [ln for ln in out.splitlines() if ln.startswith("  attiny2313 ")][0]
    assert tiny.split()[1] == "no" and "does not fit: static RAM" in tiny
    assert "scaler: none stored" in out
    fits = out.splitlines()[-1]
    assert fits.startswith("fits ") and "uno" in fits and "attiny2313" not in fits


@pytest.mark.parametrize("name", sorted(TRAIN))
def test_predict_is_evals_integer_reference(name, models, tmp_path):
    """predict on a data set's test split: the accuracy `kilobit eval` reports, the CSV one
    row per test row, the summary on stdout with -o and on stderr without."""
    data = TRAIN[name][1]
    code, out, _ = run("eval", models[name], "--data", data)
    assert code == 0
    acc = float(out.split("accuracy ")[-1])
    pred = tmp_path / "pred.csv"
    code, out, err = run("predict", models[name], "--data", data, "-o", pred)
    assert code == 0, err
    rows = pred.read_text().splitlines()
    assert rows[0] == "prediction,label"
    y = np.array([int(r.split(",")[1]) for r in rows[1:]])
    p = np.array([int(r.split(",")[0]) for r in rows[1:]])
    assert "accuracy %.4f (%d of %d right)" % (acc, (p == y).sum(), len(y)) in out
    assert abs((p == y).mean() - acc) <= 5e-5  # eval prints 4 decimals
    code, out2, err2 = run("predict", models[name], "--data", data)
    assert code == 0 and out2 == pred.read_text() and err2 == out.split("\n", 1)[1]


def test_predict_a_csv_with_and_without_labels(models, tmp_path):
    from kilobit import data
    split = data.load("banana", seed=0)
    X, y = split.X_test[:50], split.y_test[:50]
    labelled = tmp_path / "l.csv"
    labelled.write_text("".join("%.9g,%.9g,%d\n" % (a, b, 2 * t - 1) for (a, b), t in zip(X, y)))
    bare = tmp_path / "b.csv"
    bare.write_text("x1;x2\n" + "".join("%.9g;%.9g\n" % (a, b) for a, b in X))  # ; detected
    code, out, err = run("predict", models["rkp"], "--data", labelled)
    assert code == 0, err
    assert "labels -1 1 read as classes 0 1" in err and "accuracy" in err
    labels = [ln.split(",")[1] for ln in out.splitlines()[1:]]
    assert labels == [str(t) for t in y]
    code, out2, err = run("predict", models["rkp"], "--data", bare)
    assert code == 0 and "accuracy" not in err
    assert out2.splitlines()[0] == "prediction"
    assert out2.splitlines()[1:] == [ln.split(",")[0] for ln in out.splitlines()[1:]]


def test_predict_on_other_runtimes_agrees_with_the_host(models, tmp_path):
    """The C runtime on the host and the simulated Uno give the host's predictions."""
    need_avr()
    for name, runtime in (("assoc", "c-host"), ("bonsai", "uno-sim"), ("ckp", "c-host")):
        code, out, err = run("predict", models[name], "--data", TRAIN[name][1], "--limit", 30,
                             "--runtime", runtime, "-o", tmp_path / "p.csv")
        assert code == 0, err
        assert "%s agrees with the host integer reference on 30 of 30 rows" % runtime in out
        _, host, _ = run("predict", models[name], "--data", TRAIN[name][1], "--limit", 30)
        assert (tmp_path / "p.csv").read_text() == host


def test_predict_on_the_virtual_board(models, tmp_path):
    """kbit deployed to a virtual MicroPython board, driven by the real mpremote."""
    from kilobit.runtimes import catalog
    need(catalog.get("virtual-board").missing())
    code, out, err = run("predict", models["protonn"], "--data", "digits", "--limit", 12,
                         "--runtime", "virtual-board", "-o", tmp_path / "p.csv")
    assert code == 0, err
    assert "virtual-board agrees with the host integer reference on 12 of 12 rows" in out


@pytest.mark.parametrize("name", ["rkp", "assoc"])
def test_eval_plot_draws_the_confusion_matrix(name, models, tmp_path):
    png = tmp_path / "cm.png"
    code, out, err = run("eval", models[name], "--data", TRAIN[name][1], "--plot", png)
    assert code == 0, err
    assert out.splitlines()[-1] == "confusion matrix -> %s" % png
    head = png.read_bytes()[:24]
    assert head[:8] == b"\x89PNG\r\n\x1a\n"
    w, h = int.from_bytes(head[16:20], "big"), int.from_bytes(head[20:24], "big")
    assert w >= 400 and h >= 300


def test_confusion_matrix_counts_the_predictions():
    from kilobit import predict
    r = dict(labels=np.array([0, 0, 1, 2, 2]), predictions=np.array([0, 1, 1, 2, -1]),
             classes=[0, 1, 2])
    cm, labels = predict.confusion(r)
    assert labels == ["0", "1", "2", "none"]
    assert cm.tolist() == [[1, 1, 0, 0], [0, 1, 0, 0], [0, 0, 1, 1], [0, 0, 0, 0]]


def test_readme_pngs_exist():
    """The two PNGs the README shows are committed (its commands make them)."""
    from kilobit.runtimes import REPO
    for f in ("eval-confusion.png", "stream-learning-curve.png"):
        assert os.path.getsize(os.path.join(REPO, "docs", "plots", f)) > 10000
