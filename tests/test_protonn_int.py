"""ProtoNN's integer model (docs/contract.md section 10) on the host, in kbit and in C.

Golden files (tests/golden/protonn-*.json) are replayed on every runtime by test_golden.py; here:
the vectorised reference against a plain loop written from the contract's text, hand-made cases
of each rule (D saturation, the floor index, k past the table, the multilabel mask, the first
argmax), every refusal of 10.2 with its own message on every runtime, the file round trip, the
golden set reaching the hard cases, and kbit's heap lock on MicroPython.
"""
import ast
import os
import struct

import numpy as np
import pytest

from conftest import need, replay_fields
from kilobit import golden
from kilobit.core import kbfile, smat
from kilobit.core.errors import ModelFileError
from kilobit.core.fixedpoint import SMALL
from kilobit.core.proj import Projection
from kilobit.models.protonn.golden import GOLDEN_SET, random_model
from kilobit.models.protonn.model import ProtoNNInt, check_params, fixed_bytes
from kilobit.runtimes import RuntimeFailure
from kilobit.runtimes.catalog import get

HERE = os.path.dirname(os.path.abspath(__file__))


# ---- the contract, one example at a time, as written in 7.1, 7.3 and 10.1 ---------------------

def _rsr(x, s):
    return x if s == 0 else (x >> s) + ((x >> (s - 1)) & 1)


def _sat(x):
    return max(-32767, min(32767, x))


def contract_fields(m, u):
    """P, D, k, S, prediction of one input u, with Python ints and loops only."""
    P = []
    for r in range(m.d):
        acc = sum(int(m.pj.Zq[j][r]) * u[j] for j in range(m.dims))
        P.append(_sat(_rsr(acc, int(m.pj.shift[r])) + int(m.pj.bias[r])))
    S = [0] * m.L
    D, K = [], []
    for j in range(m.m):
        s = 0
        for r in range(m.d):
            e = _sat(P[r] - (int(m.protos[j][r]) << m.bshift))
            t = _rsr(e * e, m.dshift)
            s = SMALL if s + t > SMALL else s + t
        i = s >> m.kshift
        k = int(m.table[i]) if i < m.nt else 0
        for cl in range(m.L):
            S[cl] += int(m.zmat[j][cl]) * k
        D.append(s)
        K.append(k)
    if m.multilabel:
        pred = sum(1 << cl for cl in range(m.L) if S[cl] > 0)
    elif m.L == 1:
        pred = 1 if S[0] > 0 else 0
    else:
        pred = 0
        for cl in range(1, m.L):
            if S[cl] > S[pred]:
                pred = cl
    return P + D + K + S + [pred]


def hand_model(protos, zmat, table, classes=2, multilabel=False, bshift=0, dshift=0,
               kshift=0, Z=None, shift=None, bias=None, wbits=16, in_bits=8):
    """A small model with an identity-like projection: P = codes (shift 0, bias 0)."""
    protos = np.asarray(protos)
    d = protos.shape[1]
    Z = np.eye(d, dtype=np.int64) if Z is None else np.asarray(Z)
    pj = Projection(Z, np.zeros(d, dtype=np.int64) if shift is None else shift,
                    np.zeros(d, dtype=np.int64) if bias is None else bias, in_bits, wbits)
    return ProtoNNInt(pj, protos, bshift, dshift, kshift, table, zmat, classes, multilabel)


@pytest.mark.parametrize("p", GOLDEN_SET, ids=golden.golden_name)
def test_vectorised_fields_equal_the_contract_loop(p):
    from kilobit.models.bonsai.model import golden_inputs
    p = dict(p)
    p.pop("model")
    n = min(p.pop("steps"), 12)
    m = random_model(**p)
    inputs = golden_inputs(p["dims"], p["in_bits"], n, p["seed"])
    assert m.field_rows(inputs) == [contract_fields(m, u) for u in inputs]


