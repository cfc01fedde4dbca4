"""Learnt state in the AVR learners' EEPROM (firmware_c/avr/kb_persist.h, docs/contract.md
section 11): the power is cut at every EEPROM byte write of the first checkpoints (kb_sim
--cut-eeprom-write: the byte keeps its old value, or is left torn at 0xFF); after each cut the
chip restarts from its EEPROM with the last complete checkpoint or the one under way and then
answers exactly as the host reference (kilobit.runtimes.avr.powercut). The whole streams are cut in
`kilobit bench faults`; here the first steps, which hold the first checkpoint (the EEPROM
written whole) and several after it, and the first checkpoint on its own."""
import os
import shutil
import tempfile

import pytest

from conftest import need
from kilobit.core import goldenfile
from kilobit.runtimes.avr import firmware, kb_sim, powercut, protocol

HERE = os.path.dirname(os.path.abspath(__file__))
GOLDEN = os.path.join(HERE, "golden")
BANANA = os.path.join(GOLDEN, "rkp-laplace-b4-t62-m2-a-6-s1.json")
CKP = os.path.join(GOLDEN, "ckp-L560-bits6-dims2-seed21-steps500-width100.json")
ASSOC = os.path.join(GOLDEN, "assoc-P3-R1-approachI-I-bits4-cap6-d2-kt3-seed54-steps40.json")
BIG_ASSOC = os.path.join(GOLDEN,
                         "assoc-P1-R1-approachI-I-bits8-cap10-d16-kt10-seed41-steps160.json")


@pytest.fixture(autouse=True)
def _toolchain():
    need(kb_sim.missing())


def model(path):
    return bytes.fromhex(goldenfile.load(path)["model_file"])


@pytest.mark.parametrize("path,board,steps,every,scheme", [
    (BANANA, "attiny2313", 12, 1, "journal"),  # the paper's chip: base copy + redo journal
    (BANANA, "uno", 12, 1, "slots"),
    (BANANA, "uno", 12, 0, "slots"),  # checkpoint frames only
    (CKP, "uno", 10, 1, "slots"),
    (ASSOC, "uno", 4, 1, "slots"),
])
def test_every_cut_point_recovers(path, board, steps, every, scheme):
    r = powercut.run(path, board, steps=steps, every=every)
    assert r["scheme"] == scheme
    assert r["checkpoints"] >= 3 and r["writes"] > r["layout"]["state_bytes"]
    assert r["tried"] == 2 * r["writes"]  # every write, old value kept and torn
    assert r["failures"] == [] and r["recovered"] == r["tried"]


@pytest.mark.parametrize("path,board,steps", [
    (BANANA, "attiny2313", 1),  # the journal's base copy
    (BANANA, "uno", 1),
    (CKP, "uno", 2),  # its first step changes nothing: no checkpoint
    (ASSOC, "uno", 2),
])
def test_every_cut_of_the_first_checkpoint_recovers(path, board, steps):
    """Issue 28: the first checkpoint alone, from a blank EEPROM: a cut at each of its writes
    (old value kept, torn) restarts with the model as flashed or the checkpoint under way."""
    r = powercut.run(path, board, steps=steps, every=1)
    assert r["checkpoints"] == 1 and r["writes"] > r["layout"]["state_bytes"]
    assert r["failures"] == [] and r["recovered"] == r["tried"] == 2 * r["writes"]


def test_a_wrong_checkpoint_is_caught(tmp_path, monkeypatch):
    """The check can fail: a firmware that writes the new checkpoint over the newest slot
    instead of the other one restores neither state after some cuts."""
    src = os.path.join(firmware.FIRMWARE_C, "avr", "kb_persist.h")
    with open(src) as f:
        text = f.read()
    good = "a = (kb_ee_t)(k ? 0u : KB_SLOT_BYTES);"
    assert good in text
    fw = tmp_path / "firmware_c"
    shutil.copytree(firmware.FIRMWARE_C, fw)
    (fw / "avr" / "kb_persist.h").write_text(
        text.replace(good, "a = (kb_ee_t)(k ? KB_SLOT_BYTES : 0u);"))
    monkeypatch.setattr(firmware, "FIRMWARE_C", str(fw))
    monkeypatch.setattr(firmware, "BUILD", str(tmp_path / "build"))
    r = powercut.run(BANANA, "uno", steps=8, every=1)
    assert r["failures"], "a checkpoint over the newest slot went unnoticed"
    assert any("neither the last complete checkpoint" in f for f in r["failures"])


