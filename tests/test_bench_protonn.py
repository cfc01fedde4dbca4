"""`kilobit bench protonn --quick`: the report has every section, and its verdicts follow from
its numbers."""
import pytest

from kilobit.bench import protonn as bench


@pytest.fixture(scope="module")
def quick(tmp_path_factory):
    out = tmp_path_factory.mktemp("bench") / "protonn.md"
    lines = []
    res, sd = bench.run(out=str(out), quick=True, progress=lines.append)
    return out.read_text(), res, sd, lines


def test_quick_report_sections(quick):
    md, res, sd, lines = quick
    assert md.startswith("# ProtoNN")
    assert "`kilobit bench protonn --quick`" in md and "QUICK" in md
    assert "- machine:" in md and "- date:" in md
    for heading in ("## Accuracy, size, training time", "## Beside the paper",
                    "## Robust training: digits-binary over %d seeds" % bench.QUICK_SEEDS,
                    "## Uno (ATmega328P", "## Must show"):
        assert heading in md, heading
    for label in ("digits-binary", "MNIST-2", "pendigits-10", "letter-26", "MNIST-10",
                  "mnist16-2"):
        assert "| %s" % label in md, label
    assert "97.10%" in md and "Table 2, row letter-26" in md  # the paper beside ours
    assert "**Result: PASS**" in md or "**Result: FAIL" in md
    assert any("wrote" in s for s in lines)


def test_quick_verdicts_follow_the_numbers(quick):
    md, res, sd, _ = quick
    assert set(res) == {"digits", "mnist-2", "pendigits-10", "letter-26", "mnist-10",
                        "mnist16-2", "mnist16-2-2k"}
    assert [a["seed"] for a in sd] == list(range(bench.QUICK_SEEDS))
    for claim, got, ok in bench.must_show(res, sd):
        assert "| %s | %s | %s |" % (claim, got, "PASS" if ok else "**FAIL**") in md
    for r in res.values():
        assert r["bytes8"] <= r["budget"] < r["bytes16"] or r["bytes16"] <= r["budget"]
        assert 0 <= r["int8"] <= 1 and 0 <= r["float"] <= 1 and r["n_train"] == bench.QUICK_TRAIN
    assert res["mnist16-2"]["dims"] == 256
    # every Uno reply was the host integer model's, and the timing is real
    for key in bench.UNO_KEYS:
        u = res[key]["uno"]
        assert "error" not in u, u.get("error")
        assert u["identical"] and u["uno_n"] == bench.QUICK_UNO_INPUTS
        assert 0 < u["cyc_mean"] <= u["cyc_max"] and u["static"] > 0 and u["stack"] > 0
        assert u["ram"] == u["static"] + u["stack"]
    # the 2 KB model stores more projection weights than the 1 KB one
    assert res["mnist16-2-2k"]["nnz"]["W"] > res["mnist16-2"]["nnz"]["W"]


def test_uno_not_measured_is_a_fail_not_a_crash():
    res = {"mnist16-2": {"label": "x", "float": 0.9, "int8": 0.9, "uno": {"error": "no avr"}}}
    lines = bench.must_show(res, [])
    assert ("256-feature binary model on the Uno: <= 3 ms, <= 256 B RAM", "not measured: no avr",
            False) in lines
