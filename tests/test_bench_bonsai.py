"""`kilobit bench bonsai --quick`: the report has every section, and its verdicts follow from
its numbers."""
import pytest

from kilobit.bench import bonsai as bench


@pytest.fixture(scope="module")
def quick(tmp_path_factory):
    out = tmp_path_factory.mktemp("bench") / "bonsai.md"
    lines = []
    res = bench.run(out=str(out), quick=True, progress=lines.append)
    return out.read_text(), res, lines


def test_quick_report_sections(quick):
    md, res, lines = quick
    assert md.startswith("# Bonsai")
    assert "`kilobit bench bonsai --quick`" in md and "QUICK" in md
    assert "- machine:" in md and "- date:" in md
    for heading in ("## Accuracy, size, training time", "## Uno (ATmega328P", "## Must show"):
        assert heading in md, heading
    for label in ("digits-binary", "MNIST-2", "pendigits-10", "letter-26", "mnist16-2"):
        assert "| %s" % label in md, label
    assert "2.93 ms" in md  # the paper's BonsaiOpt beside ours
    assert "**Result: PASS**" in md or "**Result: FAIL" in md
    assert any("wrote" in s for s in lines)


def test_quick_verdicts_follow_the_numbers(quick):
    md, res, _ = quick
    assert set(res) == {"digits", "mnist-2", "pendigits-10", "letter-26", "mnist16-2",
                        "mnist16-2-2k"}
    for claim, got, ok in bench.must_show(res):
        assert "| %s | %s | %s |" % (claim, got, "PASS" if ok else "**FAIL**") in md
    d, m = res["digits"], res["mnist16-2"]
    assert m["dims"] == 256 and (m["depth"], m["proj"]) == (3, 10)
    assert d["bytes8"] < d["bytes16"]
    # every Uno reply was the host reference's, and the timing is real
    for r in res.values():
        u = r["uno"]
        assert "error" not in u, u.get("error")
        assert u["identical"] and u["uno_n"] == bench.QUICK_UNO_INPUTS, r["label"]
        assert 0 < u["cyc_mean"] <= u["cyc_max"] and u["static"] > 0 and u["stack"] > 0
        assert u["weights"] > 0 and u["per_weight"] == u["cyc_mean"] / u["weights"]
        assert 0 <= r["int8"] <= 1 and 0 <= r["float"] <= 1
    # issue 22's claims are in the table: the mean targets and cycles per stored weight
    assert "<= 0.8 ms per prediction on average (issue 22)" in md
    assert md.count("cycles per stored non-zero weight (issue 22)") == len(res)