def test_reset_keeps_what_was_learnt():
    """No cut: a chip reset after a stream comes back with the state it had (and a blank or
    another model's EEPROM gives the model as flashed)."""
    doc = goldenfile.load(BANANA)
    spec, m, steps, frames, kinds = powercut.plan(doc, 30)
    elf, _ = firmware.build(model(BANANA), "attiny2313", checkpoint_every=1)
    b = firmware.board("attiny2313")
    with tempfile.TemporaryDirectory() as tmp:
        ee = os.path.join(tmp, "chip.eep")
        replies, _ = powercut._sim(elf, b, frames, ee)
        final = bytes(replies[-2].payload)
        dump = [protocol.dump_frame(), protocol.stop_frame()]
        again, _ = powercut._sim(elf, b, dump, ee)
        assert bytes(again[0].payload) == final
        blank, _ = powercut._sim(elf, b, dump, os.path.join(tmp, "blank.eep"))
        assert bytes(blank[0].payload) == bytes(replies[0].payload) != final
        # another model's firmware on the same EEPROM does not take its state
        other = os.path.join(GOLDEN, "rkp-laplace-b8-t32-m2-a-6-s4.json")
        elf2, _ = firmware.build(model(other), "attiny2313", checkpoint_every=1)
        fresh, _ = powercut._sim(elf2, b, dump, os.path.join(tmp, "none.eep"))
        theirs, _ = powercut._sim(elf2, b, dump, ee)
        assert bytes(theirs[0].payload) == bytes(fresh[0].payload)


def test_checkpoint_frame_replies():
    doc = goldenfile.load(BANANA)
    spec, m, steps, frames, kinds = powercut.plan(doc, 8, every=0, frame_every=4)
    elf, _ = firmware.build(model(BANANA), "uno", checkpoint_every=0)
    b = firmware.board("uno")
    with tempfile.TemporaryDirectory() as tmp:
        ee = os.path.join(tmp, "chip.eep")
        c = [protocol.checkpoint_frame()]
        replies, _ = powercut._sim(elf, b, frames[:-1] + c + [protocol.stop_frame()], ee)
        cs = [r for r in replies if r.code == "C"]
        assert [tuple(r.payload) for r in cs] == [(0, 0), (0, 1), (1, 1)]  # the last: unchanged
        bad, _ = powercut._sim(elf, b, [protocol.frame("C", b"\x01"), protocol.stop_frame()], ee)
        assert bad[0].code == "E" and bad[0].error == protocol.ERR_LEN


def test_fit_says_what_fits():
    lay = firmware.build(model(BANANA), "attiny2313", checkpoint_every=1)[1]["checkpoint"]
    assert lay["scheme"] == "journal" and lay["state_bytes"] == 73 and lay["step_bytes"] == 5
    assert lay["used_bytes"] <= 128
    with pytest.raises(firmware.FitError, match="does not fit attiny2313: no crash-safe "
                                                "checkpoint fits its EEPROM: learnt state 79 B"):
        firmware.build(model(CKP), "attiny2313", checkpoint_every=1)
    with pytest.raises(firmware.FitError, match="does not fit uno: no crash-safe"):
        firmware.build(model(BIG_ASSOC), "uno", checkpoint_every=1)
    # the journal holds 24 entries, a step changes at most 5 B: every 4 steps fits the EEPROM
    # (the counter then costs the ATtiny2313 26 B of flash it does not have), every 5 does not
    assert firmware.checkpoint_layout(73, 5, 128, 4)["scheme"] == "journal"
    assert firmware.checkpoint_layout(73, 5, 128, 5)["scheme"] is None
    with pytest.raises(firmware.FitError, match="program 20[5-9][0-9] B > 2048 B flash"):
        firmware.build(model(BANANA), "attiny2313", checkpoint_every=4)
    with pytest.raises(firmware.FitError, match="crash-safe"):
        firmware.build(model(BANANA), "attiny2313", checkpoint_every=5)
    with pytest.raises(firmware.FitError, match="crash-safe"):
        firmware.build(model(BANANA), "attiny2313", checkpoint_every=0)


def test_kilobit_fit_checkpoint(tmp_path, capsys):
    from kilobit.cli import main
    path = tmp_path / "banana.kb"
    path.write_bytes(model(BANANA))
    assert main(["fit", str(path), "--board", "attiny2313", "--checkpoint-every", "1"]) == 0
    out = capsys.readouterr().out
    assert "EEPROM       89 B of      128 B" in out and "redo journal of 24 entries" in out
    path = tmp_path / "ckp.kb"
    path.write_bytes(model(CKP))
    assert main(["fit", str(path), "--board", "attiny2313", "--checkpoint-every", "1"]) != 0
    err = capsys.readouterr().err
    assert "no crash-safe checkpoint fits its EEPROM: learnt state 79 B" in err


@pytest.mark.parametrize("board", ["attiny2313", "uno"])
def test_mutated_frames_write_no_eeprom(board):
    """With checkpoints built in, a bad frame (a C with a payload among them) is refused as
    before and writes no EEPROM byte: the run's writes are those of its one valid step."""
    from kilobit.runtimes.avr import framefuzz
    r = framefuzz.run(model(BANANA), board, n=2000, seed=5, checkpoint_every=1)
    assert r["right"] == r["frames"] == 2000, r["wrong"]
    assert r["same"] and r["step_ok"] and r["eeprom_same"]
    assert r["eeprom_writes"] > 0  # the valid step's mistake wrote the first checkpoint