def test_distance_saturates_at_small_and_indexes_past_the_table():
    # e = 255 - (-32767) saturates to 32767; e^2 = 1073676289 < SMALL; two of them pass SMALL
    m = hand_model([[-32767, -32767], [255, 0]], [[7], [-3]], [100, 50, 9], kshift=28)
    f = m.fields([[255, 255]])
    assert f["D"][0].tolist() == [SMALL, 255 * 255]
    # SMALL >> 28 = 3: one past the 3-entry table, so k = 0; 65025 >> 28 = 0: table[0]
    assert f["k"][0].tolist() == [0, 100]
    assert f["scores"][0].tolist() == [-300] and f["pred"].tolist() == [0]


def test_index_is_the_floor_and_dshift_rounds_half_up():
    # e = 3: e^2 = 9, rshift_round(9, 1) = 5 (4.5 up), per dimension; D = 10, 10 >> 2 = 2
    m = hand_model([[0, 0]], [[1]], [1, 2, 3, 4], dshift=1, kshift=2)
    f = m.fields([[3, 3]])
    assert f["D"].tolist() == [[10]] and f["k"].tolist() == [[3]]
    assert f["pred"].tolist() == [1]
    # D = 11 (>> 2 = 2) still table[2]; D = 12 (>> 2 = 3) table[3]
    m = hand_model([[0, 0]], [[1]], [1, 2, 3, 4], kshift=2)
    assert m.fields([[3, 1]])["k"].tolist() == [[3]]  # 9 + 1 = 10 -> 2
    assert m.fields([[2, 1]])["k"].tolist() == [[2]]  # 5 -> 1
    assert m.fields([[3, 2]])["k"].tolist() == [[4]]  # 13 -> 3
    assert m.fields([[4, 0]])["k"].tolist() == [[0]]  # 16 -> 4: past the 4 entries


def test_multilabel_mask_and_first_argmax():
    m = hand_model([[0], [50]], [[5, -1, 2], [0, 3, 0]], [10, 0], classes=3, multilabel=True,
                   kshift=12)
    # input 0: D = (0, 2500) -> k = (10, 10): S = (50, 20, 20): mask 0b111
    assert m.fields([[0]])["pred"].tolist() == [7]
    m = hand_model([[0], [50]], [[5, -1, 2], [0, 3, 0]], [10, 0], classes=3, kshift=12)
    assert m.fields([[0]])["pred"].tolist() == [0]
    m = hand_model([[0], [50]], [[1, 4, 4], [0, 0, 0]], [10, 0], classes=3)
    f = m.fields([[0]])
    assert f["scores"].tolist() == [[10, 40, 40]] and f["pred"].tolist() == [1]  # first of a tie
    m = hand_model([[0]], [[0, 0, 0]], [10], classes=3, multilabel=True)
    assert m.fields([[0]])["pred"].tolist() == [0]  # no positive score: empty mask
    m = hand_model([[0]], [[-5]], [10])
    assert m.fields([[0]])["pred"].tolist() == [0]  # binary: score -50


def test_fixed_bytes_count_the_device_bytes_exactly():
    for p in GOLDEN_SET:
        p = dict(p)
        p.pop("model")
        p.pop("steps")
        m = random_model(**p)
        wb = m.wbits // 8
        mats = sum(len(smat.encode(M, wb, e)) for M, e in
                   ((m.pj.Zq, m.pj.enc), (m.protos, m.proto_enc), (m.zmat, m.z_enc)))
        assert m.device_bytes() == fixed_bytes(m.d, m.nt) + mats


def test_encodings_default_to_the_smaller():
    m = hand_model([[0, 0, 0, 0]] * 3 + [[1, 2, 3, 4]], [[1], [0], [0], [0]], [1])
    assert m.proto_enc == smat.SPARSE and m.z_enc == smat.SPARSE
    m = hand_model([[1, 2]], [[3]], [1])
    assert m.proto_enc == smat.DENSE and m.z_enc == smat.DENSE


