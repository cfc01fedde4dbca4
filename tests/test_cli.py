"""The command line: the README's commands, and clear errors with nothing half-written."""
import os
import subprocess
import sys

import pytest

from kilobit.cli import main
from kilobit.models.rkp.model import RKPInt


def run(*args):
    p = subprocess.run([sys.executable, "-m", "kilobit.cli", *args], capture_output=True,
                       text=True)
    return p.returncode, p.stdout, p.stderr


def test_train_then_eval_banana(tmp_path, capsys):
    out = str(tmp_path / "m.kb")
    assert main(["train", "rkp", "--data", "banana", "--bits", "4", "--budget", "62",
                 "--width", "-6", "--seed", "0", "-o", out]) == 0
    text = capsys.readouterr().out
    assert "memory 70 B" in text
    m, scaler = RKPInt.from_bytes(open(out, "rb").read())
    assert (m.bits, m.budget, m.width, m.count) == (4, 62, -6, 62) and scaler is not None
    train_acc = float(text.rsplit(" ", 1)[1])
    assert main(["eval", out, "--data", "banana", "--seed", "0"]) == 0
    eval_acc = float(capsys.readouterr().out.rsplit(" ", 1)[1])
    assert eval_acc == train_acc  # eval re-derives the same split and uses the stored scaler


def _write(path, text):
    path.write_text(text)
    return str(path)


@pytest.mark.parametrize("body,message", [
    ("1,2,0\n3,x,1\n", "row 2"),
    ("1,2,0\n3,4\n", "column"),
    ("1,nan,0\n3,4,1\n2,2,0\n", "NaN"),
    ("1,2,0\n", "rows"),
    ("", "empty"),
])
def test_train_refuses_bad_csv_and_writes_nothing(tmp_path, body, message):
    csv = _write(tmp_path / "bad.csv", body)
    out = tmp_path / "m.kb"
    code, _, err = run("train", "rkp", "--data", csv, "-o", str(out))
    assert code == 2
    assert err.startswith("kilobit: error:") and message.lower() in err.lower(), err
    assert not out.exists() and os.listdir(tmp_path) == ["bad.csv"]


def test_train_refuses_impossible_parameters(tmp_path):
    out = tmp_path / "m.kb"
    code, _, err = run("train", "rkp", "--data", "checkerboard", "--bits", "9", "-o", str(out))
    assert code == 2 and "bits" in err and not out.exists()


def test_eval_refuses_foreign_corrupt_and_mismatched_models(tmp_path):
    foreign = _write(tmp_path / "f.kb", "hello, not a model")
    code, _, err = run("eval", foreign, "--data", "banana")
    assert code == 2 and "not a kilobit model file" in err
    good = str(tmp_path / "m.kb")
    assert run("train", "rkp", "--data", "checkerboard", "-o", good)[0] == 0
    blob = bytearray(open(good, "rb").read())
    blob[20] ^= 0xFF
    corrupt = tmp_path / "c.kb"
    corrupt.write_bytes(bytes(blob))
    code, _, err = run("eval", str(corrupt), "--data", "checkerboard")
    assert code == 2 and "CRC" in err
    code, _, err = run("eval", good, "--data", "pendigits")
    assert code == 2 and "pendigits has 16 feature columns, the model" in err \
        and err.rstrip().endswith("expects 2")  # the one wording of a dimension mismatch
    code, _, err = run("eval", str(tmp_path / "missing.kb"), "--data", "banana")
    assert code == 2 and "cannot read" in err


def test_demo_runs_the_main_job_on_every_runtime(tmp_path, capsys):
    """README's first command: train on the host, then every device runtime keeps learning and
    makes the host's predictions exactly (toolchains missing fail under CI=true)."""
    from conftest import need
    from kilobit.cli import DEMO_RUNTIMES
    from kilobit.runtimes import catalog as rt

    for name in DEMO_RUNTIMES:
        need(rt.get(name).missing())
    assert main(["demo", "-o", str(tmp_path / "demo.kb")]) == 0
    out = capsys.readouterr().out
    assert "demo passed" in out
    for name in DEMO_RUNTIMES[1:]:
        assert ("%-18s" % name) in out
        assert out.count("bit-exact with host") == len(DEMO_RUNTIMES) - 1
    assert (tmp_path / "demo.kb").exists()


def test_bench_quiet_says_only_where_the_page_went(tmp_path, capsys):
    """`kilobit bench NAME --quiet`: no progress lines, the one line of where the page went."""
    out = tmp_path / "export.md"
    assert main(["bench", "export", "--quiet", "-o", str(out)]) == 0
    assert capsys.readouterr().out == "wrote %s\n" % out
    assert out.read_text().startswith("# ")
