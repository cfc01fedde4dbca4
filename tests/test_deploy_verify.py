"""`kilobit deploy`'s verification (kilobit.runtimes.boards.deploy, issue 28 item 6) without a
board: verify.py as deploy writes it, run by CPython on device/kbit (its heap lock a no-op).

What is proven here:
- verify.py replays a golden file of each of the five model types with that file's own model
  and then checks the deployed model (another model, trained here) against the host integer
  reference; every line it prints is the one deploy looks for.
- it fails, naming the step and the field, when the board's model file is not the one deployed
  (a model of the same type trained with another seed), when the golden expectations are off,
  and when kbit's answer differs in the last field of a row only (a memory's CRC-32).
- a model whose file names its classes is checked by the user's labels; a model with an integer
  quantizer is asked from raw readings the board quantizes itself (m.quantize), and a golden
  file's raw readings are quantized on the board and held to its steps' inputs.
- deploy stores a model under a plain NAME.kb only: main.py, lib, boot.py, paths and hidden
  names are refused (`kilobit: error:`, exit 2) before anything runs; --as names it.
"""
import os
import re
import subprocess
import sys

import pytest

from kilobit.cli import main
from kilobit.core import goldenfile
from kilobit.models import registry
from kilobit.runtimes import REPO
from kilobit.runtimes.boards import deploy

KBIT = os.path.join(REPO, "device")

# small models of every type, trained here (seconds in all): (type, data, options)
TRAIN = {
    "rkp": ("banana", ["--bits", "4", "--budget", "20", "--width", "-6"]),
    "ckp": ("banana", ["--bits", "4"]),
    "bonsai": ("banana", ["--depth", "1", "--proj", "2", "--epochs", "2,2,2"]),
    "protonn": ("pendigits-10", ["--proj", "4", "--prototypes", "10", "--epochs", "3,2"]),
    "assoc": ("pendigits-10", ["--kt", "2"]),
}


def train(tmp_path, name, seed=0):
    data, opts = TRAIN[name]
    out = str(tmp_path / ("%s-%d.kb" % (name, seed)))
    assert main(["train", name, "--data", data, "--seed", str(seed), "--quiet", "-o", out]
                + opts) == 0
    with open(out, "rb") as f:
        return f.read()


def verified_line(on_board, model):
    """verify.py's last line for the deployed model file `model`: a model with an integer
    quantizer is asked from raw readings, which the board quantizes first."""
    _, extras = registry.of_file(model).load(model)
    raw = getattr(extras, "quant", None) is not None
    return "model %s verified: %d inputs %sanswered as the host's integer reference answers " \
           "them" % (on_board, deploy.HOST_ROWS, "quantized from raw readings and " if raw else "")


def run_verify(tmp_path, script, board_files):
    """verify.py under CPython in a folder holding board_files {name: bytes}: (exit, lines)."""
    board = tmp_path / "board"
    board.mkdir(exist_ok=True)
    for name, data in board_files.items():
        (board / name).write_bytes(data)
    (board / "verify.py").write_text(script)
    env = dict(os.environ, PYTHONPATH=KBIT)
    p = subprocess.run([sys.executable, "verify.py"], cwd=str(board), capture_output=True,
                       text=True, timeout=300, env=env)
    return p.returncode, p.stdout.splitlines()


@pytest.mark.parametrize("name", registry.NAMES)
def test_verify_replays_a_golden_file_of_the_type_then_checks_the_deployed_model(tmp_path, name):
    model = train(tmp_path, name)
    golden = deploy.pick_golden(name)
    doc = goldenfile.load(golden)
    assert doc["model"] == name and bytes.fromhex(doc["model_file"]) != model
    code, lines = run_verify(tmp_path, deploy.verify_script(model, "m.kb", golden),
                             {"m.kb": model})
    m, _ = registry.get(name).load(model)
    assert code == 0 and lines == [
        "kbit verified: %d steps of %s bit for bit" % (len(doc["steps"]),
                                                         os.path.basename(golden)),
        "model m.kb loaded: %s, %d inputs" % (name, m.dims),
        verified_line("m.kb", model)], lines
    # the deploy's own check reads the same lines
    deploy._verified("m.kb")(code, "\n".join(lines) + "\n")


@pytest.mark.parametrize("name", registry.NAMES)
def test_verify_fails_when_the_boards_model_is_another(tmp_path, name):
    """The host's answers are the deployed model's: another model of the same type on the
    board (another seed) differs at some input, and the deploy fails on that line."""
    model, other = train(tmp_path, name), train(tmp_path, name, seed=1)
    assert model != other
    script = deploy.verify_script(model, "m.kb", None)
    code, lines = run_verify(tmp_path, script, {"m.kb": other})
    assert code == 1, lines
    assert lines[0] == "kbit not replayed: no golden file here for %s models (give deploy " \
                       "--golden)" % name
    assert lines[-1].startswith("kbit MISMATCH at step ") and " of m.kb: " in lines[-1], lines
    with pytest.raises(deploy.DeployError, match="kbit MISMATCH at step"):
        deploy._verified("m.kb")(0, "\n".join(lines))


