"""A model's window pipeline (contract 12.1, trailer bit 3): trained from windows of raw
readings, recorded in the model file, followed by eval, predict, the C tools and kbit's Window
(CPython and MicroPython, under heap_lock), refused alike everywhere when it is bad."""
import csv
import os
import subprocess
import sys

import numpy as np
import pytest

from kilobit.core import kbfile
from kilobit.core.errors import DataError
from kilobit.core.features import Spec
from kilobit.core.paths import REPO
from kilobit.core.pipeline import Pipeline

KBIT = os.path.join(REPO, "device")
NAMES = ("still", "shake", "wave")
N, A = 64, 3


def windows(seed=7, per_class=40, n=N, axes=A):
    """Seeded int16 windows of three classes: noise around a resting value, fast large
    oscillation, slow oscillation (each axis its own phase), with their labels."""
    rng = np.random.default_rng(seed)
    t = np.arange(n)
    rows, labels = [], []
    for k, name in enumerate(NAMES):
        for _ in range(per_class):
            w = np.empty((n, axes))
            for a in range(axes):
                base = rng.integers(-2000, 2000)
                noise = rng.normal(0, 40, n)
                if k == 0:
                    sig = 0
                elif k == 1:
                    sig = rng.uniform(3000, 8000) * np.sin(2 * np.pi * rng.uniform(10, 14) * t / n
                                                          + rng.uniform(0, 6))
                else:
                    sig = rng.uniform(3000, 8000) * np.sin(2 * np.pi * rng.uniform(1, 3) * t / n
                                                          + rng.uniform(0, 6))
                w[:, a] = base + sig + noise
            rows.append(np.clip(np.round(w), -32768, 32767).astype(int).reshape(-1))
            labels.append(name)
    return np.array(rows), labels


def write_csv(path, rows, labels=None):
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        for i, r in enumerate(rows):
            w.writerow(list(r) + ([labels[i]] if labels is not None else []))


def kilobit(*args):
    return subprocess.run([sys.executable, "-m", "kilobit.cli"] + [str(a) for a in args],
                          capture_output=True, text=True)


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    d = tmp_path_factory.mktemp("pipe")
    rows, labels = windows()
    data = d / "win.csv"
    write_csv(data, rows, labels)
    model = d / "m.kb"
    r = kilobit("train", "rkp", "--data", data, "--window", N, "--axes", A, "--features",
                "mean,mad,energy,fft32:4", "--quiet", "-o", model)
    assert r.returncode == 0, r.stderr
    return d, data, model, rows, labels


def test_pipeline_pack_round_trip_and_refusals():
    p = Pipeline(100, 3, Spec.parse("time,fft64:8"))
    assert p.inputs == 3 * 15 and p.width == 300
    assert Pipeline.unpack(p.pack(), 45) == p
    for fields in [(0, 3, 0x7F, 0, 0), (257, 3, 0x7F, 0, 0), (100, 0, 0x7F, 0, 0),
                   (100, 17, 0x7F, 0, 0), (100, 3, 0x80, 0, 0), (100, 3, 0, 0, 0),
                   (100, 3, 0x7F, 4, 2), (100, 3, 0x7F, 7, 4),  # P=128 > N=100
                   (100, 3, 0x7F, 6, 3), (100, 3, 0x7F, 6, 64), (100, 3, 0x7F, 0, 2)]:
        b = bytes([fields[0] & 0xFF, fields[0] >> 8]) + bytes(fields[1:])
        with pytest.raises(ValueError):
            Pipeline.unpack(b)
    with pytest.raises(ValueError):
        Pipeline.unpack(p.pack(), 44)  # the model's inputs are not the pipeline's
    with pytest.raises(DataError):
        Pipeline(32, 3, "fft64:4")


def test_train_records_the_pipeline_and_eval_predict_follow_it(trained):
    d, data, model, rows, labels = trained
    from kilobit.models import registry
    spec, blob = registry.read(str(model))
    _, extras = spec.load(blob)
    assert extras.pipeline == Pipeline(N, A, "mean,mad,energy,fft32:4")
    assert extras.quant is not None and extras.labels == tuple(sorted(NAMES))
    r = kilobit("eval", model, "--data", data)
    assert r.returncode == 0, r.stderr
    acc = float(r.stdout.split("accuracy")[1])
    assert acc >= 0.9, r.stdout  # three well-separated classes
    # every row of the CSV, with labels and without
    r = kilobit("predict", model, "--data", data)
    assert r.returncode == 0, r.stderr
    got = [line.split(",")[0] for line in r.stdout.splitlines()[1:len(rows) + 1]]
    assert len(got) == len(rows) and set(got) <= set(NAMES)
    bare = d / "bare.csv"
    write_csv(bare, rows)
    r2 = kilobit("predict", model, "--data", bare)
    assert r2.returncode == 0, r2.stderr
    assert [line.split(",")[0] for line in r2.stdout.splitlines()[1:len(rows) + 1]] == got


