"""examples/rkp_codes.py through a power cut in its first checkpoint, on the emulated Pico with the
real mpremote (issue 28): `kilobit deploy` puts kbit and banana.kb on a board whose flash is kept
in a host file (--flash); a second board on that flash dies right after the example's first
filesystem update (--power-cut 1: its first save's banana-learnt.kb.new written and closed, not
yet renamed); a third one runs the example again, which resumes from that file, finishes the
interrupted save and then answers exactly as the host integer reference.

The emulated Pico's file table drops a file still open for writing at a cut, so a torn PATH.new
cannot happen there: that case is cut at every write in tests/test_checkpoint.py (the example on
the unix port) and tests/test_littlefs.py."""
from kilobit.models.rkp.model import RKPInt
from test_boards import host_rkp_codes, kilobit, mpremote
from test_pico_board import need_pico


def _files(vb):
    code, out, err = mpremote(vb.port, "exec", "import os; print(sorted(os.listdir()))")
    assert code == 0, err
    return out.strip().splitlines()[-1]


def test_rkp_codes_resumes_after_a_power_cut_in_its_first_save(tmp_path):
    need_pico()
    from kilobit.runtimes.boards.virtual import POWER_CUT, VirtualBoard
    model = RKPInt("laplace", 4, 2, 62, -6, 255, seed=0).to_bytes()
    (tmp_path / "banana.kb").write_bytes(model)
    img = str(tmp_path / "pico.flash")
    vb = VirtualBoard(board="rp2040", flash=img).start()
    try:
        p = kilobit("deploy", str(tmp_path / "banana.kb"), "--board", "rp2040", "--port",
                    vb.port, timeout=600)
        assert p.returncode == 0, p.stdout + p.stderr
    finally:
        vb.close()

    vb = VirtualBoard(board="rp2040", flash=img, power_cut=1).start()
    try:
        code, out, _ = mpremote(vb.port, "run", "examples/rkp_codes.py")
        assert code != 0 and "accuracy" not in out  # the board died in the first save
        vb.proc.wait(timeout=20)
        assert vb.proc.returncode == POWER_CUT
    finally:
        vb.close()

    vb = VirtualBoard(board="rp2040", flash=img).start()
    try:
        listed = _files(vb)
        assert "'banana-learnt.kb.new'" in listed and "'banana-learnt.kb'" not in listed, listed
        code, out, err = mpremote(vb.port, "run", "examples/rkp_codes.py")
        assert code == 0, err + out
        want, _ = host_rkp_codes(model)
        lines = [ln for ln in out.splitlines() if "native module refused" not in ln]
        assert lines == ["resumed from banana-learnt.kb: 0 support vectors"] + want
        listed = _files(vb)
        assert "'banana-learnt.kb'" in listed and "'banana-learnt.kb.new'" not in listed, listed
    finally:
        vb.close()
