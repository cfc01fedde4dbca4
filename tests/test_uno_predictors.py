"""The Uno's predictor paths (issue 22): firmware_c's AVR assembly for Bonsai and ProtoNN
(KB_SMAT_AVR: the split accumulators of the projection, its register blocks and row table,
the dot products of the tree, ProtoNN's distances through D = Q + H 2^e) answers every input
bit for bit as the host's integer reference, on the simulated ATmega328P.

The golden files (test_golden.py) hold the contract's hard cases; here the shapes those paths
take apart: projections of d = 10 (one register block), 16 (two and a narrow one) and 3, sparse
projections with gaps longer than 254 rows, dense and sparse trees, one and many scores, and
trained ProtoNN models, whose distances take the expansion (random golden models mostly
saturate and take the C). Inputs stream whole and with their zero runs left out.
"""
import pytest

from conftest import need
from kilobit import data
from kilobit.core import smat
from kilobit.core.proj import golden_inputs
from kilobit.models.bonsai.golden import random_model as random_bonsai
from kilobit.models.protonn.golden import random_model as random_protonn
from kilobit.models.protonn.train import ProtoNN
from kilobit.runtimes.catalog import get

D, S = smat.DENSE, smat.SPARSE


@pytest.fixture(scope="module")
def uno():
    r = get("uno-sim")
    need(r.missing())
    from kilobit.runtimes.avr import fw_predict
    return fw_predict


def same_as_host(fw, m, inputs):
    want = m.field_rows(inputs)
    if hasattr(m, "protos"):  # the chip keeps no D or k (fw_predict): compare the rest
        lo, hi = m.d, m.d + 2 * m.m
        want = [f[:lo] + [None] * (hi - lo) + f[hi:] for f in want]
    for skip in (False, True):
        rows, res, _ = fw.replay(m.to_bytes(), inputs, "uno", skip_zeros=skip)
        assert rows == want
        assert len(fw.cycles(res)) == len(inputs)


@pytest.mark.parametrize("dims,proj,depth,classes,zenc,tenc", [
    (64, 10, 2, 2, D, D),     # one block of ten accumulators in registers
    (20, 16, 2, 5, D, S),     # blocks of seven and a narrow one; a sparse tree, five scores
    (30, 3, 1, 2, D, D),      # a block entered part way
    (700, 2, 1, 2, S, S),     # a sparse projection read through the row table
    (300, 6, 2, 3, S, D),
])
def test_random_bonsai_on_the_uno(uno, dims, proj, depth, classes, zenc, tenc):
    m = random_bonsai(dims, proj, depth, classes, 8, 8, zenc, tenc, seed=dims + proj)
    same_as_host(uno, m, golden_inputs(dims, 8, 12, seed=proj))


def test_a_sparse_projection_without_its_row_table(uno, monkeypatch):
    """Past TABLE_ROOM the header leaves the row table out and the Uno walks the model file's
    SPARSE matrix in C, in the same split form."""
    from kilobit.models import predictor
    m = random_bonsai(300, 6, 2, 3, 8, 8, S, D, seed=306)
    assert predictor.proj_rows(m.pj) is not None
    monkeypatch.setattr(predictor, "TABLE_ROOM", 0)
    assert predictor.proj_rows(m.pj) is None
    assert "KB_PROJ_ROWS" not in predictor.header("bonsai", 3, type(m), m.to_bytes())
    same_as_host(uno, m, golden_inputs(300, 8, 12, seed=6))


@pytest.mark.parametrize("dims,d,m,classes,multilabel,zenc,penc,lenc", [
    (64, 10, 20, 2, 0, D, D, D),
    (40, 16, 12, 5, 1, S, D, S),
    (300, 4, 9, 10, 0, S, S, D),
])
def test_random_protonn_on_the_uno(uno, dims, d, m, classes, multilabel, zenc, penc, lenc):
    p = random_protonn(dims, d, m, classes, 8, 8, multilabel, zenc, penc, lenc, seed=d + m,
                       nt=64)
    same_as_host(uno, p, golden_inputs(dims, 8, 12, seed=m))


