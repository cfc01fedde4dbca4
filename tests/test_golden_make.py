"""`kilobit golden make` for every model type: a case drawn from a seed (parameters given on the
command line override the draw), and a user's trained model on the user's data (--model), each
replayed on every runtime that runs the model, bit for bit."""
import json
import os
import subprocess
import sys

import pytest

from conftest import need
from kilobit import golden
from kilobit.cli import DEFAULT_RUNTIMES
from kilobit.models import registry
from kilobit.runtimes import catalog as rt

#: the issue's must-show seeds, and one each for the learners
SEEDS = {"bonsai": 2718, "protonn": 1618, "assoc": 1123, "rkp": 12, "ckp": 13}


def kilobit(*args):
    p = subprocess.run([sys.executable, "-m", "kilobit.cli", *map(str, args)],
                       capture_output=True, text=True)
    return p.returncode, p.stdout, p.stderr


def check_everywhere(path, runtimes=DEFAULT_RUNTIMES):
    doc = golden.load(path)
    for name in runtimes:
        r = rt.get(name)
        need(r.missing())
        bad = golden.compare(doc, name, golden.replay_doc(doc, r))
        assert bad is None, str(bad)
    return doc


@pytest.mark.parametrize("model", sorted(SEEDS))
def test_golden_make_from_a_seed_passes_every_runtime(model, tmp_path):
    out = tmp_path / "g.json"
    code, text, err = kilobit("golden", "make", model, "--seed", SEEDS[model], "-o", out)
    assert code == 0, err
    assert "wrote %s (%s," % (out, model) in text
    doc = check_everywhere(str(out))
    assert doc["model"] == model and doc["params"]["seed"] == SEEDS[model]
    assert len(doc["steps"]) == len(doc["expect"]) >= 20
    # the same seed gives the same file
    again = tmp_path / "again.json"
    assert kilobit("golden", "make", model, "--seed", SEEDS[model], "-o", again)[0] == 0
    assert again.read_bytes() == out.read_bytes()


def test_given_parameters_override_the_draw(tmp_path):
    out = tmp_path / "g.json"
    code, _, err = kilobit("golden", "make", "rkp", "--seed", 5, "--dims", 3, "--bits", 2,
                           "--kernel", "rbf", "--steps", 40, "-o", out)
    assert code == 0, err
    p = json.loads(out.read_text())["params"]
    assert (p["dims"], p["bits"], p["kernel"], p["steps"]) == (3, 2, "rbf", 40)
    # the old spelling of the README still makes the same case as the checked-in file
    ref = "tests/golden/rkp-laplace-b4-t62-m2-a-6-s1.json"
    code, _, err = kilobit("golden", "make", "rkp", "--kernel", "laplace", "--bits", 4,
                           "--budget", 62, "--width", -6, "--dims", 2, "--steps", 400,
                           "--seed", 1, "-o", out)
    assert code == 0, err
    here = os.path.dirname(os.path.abspath(__file__))
    assert out.read_bytes() == open(os.path.join(here, "..", ref), "rb").read()


@pytest.mark.parametrize("model", [s.name for s in registry.REGISTRY])
def test_given_parameters_are_not_drawn(model):
    """A parameter given takes its draw's place, the others drawn as without it (issue 24):
    `golden make rkp --seed 1 --steps 231` (seed 1's own steps) is `--seed 1`; for the types
    without a rejecting draw (rkp, ckp) that holds for every parameter."""
    spec = registry.get(model)
    for seed in range(25):
        p = spec.golden.random_params(seed)
        names = [k for k in p if k != "seed"] if model in ("rkp", "ckp") else ["steps"]
        for k in names:
            assert spec.golden.random_params(seed, given={k: p[k]}) == p, (seed, k)
        # a given value is taken, and what depends on it sees it
        q = spec.golden.random_params(seed, given={"steps": 21})
        assert q["steps"] == 21 and (model != "rkp" or q["budget"] < max(2, 21 // 3))


def test_golden_make_with_the_drawn_steps_is_the_same_case(tmp_path):
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    assert kilobit("golden", "make", "rkp", "--seed", 1, "-o", a)[0] == 0
    steps = json.loads(a.read_text())["params"]["steps"]
    assert kilobit("golden", "make", "rkp", "--seed", 1, "--steps", steps, "-o", b)[0] == 0
    assert a.read_bytes() == b.read_bytes()
    code, _, err = kilobit("golden", "make", "bonsai", "--seed", 1, "--dims", 100000, "-o", b)
    assert code == 2 and "no valid case with the parameters given (dims=100000)" in err


@pytest.mark.parametrize("model", [s.name for s in registry.REGISTRY])
def test_every_draw_is_a_valid_case(model):
    spec = registry.get(model)
    for seed in range(60):
        p = spec.golden.random_params(seed, 12)
        assert p == spec.golden.random_params(seed, 12)  # deterministic
        doc = spec.golden.make(**p)
        assert doc["model"] == model and len(doc["steps"]) >= 12


@pytest.mark.parametrize("args,message", [
    (["golden", "make", "bonsai", "--seed", 1, "--L", 300], "bonsai cases take no --L"),
    (["golden", "make", "--seed", 1], "name a model type"),
    (["golden", "make", "nosuch", "--seed", 1], "unknown model type 'nosuch'"),
    (["golden", "make", "--model", "no/such.kb", "--data", "banana"], "cannot read model file"),
    (["golden", "make", "rkp", "--data", "banana"], "--data goes with --model"),
    (["golden", "make", "rkp", "--seed", 1, "--bits", 9], "cannot make a rkp case"),
])
def test_bad_golden_make_is_a_clear_error(args, message, tmp_path):
    out = tmp_path / "g.json"
    code, _, err = kilobit(*args, "-o", out)
    assert code == 2 and "kilobit: error: " in err and message in err, err
    assert not out.exists()


TRAIN = {
    "rkp": (["--data", "banana"], "banana"),
    "ckp": (["--data", "banana", "--L", 300], "banana"),
    "bonsai": (["--data", "digits", "--epochs", "2,2,2", "--quiet"], "digits"),
    "protonn": (["--data", "digits", "--epochs", "2,2", "--quiet"], "digits"),
    "assoc": (["--data", "pendigits-10", "--kt", 4, "--P", 2], "pendigits-10"),
}


@pytest.mark.parametrize("model", sorted(TRAIN))
def test_golden_make_from_a_trained_model_and_data(model, tmp_path):
    args, data = TRAIN[model]
    kb, out = tmp_path / "m.kb", tmp_path / "g.json"
    code, _, err = kilobit("train", model, *args, "-o", kb)
    assert code == 0, err
    code, text, err = kilobit("golden", "make", "--model", kb, "--data", data, "--steps", 50,
                              "-o", out)
    assert code == 0, err
    doc = check_everywhere(str(out), ("host", "kbit-cpython", "c-host") +
                           (("uno-sim",) if model in ("assoc", "protonn") else ()))
    assert doc["model_file"] == kb.read_bytes().hex()  # the user's file, scaler and all
    assert len(doc["steps"]) == 50 and doc["params"]["data"] == data
    if registry.get(model).learns_online:  # learns the training rows, then queries
        assert doc["steps"][0].startswith("L ") and doc["steps"][-1].startswith("Q ")
    # data of another width is refused, nothing written
    bad = tmp_path / "bad.json"
    code, _, err = kilobit("golden", "make", "--model", kb, "--data",
                           "digits" if data != "digits" else "banana", "-o", bad)
    assert code == 2 and "kilobit: error: " in err and "feature column" in err, err
    assert not bad.exists()