def test_file_round_trip_with_and_without_scaler():
    m = random_model(40, 5, 9, 4, 8, 8, 0, smat.SPARSE, smat.SPARSE, smat.SPARSE, seed=3)
    blob = m.to_bytes()
    m2, sc = ProtoNNInt.from_bytes(blob)
    assert sc is None and m2.to_bytes() == blob
    assert (m2.proto_enc, m2.z_enc) == (smat.SPARSE, smat.SPARSE)
    lo, hi = np.arange(40, dtype=np.float32), np.arange(40, dtype=np.float32) + 1
    m3, sc = ProtoNNInt.from_bytes(m.to_bytes((lo, hi)))
    assert np.array_equal(sc.scaler[0], lo) and np.array_equal(sc.scaler[1], hi)
    assert m3.to_bytes() == blob
    assert m.device_bytes() == len(m.payload()) - 1


def test_check_params():
    assert check_params(8, 8, 256, 10, 20, 2, 0) is None
    assert check_params(16, 1, 1, 64, 255, 30, 1) is None
    bad = [(7, 8, 1, 1, 1, 2, 0), (8, 0, 1, 1, 1, 2, 0), (8, 8, 0, 1, 1, 2, 0),
           (8, 8, 1, 65, 1, 2, 0), (8, 8, 1, 1, 0, 2, 0), (8, 8, 1, 1, 1, 0, 0),
           (8, 8, 1, 1, 1, 2, 2), (8, 8, 1, 1, 1, 31, 1)]
    msgs = [check_params(*b) for b in bad]
    assert all(msgs) and len(set(msgs)) == len(msgs)


def test_constructor_refuses_outside_the_contract():
    ok = dict(protos=[[1, 2]], zmat=[[3]], table=[5])
    hand_model(**ok)
    for kw, text in [(dict(bshift=9), "bshift"), (dict(dshift=31), "dshift"),
                     (dict(kshift=31), "kshift"), (dict(table=[]), "kernel table of 0"),
                     (dict(table=[32768]), "kernel table entry"),
                     (dict(protos=[[20000, 0]], bshift=1), "<< bshift"),
                     (dict(zmat=[[3, 4]]), "labels of shape"),
                     (dict(protos=[[1, 2], [3, 4]], zmat=[[30000], [2770]]), "label column"),
                     (dict(zmat=[[-32768]]), "label weight outside")]:
        args = dict(ok)
        args.update(kw)
        with pytest.raises(ValueError, match="bad protonn model: .*" + text):
            hand_model(**args)


# ---- the payload of 10.2, assembled field by field so each refusal can be planted ------------

def parts(**over):
    """The payload of a valid small model (int16, d = 2, m = 2, K = 3), as named parts."""
    p = dict(head=struct.pack("<BBHBBBB", 16, 4, 3, 2, 2, 3, 0),
             proj=struct.pack("<BH", 0, 12) + struct.pack("<6h", 1, 0, 0, 1, 2, -3)
             + bytes([0, 1]) + struct.pack("<2h", 5, -5),
             kern=bytes([2, 1, 3, 3]) + struct.pack("<3H", 30000, 100, 0),
             protos=struct.pack("<BH", 0, 8) + struct.pack("<4h", 10, -10, 3, 0),
             labels=struct.pack("<BH", 1, 6) + bytes([1]) + struct.pack("<h", 7)
             + bytes([5]) + struct.pack("<h", -2),
             trailer=b"\x00")
    p.update(over)
    return p


def blob(**over):
    p = parts(**over)
    return kbfile.pack("protonn", b"".join(p[k] for k in
                                           ("head", "proj", "kern", "protos", "labels",
                                            "trailer")))


def _head(**f):
    v = dict(wbits=16, in_bits=4, dims=3, d=2, m=2, classes=3, multilabel=0)
    v.update(f)
    return struct.pack("<BBHBBBB", *v.values())


