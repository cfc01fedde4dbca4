"""Host references of the Random Kernel Perceptron: the integer contract, the float reference,
the model file and the estimator API."""
import math
import struct
import zlib

import numpy as np
import pytest

from kilobit.core import kbfile
from kilobit.core.errors import ModelFileError
from kilobit.core.quant import MinMaxScaler, quantize
from kilobit.core.rng import Rng, seed_state
from kilobit.models.rkp.model import (
    KERNELS,
    RandomKernelPerceptron,
    RKPFloat,
    RKPInt,
    mem_bytes,
    power_table,
    weight,
    weights,
)


def test_rng_first_outputs_and_period():
    r = Rng(seed_state(0))
    assert [r.next() for _ in range(5)] == [0x8181, 0x6021, 0xE999, 0x2E0B, 0xB59E]
    r = Rng(1)
    seen = set()
    for _ in range(65535):
        seen.add(r.next())
    assert len(seen) == 65535 and 0 not in seen
    with pytest.raises(ValueError):
        Rng(0)


def test_rng_below_is_in_range_and_covers_it():
    r = Rng(seed_state(7))
    for n in (1, 2, 62, 200, 65535):
        draws = [r.below(n) for _ in range(3000)]
        assert min(draws) >= 0 and max(draws) < n
        if n <= 200:
            assert len(set(draws)) == n


def test_quantize_rounds_half_up_and_clamps():
    # 4 bits: x*16 + 0.5 floored; 1.0 -> 16 clamps to 15; 0.5/16 is exactly half -> 1
    x = np.array([[0.0, 0.5 / 16, 0.49 / 16, 0.5, 15.49 / 16, 1.0]])
    assert quantize(x, 4).tolist() == [[0, 1, 0, 8, 15, 15]]
    assert quantize(np.array([[0.25, 0.75]]), 1).tolist() == [[1, 1]]
    assert quantize(np.array([[0.2499]]), 1).tolist() == [[0]]


def test_scaler_uses_training_bounds_and_clips():
    sc = MinMaxScaler().fit(np.array([[0.0, 5.0], [10.0, 5.0]]))
    out = sc.transform(np.array([[5.0, 5.0], [20.0, 1.0], [-1.0, 9.0]]))
    assert out.tolist() == [[0.5, 0.0], [1.0, 0.0], [0.0, 0.0]]


def test_power_table_paper_values():
    # A = -6, B = 4: g = exp(-4): w(1) = round(255 e^-4) = 5, w(2) = round(255 e^-8) = 0
    assert power_table("laplace", 4, -6) == [5]
    # B = 5, A = 0: g = exp(-1/32)
    t = power_table("laplace", 5, 0)
    assert t == [round(255 * math.exp(-(2 ** j) / 32)) for j in range(len(t))]
    assert round(255 * math.exp(-(2 ** len(t)) / 32)) == 0
    assert power_table("laplace", 1, -8) == []  # every weight but the nearest rounds to zero
    # rbf uses A + 2B
    assert power_table("rbf", 3, 0) == power_table("laplace", 3, 3)