@pytest.mark.parametrize("name,m", [("digits", 8), ("pendigits-10", 20), ("mnist16-2", 8)])
def test_trained_protonn_takes_the_expansion_bit_for_bit(uno, name, m):
    """Trained models keep e unsaturated and dshift <= bshift + 1: the Uno computes their
    distances as Q + H 2^e (one score in registers, or ten in RAM; a dense or a sparse
    projection)."""
    s = data.load(name)
    est = ProtoNN(d=10, m=m, budget=1024, epochs=(2, 1), batch=64, seed=0).fit(
        s.X_train[:300], s.y_train[:300])
    p = est.int_[8]
    assert p.bshift >= 1 and p.dshift <= p.bshift + 1
    codes = est.codes(s.X_test[:40])
    same_as_host(uno, p, [[int(c) for c in u] for u in codes])


@pytest.mark.parametrize("eT,ws,vs,seed", [
    (14, 0, 0, 1),     # no shift at all: w saturates, v clamps to +-one
    (14, 7, 3, 2),     # a trained model's shifts (5 to 7 bits: the fifth byte's way)
    (1, 8, 13, 3),     # whole bytes; tq = 14
    (7, 13, 4, 4),     # a byte and 5 bits
    (14, 17, 9, 5),    # two bytes and a bit, v mostly inside (-one, one)
    (9, 24, 20, 6),    # three bytes: w and v mostly 0 (classes skipped on the chip)
])
def test_the_uno_tree_walk_at_every_shift(uno, eT, ws, vs, seed):
    """The Uno's tree walk (kb_bonsai.h, kb_bonsai_avr_tree) against the host for shifts that
    take each of its paths: whole bytes, bits to the right, bits to the left into a fifth byte,
    w saturating (+-32767), v at and past +-one, w = 0, and the classes whose W or V row the
    derived table leaves out."""
    import numpy as np

    from kilobit.models.bonsai.model import BonsaiInt
    r = random_bonsai(40, 6, 2, 5, 8, 8, S, S, seed=seed)
    g = np.random.default_rng(seed)
    W, V = r.W.copy(), r.V.copy()
    W[1, 2] = 0  # a class with no W weight at node 1, one with no V weight at node 2
    V[2, 3] = 0
    wshift = np.clip(ws + g.integers(-1, 2, r.N), 0, None)
    vshift = np.clip(vs + g.integers(-1, 2, r.N), 0, None)
    m = BonsaiInt(r.pj, r.theta, W, V, wshift, vshift, eT, r.depth, r.classes,
                  tree_enc=r.tree_enc)
    same_as_host(uno, m, golden_inputs(40, 8, 12, seed=seed))


@pytest.mark.parametrize("name,classes,m", [("pendigits-10", 7, 40), ("letter-26", 26, 70)])
def test_trained_protonn_labels_in_groups_bit_for_bit(uno, name, classes, m):
    """Many scores on the Uno (kb_protonn_avr_labels): the labels 4, then 2, then 1 at a time
    (7 classes: 4 + 2 + 1; 26: six 4s and a 2) over blocks of up to 64 prototypes (40: one
    block; 70: a block and a part one)."""
    s = data.load(name)
    keep = s.y_train < classes
    est = ProtoNN(d=10, m=m, budget=4096, epochs=(2, 1), batch=64, seed=0).fit(
        s.X_train[keep][:600], s.y_train[keep][:600])
    p = est.int_[8]
    assert p.L == classes and p.m == m and p.bshift >= 1 and p.dshift <= p.bshift + 1
    assert p.proto_enc == D and p.z_enc == D  # the paths of kb_protonn_avr_kern and _labels
    codes = est.codes(s.X_test[:30])
    same_as_host(uno, p, [[int(c) for c in u] for u in codes])


@pytest.fixture(scope="module")
def pendigits_protonn():
    s = data.load("pendigits-10")
    est = ProtoNN(d=9, m=22, budget=4096, epochs=(2, 1), batch=64, seed=0).fit(
        s.X_train[:500], s.y_train[:500])
    codes = est.codes(s.X_test[:24])
    return est.int_[8], [[int(c) for c in u] for u in codes]


def _variant(p, **kw):
    from kilobit.models.protonn.model import ProtoNNInt
    args = dict(projection=p.pj, protos=p.protos, bshift=p.bshift, dshift=p.dshift,
                kshift=p.kshift, table=p.table, zmat=p.zmat, classes=p.classes,
                multilabel=p.multilabel, proto_enc=p.proto_enc, z_enc=p.z_enc)
    args.update(kw)
    return ProtoNNInt(**args)


