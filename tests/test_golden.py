"""Every checked-in golden file, replayed on every runtime, bit for bit."""
import glob
import json
import os

import pytest

from conftest import need
from kilobit import golden
from kilobit.cli import DEFAULT_RUNTIMES, main
from kilobit.models import registry
from kilobit.models.rkp.model import RKPInt
from kilobit.runtimes import catalog as rt
from kilobit.runtimes.base import Runtime, RuntimeFailure

HERE = os.path.dirname(os.path.abspath(__file__))
FILES = sorted(glob.glob(os.path.join(HERE, "golden", "*.json")))
RKP_FILES = [f for f in FILES if os.path.basename(f).startswith("rkp-")]  # score fields
#: the one golden file whose firmware does not fit the Uno (every other replays on uno-sim)
UNO_MISFIT = "ckp-L2-bits1-classes255-dims1-seed35-steps120-width1000.json"


def test_there_is_a_golden_set():
    assert len(FILES) == len(golden.golden_set()) >= 15


@pytest.mark.parametrize("runtime", DEFAULT_RUNTIMES)
@pytest.mark.parametrize("path", FILES, ids=os.path.basename)
def test_golden_file_agrees(path, runtime):
    r = rt.get(runtime)
    need(r.missing())
    doc = golden.load(path)
    if runtime == "uno-sim" and path.endswith(UNO_MISFIT):
        # 255 CKP learners' states (10 B each) alone outgrow the Uno's 2 KB: refused, and said so
        with pytest.raises(RuntimeFailure, match=r"does not fit uno: static RAM \d+ B"):
            golden.replay_doc(doc, r)
        return
    mismatch = golden.compare(doc, runtime, golden.replay_doc(doc, r))
    assert mismatch is None, str(mismatch)
    if runtime == "kbit-unix":  # deployed as on a board: the native kernels run
        assert r.path == "native" or r.path.endswith("beyond the native kernel"), r.path
    elif runtime == "kbit-unix-bytecode":
        assert r.path.startswith("bytecode: no native module"), r.path


@pytest.mark.parametrize("params", golden.golden_set(), ids=golden.golden_name)
def test_checked_in_file_is_what_the_reference_makes_now(params):
    """The host reference has not drifted from the files every runtime is held to."""
    with open(os.path.join(HERE, "golden", golden.golden_name(params))) as f:
        assert json.load(f) == json.loads(json.dumps(golden.make_doc(params)))


def test_golden_set_covers_the_hard_cases():
    ps = [p for p in golden.golden_set() if p.get("model", "rkp") == "rkp"]
    assert {p["kernel"] for p in ps} == {"laplace", "rbf"}
    assert {p["bits"] for p in ps} == set(range(1, 9))
    assert min(p["budget"] for p in ps) == 1 and max(p["budget"] for p in ps) == 200
    assert min(p["dims"] for p in ps) == 1 and max(p["dims"] for p in ps) == 64
    assert min(p["width"] for p in ps) == -8 and max(p["width"] for p in ps) == 4
    # the binary files: a multi-class file's count is its K learners' (tests/test_multiclass.py)
    def binary_rkp(doc):
        return doc.get("model", "rkp") == "rkp" and doc["params"].get("classes", 2) == 2
    nrkp = sum(binary_rkp(golden.load(f)) for f in FILES)
    seen = dict(full=0, removal=0, zero_score=0, empty_table=0, max_codes=0, query=0)
    for path in FILES:
        doc = golden.load(path)
        if not binary_rkp(doc):
            continue
        p = doc["params"]
        m, _ = RKPInt.from_bytes(bytes.fromhex(doc["model_file"]))
        exp = doc["expect"]
        seen["full"] += exp[-1][3] == p["budget"]
        seen["removal"] += any(e[2] and exp[i - 1][3] == p["budget"] for i, e in enumerate(exp))
        seen["zero_score"] += any(e[0] == 0 and e[3] > 0 for e in exp)
        seen["empty_table"] += not m.table
        top = str((1 << p["bits"]) - 1)
        seen["max_codes"] += any(s.split()[-p["dims"]:] == [top] * p["dims"] for s in doc["steps"])
        seen["query"] += any(s.startswith("Q") for s in doc["steps"])
    assert seen["full"] == seen["removal"] == nrkp, seen
    assert seen["zero_score"] >= 10 and seen["empty_table"] >= 2, seen
    assert seen["max_codes"] == seen["query"] == nrkp, seen