def test_log_method_hand_checked():
    t = [247, 240, 225, 199, 155, 94, 35, 5]  # laplace B=5 A=0
    C = 255
    assert weight(0, t, C) == 255
    assert weight(1, t, C) == 247
    assert weight(3, t, C) == (240 * 247 + 127) // 255  # highest bit first, then bit 0
    assert weight(25, t, C) == (((155 * 199 + 127) // 255) * 247 + 127) // 255  # 16+8+1
    assert weight(256, t, C) == 0  # beyond the table
    assert weight(255, [5], C) == 0


@pytest.mark.parametrize("kernel", KERNELS)
def test_vectorised_weights_equal_scalar_and_error_is_small(kernel):
    C = 255
    for B in range(1, 9):
        for A in range(-8, 5):
            t = power_table(kernel, B, A, C)
            ks = np.arange(0, min(1 << max(len(t), 1), 1 << 15) + 3)
            w = weights(ks, t, C)
            assert w.tolist() == [weight(int(k), t, C) for k in ks]
            e = 2.0 ** -(A + (2 * B if kernel == "rbf" else B))
            exact = np.floor(C * np.exp(-ks * e) + 0.5)
            # rounding at every product keeps the log method within a few units of exact
            assert np.abs(w - exact).max() <= 4, (kernel, B, A)


def test_memory_layout_is_lsb_first_label_then_codes():
    m = RKPInt("laplace", 2, 2, 2, 0, seed=0)
    m.learn(np.array([3, 1]), 1)  # empty model: score 0 is a mistake -> slot 0
    # slot 0 bits: label 1, code 3 (1,1), code 1 (1,0) -> 1 1 1 1 0 -> 0b01111
    assert m.memory() == bytes([0x0F, 0x00])
    m.learn(np.array([2, 3]), 0)
    # slot 1 starts at bit 5: label 0, code 2 (0,1), code 3 (1,1) -> bits 5..9 = 0 0 1 1 1
    assert m.memory() == bytes([0x0F | (1 << 7), 0b11])
    assert mem_bytes(62, 2, 4) == 70 and mem_bytes(112, 2, 2) == 70


def test_learning_rule_ties_and_random_removal():
    m = RKPInt("laplace", 4, 1, 2, -6, seed=3)
    assert m.learn(np.array([5]), 0) == (0, True)  # score 0 is a mistake for both labels
    assert m.learn(np.array([5]), 1) == (-255, True)
    assert m.score(np.array([5])) == 0  # the nearest SVs tie with opposite labels
    assert m.count == 2
    expect_slot = Rng(m.rng.state).below(2)
    m.learn(np.array([9]), 1)  # score 0 again: mistake, budget full -> random slot
    assert m.count == 2 and m.codes[expect_slot, 0] == 9
    s, mistake = m.learn(np.array([9]), 1)
    assert s > 0 and not mistake


def test_fixed_matches_float_on_same_support_set():
    """Eq. 13 on one support set: the integer weights pick the float kernel's sign."""
    gen = np.random.default_rng(0)
    m = RKPInt("laplace", 5, 2, 43, -3, seed=1)
    for _ in range(600):
        u = gen.integers(0, 32, 2)
        m.learn(u, int(u[0] + u[1] > 31))
    f = RKPFloat("laplace", 5, 2, 43, -3, seed=1)
    f.codes, f.labels, f.count = m.codes, m.labels, m.count
    pts = gen.integers(0, 32, (2000, 2))
    agree = np.mean([(m.score(u) > 0) == (f.score(u) > 0) for u in pts])
    assert agree >= 0.99


def test_model_file_round_trip_keeps_learner_state():
    gen = np.random.default_rng(1)
    m = RKPInt("rbf", 3, 4, 9, -1, C=200, seed=5)
    for _ in range(200):
        m.learn(gen.integers(0, 8, 4), int(gen.integers(2)))
    blob = m.to_bytes(scaler=(np.zeros(4), np.ones(4)))
    m2, scaler = RKPInt.from_bytes(blob)
    assert (m2.memory(), m2.count, m2.rng.state, m2.table) == (m.memory(), m.count,
                                                               m.rng.state, m.table)
    assert scaler.scaler[1].tolist() == [1.0] * 4
    for _ in range(100):  # and it keeps learning identically
        u, y = gen.integers(0, 8, 4), int(gen.integers(2))
        assert m.learn(u, y) == m2.learn(u, y)
    assert m.memory() == m2.memory()


def _reseal(blob):
    body = blob[:-4]
    return body + struct.pack("<I", zlib.crc32(body))


def _with_payload_byte(blob, offset, value):
    b = bytearray(blob)
    b[12 + offset] = value
    return _reseal(bytes(b))


@pytest.mark.parametrize("mutate,message", [
    (lambda b: b"PK\x03\x04" + b[4:], "not a kilobit model file"),
    (lambda b: b[:-5], "truncated"),
    (lambda b: b[:6], "truncated"),
    (lambda b: b[:20] + bytes([b[20] ^ 1]) + b[21:], "CRC"),
    (lambda b: _reseal(b[:4] + b"\x02" + b[5:]), "version"),
    (lambda b: _reseal(b[:5] + b"\x09" + b[6:]), "unknown model type"),
    (lambda b: _with_payload_byte(b, 1, 9), "bits"),  # bits = 9
    (lambda b: _with_payload_byte(b, 0, 7), "kernel"),
    (lambda b: _with_payload_byte(b, 7, 0), "C"),  # C = 0
    (lambda b: _with_payload_byte(b, 10, 200), "count"),  # count > budget
    (lambda b: _with_payload_byte(_with_payload_byte(b, 8, 0), 9, 0), "rng"),
])
def test_model_file_refusals(mutate, message):
    m = RKPInt("laplace", 4, 2, 62, -6, seed=0)
    with pytest.raises(ModelFileError, match=message):
        RKPInt.from_bytes(mutate(m.to_bytes()))


def test_model_file_refuses_bad_table():
    m = RKPInt("laplace", 5, 2, 10, 0, seed=0)
    blob = bytearray(m.to_bytes())
    table_at = 12 + 13
    blob[table_at], blob[table_at + 1] = blob[table_at + 1], blob[table_at]  # increasing
    with pytest.raises(ModelFileError, match="table"):
        RKPInt.from_bytes(_reseal(bytes(blob)))


def test_container_rejects_trailing_garbage():
    blob = RKPInt("laplace", 4, 2, 62, -6).to_bytes()
    with pytest.raises(ModelFileError, match="padded"):
        kbfile.unpack(blob + b"\x00")


def test_estimator_api_is_deterministic_and_consistent():
    gen = np.random.default_rng(2)
    X = gen.random((300, 2))
    y = (np.hypot(X[:, 0] - 0.5, X[:, 1] - 0.5) < 0.3).astype(int)
    a = RandomKernelPerceptron(bits=5, budget=30, width=-4, seed=9).fit(X, y)
    b = RandomKernelPerceptron(bits=5, budget=30, width=-4, seed=9)
    for x, t in zip(X, y):
        b.learn_one(x, t)
    assert a.model_.memory() == b.model_.memory()
    assert a.predict(X).tolist() == [b.predict_one(x) for x in X]
    assert ((a.decision_function(X) > 0).astype(int) == a.predict(X)).all()
    assert a.score(X, y) > 0.8
    with pytest.raises(ValueError, match="features"):
        a.predict(gen.random((3, 5)))
    with pytest.raises(ValueError, match="bits"):
        RandomKernelPerceptron(bits=9).fit(X, y)


def test_invalid_input_is_refused():
    m = RKPInt("laplace", 4, 2, 5, -6)
    for u, y in (([16, 0], 1), ([-1, 0], 0), ([1, 2, 3], 1), ([1, 2], 2), ([1, 2], -1)):
        with pytest.raises(ValueError):
            m.learn(np.array(u), y)
    assert m.count == 0


def test_tie_break_moves_to_the_next_ring():
    """Contract 3.3: when the nearest ring cancels, the next ring decides (float agrees)."""
    m = RKPInt("laplace", 4, 1, 5, -8)  # empty table: every weight but w(0) rounds to 0
    assert m.table == []
    m.learn(np.array([5]), 0)
    m.learn(np.array([5]), 1)
    assert m.score(np.array([5])) == 0  # one ring only, it cancels: nothing farther to ask
    m.learn(np.array([9]), 1)  # d = 4, 4: cancels, no farther ring -> 0 -> mistake, stored
    assert m.count == 3
    assert m.score(np.array([5])) == 255  # ring 0 cancels; ring at d = 4 is one +1 vector
    assert m.score(np.array([7])) == 255  # all three at d = 2: -1 +1 +1, no tie-break needed
    assert m.score(np.array([0])) == 255  # d = 5, 5 cancel; the ring at d = 9 is +1
    assert m.learn(np.array([13]), 0) == (255, True)  # the ring at d = 4 is +1: a mistake
    assert m.score(np.array([3])) == 255  # d = 2, 2 cancel; then d = 6 (+1), d = 10 (-1)
    assert m.score(np.array([11])) == 0  # d = 2 (+1, -1) and d = 6 (-1, +1): every ring cancels