REFUSALS = [  # (name, file, host message part)
    ("head", kbfile.pack("protonn", b"\x10\x04\x03"), "truncated protonn payload"),
    ("wbits", blob(head=_head(wbits=12)), "wbits 12"),
    ("in_bits", blob(head=_head(in_bits=9)), "in_bits 9"),
    ("dims", blob(head=_head(dims=0)), "dims 0"),
    ("proj", blob(head=_head(d=0)), "proj 0"),
    ("prototypes", blob(head=_head(m=0)), "prototypes 0"),
    ("classes", blob(head=_head(classes=0)), "classes 0"),
    ("multilabel", blob(head=_head(multilabel=2)), "multilabel 2"),
    ("multilabel-classes", blob(head=_head(classes=31, multilabel=1)), "multilabel with 31"),
    ("projection-truncated", blob(proj=b"\x00\x0c\x00", kern=b"", protos=b"", labels=b"",
                                  trailer=b""), "truncated projection"),
    ("projection-encoding", blob(proj=b"\x02" + parts()["proj"][1:]),
     "unknown matrix encoding 2"),
    ("projection-shift", blob(proj=parts()["proj"][:15] + bytes([31, 1])
                              + parts()["proj"][17:]), "shift outside"),
    ("projection-column", blob(proj=struct.pack("<BH", 0, 800)
                               + struct.pack("<400h", *([32767, 0] * 200))
                               + bytes([0, 1]) + struct.pack("<2h", 5, -5),
                               head=_head(in_bits=8, dims=200)), "sum |Z[:, r]|"),
    ("kernel-truncated", blob(kern=bytes([2, 1]), protos=b"", labels=b"", trailer=b""),
     "truncated kernel section"),
    ("bshift", blob(kern=bytes([9, 1, 3, 3]) + parts()["kern"][4:]), "bshift 9"),
    ("dshift", blob(kern=bytes([2, 31, 3, 3]) + parts()["kern"][4:]), "dshift 31"),
    ("kshift", blob(kern=bytes([2, 1, 31, 3]) + parts()["kern"][4:]), "kshift 31"),
    ("table-empty", blob(kern=bytes([2, 1, 3, 0])), "kernel table of 0"),
    ("table-entry", blob(kern=bytes([2, 1, 3, 3]) + struct.pack("<3H", 32768, 100, 0)),
     "kernel table entry"),
    ("prototypes-truncated", blob(protos=struct.pack("<BH", 0, 8) + b"\x00\x00", labels=b"",
                                  trailer=b""), "truncated prototypes"),
    ("prototypes-encoding", blob(protos=b"\x03" + parts()["protos"][1:]),
     "prototypes: unknown matrix encoding 3"),
    ("prototypes-length", blob(protos=struct.pack("<BH", 0, 6) + struct.pack("<3h", 1, 2, 3)),
     "prototypes: dense matrix of 6 bytes"),
    ("prototypes-shifted", blob(protos=struct.pack("<BH", 0, 8)
                                + struct.pack("<4h", 10000, -10, 3, 0)), "<< bshift"),
    ("labels-truncated", blob(labels=struct.pack("<BH", 1, 6) + b"\x01", trailer=b""),
     "truncated labels"),
    ("labels-encoding", blob(labels=b"\x04" + parts()["labels"][1:]),
     "labels: unknown matrix encoding 4"),
    ("labels-beyond", blob(labels=struct.pack("<BH", 1, 3) + bytes([7])
                           + struct.pack("<h", 7)), "labels: sparse matrix entry beyond"),
    ("labels-zero", blob(labels=struct.pack("<BH", 1, 3) + bytes([1]) + struct.pack("<h", 0)),
     "labels: sparse matrix stores a zero"),
    ("labels-column", blob(labels=struct.pack("<BH", 0, 12)
                           + struct.pack("<6h", 30000, 0, 0, 2770, 0, 0)), "label column"),
    ("trailer", blob(trailer=b"\x02"), "bad protonn trailer"),
    ("scaler", blob(trailer=b"\x01" + bytes(8)), "bad protonn trailer"),
    ("padded", blob(trailer=b"\x00\x00"), "bad protonn trailer"),
]


def test_the_planted_model_is_valid():
    m, sc = ProtoNNInt.from_bytes(blob())
    assert sc is None and (m.d, m.m, m.L, m.nt) == (2, 2, 3, 3)
    assert m.to_bytes() == blob()  # the hand-assembled layout is the writer's


@pytest.mark.parametrize("name,data,text", REFUSALS, ids=[r[0] for r in REFUSALS])
def test_host_refuses(name, data, text):
    with pytest.raises(ModelFileError) as e:
        ProtoNNInt.from_bytes(data)
    assert text in str(e.value) and "protonn" in str(e.value), str(e.value)