class _OffByOne(Runtime):
    """A runtime with a planted bug: the score of step 7 is one too high."""
    name = "planted"

    def replay(self, model, steps):
        out = rt.get("host").replay(model, steps)
        s = out[7]
        out[7] = (s[0] + 1,) + s[1:]
        return out


class _BadMemory(Runtime):
    name = "planted-mem"

    def replay(self, model, steps):
        out = rt.get("host").replay(model, steps)
        last = out[-1]
        mem = bytearray(last[4])
        mem[len(mem) // 2] ^= 0x10
        out[-1] = last[:4] + (bytes(mem),)
        return out


def test_checker_names_runtime_step_and_field():
    doc = golden.load(RKP_FILES[0])
    bad = golden.compare(doc, "planted", golden.replay_doc(doc, _OffByOne()))
    assert (bad.runtime, bad.step, bad.field) == ("planted", 7, "score")
    bad = golden.compare(doc, "planted-mem", golden.replay_doc(doc, _BadMemory()))
    assert bad.step == len(doc["steps"]) - 1 and bad.field == "memory"


def test_cli_check_fails_on_a_tampered_file(tmp_path, capsys):
    with open(RKP_FILES[0]) as f:
        doc = json.load(f)
    doc["expect"][5][0] += 1
    path = tmp_path / "tampered.json"
    golden.dump(doc, str(path))
    assert main(["golden", "check", str(path), "--runtime", "host"]) == 1
    out = capsys.readouterr().out
    assert "host: step 5, field score" in out
    assert main(["golden", "check", RKP_FILES[0], "--runtime", "host"]) == 0


def test_cli_make_writes_a_file_the_checker_accepts(tmp_path):
    path = str(tmp_path / "g.json")
    assert main(["golden", "make", "rkp", "--kernel", "rbf", "--bits", "3", "--budget", "7",
                 "--width", "-2", "--dims", "5", "--steps", "50", "--seed", "4",
                 "-o", path]) == 0
    assert golden.check(path, ["host"], log=lambda *a: None) == []


def _one_per_model_type():
    """A typical golden file of each model type: the median by model size times steps (the
    emulated Pico runs ~60M cycles/s; a ProtoNN of 255 prototypes takes a minute as bytecode
    there, the smallest files are edge cases that exercise little)."""
    by_type = {}
    for path in FILES:
        doc = golden.load(path)
        cost = len(doc["model_file"]) * len(doc["steps"])
        by_type.setdefault(doc.get("model", "rkp"), []).append((cost, path))
    return sorted(sorted(v)[(len(v) - 1) // 2][1] for v in by_type.values())


@pytest.mark.parametrize("runtime", ["rp2040-sim", "rp2040-sim-bytecode"])
@pytest.mark.parametrize("path", _one_per_model_type(), ids=os.path.basename)
def test_golden_file_agrees_on_the_emulated_pico(path, runtime):
    """kbit as armv6m .mpy on the emulated RP2040 (MicroPython 1.23's core on kilobit's own
    port), every step under heap_lock, through the armv6m native modules and through the
    bytecode; every model type in CI, the whole set by `kilobit golden check tests/golden/*.json
    --runtime rp2040-sim --runtime rp2040-sim-bytecode`."""
    r = rt.get(runtime)
    need(r.missing())
    doc = golden.load(path)
    mismatch = golden.compare(doc, runtime, golden.replay_doc(doc, r))
    assert mismatch is None, str(mismatch)
    assert r.path == "native" if runtime == "rp2040-sim" else r.path.startswith("bytecode: ")


def test_one_golden_file_per_model_type_on_the_pico():
    assert {golden.load(p).get("model", "rkp") for p in _one_per_model_type()} == {
        s.name for s in registry.REGISTRY}
