"""`kilobit bench rkp` in quick mode: the report has every section; helpers are right."""
import numpy as np
import pytest

from kilobit.bench import rkp as bench
from kilobit.models.rkp.model import power_table, weight, weights


@pytest.fixture(scope="module")
def quick(tmp_path_factory):
    out = tmp_path_factory.mktemp("bench") / "rkp.md"
    lines = []
    summary = bench.run(out=str(out), shuffles=10, quick=True, progress=lines.append)
    return out.read_text(), summary, lines


def test_quick_report_sections(quick):
    md, summary, lines = quick
    assert md.startswith("# Random Kernel Perceptron")
    assert "`kilobit bench rkp --quick`" in md and "- machine:" in md and "- date:" in md
    assert "QUICK" in md and "2 shuffles" in md
    for heading in ("## (a) Tables 3-5", "### Banana (paper Table 3)",
                    "### Checkerboard (paper Table 4)",
                    "## (b) A sweep (Figures 4-7)", "### Banana: M = 2, 50 SVs",
                    "### Must-show: Banana approximation accuracy >= 99%",
                    "## (c) Acceptance: Banana, 4 bits, 62 SVs, A = -6",
                    "## (d) Weight error of the log method (Figure 2)", "## Cross-check"):
        assert heading in md, heading
    assert "**Result: PASS**" in md or "**Result: FAIL**" in md
    # the paper's numbers stand beside ours
    assert "| 4 | 62 | 70 |" in md and "81.08 | 81.00 |" in md
    assert "| 8 | 32 | 68 |" in md
    assert "approx, same SVs" in md and "approx, independent" in md
    assert lines and any("wrote" in s for s in lines)


def test_quick_cross_check_is_identical(quick):
    md, summary, _ = quick
    assert summary["checks"]
    assert all(ok for _, ok in summary["checks"]), summary["checks"]
    assert "**DIFFERENT**" not in md


def test_quick_weight_error_rounding_beats_truncation(quick):
    _, summary, _ = quick
    for r in summary["weights"]:
        assert r["round"][0] <= 2  # max |error| of our log method
        assert r["round"][1] <= r["trunc"][1]


def test_budget_svs_matches_the_paper():
    assert [bench.budget_svs(2, b) for b in (2, 4, 6, 8)] == [112, 62, 43, 32]
    assert bench.budget_svs(2, 5) == 50 and bench.budget_svs(16, 5) == 6


@pytest.mark.parametrize("kernel, A, B", [("laplace", -2, 5), ("laplace", 3, 8), ("rbf", 0, 4),
                                          ("laplace", -8, 5)])
def test_log_weights(kernel, A, B):
    table = power_table(kernel, B, A)
    k = np.arange(1 << (len(table) + 1))
    assert np.array_equal(bench.log_weights(k, table, 255), weights(k, table, 255))
    trunc = bench.log_weights(k, table, 255, rounding=False)
    for kk in [v for v in (0, 1, 3, 5, 6, 7, 11, len(k) - 1) if v < len(k)]:
        w = 255 if kk == 0 else None
        if w is None:  # the paper's Algorithm 2 by hand, truncating
            bits = [b for b in range(kk.bit_length()) if kk >> b & 1][::-1]
            w = table[bits[0]] if bits[0] < len(table) else 0
            for b in bits[1:]:
                w = w * table[b] // 255
        assert trunc[kk] == w
        assert bench.log_weights(np.array([kk]), table, 255)[0] == weight(kk, table, 255)


def test_sequential_weights():
    assert list(bench.sequential_weights(4, 255, 128)) == [255, 128, 128 * 128 // 255,
                                                           (64 * 64) // 128]


def test_bad_shuffles(tmp_path):
    from kilobit.core.errors import KilobitError

    with pytest.raises(KilobitError, match="shuffles"):
        bench.run(out=str(tmp_path / "x.md"), shuffles=0, progress=None)
    assert not (tmp_path / "x.md").exists()
