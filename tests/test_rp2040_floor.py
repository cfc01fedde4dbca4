"""firmware_c as bare C on the emulated RP2040, without MicroPython (tools/pico/floor, the runtime
rp2040-c): golden files bit for bit, per-step cycles, the calibration loop, refusals.

One golden file per model type here (the whole set takes about 40 s more: run
`kilobit golden check tests/golden/*.json --runtime rp2040-c`). Skips without node / rp2040js /
arm-none-eabi-gcc; fails under CI=true.
"""
import json
import os
import statistics

import pytest

from conftest import need
from kilobit.golden import compare, replay_doc
from kilobit.models import registry
from kilobit.runtimes import REPO, RuntimeFailure
from kilobit.runtimes.c import rp2040_floor
from kilobit.runtimes.c.c_host import CHostRuntime

GOLDEN = os.path.join(REPO, "tests", "golden")
BANANA = "rkp-laplace-b4-t62-m2-a-6-s1.json"  # the paper's setting: laplace, 4 bits, 62 SVs
CASES = (
    BANANA,
    "ckp-L560-bits6-dims2-seed21-steps500-width100.json",
    "bonsai-classes26-depth4-dims20-in_bits8-proj16-seed105-steps30-tenc1-wbits8-zenc1-zero_bias1.json",
    "protonn-classes26-d64-dims20-in_bits8-lenc1-m255-nt255-penc1-seed205-steps24-wbits8-zenc1.json",
    "assoc-P2-R1-approachI-I-bits5-cap8-d40-kt2-pretrain60-seed49-steps100.json",
)
#: far above any golden step (the slowest, a CKP learn, takes about 220K cycles): a count past
#: it means the counter or its reading broke, not a slow kernel
PLAUSIBLE_MAX = 5_000_000


@pytest.fixture(scope="module")
def floor():
    need(rp2040_floor.missing())
    rp2040_floor.build()
    return rp2040_floor.RP2040FloorRuntime()


def _doc(name):
    with open(os.path.join(GOLDEN, name)) as f:
        return json.load(f)


def test_one_golden_file_per_model_type():
    assert sorted({name.split("-")[0] for name in CASES}) == sorted(registry.NAMES)


@pytest.mark.parametrize("name", CASES)
def test_golden_bit_exact_and_timed(floor, name):
    doc = _doc(name)
    rows = replay_doc(doc, floor)
    assert compare(doc, floor.name, rows) is None
    overhead, times = floor.times
    assert overhead == 4  # one LDR from an APB register: 1 + 3 wait cycles in rp2040js
    assert len(times) == len(doc["steps"])
    assert all(overhead < t < PLAUSIBLE_MAX for t in times)


def test_rkp_banana_learn_cycles(floor):
    doc = _doc(BANANA)
    replay_doc(doc, floor)
    overhead, times = floor.times
    learn = [t - overhead for step, t in zip(doc["steps"], times) if step.startswith("L")]
    # 62 support vectors of 2 dims, 4 bits: a few hundred cycles each, around ten thousand a step
    # (13.8K median for the same step as an armv6m native module, DESIGN.md)
    assert 2_000 < statistics.median(learn) < 50_000
    assert max(learn) < 200_000


def test_calibration_loop_is_exact():
    need(rp2040_floor.missing())
    cal = rp2040_floor.calibrate()
    assert cal["overhead"] == 4
    assert cal["exact"]
    for name, loop in cal["loops"].items():
        assert [r["n"] for r in loop["runs"]] == [1, 10, 1000, 100000], name
        for r in loop["runs"]:
            assert r["measured"] == r["rp2040js"], (name, r)
    loop = cal["loops"]["loop"]
    assert all(r["measured"] == 3 * r["n"] - 1 == r["manual"] for r in loop["runs"])


def test_refusals_say_what_c_host_says(floor, tmp_path):
    need(CHostRuntime().missing())
    doc = _doc(BANANA)
    blob = bytearray.fromhex(doc["model_file"])
    blob[20] ^= 1  # the CRC no longer matches
    steps = registry.get("rkp").golden.doc_steps(doc)[:3]
    errors = []
    for runtime in (floor, CHostRuntime()):
        with pytest.raises(RuntimeFailure) as e:
            runtime.replay(bytes(blob), steps)
        errors.append(str(e.value))
    assert errors[0] == errors[1]
    # a malformed step line, numbered as kb_replay numbers it
    with pytest.raises(RuntimeFailure, match="step 2: label must be 0 or 1"):
        rp2040_floor.run("learner", bytes.fromhex(doc["model_file"]), "Q 1 2\nL 7 1 2\n")
