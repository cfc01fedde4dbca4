"""`kilobit bench features` (issue 29): a quick run measures kbit native and bytecode on the
emulated Pico, kb_features_extract on the simulated Uno and kilobit's FFT beside emlearn's on
the emulated RP2040, every board's integers checked against the host's; no timing is asserted
(the emulators' counts are the page's business), only that the figures are there, come from the
runs, and that a board answering other integers is an error. Without emlearn's pinned headers
(scripts/setup.sh) the command says what is missing, before measuring; under CI=true their
absence fails."""
import numpy as np
import pytest

from conftest import need
from kilobit.bench import features as bf
from kilobit.core.errors import KilobitError
from kilobit.core.features import fft_bands


@pytest.fixture(scope="module")
def quick(tmp_path_factory):
    need(bf.missing())
    out = tmp_path_factory.mktemp("bench") / "features.md"
    pic, avr, fft = bf.run(str(out), quick=True, progress=lambda s: None)
    return out.read_text(), pic, avr, fft


def test_quick_page_has_every_section_from_the_runs(quick):
    md, pic, avr, fft = quick
    assert md.startswith("# Window features on the boards (issue 29)")
    assert "--quick: a smoke run" in md
    for head in ("## Emulated Pico", "## Simulated Uno", "## The FFT beside emlearn's",
                 "## Accuracy against numpy's float64 FFT", "## Must show"):
        assert head in md, head
    assert set(pic) == {label for label, _, _, _ in bf.QUICK_CASES} | {"peer 64", "peer 128"}
    for P in (64, 128):  # emlearn's native module beside kbit's
        peer = pic.pop("peer %d" % P)
        k, e = peer["kbit"]["native"], peer["eml"]["native"]
        assert 0 < k[1] and 0 < e[1] and "| %d | %d |" % (P, k[1]) in md
    t = pic["time 3x100"]
    assert set(t) == {"run", "features"}  # the plain function beside the extractor
    for calls in pic.values():
        for paths in calls.values():
            nat, byt = paths["native"], paths["bytecode"]
            assert 0 < nat[0] and 0 < byt[0] and nat[1] < byt[1]
            assert "| %d |" % nat[1] in md
    assert all(isinstance(v, int) and v > 0 for v in avr.values()), avr
    assert set(fft) == {64, 128}
    for P, f in fft.items():
        assert 0 < f["ours"] and 0 < f["eml_fft"] <= f["eml_bands"]
        assert "| %d | %d |" % (P, f["ours"]) in md
        for k in ("err_ours_bands", "err_ours_bins", "err_eml_bins", "err_eml_bands"):
            assert len(f[k]) == f["windows"] and np.all(np.isfinite(f[k])), k
    assert "128-point FFT within 1.5x of emlearn's on the same emulated chip" in md


def test_the_peer_program_answers_the_hosts_integers_and_numpys_bins():
    """One window of a pure tone on bin 5: kb_fft_bands' energies are the host's, all in band
    0 (bins 1..4 hold nothing), emlearn's bin 5 is numpy's within float32 rounding."""
    need(bf.peer_missing())
    P, p = 64, 6
    w = [int(round(3000 * np.cos(2 * np.pi * 5 * i / P))) + 100 for i in range(P)]
    ours, bins, times = bf.run_peer(bf.build_peer(), p, 8, [w])
    assert ours == fft_bands(np.array([w]), 1, p, 8).tolist()
    assert ours[0][1] > 0 and ours[0][0] == 0 and sum(ours[0][2:]) == 0
    D, _ = bf.reference([w], p, 8)
    assert abs(bins[0][5] - D[0, 5]) < 1e-5 * abs(D[0, 5])
    assert all(c > 0 for c in times[0])


def test_a_board_answering_other_integers_is_an_error():
    want = {"time 3x100": [1, 2, 3]}
    good = "path native\ntime 3x100 run out 1 2 3\ntime 3x100 run native cycles 5 5 5\n"
    res = bf.parse_pico(good, want)
    assert res == {"time 3x100": {"run": {"native": (5, 5, 5)}}}
    with pytest.raises(KilobitError, match="differ from the host"):
        bf.parse_pico(good.replace("out 1 2 3", "out 1 2 4"), want)
    with pytest.raises(KilobitError, match="did not run natively"):
        bf.parse_pico(good.replace("path native", "path bytecode: no module"), want)


def test_relative_error_is_measured_per_window():
    b = np.array([[3.0, 4.0], [0.0, 0.0]])
    a = np.array([[3.0, 4.5], [0.0, 0.0]])
    assert bf.rel(a, b).tolist() == [0.1, 0.0]
    assert bf.rel([[1.0, 0.0]], [[0.0, 0.0]]).tolist() == [float("inf")]


def test_without_emlearn_the_command_says_so_before_measuring(monkeypatch, capsys):
    monkeypatch.setattr(bf, "EMLEARN", "/nonexistent/emlearn")
    monkeypatch.setattr(bf, "pico", lambda *a: pytest.fail("measured before checking"))
    from kilobit.cli import main
    assert main(["bench", "features", "-o", "/tmp/never-written.md"]) == 2
    err = capsys.readouterr().err
    assert "kilobit: error:" in err and "scripts/setup.sh" in err
