"""`kilobit train assoc` and `kilobit eval` of an assoc file: the device's own learning rule on
the host, the figures of docs/benchmarks/assoc.md, and clear errors with nothing written."""
import subprocess
import sys

import numpy as np
import pytest

from kilobit.models.assoc.model import AssocInt


def kilobit(*args):
    p = subprocess.run([sys.executable, "-m", "kilobit.cli", *map(str, args)],
                       capture_output=True, text=True)
    return p.returncode, p.stdout, p.stderr


def accuracy(text):
    return float(text.strip().rsplit(" ", 1)[1])


def test_the_unos_pendigits_build_learns_what_the_benchmark_reports(tmp_path):
    """I-I, P = 1, k~ = 10 on pendigits-10 is the Uno build of docs/benchmarks/assoc.md, whose
    chip reaches 86.79% on the test split: the same rule, split and order give the same."""
    out = tmp_path / "m.kb"
    code, text, err = kilobit("train", "assoc", "--data", "pendigits-10", "--kt", 10, "-o", out)
    assert code == 0, err
    assert "memory 1745 B" in text and "cap=10" in text and "T=16" in text
    acc = accuracy(text)
    assert acc == pytest.approx(0.8679, abs=5e-5)
    code, text, err = kilobit("eval", out, "--data", "pendigits-10")
    assert code == 0, err
    assert accuracy(text) == acc  # the stored scaler, the same split


def test_more_anchors_reach_the_benchmarks_verdict(tmp_path):
    """k~ = 69 is the verdict's pendigits configuration (96.66% there, seeded differently):
    within half a point of it."""
    out = tmp_path / "m.kb"
    code, text, err = kilobit("train", "assoc", "--data", "pendigits-10", "--kt", 69, "-o", out)
    assert code == 0, err
    assert abs(accuracy(text) - 0.9666) < 0.005, text


def test_the_file_runs_on_kbit_as_on_the_host(tmp_path):
    from array import array

    from kbit.assoc import Assoc
    out = tmp_path / "m.kb"
    code, _, err = kilobit("train", "assoc", "--data", "pendigits-10", "--P", 2, "--kt", 4,
                           "--R", 2, "-o", out)
    assert code == 0, err
    blob = out.read_bytes()
    host, scaler = AssocInt.from_bytes(blob)
    dev = Assoc.load(blob)
    assert (dev.P, dev.d, dev.R) == (host.P, host.d, host.R) == (2, 8, 2)
    g = np.random.default_rng(3)
    u = array("b", bytes(16))
    for _ in range(200):
        v = [int(x) for x in g.integers(-128, 128, 16)]
        for j, x in enumerate(v):
            u[j] = x
        assert dev.predict(u) == host.predict(v)[0]
    # pendigits' features are integers: the file carries the integer quantizer (contract 1.1)
    assert scaler is not None and scaler.quant is not None and len(scaler.quant.lo_) == 16


@pytest.mark.parametrize("args,message", [
    (["--data", "banana", "--P", 3], "--P 3 does not divide the 2 features"),
    (["--data", "pendigits-10", "--cap", 5], "--cap 5 is smaller than the 10 classes"),
    (["--data", "pendigits-10", "--kt", 0], "argument --kt: 0 is out of range: 1 to 255"),
    (["--data", "pendigits-10", "--bits", 9], "argument --bits: 9 is out of range: 1 to 8"),
    (["--data", "no/such.csv"], "no such file no/such.csv"),
])
def test_bad_training_input_is_a_clear_error_and_writes_nothing(args, message, tmp_path):
    out = tmp_path / "m.kb"
    code, _, err = kilobit("train", "assoc", *args, "-o", out)
    assert code == 2 and "kilobit: error: " in err and message in err, err
    assert not out.exists()


def test_malformed_csv_and_wrong_width_at_eval(tmp_path):
    bad = tmp_path / "bad.csv"
    bad.write_text("1,2,0\n3,nan,1\n2,2,0\n")
    code, _, err = kilobit("train", "assoc", "--data", bad, "-o", tmp_path / "m.kb")
    assert code == 2 and "NaN" in err and not (tmp_path / "m.kb").exists()
    good = tmp_path / "good.csv"
    rows = ["%d,%d,%d" % (i % 7, (3 * i) % 5, i % 3) for i in range(60)]
    good.write_text("\n".join(rows) + "\n")
    code, text, err = kilobit("train", "assoc", "--data", good, "--kt", 2, "-o",
                              tmp_path / "m.kb")
    assert code == 0, err
    code, _, err = kilobit("eval", tmp_path / "m.kb", "--data", "pendigits-10")
    assert code == 2 and "pendigits-10 has 16 feature columns" in err, err
