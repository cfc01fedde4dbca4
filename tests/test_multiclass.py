"""Several classes for RKP and CKP (issue 28 item 4; docs/contract.md 3.6 and 6.8): one-vs-rest
on the host, in kbit and in C, the file's classes section and its refusals on every runtime,
training on multi-class data. Bit-exactness of the multi-class golden files on every runtime is
tests/test_golden.py's."""
import io
import struct

import numpy as np
import pytest

from conftest import need
from kilobit.cli import main
from kilobit.core import kbfile
from kilobit.core.errors import ModelFileError
from kilobit.core.rng import seed_state
from kilobit.models import learner, ovr
from kilobit.models.ckp import model as ckp
from kilobit.models.rkp import model as rkp
from kilobit.runtimes import RuntimeFailure
from kilobit.runtimes.catalog import get

RKP_ARGS = ("laplace", 3, 4, 6, -2)  # kernel bits dims budget width
CKP_ARGS = (4, 3, 60, 300)  # bits dims L width


def make(model, K, seed=5):
    if model == "rkp":
        return rkp.new_model(*RKP_ARGS, seed=seed, classes=K)
    return ckp.new_model(*CKP_ARGS, seed=seed, classes=K)


def trained(model, K, steps=200, seed=5):
    m = make(model, K, seed)
    bits, dims = m.bits, m.dims
    for op, y, codes in learner.make_steps(bits, dims, steps, seed, K):
        if op == "L":
            m.learn(codes, y)
    return m


# ---- host: the reference ----

@pytest.mark.parametrize("model", ["rkp", "ckp"])
def test_two_classes_are_the_binary_learner_and_its_file(model):
    two = make(model, 2)
    one = rkp.RKPInt(*RKP_ARGS, seed=5) if model == "rkp" else ckp.CKPInt(*CKP_ARGS, seed=5)
    assert type(two) is type(one) and two.to_bytes() == one.to_bytes()
    assert not two.to_bytes()[12] & 0x80


@pytest.mark.parametrize("model", ["rkp", "ckp"])
def test_each_learner_learns_its_class_against_the_rest(model):
    K = 4
    m = trained(model, K)
    assert [x.rng.state for x in make(model, K).learners] == [seed_state(5 + k) for k in range(K)]
    ref = [make(model, 2, ovr.learner_seed(5, k)) for k in range(K)]
    for op, y, codes in learner.make_steps(m.bits, m.dims, 200, 5, K):
        if op == "L":
            for k, r in enumerate(ref):
                r.learn(codes, int(y == k))
    assert [x.memory() for x in m.learners] == [r.memory() for r in ref]
    assert m.memory() == b"".join(r.memory() for r in ref)
    assert m.count == sum(r.count for r in ref) > K
    u = [1, 2, 3][:m.dims] + [0] * (m.dims - 3)
    scores = [r.score(u) for r in ref]
    assert m.score(u) == max(scores) and m.predict_class(u) == scores.index(max(scores))


def test_a_tie_predicts_the_lowest_class():
    assert ovr.OneVsRest.best([3, 7, 7, 1]) == (1, 7)
    assert ovr.OneVsRest.best([0, 0, 0]) == (0, 0)
    assert list(ovr.predict(np.array([[1, 5, 5], [2, 2, 0]]))) == [1, 0]


@pytest.mark.parametrize("model", ["rkp", "ckp"])
def test_the_file_round_trips_with_labels(model):
    m = trained(model, 5)
    ex = kbfile.Extras(labels=("a", "b", "c", "d", "e"))
    blob = m.to_bytes(ex)
    cls = rkp.RKPInt if model == "rkp" else ckp.CKPInt
    back, extras = cls.from_bytes(blob)
    assert isinstance(back, ovr.OneVsRest) and back.classes == 5
    assert back.to_bytes(extras) == blob and extras.labels == ex.labels
    assert [x.rng.state for x in back.learners] == [x.rng.state for x in m.learners]


def test_a_label_out_of_range_changes_nothing():
    m = trained("rkp", 3)
    before = m.to_bytes()
    for y in (3, -1, 255):
        with pytest.raises(ValueError, match="class id in 0..2"):
            m.learn([0, 1, 2, 3], y)
    assert m.to_bytes() == before


def _payload(blob):
    return bytearray(blob[12:-4])


def _file(name, payload):
    return kbfile.pack(name, bytes(payload))


def bad_files(model):
    """{case: model file} of broken multi-class files (the CRC right, the content wrong)."""
    m = trained(model, 3)
    name, nparams, nstate = ("rkp", 13, 4) if model == "rkp" else ("ckp", 17, 8)
    p = _payload(m.to_bytes())
    out = {}
    for K in (0, 1, 2):
        q = bytearray(p)
        q[nparams] = K
        out["K=%d" % K] = _file(name, q)
    q = bytearray(p)  # learner 2's count past the budget
    struct.pack_into("<H", q, nparams + 1 + nstate + 2, 0xFFFF)
    out["count"] = _file(name, q)
    q = bytearray(p)  # learner 1's generator state 0
    struct.pack_into("<H", q, nparams + 1, 0)
    out["rng"] = _file(name, q)
    nmem = len(m.learners[0].memory())
    out["one memory short"] = _file(name, p[:-1 - nmem] + p[-1:])
    out["one memory more"] = _file(name, p[:-1] + bytes(nmem) + p[-1:])
    q = bytearray(p)
    q[nparams] = 4  # four classes claimed, three stored
    out["K too large"] = _file(name, q)
    return out