def test_host_refusals_are_distinct():
    msgs = {}
    for name, data, _ in REFUSALS:
        try:
            ProtoNNInt.from_bytes(data)
        except ModelFileError as e:
            msgs.setdefault(str(e), []).append(name)
    same = {k: v for k, v in msgs.items() if len(v) > 1}
    # a scaler section of the wrong length is a bad trailer too (contract 4.1)
    assert same == {"bad protonn trailer": ["trailer", "scaler", "padded"]}, same


def test_container_errors_and_other_models():
    with pytest.raises(ModelFileError, match="not a protonn model"):
        ProtoNNInt.from_bytes(kbfile.pack("bonsai", b"\x00" * 8))
    bad = bytearray(blob())
    bad[20] ^= 1
    with pytest.raises(ModelFileError, match="CRC"):
        ProtoNNInt.from_bytes(bytes(bad))
    with pytest.raises(ModelFileError, match="truncated or padded model file"):
        ProtoNNInt.from_bytes(blob()[:-1])


# ---- the golden set ---------------------------------------------------------------------------

def _has_escape(data, wb):
    i = 0
    while i < len(data):
        if data[i] == 0:
            return True
        i += 1 + wb
    return False


def test_golden_set_reaches_the_hard_cases():
    seen = dict(P_sat=0, e_sat=0, D_sat=0, past=0, inside=0, tie=0, escape=0, int8=0, int16=0,
                binary=0, multiclass=0, multilabel=0, d1=0, d64=0, m1=0, m255=0)
    for p in GOLDEN_SET:
        path = os.path.join(HERE, "golden", golden.golden_name(p))
        doc = golden.load(path)
        m, _ = ProtoNNInt.from_bytes(bytes.fromhex(doc["model_file"]))
        rows = np.asarray(doc["expect"], dtype=np.int64)
        P = rows[:, :m.d]
        D = rows[:, m.d:m.d + m.m]
        S = rows[:, m.d + 2 * m.m:m.d + 2 * m.m + m.L]
        E = np.abs(P[:, None, :] - (m.protos << m.bshift)[None])
        seen["P_sat"] += (np.abs(P) == 32767).any()
        seen["e_sat"] += (E > 32767).any()
        seen["D_sat"] += (D == SMALL).any()
        seen["past"] += ((D >> m.kshift) >= m.nt).any()
        seen["inside"] += ((D >> m.kshift) < m.nt).any()
        top = S.max(axis=1, keepdims=True)
        seen["tie"] += ((S == top).sum(axis=1) > 1).any() or (m.L == 1 and (S == 0).any())
        wb = m.wbits // 8
        seen["escape"] += any(e == smat.SPARSE and _has_escape(smat.encode(M, wb, e), wb)
                              for M, e in ((m.pj.Zq, m.pj.enc), (m.protos, m.proto_enc),
                                           (m.zmat, m.z_enc)))
        seen["int8"] += m.wbits == 8
        seen["int16"] += m.wbits == 16
        seen["binary"] += m.L == 1
        seen["multiclass"] += m.L > 1 and not m.multilabel
        seen["multilabel"] += m.multilabel
        seen["d1"] += m.d == 1
        seen["d64"] += m.d == 64
        seen["m1"] += m.m == 1
        seen["m255"] += m.m == 255
    assert all(seen.values()), seen


def test_golden_files_are_registered():
    names = {golden.golden_name(p) for p in golden.golden_set() if p.get("model") == "protonn"}
    files = {f for f in os.listdir(os.path.join(HERE, "golden")) if f.startswith("protonn-")}
    assert names == files and len(names) == len(GOLDEN_SET) >= 5


# ---- kbit (CPython and MicroPython) and the C runtime -----------------------------------------

KBIT = os.path.join(os.path.dirname(HERE), "device", "kbit")


