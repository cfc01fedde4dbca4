"""kbit checkpoints under power cuts (device/kbit/checkpoint.py, issues 15 and 28): the device's
own test file on real MicroPython (the WebAssembly build and the unix port) with its cut-point
counts, and under CPython a cut at every write of the first save and of a later one for an rkp, a
ckp and an assoc learner, each restart then going on bit for bit with the host integer reference
from the state it came back to; the predictors (bonsai, protonn) refused before anything is
written."""
import os
import re

import pytest

from conftest import need
from kbit import test_checkpoint as T
from kbit.checkpoint import Checkpoint
from kilobit.models import registry
from kilobit.runtimes.micropython import kbit_unix, kbit_wasm

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPT = os.path.join(HERE, "..", "device", "kbit", "test_checkpoint.py")


@pytest.mark.parametrize("where", ["wasm", "unix"])
def test_the_device_test_passes_on_micropython(where):
    need(kbit_wasm.missing_wasm() if where == "wasm" else kbit_unix.missing())
    run = kbit_wasm.run if where == "wasm" else kbit_unix.run
    p = run([SCRIPT], timeout=300)
    assert p.returncode == 0, p.stderr
    m = re.search(r"kbit checkpoint: (\d+) tests passed; power cuts tried (\d+), recovered (\d+); "
                  r"in the first save tried (\d+), recovered (\d+)", p.stdout)
    assert m, p.stdout + p.stderr
    assert int(m.group(1)) >= 10 and int(m.group(2)) == int(m.group(3)) >= 6
    assert int(m.group(4)) == int(m.group(5)) >= 6


def _learners():
    from array import array

    from kilobit.models.assoc.model import AssocInt
    from kilobit.models.ckp.model import CKPInt
    from kilobit.models.rkp.model import RKPInt
    rkp = RKPInt("laplace", 4, 2, 6, 0, 255, seed=3).to_bytes()
    ckp = CKPInt(6, 2, 200, 100, 255, seed=3).to_bytes()
    assoc = AssocInt("I-I", 4, 2, 2, 3, 2, 1, seed=3).to_bytes()

    def codes(i, top):
        return bytearray(((i * 7) % (top + 1), (i * 13 + 5) % (top + 1)))

    def values(i):
        return array("b", [((i * k * 5) % 16) - 8 for k in range(1, 5)])

    return {
        "rkp": (rkp, lambda i: (codes(i, 15), (i * 3) % 2)),
        "ckp": (ckp, lambda i: (codes(i, 63), (i * 5) % 2)),
        "assoc": (assoc, lambda i: (values(i), [3, 9, 200][i % 3])),
    }


def _host_step(m, x, y):
    if hasattr(m, "anchors_stored"):  # assoc: (prediction, count)
        return m.learn([int(v) for v in x], y)[0]
    s, _ = m.learn(list(x), y)
    return s


@pytest.mark.parametrize("first", [True, False], ids=["first-save", "later-save"])
@pytest.mark.parametrize("name", ["rkp", "ckp", "assoc"])
def test_a_power_cut_at_every_write_then_the_host_reference(name, first):
    """The first save (nothing saved yet: the restart comes back with the deployed model,
    `initial`, through Checkpoint(None, ...)) or a save after a complete one (Checkpoint(cls,
    ...))."""
    blob, example = _learners()[name]
    spec = registry.get(name)
    cls = spec.kbit_class()
    kind = None if first else cls

    def learnt(n0, n1):
        m = cls.load(blob)
        for i in range(n0, n1):
            m.learn(*example(i))
        return m

    def saved(m):
        w = T.FakeFS()
        Checkpoint(cls, "/s.kb", fs=w).save(m)
        return bytes(w.files["/s.kb"])

    a, b = (cls.load(blob) if first else learnt(0, 3)), learnt(0, 20)
    assert saved(a) != saved(b)

    def deployed(fs):
        fs.files["/deployed.kb"] = bytearray(blob)
        if not first:
            Checkpoint(kind, "/m.kb", fs=fs).save(a)

    whole = T.FakeFS()
    deployed(whole)
    start = whole.ops
    Checkpoint(kind, "/m.kb", fs=whole).save(b)
    tried = 0
    for cut in range(start, whole.ops + 1):
        fs = T.FakeFS(cut)
        deployed(fs)
        try:
            Checkpoint(kind, "/m.kb", fs=fs).save(b)
        except T.PowerCut:
            pass
        m = Checkpoint(kind, "/m.kb", fs=fs.restart(), initial="/deployed.kb").load()
        assert type(m) is cls
        state = saved(m)
        assert state in (saved(a), saved(b)), (name, cut)
        host, _ = spec.load(state)  # the host reference from the state the board came back to
        for i in range(20, 32):
            x, y = example(i)
            assert m.learn(x, y) == _host_step(host, x, y), (name, cut, i)
        tried += 1
    assert tried == whole.ops - start + 1 >= 6