def _tampered(golden, tmp_path, row, field):
    """A copy of a golden file with expect[row][field] one more."""
    doc = goldenfile.load(golden)
    doc["expect"][row][field] += 1
    path = str(tmp_path / os.path.basename(golden))
    goldenfile.dump(doc, path)
    return path


@pytest.mark.parametrize("name, field", [("ckp", 0), ("bonsai", -1), ("assoc", -1)],
                         ids=["learner-score", "predictor-prediction", "classes-memory"])
def test_verify_fails_on_a_golden_difference(tmp_path, name, field):
    model = bytes.fromhex(goldenfile.load(deploy.pick_golden(name))["model_file"])
    golden = _tampered(deploy.pick_golden(name), tmp_path, 3, field)
    code, lines = run_verify(tmp_path, deploy.verify_script(model, "m.kb", golden),
                             {"m.kb": model})
    assert code == 1 and len(lines) == 1, lines
    assert lines[0].startswith("kbit MISMATCH at step 3 of %s: " % os.path.basename(golden))


GOLDEN = os.path.join(REPO, "tests", "golden")
RAW = os.path.join(GOLDEN, "raw")


def test_a_golden_file_of_another_type_is_replayed_with_its_own_model(tmp_path):
    """--golden of another type than the deployed model's: both kinds' replays in one script
    (a predictor's golden file, a class learner deployed)."""
    golden = deploy.pick_golden("bonsai")
    model = train(tmp_path, "assoc")
    script = deploy.verify_script(model, "m.kb", golden)
    assert "def replay_predictor(" in script and "def replay_classes(" in script
    assert "def replay_learner(" not in script
    code, lines = run_verify(tmp_path, script, {"m.kb": model})
    assert code == 0 and lines[0].startswith("kbit verified: 50 steps of bonsai-") \
        and lines[1:] == ["model m.kb loaded: assoc, 16 inputs", verified_line("m.kb", model)], \
        lines


@pytest.mark.parametrize("golden, deployed", [
    ("rkp-laplace-b4-t12-m4-a-4-k3-s40.json",
     "ckp-L120-bits6-classes3-dims2-seed33-steps300-width100.json"),
    ("ckp-L120-bits6-classes3-dims2-seed33-steps300-width100.json",
     "rkp-laplace-b4-t10-m16-a-3-k10-s42.json"),
])
def test_several_classes_verify(tmp_path, golden, deployed):
    """One-vs-rest learners (kbit.ovr): a golden file's steps answer the class of the largest
    score, and so does a deployed multi-class model (the model of another golden file)."""
    model = bytes.fromhex(goldenfile.load(os.path.join(GOLDEN, deployed))["model_file"])
    doc = goldenfile.load(os.path.join(GOLDEN, golden))
    assert max(row[1] for row in doc["expect"]) >= 2  # predictions past the binary 0, 1
    code, lines = run_verify(tmp_path, deploy.verify_script(model, "m.kb",
                                                            os.path.join(GOLDEN, golden)),
                             {"m.kb": model})
    assert code == 0 and lines[0] == "kbit verified: %d steps of %s bit for bit" % (
        len(doc["steps"]), golden) and lines[-1] == verified_line("m.kb", model), lines


@pytest.mark.parametrize("name", registry.NAMES)
def test_a_golden_file_with_raw_readings_is_quantized_on_the_board(tmp_path, name):
    """A golden file of a model with an integer quantizer carries raw readings: verify.py has
    the board quantize them (m.quantize) and holds the codes to the steps' before replaying;
    a raw row that quantizes to other codes fails, named."""
    path = os.path.join(RAW, next(f for f in sorted(os.listdir(RAW))
                                  if f.startswith(name + "-")))
    doc = goldenfile.load(path)
    model = bytes.fromhex(doc["model_file"])
    code, lines = run_verify(tmp_path, deploy.verify_script(model, "m.kb", path), {"m.kb": model})
    assert code == 0 and lines[0] == "kbit verified: %d steps of %s bit for bit, quantized " \
        "from raw" % (len(doc["steps"]), os.path.basename(path)), lines
    assert lines[-1] == verified_line("m.kb", model) and "quantized from raw" in lines[-1]
    from kilobit.runtimes.host import HostRuntime
    _, extras = registry.get(name).load(model)
    low = [int(v) - 1 for v in extras.quant.lo_]  # below the range: every code its lowest
    codes = HostRuntime().quantize_rows(model, [low])[0]
    steps = registry.get(name).golden.doc_steps(doc)
    i = next(i for i, (_, _, c) in enumerate(steps) if list(c) != list(codes))
    doc["raw"][i] = low
    goldenfile.dump(doc, str(tmp_path / "tampered.json"))
    code, lines = run_verify(tmp_path, deploy.verify_script(model, "m.kb",
                                                            str(tmp_path / "tampered.json")),
                             {"m.kb": model})
    assert code == 1 and lines[-1].startswith("kbit MISMATCH at raw row %d of tampered.json: "
                                              "quantized to " % i), lines


