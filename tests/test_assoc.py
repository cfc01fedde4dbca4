"""The binary associative memory (`assoc`, docs/contract.md section 9): the host references,
the device package on CPython and on real MicroPython (under heap_lock), the C runtime, the Uno
firmware over its UART, and the benchmark's protocols. Golden files: tests/test_golden.py.
"""
import os
import subprocess
from array import array

import numpy as np
import pytest

from conftest import need, replay_fields
from kilobit.core import kbfile
from kilobit.core.errors import ModelFileError
from kilobit.models.assoc import firmware as AF, golden as AG, model as A
from kilobit.runtimes import RuntimeFailure
from kilobit.runtimes.avr import firmware, kb_sim, protocol
from kilobit.runtimes.catalog import get
from kilobit.runtimes.kinds import memory

HERE = os.path.dirname(os.path.abspath(__file__))


def rand_model(approach="I-I", bits=8, P=2, d=3, cap=4, kt=2, R=1, seed=0, steps=40,
               labels=(7, 3, 200, 0)):
    m = A.AssocInt(approach, bits, P, d, cap, kt, R, seed=seed)
    g = np.random.default_rng(seed)
    lo, hi = -(1 << (bits - 1)), (1 << (bits - 1)) - 1
    if m.approach == A.NO:
        m.anchors[:] = g.integers(lo, hi + 1, size=m.anchors.shape)
    for _ in range(steps):
        m.learn(g.integers(lo, hi + 1, size=m.T), int(g.choice(labels[:cap])))
    return m


# ---- the integer reference -----------------------------------------------------------------

def test_to_int8_is_the_contract_code_minus_half():
    x = np.array([[0.0, 0.5, 1.0, 0.999, 0.0019]])
    assert A.to_int8(x, 8).tolist() == [[-128, 0, 127, 127, -128]]
    assert A.to_int8(x, 1).tolist() == [[-1, 0, 0, 0, -1]]


def test_one_shot_every_class_recalls_its_example():
    m = A.AssocInt("I-I", 8, 4, 2, 5, 1)
    g = np.random.default_rng(1)
    X = g.integers(-128, 128, size=(5, 8))
    for i, x in enumerate(X):
        pred, _ = m.learn(x, 10 + i)
        assert pred == (A.NO_CLASS if i == 0 else pred)
    assert m.nc == 5 and m.anchors_stored == 5
    for i, x in enumerate(X):
        assert m.predict(x) == (10 + i, 4)  # all P subspaces connected to its class


def test_ties_lowest_anchor_row_then_distance_sum_then_lowest_slot():
    m = A.AssocInt("I-I", 8, 1, 2, 3, 2)
    m.learn([10, 10], 5)      # slot 0, row 0
    m.learn([-10, -10], 6)    # slot 1, row 2
    # equidistant from both anchors: the lower row (class 5) wins
    assert m.predict([0, 0]) == (5, 1)
    # two subspaces, one vote each: the smaller distance sum decides ...
    m = A.AssocInt("I-I", 8, 2, 1, 2, 1)
    m.learn([0, 0], 1)
    m.learn([10, 10], 2)
    assert m.predict([2, 9]) == (2, 1)  # class 1 by 4, class 2 by 1
    assert m.predict([1, 8]) == (1, 1)  # class 1 by 1, class 2 by 4
    # ... and equal counts and sums: the lowest slot (the class learnt first)
    assert m.predict([1, 9]) == (1, 1)
    # an input equidistant in both subspaces: the lower row wins both, class 1 counts 2
    assert m.predict([5, 5]) == (1, 2)


def test_capacity_full_refuses_and_changes_nothing():
    m = A.AssocInt("I-I", 8, 2, 2, 2, 1)
    m.learn([1, 2, 3, 4], 9)
    m.learn([5, 6, 7, 8], 4)
    before = m.memory()
    with pytest.raises(ValueError, match="capacity"):
        m.learn([0, 0, 0, 0], 77)
    assert m.memory() == before
    m.learn([0, 0, 0, 0], 9)  # a known label still learns