def _golden_model(prefix):
    import glob

    from kilobit.core import goldenfile
    path = sorted(glob.glob(os.path.join(HERE, "golden", prefix + "-*.json")))[0]
    return bytes.fromhex(goldenfile.load(path)["model_file"])


@pytest.mark.parametrize("name", ["protonn", "bonsai"])
def test_a_predictor_is_refused_before_anything_is_written(name):
    """Issue 28: Checkpoint(ProtoNN, path).save(m) left an empty PATH.new."""
    blob = _golden_model(name)
    cls = registry.get(name).kbit_class()
    m = cls.load(blob)
    fs = T.FakeFS()
    with pytest.raises(TypeError, match="%s is not a learner" % cls.__name__):
        Checkpoint(cls, "/m.kb", fs=fs)
    with pytest.raises(TypeError, match="%s is not a learner" % cls.__name__):
        Checkpoint(None, "/m.kb", fs=fs).save(m)
    assert fs.files == {}
    # a predictor's file where a checkpoint should be is not taken for one
    fs.files["/m.kb"] = bytearray(blob)
    with pytest.raises(ValueError, match="^/m.kb: a %s learns nothing" % cls.__name__):
        Checkpoint(None, "/m.kb", fs=fs).load()
    fs.files["/m.kb.new"] = bytearray(blob)  # ignored, as a torn one is
    with pytest.raises(ValueError, match="^/m.kb: a %s learns nothing" % cls.__name__):
        Checkpoint(None, "/m.kb", fs=fs).load()


@pytest.mark.parametrize("torn", ["empty", "half"])
def test_rkp_codes_starts_again_after_its_first_save_was_cut(torn, tmp_path):
    """Issue 28: examples/rkp_codes.py on MicroPython's unix port, with the torn
    banana-learnt.kb.new its first save left (littlefs leaves it empty, FAT or a stand-in half
    written) and no banana-learnt.kb: it starts as on a first run, not with ModelFileError."""
    from kilobit.models.rkp.model import RKPInt
    need(kbit_unix.missing())
    model = RKPInt("laplace", 4, 2, 62, -6, 255).to_bytes()
    (tmp_path / "banana.kb").write_bytes(model)
    cut = tmp_path / "banana-learnt.kb.new"
    cut.write_bytes(b"" if torn == "empty" else model[:len(model) // 2])
    learnt = tmp_path / "learnt.kb"
    script = os.path.join(HERE, "..", "examples", "rkp_codes.py")
    deployed = [("/banana.kb", str(tmp_path / "banana.kb"))]
    fresh = kbit_unix.run([script], files=deployed)
    assert fresh.returncode == 0, fresh.stderr
    p = kbit_unix.run([script], files=deployed + [("/banana-learnt.kb.new", str(cut))],
                      outs=[("/banana-learnt.kb", str(learnt))])
    assert p.returncode == 0, p.stderr
    assert p.stdout == fresh.stdout and not p.stdout.startswith("resumed")
    assert "checkpoint banana-learnt.kb written" in p.stdout
    again = Checkpoint(None, str(learnt)).load()  # what it saved loads, on CPython too
    assert again.count > 0