def test_bad_windows_are_refused_cleanly(trained, tmp_path):
    d, data, model, rows, labels = trained
    short = tmp_path / "short.csv"
    write_csv(short, rows[:, :-3], labels)  # one sample short of a window
    r = kilobit("predict", model, "--data", short)
    assert r.returncode == 2 and r.stderr.startswith("kilobit: error:") and \
        "window of 192 readings" in r.stderr, r.stderr
    big = tmp_path / "big.csv"
    write_csv(big, np.where(np.arange(rows.shape[1]) == 5, 40000, rows), labels)
    r = kilobit("predict", model, "--data", big)
    assert r.returncode == 2 and "int16" in r.stderr, r.stderr
    for args, said in [(["--axes", "3"], "--window"),
                       (["--window", "64", "--features", "fft"], "fftP"),
                       (["--window", "64", "--features", "mean,fast"], "feature"),
                       (["--window", "64", "--axes", "3", "--features", "fft128:4"], "128"),
                       (["--window", "50", "--axes", "3"], "window")]:
        out = tmp_path / "x.kb"
        r = kilobit("train", "rkp", "--data", data, "--quiet", "-o", out, *args)
        assert r.returncode == 2 and r.stderr.startswith("kilobit: error:") and said in r.stderr, \
            (args, r.stderr)
        assert not out.exists()


def corrupt(blob, edit):
    """The model file with its last trailer bytes edited (edit(payload) -> payload), resealed."""
    name, pl = kbfile.unpack(blob)
    return kbfile.pack(name, edit(bytearray(pl)))


def test_a_bad_pipeline_is_refused_by_host_kbit_and_c(trained, tmp_path):
    from kilobit.core.errors import ModelFileError
    from kilobit.runtimes.catalog import get
    d, data, model, rows, labels = trained
    blob = model.read_bytes()
    sys.path.insert(0, KBIT)
    try:
        import kbit
        from kbit.kbfile import ModelFileError as KbitError
        from kilobit.models import registry
        spec = registry.get("rkp")
        for edit in (lambda p: p[:-4] + bytes([4]) + p[-3:],     # A * F is not the dims
                     lambda p: p[:-2] + bytes([7, 4]),             # P = 128 > N = 64
                     lambda p: p[:-1],                             # a byte short
                     lambda p: p + b"\0"):                         # a byte over
            bad = corrupt(blob, edit)
            with pytest.raises(ModelFileError, match="bad rkp trailer"):
                spec.load(bad)
            with pytest.raises(KbitError, match="bad rkp trailer"):
                kbit.load(bad)
            with pytest.raises(Exception, match="bad rkp trailer"):
                get("c-host").replay(bad, [("Q", None, [0] * 21)])
    finally:
        sys.path.remove(KBIT)


def test_kbit_window_answers_as_the_host_and_learns(trained):
    """kbit.pipeline.Window on CPython: every window's label is the host's prediction, the model
    saves back to the same bytes, and learn() takes a window and a label."""
    d, data, model, rows, labels = trained
    from array import array
    r = kilobit("predict", model, "--data", data)
    host = [line.split(",")[0] for line in r.stdout.splitlines()[1:len(rows) + 1]]
    sys.path.insert(0, KBIT)
    try:
        import io

        import kbit
        from kbit.pipeline import Window
        m = kbit.load(str(model))
        assert m.pipeline == (N, A, 0b10011, 5, 4)
        w = Window(m)
        assert [w.predict(array("h", r)) for r in rows] == host
        out = io.BytesIO()
        m.save(out)
        assert out.getvalue() == model.read_bytes()
        before = m.count
        for r, y in zip(rows[:30], labels[:30]):
            w.learn(array("h", r), y)
        assert m.count >= before
        with pytest.raises(ValueError):
            w.predict(array("h", rows[0][:-1]))
        from kbit.rkp import RKP
        plain = RKP.new("laplace", 4, 3, 8, -2)
        with pytest.raises(ValueError, match="--window"):
            Window(plain)
    finally:
        sys.path.remove(KBIT)


