"""Mutated frames to the learner firmwares on simulated chips (kilobit.runtimes.avr.framefuzz): each
answered with exactly the error reply docs/uart-protocol.md names for it, none learnt from (the
state dumped before and after byte-identical), and the chip still learns bit for bit afterwards.
`kilobit bench faults` sends 100,000 each; CI sends 3,000."""
import glob
import json
import os

import pytest

from conftest import need
from kilobit.runtimes.avr import framefuzz, kb_sim, protocol

HERE = os.path.dirname(os.path.abspath(__file__))


def model(pattern):
    path = sorted(glob.glob(os.path.join(HERE, "golden", pattern)))[0]
    return bytes.fromhex(json.load(open(path))["model_file"])


@pytest.mark.parametrize("pattern,board", [
    ("rkp-laplace-b4-t62-m2-a-6-s1.json", "attiny2313"),   # the ATtiny2313's Banana learner
    ("ckp-*seed21-*", "attiny2313"),                      # CKP, its assembly step
    ("rkp-laplace-b4-t62-m2-a-6-s1.json", "uno"),
    ("ckp-*seed21-*", "uno"),
    ("assoc-*seed41-*", "uno"),                           # the Uno's pendigits assoc build
    ("assoc-*seed49-*", "uno"),                           # 5-bit values: values out of range
    ("bonsai-*seed101-*", "uno"),                         # the predictor firmware
    ("protonn-*seed201-*", "uno"),
    ("bonsai-*seed104-*", "uno"),                         # 1-bit codes: codes out of range
])
def test_mutated_frames_are_refused_exactly_and_change_nothing(pattern, board):
    need(kb_sim.missing())
    r = framefuzz.run(model(pattern), board, n=3000, seed=7)
    assert r["right"] == r["frames"] == 3000, r["wrong"]
    assert r["same"] and r["step_ok"]


def test_the_expected_codes_follow_the_documented_order():
    from kilobit.models.rkp.model import RKPInt
    spec = framefuzz.Spec("learner", RKPInt("laplace", 4, 2, 10, -6))
    L, Q, D = ord("L"), ord("Q"), ord("D")
    assert spec.expected(L, bytes([0, 1, 2]), False) == protocol.ERR_CRC
    assert spec.expected(ord("X"), b"", True) == protocol.ERR_OP
    assert spec.expected(L, bytes([2, 1]), True) == protocol.ERR_LEN      # length before label
    assert spec.expected(L, bytes([2, 1, 16]), True) == protocol.ERR_LABEL  # label before code
    assert spec.expected(L, bytes([1, 1, 16]), True) == protocol.ERR_CODE
    assert spec.expected(Q, bytes([15, 15]), True) is None
    assert spec.expected(D, bytes([1, 1]), True) == protocol.ERR_LEN
    frames = framefuzz.mutations(spec, 500, seed=3)
    codes = {want for _, want in frames}
    assert codes == {protocol.ERR_CRC, protocol.ERR_OP, protocol.ERR_LEN, protocol.ERR_LABEL,
                     protocol.ERR_CODE}
    assert all(spec.expected(f[1], f[4:-1], protocol.crc8(f[1:]) == 0) == want
               for f, want in frames)


def test_the_predictor_firmwares_codes_follow_the_documented_order():
    from kilobit.models.bonsai.golden import random_model
    m = random_model(20, 3, 1, 2, 8, 2, 0, 0, seed=1)     # 20 inputs, 2-bit codes
    spec = framefuzz.Spec("predictor", m)
    U = ord("U")
    assert spec.expected(U, bytes([0, 0, 1]), False) == protocol.ERR_CRC
    assert spec.expected(ord("L"), b"", True) == protocol.ERR_OP
    assert spec.expected(U, bytes([0, 0]), True) == protocol.ERR_LEN
    assert spec.expected(U, bytes([0, 0]) + bytes(17), True) == protocol.ERR_LEN
    assert spec.expected(U, bytes([19, 0, 1, 1]), True) == framefuzz.ERR_INDEX  # runs past
    assert spec.expected(U, bytes([0, 0, 4]), True) == protocol.ERR_CODE
    assert spec.expected(U, bytes([19, 0, 3]), True) is None
    frames = framefuzz.predictor_mutations(spec, 500, seed=3)
    assert {w for _, w in frames} == {protocol.ERR_CRC, protocol.ERR_OP, protocol.ERR_LEN,
                                      framefuzz.ERR_INDEX, protocol.ERR_CODE}
