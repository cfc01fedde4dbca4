"""`kilobit bench peers` (issue 22): kilobit beside emlearn on the simulated Uno. A quick run on
digits-binary has every model's row, every chip reply equal to its own host reference, and the
plots; without emlearn (a bench-only extra) the command says what to install."""
import pytest

from conftest import need
from kilobit.bench import peers
from kilobit.core.errors import KilobitError
from kilobit.runtimes.catalog import get


@pytest.fixture(scope="module")
def quick(tmp_path_factory):
    try:
        peers.emlearn_module()
        missing = None
    except KilobitError as e:  # set-up installs the bench extra; under CI=true its absence fails
        missing = str(e)
    need(missing)
    need(get("uno-sim").missing())
    out = tmp_path_factory.mktemp("bench") / "peers.md"
    res = peers.run(out=str(out), quick=True, only=["digits"], progress=lambda s: None)
    return out, res


def test_quick_run_on_digits(quick):
    out, res = quick
    md = out.read_text()
    assert md.startswith("# kilobit beside emlearn on the Uno")
    assert "`kilobit bench peers --quick`" in md and "emlearn 0.23.2" in md
    rows = res["digits"]["rows"]
    assert [m for m, _, _ in rows][:2] == list(peers.KILOBIT)
    assert any(m.startswith("emlearn DecisionTree") for m, _, _ in rows)
    for m, acc, u in rows:
        assert "error" not in u, (m, u.get("error"))
        assert u["identical"] and u["uno_n"] == peers.QUICK_TEST, m
        assert 0 < u["cyc_mean"] <= u["cyc_max"] and u["model_bytes"] > 0, m
        assert "| %s | %.4f |" % (m, acc) in md
    for png in (peers.PNG_CYCLES, peers.PNG_BYTES):
        assert (out.parent / png).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        assert "(%s)" % png in md
    assert "## Where kilobit is slower" in md and "2^7" in md


def test_without_emlearn_the_command_says_what_to_install(monkeypatch, capsys):
    def missing():
        raise KilobitError("kilobit bench peers needs emlearn 0.23.2, a bench-only extra: "
                           ".venv/bin/python -m pip install -e '.[bench]'")
    monkeypatch.setattr(peers, "emlearn_module", missing)
    from kilobit.cli import main
    assert main(["bench", "peers", "-o", "/tmp/never-written.md"]) == 2
    err = capsys.readouterr().err
    assert "kilobit: error:" in err and "pip install -e '.[bench]'" in err
