"""`kilobit stream` for every model type with an AVR firmware (learners rkp and ckp, the class
learner assoc, the predictors bonsai and protonn), and the lock-step UART runtime for every kind:
each reply bit for bit the host integer reference's."""
import glob
import os
import re

import pytest

from conftest import need
from kilobit import golden
from kilobit.cli import main
from kilobit.runtimes.avr import kb_sim
from kilobit.runtimes.catalog import get

HERE = os.path.dirname(os.path.abspath(__file__))


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    """One small trained model file of each type (fixed seeds)."""
    need(kb_sim.missing())
    d = tmp_path_factory.mktemp("models")
    train = {
        "ckp": ["--data", "banana", "--L", "560", "--bits", "6"],
        "assoc": ["--data", "pendigits-10", "--kt", "10"],
        "bonsai": ["--data", "digits", "--epochs", "3,3,3", "--quiet"],
        "protonn": ["--data", "digits", "--epochs", "3,2", "--quiet"],
    }
    out = {}
    for name, args in train.items():
        out[name] = str(d / (name + ".kb"))
        assert main(["train", name] + args + ["-o", out[name]]) == 0
    return out


def stream(capsys, *args):
    capsys.readouterr()
    code = main(["stream", "--port", "sim"] + list(args))
    out = capsys.readouterr()
    return code, out.out, out.err


@pytest.mark.parametrize("model,board,data,limit,frames", [
    ("ckp", "uno", "banana", 200, 700),
    ("ckp", "attiny2313", "banana", 200, 700),
    ("assoc", "uno", "pendigits-10", 300, 3798),
    ("bonsai", "uno", "digits", None, 540),
    ("protonn", "uno", "digits", None, 540),
])
def test_every_avr_model_streams_in_agreement_with_the_host(models, capsys, model, board, data,
                                                           limit, frames):
    args = ["--board", board, "--data", data, "--model", models[model]]
    if limit:
        args += ["--limit", str(limit)]
    code, out, err = stream(capsys, *args)
    assert code == 0, out + err
    assert "%s model" % model in out
    assert re.search(r"agreement with the host integer reference: %d/%d frames identical "
                     r"\(100\.00%%\)" % (frames, frames), out), out
    m = re.search(r"test accuracy: ([\d.]+)% over \d+ \w+ \(host integer reference: ([\d.]+)%\)",
                  out)
    assert m and m.group(1) == m.group(2), out
    assert float(m.group(1)) > {"ckp": 75, "assoc": 80, "bonsai": 85, "protonn": 85}[model]
    if model in ("ckp", "assoc"):
        assert "final memory identical" in out and "cycles per learning step: mean" in out
    else:
        assert "cycles per prediction (updates + predict): mean" in out
    assert re.search(r"program \d+ B, static RAM \d+ B \+ measured stack \d+ B", out)


def test_the_unos_assoc_build_reaches_the_benchmarks_accuracy(models, capsys):
    """docs/benchmarks/assoc.md: the Uno learns pendigits-10 (P = 1, k~ = 10) to 86.79%."""
    code, out, _ = stream(capsys, "--board", "uno", "--data", "pendigits-10", "--model",
                          models["assoc"])
    assert code == 0
    assert "test accuracy: 86.79% over 3498 queries" in out


@pytest.mark.parametrize("board,model,message", [
    ("attiny2313", "protonn", "protonn models have no firmware for attiny2313 (they run on uno)"),
    ("attiny2313", "assoc", "assoc models have no firmware for attiny2313"),
])
def test_a_model_without_a_firmware_for_the_board_is_refused(models, capsys, board, model,
                                                              message):
    code, _, err = stream(capsys, "--board", board, "--data", "digits", "--model", models[model])
    assert code == 2 and "kilobit: error: " + message in err, err


def test_a_model_that_does_not_fit_and_bad_files_are_refused(models, capsys, tmp_path):
    big = str(tmp_path / "big.kb")
    assert main(["train", "assoc", "--data", "pendigits-10", "--kt", "69", "-o", big]) == 0
    code, _, err = stream(capsys, "--board", "uno", "--data", "pendigits-10", "--model", big)
    assert code == 2 and "kilobit: error: " in err and "does not fit uno" in err, err
    bad = tmp_path / "bad.kb"
    bad.write_bytes(open(models["ckp"], "rb").read()[:-3])
    code, _, err = stream(capsys, "--board", "uno", "--data", "banana", "--model", str(bad))
    assert code == 2 and "kilobit: error: " in err and "truncated" in err, err
    code, _, err = stream(capsys, "--board", "uno", "--data", "banana", "--model",
                          models["bonsai"])
    assert code == 2 and "feature column" in err, err


@pytest.mark.parametrize("kind", ["assoc", "bonsai", "protonn", "ckp"])
def test_uart_runtime_replays_every_kind(kind):
    """uno-sim-uart: the firmware on a simulated Uno whose UART is a pty, frames sent one by
    one as to a real board (uno@PORT): one golden file of each kind, bit for bit."""
    r = get("uno-sim-uart")
    need(r.missing())
    path = sorted(glob.glob(os.path.join(HERE, "golden", kind + "-*.json")))[0]
    doc = golden.load(path)
    bad = golden.compare(doc, r.name, golden.replay_doc(doc, r))
    assert bad is None, str(bad)