def test_i_i_never_touches_an_earlier_class():
    g = np.random.default_rng(3)
    m = A.AssocInt("I-I", 6, 4, 2, 4, 3)
    for _ in range(20):
        m.learn(g.integers(-32, 32, size=8), 11)
    rows = slice(0, 3)
    a0, c0 = m.anchors[rows].copy(), m.conn[:, :, 0].copy()
    for lab in (12, 13, 14):
        for _ in range(20):
            m.learn(g.integers(-32, 32, size=8), lab)
    assert (m.anchors[rows] == a0).all() and (m.conn[:, :, 0] == c0).all()


def test_n_i_can_connect_an_earlier_class_anchor_to_a_new_class():
    m = A.AssocInt("N-I", 8, 1, 2, 2, 1)
    m.learn([0, 0], 1)
    m.learn([100, 100], 2)
    m.learn([1, 1], 2)  # nearest anchor is class 1's row 0: connected to class 2 too
    assert m.conn[0, 0, 1]
    m = A.AssocInt("I-I", 8, 1, 2, 2, 1)
    m.learn([0, 0], 1)
    m.learn([100, 100], 2)
    m.learn([1, 1], 2)
    assert not m.conn[0, 0, 1]


def test_r_above_one_draws_output_neurons_with_the_contract_generator():
    from kilobit.core.rng import Rng, seed_state
    m = A.AssocInt("I-I", 8, 1, 1, 1, 1, R=7, seed=5)
    rng = Rng(seed_state(5))
    for _ in range(30):
        m.learn([3], 0)
        r = rng.below(7)
        assert m.conn[0, 0, r]
    assert m.rng.state == rng.state


@pytest.mark.parametrize("approach", A.APPROACHES)
def test_model_file_round_trip(approach):
    m = rand_model(approach, R=3)
    m2, sc = A.AssocInt.from_bytes(m.to_bytes(scaler=([0.0] * 6, [1.0] * 6)))
    assert m2.memory() == m.memory() and m2.nc == m.nc and m2.rng.state == m.rng.state
    assert sc is not None