@pytest.mark.parametrize("runtime", ["host", "kbit-cpython", "c-host", "kbit-unix",
                                     "kbit-unix-bytecode"])
def test_golden_from_windows_replays_on_runtimes(trained, tmp_path_factory, runtime):
    """`golden make --model` of a pipeline model keeps the windows as its raw rows; each runtime
    computes their features and codes itself (kbit under heap_lock on MicroPython)."""
    from conftest import need
    from kilobit import golden
    from kilobit.runtimes.catalog import get
    d, data, model, rows, labels = trained
    g = d / "g.json"
    if not g.exists():
        r = kilobit("golden", "make", "--model", model, "--data", data, "--steps", "60", "-o", g)
        assert r.returncode == 0, r.stderr
    doc = golden.load(str(g))
    assert len(doc["raw"]) == 60 and all(len(row) == N * A for row in doc["raw"])
    rt = get(runtime)
    need(rt.missing())
    r = kilobit("golden", "check", g, "--runtime", runtime)
    assert r.returncode == 0 and "quantized from raw" in r.stdout, r.stdout + r.stderr


def test_export_header_goes_from_a_window_to_the_inputs(trained, tmp_path):
    """kilobit export of a model trained on windows gives NAME_window (kb_features_extract,
    then the integer quantizer): the same inputs as the host's for every window, built with
    warnings as errors (the export itself builds it for the Uno too)."""
    import shutil

    from conftest import need
    from kilobit.runtimes.host import HostRuntime
    need(None if shutil.which("gcc") else "gcc")
    need(None if shutil.which("avr-gcc") else "avr-gcc (kilobit export builds for the Uno)")
    d, data, model, rows, labels = trained
    pn = tmp_path / "pn.kb"
    r = kilobit("train", "protonn", "--data", data, "--window", N, "--axes", A, "--features",
                "mad,max,cross,fft64:8", "--quiet", "-o", pn)
    assert r.returncode == 0, r.stderr
    r = kilobit("export", pn, "--name", "act", "-o", tmp_path / "act.h")
    assert r.returncode == 0, r.stderr
    src = tmp_path / "t.c"
    src.write_text("""#include <stdio.h>
#include "act.h"
int main(void)
{
    int16_t w[ACT_WINDOW_READINGS];
    uint8_t codes[ACT_DIMS];
    long v;
    int i;
    for (;;) {
        for (i = 0; i < ACT_WINDOW_READINGS; i++) {
            if (scanf("%ld", &v) != 1)
                return 0;
            w[i] = (int16_t)v;
        }
        if (act_window(w, codes) != KB_OK)
            return 1;
        for (i = 0; i < ACT_DIMS; i++)
            printf("%d ", codes[i]);
        printf("\\n");
    }
}
""")
    exe = tmp_path / "t"
    subprocess.run(["gcc", "-std=c99", "-Wall", "-Wextra", "-Werror", "-I", str(tmp_path),
                    "-o", str(exe), str(src)], check=True)
    picked = rows[::7]
    out = subprocess.run([str(exe)], input="\n".join(" ".join(map(str, r)) for r in picked),
                         capture_output=True, text=True, check=True).stdout
    got = [[int(c) for c in line.split()] for line in out.splitlines()]
    assert got == HostRuntime().quantize_rows(pn.read_bytes(), picked.tolist())


def test_stream_feeds_a_pipeline_models_windows_to_the_simulated_uno(trained, tmp_path):
    """kilobit stream of a model trained on windows: the host turns each CSV window into the
    model's codes, the Uno learns from them, and every frame agrees with the host (exit 0)."""
    from test_boards import need_avr
    need_avr()
    d, data, model, rows, labels = trained
    two = tmp_path / "two.csv"
    keep = [i for i, y in enumerate(labels) if y != "shake"]
    write_csv(two, rows[keep], [labels[i] for i in keep])
    b = tmp_path / "b.kb"
    r = kilobit("train", "rkp", "--data", two, "--window", N, "--axes", A, "--features",
                "mad,energy,fft32:2", "--budget", 16, "--quiet", "-o", b)
    assert r.returncode == 0, r.stderr
    r = kilobit("stream", "--board", "uno", "--port", "sim", "--model", b, "--data", two,
                "--limit", 30)
    assert r.returncode == 0 and "agree" in r.stdout, r.stdout + r.stderr