def test_kbit_protonn_is_integer_only_and_imports_under_cpython():
    from kbit import protonn
    assert protonn.ProtoNN.load and protonn.load
    with open(os.path.join(KBIT, "protonn.py")) as f:
        tree = ast.parse(f.read())
    bad = [n for n in ast.walk(tree)
           if (isinstance(n, ast.Constant) and isinstance(n.value, (float, complex)))
           or (isinstance(n, (ast.BinOp, ast.AugAssign)) and isinstance(n.op, ast.Div))
           or (isinstance(n, ast.Call) and getattr(n.func, "id", None) == "float")]
    assert not bad


@pytest.mark.parametrize("name,data,text", REFUSALS, ids=[r[0] for r in REFUSALS])
def test_kbit_refuses(name, data, text):
    from kbit.kbfile import ModelFileError as KE
    from kbit.protonn import ProtoNN
    with pytest.raises(KE) as e:
        ProtoNN.load(data)
    msg = str(e.value)
    assert msg.startswith("bad protonn model: ") or "trailer" in msg or "scaler" in msg, msg


def test_kbit_refusals_name_the_part():
    """kbit's texts follow the host's for each part of the payload (same words, 10.2)."""
    from kbit.kbfile import ModelFileError as KE
    from kbit.protonn import ProtoNN
    same = 0
    for _, data, text in REFUSALS:
        try:
            ProtoNN.load(data)
        except KE as e:
            same += text in str(e)
    assert same >= len(REFUSALS) - 3, same


def test_kbit_refuses_updates_out_of_order_and_keeps_going():
    from kbit.protonn import ProtoNN
    m = random_model(10, 3, 4, 3, 8, 8, seed=5)
    k = ProtoNN.load(m.to_bytes())
    k.update(3, 7)
    with pytest.raises(ValueError):
        k.update(3, 1)
    with pytest.raises(ValueError):
        k.update(10, 1)
    with pytest.raises(ValueError):
        k.update(4, 256)
    k.update(9, 255)
    u = [0] * 10
    u[3], u[9] = 7, 255
    assert [k.predict()] == m.predict([u]).tolist()
    assert list(k.P) + list(k.D) + list(k.k) + list(k.scores) == m.field_rows([u])[0][:-1]


@pytest.mark.parametrize("name,data,text", REFUSALS, ids=[r[0] for r in REFUSALS])
def test_c_host_refuses(name, data, text):
    r = get("c-host")
    need(r.missing())
    with pytest.raises(RuntimeFailure) as e:
        r.replay(data, [("P", None, [0, 0, 0])])
    # kb_model_strerror's texts: one per error code, the model named where it is protonn's
    kind = ("truncated" if "truncated" in text else "bad protonn trailer" if "trailer" in text
            else "bad protonn parameters")
    assert kind in str(e.value), str(e.value)


@pytest.mark.parametrize("runtime", ["kbit-cpython", "c-host"])
@pytest.mark.parametrize("wbits,encs", [(8, (1, 1, 1)), (16, (0, 0, 0)), (8, (0, 1, 0))])
def test_runtimes_on_more_random_models(runtime, wbits, encs):
    """Beyond the golden files: more shapes on the fast runtimes, bit for bit."""
    from kilobit.models.bonsai.model import golden_inputs
    r = get(runtime)
    need(r.missing())
    for seed, (dims, d, mm, K, ml) in enumerate([(30, 4, 7, 2, 0), (12, 9, 40, 6, 0),
                                                 (70, 3, 5, 4, 1)]):
        m = random_model(dims, d, mm, K, wbits, 8, ml, *encs, seed=300 + seed)
        inputs = golden_inputs(dims, 8, 10, seed)
        got = r.replay(m.to_bytes(), [("P", None, u) for u in inputs])
        assert got == [tuple(x) for x in m.field_rows(inputs)]


