"""The Uno's predictor paths (issue 22): firmware_c's AVR assembly for Bonsai and ProtoNN
(KB_SMAT_AVR: the split accumulators of the projection, its register blocks and row records,
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
    (700, 2, 1, 2, S, S),     # row records across gaps of more than 254 rows
    (300, 6, 2, 3, S, D),
])
def test_random_bonsai_on_the_uno(uno, dims, proj, depth, classes, zenc, tenc):
    m = random_bonsai(dims, proj, depth, classes, 8, 8, zenc, tenc, seed=dims + proj)
    same_as_host(uno, m, golden_inputs(dims, 8, 12, seed=proj))


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