def _bad_files():
    m = rand_model()
    good = m.to_bytes()
    out = {"truncated": good[:-9], "foreign": b"NOPE" + good[4:]}
    p = bytearray(kbfile.unpack(good)[1])
    bad = bytearray(p)
    bad[2] = 0  # P = 0
    out["params"] = kbfile.pack("assoc", bytes(bad))
    bad = bytearray(p)
    bad[10 + 1] = bad[10 + 0]  # two class slots with the same label
    out["duplicate label"] = kbfile.pack("assoc", bytes(bad))
    offs, _ = A.mem_layout(m.P, m.d, m.cap, m.kt, m.R)
    bad = bytearray(p)
    bad[10 + offs["conn"]] |= 0xFF  # connections of unused rows / classes
    m2 = A.AssocInt("I-I", 8, 2, 3, 4, 2)
    m2.learn([1] * 6, 3)
    q = bytearray(kbfile.unpack(m2.to_bytes())[1])
    q[10 + offs["conn"] + 1] |= 0x80
    out["connection of an unused class"] = kbfile.pack("assoc", bytes(q))
    q = bytearray(kbfile.unpack(m2.to_bytes())[1])
    q[10 + offs["anchors"] + 6 * 2] = 5  # a row of an empty slot
    out["unused anchor"] = kbfile.pack("assoc", bytes(q))
    q = bytearray(kbfile.unpack(m2.to_bytes())[1])
    q[-1] = 2  # scaler flag
    out["trailer"] = kbfile.pack("assoc", bytes(q))
    # the fill rule (contract 9.4): P = 2, k~ = 2, so a counter stops at 3
    m2.learn([2] * 6, 3)  # slot 0: row 0 whole, row 1 subspace 0 only
    q = bytearray(kbfile.unpack(m2.to_bytes())[1])
    q[10 + offs["nf"]] = 4
    out["fill counter above 1+(k~-1)*P"] = kbfile.pack("assoc", bytes(q))
    q = bytearray(kbfile.unpack(m2.to_bytes())[1])
    q[10 + offs["nf"]] = 0
    out["fill counter 0 in a used slot"] = kbfile.pack("assoc", bytes(q))
    q = bytearray(kbfile.unpack(m2.to_bytes())[1])
    q[10 + offs["anchors"] + 6 + 3] = 1  # row 1, subspace 1: not filled yet
    out["anchor of a subspace not filled yet"] = kbfile.pack("assoc", bytes(q))
    q = bytearray(kbfile.unpack(m2.to_bytes())[1])
    b = (1 * m2.S + 1) * m2.cap * m2.R  # subspace 1, row 1, class 0
    q[10 + offs["conn"] + b // 8] |= 1 << (b % 8)
    out["connection of a subspace not filled yet"] = kbfile.pack("assoc", bytes(q))
    q = bytearray(kbfile.unpack(A.AssocInt("N-O", 8, 128, 1, 1, 3).to_bytes())[1])
    q[0] = 0  # I-I: 1 + 2*128 = 257 does not fit the u8 counter
    out["fill counter range"] = kbfile.pack("assoc", bytes(q))
    corrupt = bytearray(good)
    corrupt[20] ^= 1
    out["corrupt"] = bytes(corrupt)
    return out


@pytest.mark.parametrize("what", sorted(_bad_files()))
def test_every_runtime_refuses_a_bad_file(what):
    blob = _bad_files()[what]
    with pytest.raises(ModelFileError):
        A.AssocInt.from_bytes(blob)
    for name in ("host", "kbit-cpython", "c-host"):
        r = get(name)
        if name == "c-host":
            need(r.missing())
        with pytest.raises(RuntimeFailure):
            r.replay(blob, [])


# ---- the estimator ---------------------------------------------------------------------------

def _blobs(n_per=40, C=4, T=8, seed=0):
    g = np.random.default_rng(seed)
    centers = g.random((C, T))
    X = np.concatenate([np.clip(c + 0.08 * g.standard_normal((n_per, T)), 0, 1)
                        for c in centers])
    y = np.repeat(np.arange(C) * 3 + 1, n_per)
    return X, y


@pytest.mark.parametrize("approach", A.APPROACHES)
@pytest.mark.parametrize("bits", [None, 8])
def test_partial_fit_takes_new_classes_at_any_time(approach, bits):
    X, y = _blobs()
    m = A.AssociativeMemory(P=2, anchors_per_class=5, approach=approach, bits=bits, seed=1)
    if approach == "N-O":  # offline quantizer: its anchors come from the first batch
        m.partial_fit(X, y)
    for lab in np.unique(y):
        m.partial_fit(X[y == lab], y[y == lab])
    assert m.classes_ == [1, 4, 7, 10]
    assert m.score(X, y) > 0.9
    if approach != "N-O":
        assert m.n_anchors_ == 20
    m.partial_fit(X[:3] * 0.5, [99, 99, 99])  # another new class, later
    assert 99 in m.classes_ and m.predict(X[:3] * 0.5).tolist() == [99, 99, 99]


def test_stream_sampling_is_the_integer_reference():
    X, y = _blobs(seed=2)
    order = np.random.default_rng(0).permutation(len(y))
    est = A.AssociativeMemory(P=4, anchors_per_class=3, bits=8, sampling="stream", capacity=4,
                              seed=3).fit(X[order], y[order])
    m = A.AssocInt("I-I", 8, 4, 2, 4, 3, seed=3)
    for u, t in zip(A.to_int8(X[order], 8), y[order]):
        m.learn(u, int(t))
    assert est.int_.memory() == m.memory()
    assert est.predict(X).tolist() == m.predict_many(A.to_int8(X, 8))[0].tolist()


def test_example_incremental_proportional_sampling_grows_anchors():
    X, y = _blobs()
    m = A.AssociativeMemory(P=2, anchors_per_class=10, bits=8, seed=0)
    for part in np.array_split(np.random.default_rng(0).permutation(len(y)), 5):
        m.partial_fit(X[part], y[part], n_anchors=2)
    assert m.n_anchors_ == 4 * 10


def test_resources_are_the_papers_formulas():
    assert A.complexity_p(2048, 200, 64, 1, 10) == 2048 * 200 + 64 * 10
    assert A.memory_bits(2048, 200, 64, 1, 10, f=32) == 200 * 2048 * 32 + 200 * 64 * 10


# ---- the device package -----------------------------------------------------------------------

def test_kbit_assoc_save_load_round_trip():
    import io

    from kbit.assoc import Assoc
    m = rand_model("N-I", R=2)
    d = Assoc.load(m.to_bytes())
    buf = io.BytesIO()
    d.save(buf)
    assert buf.getvalue() == m.to_bytes()
    u = array("b", bytes(d.T))
    with pytest.raises(ValueError, match="capacity"):
        d.learn(u, 111)  # a fifth label, capacity 4


def test_device_learns_pendigits_under_heap_lock_on_micropython(tmp_path):
    """The Uno's configuration (I-I, P = 1, d = 16, 10 classes, k~ = 10) learning 300 real
    pendigits examples and answering 100 queries on MicroPython 1.27, every step under
    micropython.heap_lock(): the same predictions, counts and memory as the host."""
    from kilobit import data
    from kilobit.core.quant import MinMaxScaler

    r = get("kbit-micropython")
    need(r.missing())
    s = data.load("pendigits-10", seed=0)
    sc = MinMaxScaler().fit(s.X_train)
    Utr, Ute = A.to_int8(sc.transform(s.X_train), 8), A.to_int8(sc.transform(s.X_test), 8)
    steps = [("L", int(t), list(map(int, u))) for u, t in zip(Utr[:300], s.y_train[:300])]
    steps += [("Q", None, list(map(int, u))) for u in Ute[:100]]
    model = A.AssocInt("I-I", 8, 1, 16, 10, 10).to_bytes()
    want = AG.replay(model, steps)
    got = r.replay(model, steps)
    assert [w[:4] for w in want] == [g[:4] for g in got]
    assert want[-1][4] == got[-1][4]
    assert want[-1][2] == 10  # every class arrived during the stream


# ---- C on the host and the Uno ---------------------------------------------------------------

@pytest.fixture(scope="module")
def sim():
    need(kb_sim.missing())
    kb_sim.build_sim()


def test_uno_firmware_has_no_float_and_fits(sim):
    elf, sizes = firmware.build(A.AssocInt("I-I", 8, 1, 16, 10, 10).to_bytes(), "uno")
    nm = subprocess.run(["avr-nm", elf], capture_output=True, text=True).stdout
    floats = [ln for ln in nm.splitlines() if ln.split()[-1].startswith("__fp_")
              or ln.split()[-1].endswith(("sf3", "sfsi", "sisf"))]
    assert not floats, floats
    assert sizes["ram"] + AF.STACK_RESERVE["atmega328p"] <= 2048


def test_uno_learns_pendigits_over_the_uart_within_2k(sim):
    """A fresh memory on the simulated Uno learns 400 pendigits examples frame by frame and
    answers 150 test queries: every reply equals the integer reference, and static RAM plus
    the measured stack stays within the 2048 bytes."""
    from kilobit.bench import assoc as bench
    u = bench.uno_pendigits(n_train=400, n_test=150)
    assert u["agree"], u
    assert u["classes"] == 10 and u["anchors"] == 100
    assert u["ram_total"] <= 2048 and u["stack"] <= 128, u
    assert u["acc"] > 0.6  # far above chance (10 %): it learnt


def test_uno_refuses_bad_frames_and_changes_nothing(sim):
    from kilobit.runtimes.avr import fw_assoc as assoc_fw
    m = A.AssocInt("I-I", 4, 2, 2, 2, 1)  # 4 bits: values -8..7; two classes
    model = m.to_bytes()
    good1, good2 = assoc_fw.learn_frame(5, [1, 2, 3, 4]), assoc_fw.learn_frame(6, [0, 0, 0, 0])
    bad_crc = bytearray(assoc_fw.learn_frame(5, [1, 2, 3, 4]))
    bad_crc[-1] ^= 0xFF
    frames = [good1, good2, bytes(bad_crc),
              protocol.frame("L", bytes([5, 1, 2, 3])),          # short
              assoc_fw.learn_frame(5, [1, 2, 3, 8]),             # 8 is outside 4 bits
              assoc_fw.learn_frame(7, [1, 1, 1, 1]),             # a third class: capacity 2
              protocol.frame("X"),                               # unknown op
              protocol.dump_frame(), protocol.stop_frame()]
    replies, _, _ = assoc_fw.session(model, b"".join(frames), "uno")
    codes = [(r.code, r.payload[0] if r.code == "E" else None) for r in replies]
    assert codes == [("L", None), ("L", None), ("E", 1), ("E", 2), ("E", 3), ("E", 4),
                     ("E", 5), ("D", None), ("S", None)]
    m.learn([1, 2, 3, 4], 5)
    m.learn([0, 0, 0, 0], 6)
    assert assoc_fw.dump_memory(replies[-2]) == m.memory()


# ---- the benchmark's protocols -----------------------------------------------------------------

def test_class_incremental_prefix_is_the_incremental_device_memory():
    """The bench evaluates eq. 2 on restrictions of one I-I memory; learning the classes one by
    one with the device rule gives the same predictions on every prefix."""
    from kilobit.bench import assoc as bench
    X, y = _blobs(n_per=30, C=4, T=6, seed=5)
    prep = type("P", (), {})()
    prep.C, prep.T = 4, 6
    lab = (y - 1) // 3
    prep.Utr = prep.Ute = A.to_int8(X, 8)
    prep.ytr = prep.yte = lab
    a, same = bench.device_class_incremental(prep, 2, 3, orders=3)
    assert same and a.shape == (3, 4) and (a[:, 0] == 1.0).all()


def test_bench_quick_writes_the_report(tmp_path):
    from kilobit.bench import assoc as bench
    out = tmp_path / "assoc.md"
    res = bench.run(out=str(out), quick=True, datasets=("basicmotions",), progress=lambda *a: 0,
                    uno=False)  # the Uno has its own test above
    text = out.read_text()
    assert "## (a) Tables II-III" in text and "### basicmotions" in text
    r = res["results"]["basicmotions"]
    assert r["best"]["mem"] <= 0.1 * bench.nn_memory(r["prep"].M, r["prep"].T)
    verdict = "MET" if r["nn"][1] - r["best"]["acc"] <= 0.05 else "NOT MET"
    assert ("**%s**" % verdict) in text


@pytest.mark.parametrize("name,shape,C", [("digits-10", (1257, 540, 64), 10),
                                          ("mnist-10", (3500, 1500, 784), 10),
                                          ("basicmotions", (360, 360, 30), 4)])
def test_assoc_data_sets(name, shape, C):
    from kilobit import data
    s = data.load(name, seed=0)
    assert (len(s.y_train), len(s.y_test), s.dims) == shape
    assert set(np.unique(s.y_train)) == set(range(C)) == set(np.unique(s.y_test))
    assert np.all(np.isfinite(s.X_train)) and s.y_train.dtype == np.int64


def test_basicmotions_window_features():
    from kilobit import data
    A_ = np.arange(2 * 100, dtype=np.float64).reshape(1, 2, 100)
    X, owner = data.window_features(A_)
    assert X.shape == (9, 10) and (owner == 0).all()
    # channel 0, first window: samples 0..19 -> mean 9.5, std, min 0, max 19, mean |diff| 1
    assert np.allclose(X[0, :5], [9.5, np.std(np.arange(20)), 0, 19, 1])
    assert np.allclose(X[1, 5:], [119.5, np.std(np.arange(20)), 110, 129, 1])


def test_allocation_under_lock_fails_the_assoc_replay(tmp_path):
    """The lock in tools/replay/replay_assoc.py is real: a kbit whose learning step allocates
    (one bytes object) fails the replay with MemoryError; the real one passes the same step."""
    from kilobit.runtimes.kinds import MPASSOC as MPREPLAY
    from kilobit.runtimes.micropython.kbit_wasm import missing_wasm, run
    need(missing_wasm())
    kbit_dir = os.path.join(os.path.dirname(HERE), "device", "kbit")
    pkg = tmp_path / "kbit"
    pkg.mkdir()
    for name in os.listdir(kbit_dir):
        if name.endswith(".py") and not name.startswith("test_"):
            with open(os.path.join(kbit_dir, name)) as f:
                (pkg / name).write_text(f.read())
    with open(pkg / "assoc.py", "a") as f:
        f.write("\n_real = Assoc._learn\n\n\ndef _allocating(self, u, y):\n"
                "    bytes(4)\n    return _real(self, u, y)\n\n\nAssoc._learn = _allocating\n")
    model = tmp_path / "m.kb"
    model.write_bytes(A.AssocInt("I-I", 8, 2, 1, 2, 1).to_bytes())
    steps = tmp_path / "steps.txt"
    steps.write_text("L 3 1 2\n")
    args = [MPREPLAY, "/m.kb", "/steps.txt", "/mem.bin"]
    files = [("/m.kb", str(model)), ("/steps.txt", str(steps))]
    p = run(args, pkgs=[pkg], files=files, timeout=60)
    assert p.returncode == 1 and "MemoryError" in p.stderr, p.stderr
    p = run(args, files=files, timeout=60)
    assert p.returncode == 0 and replay_fields(p.stdout) == ["-1", "0", "1", "1", "1"], p.stderr


# ---- the image features (kilobit.data.features)
# ---------------------------------------------------

def test_fwht_is_the_sylvester_hadamard_matrix_and_hadamard_keeps_distances():
    from scipy.linalg import hadamard as sylvester

    from kilobit.data import features as FE
    X = np.random.default_rng(3).normal(size=(6, 16))
    assert np.allclose(FE.fwht(X), X @ sylvester(16) / 4.0)
    Y = FE.hadamard(X[:, :12], seed=5, rounds=2)  # 12 values padded to 16
    assert Y.shape == (6, 16)
    D = ((X[:, None, :12] - X[None, :, :12]) ** 2).sum(-1)
    assert np.allclose(((Y[:, None] - Y[None, :]) ** 2).sum(-1), D)
    s = FE.signs(32, 5)
    assert np.allclose(Y, FE.fwht(FE.fwht(np.pad(X[:, :12], ((0, 0), (0, 4))) * s[:16]) * s[16:]))
    assert not np.allclose(Y, FE.hadamard(X[:, :12], seed=6, rounds=2))
    with pytest.raises(ValueError):
        FE.fwht(X[:, :12])


def test_signs_are_the_contract_generators_top_bits():
    from kilobit.core.rng import Rng, seed_state
    from kilobit.data import features as FE
    g = Rng(seed_state(9))
    want = [-1.0 if g.next() & 0x8000 else 1.0 for _ in range(200)]
    got = FE.signs(200, 9)
    assert got.tolist() == want and 60 < (got > 0).sum() < 140


@pytest.mark.parametrize("gx,gy,bins", [(1, 0, {0: 1.0}), (0, 1, {2: 1.0}), (-1, 0, {4: 1.0}),
                                        (0, -1, {6: 1.0}), (1, 1, {1: 1.0}),
                                        (np.cos(np.pi / 8), np.sin(np.pi / 8),
                                         {0: 0.5, 1: 0.5})])
def test_hog_bins_a_ramp_by_its_signed_direction(gx, gy, bins):
    from kilobit.data import features as FE
    side = 8
    yy, xx = np.mgrid[0:side, 0:side]
    img = (gx * xx + gy * yy).reshape(1, -1)
    H = FE.hog(img, side, cells=side, bins=8)  # one cell per pixel
    assert np.isclose(np.linalg.norm(H), 1.0)
    # inside the image (the border's differences are one-sided) every pixel has the ramp's
    # direction
    H = H.reshape(side, side, 8)[1:-1, 1:-1].reshape(-1, 8)
    share = H / H.sum(1, keepdims=True)
    want = np.zeros(8)
    for b, w in bins.items():
        want[b] = w
    assert np.allclose(share, want[None, :], atol=1e-9)


def test_hog_cells_sum_the_gradient_magnitude_and_ignore_the_scale():
    from kilobit.data import features as FE
    side = 10
    X = np.random.default_rng(4).random((3, side * side))
    H = FE.hog(X, side, cells=side, bins=6).reshape(3, side, side, 6).sum(-1)
    img = X.reshape(3, side, side)
    gy, gx = np.gradient(img, axis=(1, 2))  # central differences / 2 inside the image
    mag = 2 * np.hypot(gx, gy)[:, 1:-1, 1:-1]
    ratio = H[:, 1:-1, 1:-1] / mag
    assert np.allclose(ratio, ratio[:, :1, :1])
    assert np.allclose(FE.hog(5 * X + 2, side), FE.hog(X, side))
    assert not FE.hog(np.ones((1, side * side)), side).any()
    with pytest.raises(ValueError):
        FE.hog(X, side + 1)


def test_image_features_have_128_values_for_both_image_sets():
    from kilobit.data import features as FE
    g = np.random.default_rng(0)
    for side in (8, 28):
        F = FE.image(g.random((4, side * side)), side)
        assert F.shape == (4, 128) and np.allclose(np.linalg.norm(F, axis=1), 1.0)


def test_bench_reports_raw_and_feature_rows_with_a_verdict_each(tmp_path):
    from kilobit.bench import assoc as bench
    out = tmp_path / "assoc.md"
    res = bench.run(out=str(out), quick=True, datasets=("digits-10",), progress=lambda *a: 0,
                    uno=False)
    text = out.read_text()
    f = res["features"]["digits-10"]
    assert f["prep"].T == 128 and f["prep"].M == res["results"]["digits-10"]["prep"].M
    rules = f["rules"]
    # raw pixels: the grid's figure; the features: what the devices' anchor rule achieves
    for label, r, acc in (("digits-10 on raw pixels", res["results"]["digits-10"],
                           res["results"]["digits-10"]["best"]["acc"]),
                          ("digits-10 on HOG+WHT features", f, rules["stream"])):
        assert "### %s (" % label in text
        verdict = "MET" if r["nn"][1] - acc <= 0.05 else "NOT MET"
        assert "- %s: I-I %.2f%%" % (label, 100 * acc) in text
        assert [ln for ln in text.splitlines()
                if ln.startswith("- %s:" % label)][0].endswith("**%s**" % verdict)
    assert "devices' anchor rule (paper's sampling %.2f%%)" % (100 * rules["random"]) in text
    steps = [row[0] for row in res["ablation"]["digits-10"]]
    assert steps == ["raw pixels", "WHT only", "HOG only", "HOG+WHT"]
    row = "| digits-10 on HOG+WHT | 0 | %d | %d | %.2f | %.2f |" % (
        f["best"]["P"], f["best"]["kt"], 100 * rules["random"], 100 * rules["stream"])
    assert row in text


def test_fill_rule_writes_these_rows_and_subspaces_p3_kt3():
    from kbit.assoc import Assoc
    # P = 3 subspaces of d = 2, k~ = 3: the counter stops at 1 + 2*3 = 7
    m = A.AssocInt("I-I", 8, 3, 2, 2, 3)
    dev = Assoc(0, 8, 3, 2, 2, 3)
    assert A.fill_max(3, 3) == 7
    # example n: (row within the class, subspace), None = every subspace; example 7 writes nothing
    written = [(0, None), (1, 0), (1, 1), (1, 2), (2, 0), (2, 1), (2, 2), None]
    # rows valid per subspace p = 0, 1, 2 after examples 0..n
    valid = [(1, 1, 1), (2, 1, 1), (2, 2, 1), (2, 2, 2), (3, 2, 2), (3, 3, 2), (3, 3, 3),
             (3, 3, 3)]
    want = np.zeros((6, 6), dtype=np.int64)
    for n in range(8):
        u = [10 * (n + 1) + j for j in range(6)]
        m.learn(u, 42)
        dev.learn(array("b", u), 42)
        if written[n] is not None:
            row, p = written[n]
            assert A.fill_slot(n, 3) == (row, p)
            cols = slice(0, 6) if p is None else slice(2 * p, 2 * p + 2)
            want[row, cols] = u[cols]
        assert m.nf[0] == dev.nf[0] == min(n + 1, 7)
        assert np.array_equal(m.anchors, want)
        assert list(dev.anchors) == want.reshape(-1).tolist()
        assert A.valid_rows(int(m.nf[0]), 3) == list(valid[n])
        assert [dev.rows(0, p) for p in range(3)] == list(valid[n])
        assert m.valid()[:3].sum(0).tolist() == list(valid[n])
    assert m.memory() == bytes(memory(dev))


def test_fill_rule_with_one_subspace_is_the_first_kt_examples():
    m = A.AssocInt("I-I", 8, 1, 3, 2, 4)
    for n in range(6):
        m.learn([n + 1] * 3, 9)
    assert m.nf[0] == 4 and m.anchors[:4].tolist() == [[n + 1] * 3 for n in range(4)]


def test_nearest_searches_only_the_rows_filled_for_each_subspace():
    from kbit.assoc import Assoc
    m = A.AssocInt("I-I", 8, 3, 2, 1, 3)
    m.learn([100] * 6, 1)          # row 0, every subspace
    m.learn([0] * 6, 1)            # row 1, subspace 0 only
    # subspaces 1 and 2 of row 1 hold zeros too, but are not anchors yet: row 0 is nearest
    k, dist = m.nearest(np.zeros((1, 6), dtype=np.int64))
    assert k.tolist() == [[1, 0, 0]] and dist.tolist() == [[0, 20000, 20000]]
    dev = Assoc(0, 8, 3, 2, 1, 3)
    dev.learn(array("b", [100] * 6), 1)
    dev.learn(array("b", [0] * 6), 1)
    dev._nearest(array("b", [0] * 6), 0, 1)
    assert list(dev._k) == [1, 0, 0] and list(dev._dist) == [0, 20000, 20000]


def test_one_example_gives_a_complete_anchor_row_with_several_rows_per_class():
    m = A.AssocInt("I-I", 8, 3, 2, 4, 3)
    g = np.random.default_rng(3)
    X = g.integers(-128, 128, size=(4, 6))
    for i, x in enumerate(X):
        m.learn(x, 20 + i)
    assert m.nf[:4].tolist() == [1] * 4
    for i, x in enumerate(X):
        assert m.predict(x) == (20 + i, 3)  # every subspace of its one anchor row votes


def test_fill_counter_range_is_a_parameter_check():
    from kbit.assoc import Assoc
    with pytest.raises(ValueError):
        A.AssocInt("I-I", 8, 128, 1, 1, 3)  # 1 + 2*128 = 257 > 255
    with pytest.raises(ValueError):
        Assoc(1, 8, 128, 1, 1, 3)
    A.AssocInt("I-I", 8, 127, 1, 1, 3)      # 255: the largest
    A.AssocInt("N-O", 8, 128, 1, 1, 3)      # N-O keeps no counter
    Assoc(2, 8, 128, 1, 1, 3)