def test_a_model_with_labels_is_checked_by_its_labels(tmp_path):
    """kbit answers the user's label where the file names the classes: verify.py compares it
    with the label of the host's class id (and still fails on a wrong one)."""
    from kilobit.core import kbfile
    blob = train(tmp_path, "protonn")
    spec = registry.get("protonn")
    m, _ = spec.load(blob)
    labels = ["digit-%d" % i for i in range(m.classes)]
    labelled = m.to_bytes(kbfile.Extras(labels=labels))
    assert spec.load(labelled)[1].labels == tuple(labels)
    code, lines = run_verify(tmp_path, deploy.verify_script(labelled, "m.kb", None),
                             {"m.kb": labelled})
    assert code == 0 and lines[-1].startswith("model m.kb verified: "), lines
    relabelled = m.to_bytes(kbfile.Extras(labels=labels[1:] + labels[:1]))
    code, lines = run_verify(tmp_path, deploy.verify_script(labelled, "m.kb", None),
                             {"m.kb": relabelled})
    got = re.search(r": pred digit-(\d+), expected digit-(\d+)$", lines[-1])
    assert code == 1 and got, lines  # the board's label is the next one of the host's id
    assert int(got.group(1)) == (int(got.group(2)) + 1) % m.classes


@pytest.mark.parametrize("given, name", [
    ("main.py", None), ("lib", None), ("boot.py", None), ("m.kb", "main.py"),
    ("m.kb", "lib/m.kb"), ("m.kb", "../m.kb"), ("m.kb", ".hidden.kb"), ("m.kb", "a b.kb"),
    ("m.kb", "x" * 33 + ".kb"), ("m.kb", ".kb"), ("m.kb", "m.KB"),
])
def test_a_name_that_is_not_a_plain_kb_file_is_refused(given, name):
    with pytest.raises(deploy.KilobitError, match="a deployed model is a plain NAME.kb"):
        deploy.board_name(os.path.join("build", given), name)


def test_the_names_a_deploy_takes():
    assert deploy.board_name("build/banana.kb") == "banana.kb"
    assert deploy.board_name("build/main.py", "gesture.kb") == "gesture.kb"
    assert deploy.board_name("lib", "my_model-2.kb") == "my_model-2.kb"


def test_deploy_refuses_a_board_name_before_anything_runs(tmp_path):
    """Exit 2, `kilobit: error:`, nothing run: no tool needed, no port opened (the port given
    does not exist, and it is the name that is refused)."""
    model = train(tmp_path, "rkp")
    main_py = tmp_path / "main.py"
    main_py.write_bytes(model)
    for args, hint in (([str(main_py)], True), ([str(main_py), "--as", "lib"], False)):
        p = subprocess.run([sys.executable, "-m", "kilobit.cli", "deploy", "--board", "rp2040",
                            "--port", "socket://127.0.0.1:9"] + args, capture_output=True,
                           text=True, cwd=REPO, stdin=subprocess.DEVNULL, timeout=120)
        assert p.returncode == 2 and p.stdout == "", p.stdout + p.stderr
        assert p.stderr.startswith("kilobit: error: cannot store the model on the board as ")
        assert ("--as NAME.kb" in p.stderr) == hint and "Traceback" not in p.stderr
    p = subprocess.run([sys.executable, "-m", "kilobit.cli", "deploy", str(main_py), "--board",
                        "uno", "--as", "m.kb", "--dry-run"], capture_output=True, text=True,
                       cwd=REPO, stdin=subprocess.DEVNULL, timeout=120)
    assert p.returncode == 2 and "--as is for MicroPython boards" in p.stderr


def test_deploy_help_says_every_type_is_verified_and_how():
    p = subprocess.run([sys.executable, "-m", "kilobit.cli", "deploy", "--help"],
                       capture_output=True, text=True, cwd=REPO, timeout=120)
    text = " ".join(p.stdout.split())
    assert p.returncode == 0
    assert "a model of any type (%s)" % ", ".join(registry.NAMES) in text
    assert "checks its answers to a few inputs against the host integer reference's" in text
    assert "--as NAME.kb" in text