@pytest.mark.parametrize("runtime", ["host", "kbit-cpython", "c-host"])
@pytest.mark.parametrize("model", ["rkp", "ckp"])
def test_every_runtime_refuses_a_bad_classes_section(model, runtime):
    rt = get(runtime)
    need(rt.missing())
    cls = rkp.RKPInt if model == "rkp" else ckp.CKPInt
    for case, blob in bad_files(model).items():
        with pytest.raises(ModelFileError):
            cls.from_bytes(blob)
        with pytest.raises(RuntimeFailure):
            rt.replay(blob, [("Q", None, [0] * (4 if model == "rkp" else 3))])
            pytest.fail("%s took a file with a bad classes section: %s" % (runtime, case))


# ---- kbit ----

@pytest.mark.parametrize("model", ["rkp", "ckp"])
def test_kbit_new_with_classes_is_the_hosts_model(model):
    from kbit.ckp import CKP
    from kbit.rkp import RKP
    if model == "rkp":
        m = RKP.new(*RKP_ARGS, seed=9, classes=6)
    else:
        m = CKP.new(*CKP_ARGS, seed=9, classes=6)
    f = io.BytesIO()
    m.save(f)
    assert f.getvalue() == make(model, 6, seed=9).to_bytes()
    two = RKP.new(*RKP_ARGS, seed=9) if model == "rkp" else CKP.new(*CKP_ARGS, seed=9)
    assert type(two).__name__ == model.upper()


@pytest.mark.parametrize("model", ["rkp", "ckp"])
def test_kbit_learns_labels_like_the_host_and_saves_them(model):
    import kbit
    host = trained(model, 3)
    blob = host.to_bytes(kbfile.Extras(labels=("walk", "run", "sit")))
    m = kbit.load(blob)
    assert m.classes == 3 and m.names == ("walk", "run", "sit")
    u = bytearray([1, 2, 3, 0][:m.dims])
    s = m.learn(u, "sit")
    hs, mistake = host.learn(list(u), 2)
    assert s == hs and m.mistake == mistake and m.count == host.count
    assert m.predict(u) == ("walk", "run", "sit")[host.predict_class(list(u))]
    before = bytes(m.memory)
    for bad in ("jump", 3, 1.0):
        with pytest.raises((ValueError, TypeError)):
            m.learn(u, bad)
    with pytest.raises(ValueError):
        m.learn(bytearray([0] * (m.dims + 1)), 0)
    assert bytes(m.memory) == before
    f = io.BytesIO()
    m.save(f)
    assert f.getvalue() == host.to_bytes(kbfile.Extras(labels=("walk", "run", "sit")))


# ---- training ----

def _csv(path, K=3, n=240, seed=1):
    g = np.random.default_rng(seed)
    rows = []
    for i in range(n):
        y = i % K
        x = g.normal(loc=[y, 2 * (y % 2), -y], scale=0.35)
        rows.append(",".join("%.3f" % v for v in x) + ",c%d" % y)
    path.write_text("\n".join(rows) + "\n")
    return str(path)


@pytest.mark.parametrize("model,args", [
    ("rkp", ["--bits", "4", "--budget", "8", "--width", "-2"]),
    ("ckp", ["--bits", "4", "--L", "80", "--A", "0.3"]),
])
def test_train_on_three_classes_writes_a_one_vs_rest_file(tmp_path, capsys, model, args):
    data = _csv(tmp_path / "three.csv")
    out = str(tmp_path / "m.kb")
    assert main(["train", model, "--data", data, "--quiet", "-o", out] + args) == 0
    text = capsys.readouterr().out
    assert "3 classes one-vs-rest" in text
    acc = float(text.split("test accuracy (integer model)")[1].split()[0])
    assert acc > 0.8  # three well-separated clusters; a binary learner could not pass 2/3
    cls = rkp.RKPInt if model == "rkp" else ckp.CKPInt
    with open(out, "rb") as f:
        m, extras = cls.from_bytes(f.read())
    assert m.classes == 3 and extras.labels == ("c0", "c1", "c2")
    assert main(["eval", out, "--data", data]) == 0
    assert "accuracy %.4f" % acc in capsys.readouterr().out


# ---- the benchmark ----

def test_bench_multiclass_quick_holds_rkp_and_ckp_to_assoc_s_bytes(tmp_path):
    from kilobit.bench import multiclass
    out = str(tmp_path / "multiclass.md")
    rows = multiclass.run(out=out, quick=True, progress=None)
    assert [r[0] for r in rows] == list(multiclass.SETS)
    for name, _kt, nb, acc_a, T, nb_r, acc_r, L, nb_c, _svs, acc_c in rows:
        K = {"pendigits-10": 10, "letter-26": 26}[name]
        assert T >= 1 and nb_r <= nb and nb_c <= nb
        # the largest budget that fits: one more support vector a learner would not
        assert K * rkp.mem_bytes(T + 1, 16, multiclass.RKP_BITS) > nb
        assert nb - nb_c < K and L == 8 * (nb // K)
        for acc in (acc_a, acc_r, acc_c):
            assert 1.0 / 26 < acc <= 1.0  # better than chance on 26 classes
    with open(out) as f:
        page = f.read()
    accuracy = page.split("## On the Uno")[0]  # the Uno's fit table names the data sets too
    assert accuracy.count("| pendigits-10 | 10 |") == 1 and "smoke run" in page