@pytest.mark.parametrize("case", ["trained", "sh=8", "byte 0", "byte 2", "byte 3", "ksat",
                                  "sparse labels", "one score", "one score, sparse",
                                  "one score, ksat"])
def test_the_uno_distance_kernel_at_every_shift(uno, pendigits_protonn, case):
    """The Uno's distance kernel (kb_protonn.h, kb_protonn_avr_kern: four prototypes at a time,
    the kernel index from immediates the header makes) against the host: the index's bytes and
    bits at every place (sh = kshift - e: 14 as trained, 8 with no bits, below 8, two bytes,
    three), a saturated D inside the table (ksat != 0), labels SPARSE (the C through the list)
    and one score (S in registers, the labels in the group table); d = 9 (odd: a half turn), m =
    22 (a padded group)."""
    import numpy as np

    from kilobit.models.protonn import firmware
    p, inputs = pendigits_protonn
    ramp = np.linspace(32767, 1, 255).astype(np.int64)
    one = dict(classes=2, zmat=p.zmat[:, :1] - p.zmat[:, 1:2] // 2)
    kw = {"trained": {}, "sh=8": dict(kshift=p.bshift + 1 - p.dshift + 8),
          "byte 0": dict(kshift=p.bshift + 1 - p.dshift + 5, table=ramp),
          "byte 2": dict(kshift=p.bshift + 1 - p.dshift + 19, table=ramp),
          "byte 3": dict(bshift=1, protos=p.protos >> 6, dshift=0, kshift=30, table=ramp),
          "ksat": dict(kshift=24, table=ramp),
          "sparse labels": dict(z_enc=S),
          "one score": one, "one score, sparse": dict(one, z_enc=S),
          "one score, ksat": dict(one, kshift=24, table=ramp)}[case]
    m = _variant(p, **kw)
    k = firmware.avr_consts(m)
    assert k is not None  # the header gives the firmware the kernel
    if case == "ksat":
        assert k["ksat"] != 0
    want_sh = {"sh=8": 8, "byte 0": 5, "byte 2": 19, "byte 3": 28}.get(case)
    if want_sh is not None:
        assert k["sh"] == want_sh
    same_as_host(uno, m, inputs)


def test_the_uno_takes_the_distance_kernel(uno, pendigits_protonn, monkeypatch):
    """The constants the header makes agree with those the chip derives (else it takes the C,
    right but slow): the same replies in fewer cycles than a firmware without the kernel's
    table. kb_sim counts cycles exactly, so the comparison is deterministic."""
    from kilobit.models.protonn import firmware
    p, inputs = pendigits_protonn
    assert "#define KB_PROTONN_BLOCK 24 " in firmware.header(p.to_bytes())  # one pass, padded
    _, fast, _ = uno.replay(p.to_bytes(), inputs, "uno")
    monkeypatch.setattr(firmware, "avr_consts", lambda m: None)
    _, slow, _ = uno.replay(p.to_bytes(), inputs, "uno")
    assert sum(uno.cycles(fast)) < sum(uno.cycles(slow))


def test_the_profile_accounts_for_every_handler_cycle(uno, pendigits_protonn, tmp_path):
    """kb_sim --profile (kilobit.runtimes.avr.profile): the cycles it puts at the handlers'
    addresses add up to exactly the cycles between their markers, and a ProtoNN prediction of
    ten scores spends the most in its distance kernel and its labels."""
    from kilobit.runtimes.avr import profile
    p, inputs = pendigits_protonn
    path = tmp_path / "prof.txt"
    _, res, _ = uno.replay(p.to_bytes(), inputs[:6], "uno", profile=str(path))
    prof = profile.read(str(path))
    assert sum(prof.values()) == sum(uno.cycles(res))
    elf, _ = uno.build(p.to_bytes(), "uno")
    funcs = profile.per_function(elf, prof)
    assert sum(c for c, _ in funcs) == sum(prof.values())
    assert {funcs[0][1], funcs[1][1]} == {"kb_protonn_avr_kern", "kb_protonn_avr_labels"}
    lines = profile.per_line(elf, prof)
    assert sum(c for _, c, _ in lines) == sum(prof.values())
