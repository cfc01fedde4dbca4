"""kbit checkpoints on littlefs (issues 23 item 4 and 28), the fast part: on MicroPython's unix
port, the power cut at every block write and erase of ten saves (before it lands and torn), for an
rkp, a ckp and an assoc learner; every restart loads the last complete checkpoint (the model as
deployed, before the first) or the one under way and then learns and saves exactly as the host
reference does. The first save on its own, and against the loader before issue 28 (a cut first save
left no way back). The full run (more saves, more models) is `kilobit bench faults --only
littlefs`."""
import glob
import os

import pytest

from conftest import need
from kilobit.runtimes.micropython import littlefs

GOLDEN = os.path.join(os.path.dirname(os.path.abspath(__file__)), "golden")
MODELS = ["rkp-laplace-b4-t62-m2-a-6-s1.json", "ckp-*seed21-*", "assoc-*seed41-*"]


@pytest.mark.parametrize("pattern", MODELS)
def test_every_cut_of_a_checkpoint_on_littlefs_recovers(pattern):
    need(littlefs.missing())
    path = sorted(glob.glob(os.path.join(GOLDEN, pattern)))[0]
    r = littlefs.run(path, saves=10)
    assert r["failures"] == []
    assert r["tried"] == r["recovered"] == 2 * r["ops"] and r["ops"] >= 30
    assert r["last"] and r["under_way"]  # cuts land on both sides of the rename
    assert r["erases"] and r["violations"] == 0


@pytest.mark.parametrize("pattern", MODELS)
def test_every_cut_of_the_first_save_recovers(pattern):
    """Issue 28: nothing saved yet, the first save cut; the restart comes back with the model
    as deployed (Checkpoint's `initial`) or the checkpoint under way, never to an error."""
    need(littlefs.missing())
    path = sorted(glob.glob(os.path.join(GOLDEN, pattern)))[0]
    r = littlefs.run(path, saves=1)
    assert r["failures"] == []
    assert r["tried"] == r["recovered"] == 2 * r["ops"] and r["ops"] >= 3
    assert r["last"] and r["under_way"]


AS_BEFORE = '''

def _load_as_before(self):
    err = None
    for p in (self.path + ".new", self.path):
        try:
            self.model = self._read(p)
            return self.model
        except OSError:
            continue
        except ValueError as e:
            err = e
    if err:
        raise err
    self.model = self.initial
    return self.model


Checkpoint.load = _load_as_before
'''


def _run_patched(tmp_path, patch, saves):
    """littlefs.run of the first model with a kbit whose checkpoint.py ends with `patch`."""
    import shutil
    need(littlefs.missing())
    kbit = tmp_path / "kbit"
    shutil.copytree(os.path.join(GOLDEN, "..", "..", "device", "kbit"), kbit)
    with open(kbit / "checkpoint.py", "a") as f:
        f.write(patch)
    return littlefs.run(os.path.join(GOLDEN, MODELS[0]), saves=saves, pkgs=[str(kbit)])


def test_the_cuts_catch_a_first_save_with_no_way_back(tmp_path):
    """The negative control: kbit's loader before issue 28 (PATH.new, else PATH, the deployed
    model only when neither file exists) fails the restart after some cuts of the first save
    (a PATH.new that littlefs left empty) and after none of the later ones."""
    r = _run_patched(tmp_path, AS_BEFORE, saves=3)
    assert r["recovered"] < r["tried"]
    assert all(f.startswith("save 0,") and "no checkpoint loads" in f for f in r["failures"])


TWO_WRITES = '''

def _save_in_two_writes(self, model=None):
    import io
    if model is not None:
        self.model = model
    b = io.BytesIO()
    self.model.save(b)
    data = b.getvalue()
    for mode, part in (("wb", data[:len(data) // 2]), ("ab", data[len(data) // 2:])):
        f = self.fs.open(self.path, mode)
        f.write(part)
        f.close()


Checkpoint.save = _save_in_two_writes
'''


def test_the_cuts_catch_a_save_that_is_not_atomic(tmp_path):
    """The negative control: a kbit whose save writes the file in two opens (no NAME.new, no
    rename) leaves a truncated checkpoint at some cut, and the run says so."""
    r = _run_patched(tmp_path, TWO_WRITES, saves=4)
    assert r["recovered"] < r["tried"] and "no checkpoint loads" in r["failures"][0]