def test_uno_partial_fields_cannot_pass_vacuously():
    """The Uno reports no D or k (None); golden.compare checks the rest and refuses rows with
    nothing but None, or without the prediction."""
    doc = golden.load(os.path.join(HERE, "golden", golden.golden_name(GOLDEN_SET[0])))
    m, _ = ProtoNNInt.from_bytes(bytes.fromhex(doc["model_file"]))
    rows = [list(r) for r in doc["expect"]]
    part = [r[:m.d] + [None] * (2 * m.m) + r[m.d + 2 * m.m:] for r in rows]
    assert golden.compare(doc, "uno-sim", part) is None
    bad = [list(r) for r in part]
    bad[3][-2] += 1  # a score
    assert golden.compare(doc, "uno-sim", bad).field == "s0"
    empty = [[None] * len(r) for r in rows]
    assert golden.compare(doc, "uno-sim", empty).field == "fields"
    nopred = [r[:-1] + [None] for r in rows]
    assert golden.compare(doc, "uno-sim", nopred).field == "fields"


# The replay script with a ProtoNN whose predict allocates (one bytes object): under the lock of
# tools/replay/replay_predict.py it must fail with MemoryError; the real kbit passes the same.
def test_heap_lock_is_real_for_protonn_on_micropython(tmp_path):
    from kilobit.runtimes.kinds import MPREDICT as MPREPLAY
    from kilobit.runtimes.micropython.kbit_wasm import missing_wasm, run
    need(missing_wasm())
    m = random_model(20, 4, 6, 3, 8, 8, 0, 1, 1, 1, seed=9)
    model = tmp_path / "m.kb"
    model.write_bytes(m.to_bytes())
    steps = tmp_path / "steps.txt"
    steps.write_text("P " + " ".join(["200"] * 20) + "\n")
    files = [("/m.kb", str(model)), ("/steps.txt", str(steps))]
    p = run([MPREPLAY, "/m.kb", "/steps.txt"], files=files)
    assert p.returncode == 0, p.stderr
    assert [int(x) for x in replay_fields(p.stdout)] == m.field_rows([[200] * 20])[0]
    pkg = tmp_path / "kbit"
    pkg.mkdir()
    for name in os.listdir(KBIT):
        if name.endswith(".py"):
            with open(os.path.join(KBIT, name)) as f:
                (pkg / name).write_text(f.read())
    with open(pkg / "protonn.py", "a") as f:
        f.write("\n_predict = ProtoNN._predict\n\n\ndef _allocating(self):\n"
                "    bytes(3)\n    return _predict(self)\n\n\nProtoNN._predict = _allocating\n")
    p = run([MPREPLAY, "/m.kb", "/steps.txt"], pkgs=[pkg], files=files)
    assert p.returncode == 1 and "MemoryError" in p.stderr, p.stderr


def test_kbit_locks_the_heap_itself_on_micropython(tmp_path):
    """predict locks the heap itself (a port without a pystack would otherwise allocate frames)
    and leaves it unlocked: with no lock of the caller's, an allocation planted in _predict
    raises MemoryError, and the unpatched predict gives the reference's result."""
    from kilobit.runtimes.micropython.kbit_wasm import missing_wasm, run
    need(missing_wasm())
    m = random_model(12, 5, 9, 4, 16, 6, 1, 0, 1, 1, seed=10)
    model = tmp_path / "m.kb"
    model.write_bytes(m.to_bytes())
    script = tmp_path / "s.py"
    script.write_text(
        "import micropython\nfrom kbit.protonn import ProtoNN\n"
        "m = ProtoNN.load(open('/m.kb', 'rb'))\n"
        "y = r = None\n"
        "for j in range(12):\n    m.update(j, 40 + j)\n"
        "y = m.predict()\n"
        "micropython.heap_lock()\ndepth = micropython.heap_unlock()\n"
        "print(depth, y, ' '.join(str(v) for v in m.scores))\n"
        "real = ProtoNN._predict\n"
        "def bad(self):\n    bytes(3)\n    return real(self)\n"
        "ProtoNN._predict = bad\n"
        "try:\n    m.predict()\nexcept MemoryError:\n    r = 'MemoryError'\n"
        "print(r)\n")
    p = run([str(script)], files=[("/m.kb", str(model))], timeout=120)
    assert p.returncode == 0, p.stderr
    u = [40 + j for j in range(12)]
    f = m.fields([u])
    out = p.stdout.split()
    assert out[-1] == "MemoryError"
    assert [int(x) for x in out[:-1]] == [0, int(f["pred"][0])] + f["scores"][0].tolist()
