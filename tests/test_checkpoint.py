"""kbit checkpoints under power cuts (device/kbit/checkpoint.py, issue 15 item 1): the device's own
test file on real MicroPython (the WebAssembly build and the unix port) with its cut-point count,
and under CPython a cut at every write for an rkp, a ckp and an assoc learner, each restart then
going on bit for bit with the host integer reference from the state it came back to."""
import os
import re

import pytest

from conftest import need
from kbit import test_checkpoint as T
from kbit.checkpoint import Checkpoint
from kilobit.models import registry
from kilobit.runtimes.micropython import kbit_wasm
from kilobit.runtimes.micropython import kbit_unix

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPT = os.path.join(HERE, "..", "device", "kbit", "test_checkpoint.py")


@pytest.mark.parametrize("where", ["wasm", "unix"])
def test_the_device_test_passes_on_micropython(where):
    need(kbit_wasm.missing_wasm() if where == "wasm" else kbit_unix.missing())
    run = kbit_wasm.run if where == "wasm" else kbit_unix.run
    p = run([SCRIPT], timeout=300)
    assert p.returncode == 0, p.stderr
    m = re.search(r"kbit checkpoint: (\d+) tests passed; power cuts tried (\d+), recovered (\d+)",
                  p.stdout)
    assert m, p.stdout + p.stderr
    assert int(m.group(1)) >= 4 and int(m.group(2)) == int(m.group(3)) >= 6


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


@pytest.mark.parametrize("name", ["rkp", "ckp", "assoc"])
def test_a_power_cut_at_every_write_then_the_host_reference(name):
    blob, example = _learners()[name]
    spec = registry.get(name)
    cls = spec.kbit_class()

    def learnt(n0, n1):
        m = cls.load(blob)
        for i in range(n0, n1):
            m.learn(*example(i))
        return m

    a, b = learnt(0, 12), learnt(0, 20)
    whole = T.FakeFS()
    Checkpoint(cls, "/m.kb", fs=whole).save(a)
    first = whole.ops
    Checkpoint(cls, "/m.kb", fs=whole).save(b)
    tried = 0
    for cut in range(first, whole.ops + 1):
        fs = T.FakeFS(cut)
        Checkpoint(cls, "/m.kb", fs=fs).save(a)
        try:
            Checkpoint(cls, "/m.kb", fs=fs).save(b)
        except T.PowerCut:
            pass
        m = Checkpoint(cls, "/m.kb", fs=fs).load()  # the restart
        wfs = T.FakeFS()
        Checkpoint(cls, "/s.kb", fs=wfs).save(m)
        state = bytes(wfs.files["/s.kb"])
        wa, wb = T.FakeFS(), T.FakeFS()
        Checkpoint(cls, "/s.kb", fs=wa).save(a)
        Checkpoint(cls, "/s.kb", fs=wb).save(b)
        assert state in (bytes(wa.files["/s.kb"]), bytes(wb.files["/s.kb"])), (name, cut)
        host, _ = spec.load(state)  # the host reference from the state the board came back to
        for i in range(20, 32):
            x, y = example(i)
            assert m.learn(x, y) == _host_step(host, x, y), (name, cut, i)
        tried += 1
    assert tried == whole.ops - first + 1 >= 6
