"""The integer quantizer (docs/contract.md 1.1) and the payload's extras trailer (4.1) on the host.

The reference below is the contract's text in plain Python integers; the host's numpy version
(kilobit.core.quant.IntQuantizer) must equal it for every value, and its transform() must lead
every model type's float quantization back to exactly the same codes (that is how the trainers
see the codes a board computes from raw readings)."""
import numpy as np
import pytest

from kilobit.core import kbfile
from kilobit.core.errors import DataError, ModelFileError
from kilobit.core.quant import SPAN_MAX, IntQuantizer, fit_inputs, quantize
from kilobit.models.assoc.model import to_int8
from kilobit.models.ckp.model import quantize as ckp_quantize
from kilobit.models.rkp.model import RKPInt


def reference(x, lo, hi, b, floor):
    """Contract 1.1, word for word."""
    S = 28 - b
    span = hi - lo
    top = (1 << b) - 1
    if span == 0 or x <= lo:
        return 0
    if x >= hi:
        return top
    M = ((1 << 28) + span // 2) // span
    R = 0 if floor else 1 << (S - 1)
    v = (x - lo) * M + R
    assert v < 1 << 30  # the contract's bound: a MicroPython small int, a C uint32_t
    return min(v >> S, top)


SPANS = [0, 1, 2, 3, 7, 100, 255, 1000, 4095, 65535, 1 << 20, SPAN_MAX]


@pytest.mark.parametrize("b", [1, 2, 4, 8, 16])
@pytest.mark.parametrize("floor", [False, True])
def test_codes_equal_the_contract_at_every_edge(b, floor):
    g = np.random.default_rng(b * 2 + floor)
    for span in SPANS:
        lo = int(g.integers(-(1 << 30), (1 << 30) - span))
        hi = lo + span
        xs = {lo - 1, lo, lo + 1, hi - 1, hi, hi + 1, -(1 << 30), (1 << 30) - 1}
        xs |= {lo + (span * k) // 16 for k in range(17)}
        xs |= set(int(v) for v in g.integers(lo - 3, hi + 4, 300))
        xs = sorted(xs)
        q = IntQuantizer(b, floor)
        assert q.set_bounds([lo], [hi]) is None
        got = q.codes(np.array(xs, dtype=np.float64)[:, None])[:, 0]
        want = [reference(x, lo, hi, b, floor) for x in xs]
        assert got.tolist() == want, (span, lo)


def test_every_value_of_small_spans_and_the_ties():
    """All x of spans 1..300 at b = 4: exact halves round up (R) or floor, never off by one."""
    for floor in (False, True):
        for span in range(1, 301):
            q = IntQuantizer(4, floor)
            q.set_bounds([-7], [span - 7])
            xs = np.arange(-9, span - 4)
            got = q.codes(xs[:, None].astype(np.float64))[:, 0].tolist()
            assert got == [reference(int(x), -7, span - 7, 4, floor) for x in xs]


@pytest.mark.parametrize("b", [1, 3, 4, 8])
def test_transform_leads_every_model_type_back_to_the_codes(b):
    g = np.random.default_rng(b)
    X = g.integers(-40000, 40000, (400, 5)).astype(np.float64)
    X[:, 3] = 12  # a constant feature: code 0, as the float path gives
    rnd = IntQuantizer(b).fit(X)
    flo = IntQuantizer(b, floor=True).fit(X)
    assert np.array_equal(quantize(rnd.transform(X), b), rnd.codes(X))  # rkp, bonsai, protonn
    assert np.array_equal(ckp_quantize(flo.transform(X), b), flo.codes(X))  # ckp floors
    assert np.array_equal(to_int8(rnd.transform(X), b), rnd.codes(X) - (1 << (b - 1)))
    assert (rnd.codes(X)[:, 3] == 0).all()
    # the codes stay close to the float path's: the quantizers differ only in the last bit
    from kilobit.core.quant import MinMaxScaler
    fl = quantize(MinMaxScaler().fit(X).transform(X), b)
    assert np.abs(fl - rnd.codes(X)).max() <= 1


def test_fit_inputs_takes_integers_only_where_the_contract_holds():
    ints = np.array([[1, -5], [300, 7], [2, 2]], dtype=np.float64)
    assert isinstance(fit_inputs(ints, 4), IntQuantizer)
    assert not isinstance(fit_inputs(ints + 0.5, 4), IntQuantizer)
    assert not isinstance(fit_inputs(ints, None), IntQuantizer)  # a caller without code bits
    assert not isinstance(fit_inputs(ints, 4, kind="float"), IntQuantizer)
    wide = np.array([[0, 0], [SPAN_MAX + 1, 1]], dtype=np.float64)
    assert not isinstance(fit_inputs(wide, 4), IntQuantizer)
    with pytest.raises(DataError):
        fit_inputs(wide, 4, kind="int")
    q = fit_inputs(ints, 4)
    with pytest.raises(DataError, match="integer readings: row 0, column 1"):
        q.codes(np.array([[1.0, 2.5]]))
    with pytest.raises(DataError, match="NaN"):
        q.codes(np.array([[1.0, np.nan]]))
    with pytest.raises(DataError, match="expected 2 features"):
        q.codes(np.array([[1.0, 2.0, 3.0]]))


def _rkp_file(extras):
    m = RKPInt("laplace", 4, 3, 5, -2, seed=1)
    m.learn(np.array([1, 2, 3]), 1)
    return m.to_bytes(scaler=extras)


def test_the_trailer_round_trips_and_old_files_read_the_same():
    q = IntQuantizer(4).fit(np.array([[0, -100, 5], [4095, 100, 5]], dtype=np.float64))
    blob = _rkp_file(kbfile.Extras(quant=q, labels=("idle", "walk")))
    _, ex = RKPInt.from_bytes(blob)
    assert ex.quant.lo_.tolist() == [0, -100, 5] and ex.quant.hi_.tolist() == [4095, 100, 5]
    assert ex.quant.bits == 4 and not ex.quant.floor and ex.labels == ("idle", "walk")
    assert ex.scaler is None and ex.label(1) == "walk" and ex.label(7) == 7
    assert RKPInt.from_bytes(_rkp_file(None))[1] is None
    lo, hi = np.zeros(3, np.float32), np.ones(3, np.float32)
    _, ex = RKPInt.from_bytes(_rkp_file((lo, hi)))  # has_scaler 1: the extras' bit 0
    assert ex.quant is None and ex.labels is None and ex.scaler[1].tolist() == [1.0] * 3


def _retrail(blob, trailer):
    name, pl = kbfile.unpack(blob)
    base = kbfile.unpack(_rkp_file(None))[1]
    return kbfile.pack(name, base[:-1] + trailer)


def _i32(*v):
    return np.array(v, dtype="<i4").tobytes()


@pytest.mark.parametrize("trailer", [
    b"\x03" + bytes(24),  # scaler and quantizer both
    b"\x08",  # an unknown bit
    b"\x02" + _i32(0, 0, 0, 1, 1),  # a quantizer one int short
    b"\x02" + _i32(0, 0, 0, 1, 1, 1, 9),  # one int too many
    b"\x02" + _i32(5, 0, 0, 4, 1, 1),  # lo > hi
    b"\x02" + _i32(0, 0, 0, 1 << 28, 1, 1),  # a span of 2^28
    b"\x02" + _i32(-(1 << 30) - 1, 0, 0, 0, 1, 1),  # lo below -2^30
    b"\x04\x00",  # K = 0
    b"\x04\x02\x01a",  # 2 labels announced, 1 there
    b"\x04\x01\x00",  # an empty label
    b"\x04\x01\x02a\x07",  # an unprintable one
    b"\x04\x01\x21" + b"a" * 33,  # 33 bytes
    b"\x04\x01\x01ax",  # bytes after the last section
    b"\x00x",  # bytes after an empty trailer
])
def test_bad_trailers_are_refused(trailer):
    with pytest.raises(ModelFileError, match="rkp (trailer|scaler)"):
        RKPInt.from_bytes(_retrail(_rkp_file(None), trailer))


def test_labels_are_checked_when_written():
    for bad in ((), ("",), ("a" * 33,), ("caf\u00e9",), tuple(str(i) for i in range(256))):
        with pytest.raises(ValueError):
            kbfile.Extras(labels=bad)


def _write_csv(path, rows, header="ax,ay,az,label"):
    path.write_text(header + "\n" + "".join(",".join(map(str, r)) + "\n" for r in rows))


def _gestures(n=300, seed=4):
    g = np.random.default_rng(seed)
    names = ("idle", "walk", "run")
    rows = []
    for i in range(n):
        c = i % 3
        x = g.normal([c * 3000, -c * 2000, 1000], 700).astype(int)
        rows.append([int(v) for v in x] + [names[c]])
    return rows


@pytest.mark.parametrize("model,args", [("protonn", []), ("bonsai", ["--epochs", "2,2,2"]),
                                        ("assoc", [])])
def test_a_model_trained_on_raw_readings_carries_its_quantizer_and_labels(tmp_path, model, args):
    from kilobit.cli import main
    from kilobit.models import registry
    csv = tmp_path / "gestures.csv"
    _write_csv(csv, _gestures())
    out = tmp_path / "m.kb"
    assert main(["train", model, "--data", str(csv), "--quiet", "-o", str(out)] + args) == 0
    m, ex = registry.get(model).load(out.read_bytes())
    assert ex.labels == ("idle", "run", "walk")  # sorted, as the class ids are given
    X = np.array([r[:3] for r in _gestures()], dtype=np.float64)
    assert ex.quant is not None and ex.quant.lo_.tolist() == X.min(axis=0).tolist()
    # a reading that is not an integer cannot go through the model's quantizer
    bad = tmp_path / "bad.csv"
    _write_csv(bad, [[1.5, 2, 3]], header="ax,ay,az")
    assert main(["predict", str(out), "--data", str(bad)]) == 2


def test_predict_answers_and_reads_the_users_labels(tmp_path, capsys):
    from kilobit.cli import main
    csv = tmp_path / "gestures.csv"
    _write_csv(csv, _gestures())
    out = tmp_path / "m.kb"
    assert main(["train", "protonn", "--data", str(csv), "--quiet", "-o", str(out)]) == 0
    capsys.readouterr()
    assert main(["predict", str(out), "--data", str(csv)]) == 0
    text = capsys.readouterr().out.splitlines()
    assert text[0] == "prediction,label" and len(text) == 301
    rows = [ln.split(",") for ln in text[1:]]
    assert {p for p, _ in rows} <= {"idle", "walk", "run"}
    assert [lab for _, lab in rows] == [r[3] for r in _gestures()]
    assert sum(p == lab for p, lab in rows) > 250
    unknown = tmp_path / "jump.csv"
    _write_csv(unknown, [[1, 2, 3, "jump"]])
    assert main(["predict", str(out), "--data", str(unknown)]) == 2
    assert "label 'jump' is not one of the model's labels (idle, run, walk)" in \
        capsys.readouterr().err
