"""Issue 28's board toolkit on the emulated Pico (tools/pico under rp2040js, kbit as armv6m .mpy
with its armv6m native modules, as `kilobit deploy` installs it): one script loads a model of each
of the five types with kbit.load, turns raw int16 accelerometer readings into codes with
m.quantize (the model file's own integer quantizer) and predicts; every answer, the user's label
included, equals the host's."""

import numpy as np
import pytest

from conftest import need
from kilobit.cli import main
from kilobit.models import registry
from kilobit.runtimes.micropython import natmod, rp2040_sim

GESTURES = ("idle", "walk", "run")
N_ROWS = 12  # readings predicted per model on the Pico

SCRIPT = r'''
import sys
from array import array
import kbit

names = sys.argv[1].split(",")
raw = array("h", bytes(6))
for line in open("/rows.txt"):
    f = line.split()
    if not f:
        continue
    for j in range(3):
        raw[j] = int(f[j])
    out = []
    for name in names:
        m = kbit.load("/%s.kb" % name)
        codes = m.quantize(raw)
        out.append("%s=%s" % (name, m.predict(codes)))
    print(" ".join(out))
print("native", " ".join("%s=%d" % (n, kbit.load("/%s.kb" % n).native) for n in names))
'''


def _readings(n, seed):
    """3-axis int16 readings of three gestures (centres and spread as an accelerometer's raw
    counts), labelled."""
    g = np.random.default_rng(seed)
    rows = []
    for i in range(n):
        c = i % 3
        x = np.clip(g.normal([c * 4000 - 4000, 2000 - c * 1500, 8000 + c * 900], 1500),
                    -32768, 32767).astype(int)
        rows.append([int(v) for v in x] + [GESTURES[c]])
    return rows


def _csv(path, rows):
    path.write_text("ax,ay,az,gesture\n" + "".join(",".join(map(str, r)) + "\n" for r in rows))


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    """One model of each type trained on the readings (rkp and ckp on two of the gestures)."""
    tmp = tmp_path_factory.mktemp("repl")
    three, two = tmp / "three.csv", tmp / "two.csv"
    rows = _readings(450, 7)
    _csv(three, rows)
    _csv(two, [r for r in rows if r[3] != "run"])
    args = {"rkp": ["--budget", "24"], "ckp": [], "bonsai": ["--epochs", "2,3,2"],
            "protonn": [], "assoc": []}
    out = {}
    for spec in registry.REGISTRY:
        path = tmp / ("%s.kb" % spec.name)
        data = two if spec.kind == "learner" else three
        assert main(["train", spec.name, "--data", str(data), "--quiet", "-o", str(path)]
                    + args[spec.name]) == 0
        out[spec.name] = path
    return tmp, out


def _host_answers(blob, rows):
    """The host's answer for each raw row: the file's integer quantizer, the integer reference,
    the file's label of the class."""
    spec = registry.of_file(blob)
    m, extras = spec.load(blob)
    X = np.array(rows, dtype=np.float64)
    U = spec.inputs(m, extras.quant.transform(X))
    from kilobit.runtimes.host import HostRuntime
    steps = [("P" if spec.kind == "predictor" else "Q", None, [int(c) for c in u]) for u in U]
    from kilobit.runtimes.base import PREDICTION
    ids = [int(r[PREDICTION[spec.kind]]) for r in HostRuntime().replay(blob, steps)]
    return [str(extras.label(i)) for i in ids]


def test_every_model_type_from_raw_readings_on_the_emulated_pico(models):
    need(rp2040_sim.missing() or natmod.missing("armv6m"))
    tmp, paths = models
    rows = [r[:3] for r in _readings(N_ROWS, 99)]
    rows[0] = [-32768, -32768, -32768]  # the extremes of an int16 reading
    rows[1] = [32767, 32767, 32767]
    (tmp / "rows.txt").write_text("".join(" ".join(map(str, r)) + "\n" for r in rows))
    script = tmp / "repl.py"
    script.write_text(SCRIPT)
    names = [s.name for s in registry.REGISTRY]
    files = [("/%s.kb" % n, str(paths[n])) for n in names] + [("/rows.txt",
                                                                str(tmp / "rows.txt"))]
    p = rp2040_sim.run([str(script), ",".join(names)], files=files + natmod.files("armv6m"))
    assert p.returncode == 0, p.stderr[-2000:]
    lines = p.stdout.splitlines()
    native = dict(kv.split("=") for kv in lines[-1].split()[1:])
    assert native == {n: "1" for n in names}, lines[-1]  # every model on its native kernel
    got = [dict(kv.split("=", 1) for kv in line.split()) for line in lines[:-1] if "=" in line]
    assert len(got) == len(rows), p.stdout
    for n in names:
        want = _host_answers(paths[n].read_bytes(), rows)
        assert [g[n] for g in got] == want, n
        assert set(want) <= set(GESTURES), (n, want)  # the user's labels, not class ids
    # the models answer more than one gesture: the comparison is not of constant outputs
    assert len({g["protonn"] for g in got}) >= 2
