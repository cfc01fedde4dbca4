"""Several classes (one-vs-rest) on the Uno's learner firmwares (firmware_c/avr/kb_ovr_fw.h with
rkp_stream.c and ckp_stream.c): the frames of K classes, the stack, EEPROM checkpoints and power
cuts, and the refusals. Bit-exact replays of every multi-class golden file on uno-sim are
tests/test_golden.py's."""
import glob
import os

import pytest

from kilobit import golden
from kilobit.models import ovr_firmware, registry
from kilobit.runtimes import RuntimeFailure
from kilobit.runtimes.avr import firmware, powercut, protocol
from kilobit.runtimes.avr.sim_runtimes import Attiny2313SimRuntime, UnoSimRuntime, session
from test_avr_firmware import model_of, sim  # noqa: F401 (sim: the simulator's fixture)

HERE = os.path.dirname(os.path.abspath(__file__))
MULTI = sorted(p for p in glob.glob(os.path.join(HERE, "golden", "*.json"))
               if os.path.basename(p).startswith(("rkp-", "ckp-"))
               and golden.load(p)["params"].get("classes", 2) > 2)
RKP3 = os.path.join(HERE, "golden", "rkp-laplace-b4-t12-m4-a-4-k3-s40.json")
CKP3 = os.path.join(HERE, "golden", "ckp-L120-bits6-classes3-dims2-seed33-steps300-width100.json")
CKP255 = os.path.join(HERE, "golden",
                      "ckp-L2-bits1-classes255-dims1-seed35-steps120-width1000.json")


def test_the_multiclass_golden_files_are_here():
    names = {os.path.basename(p) for p in MULTI}
    assert len(names) == 7 and os.path.basename(CKP255) in names


@pytest.mark.parametrize("path", [p for p in MULTI if p != CKP255], ids=os.path.basename)
@pytest.mark.usefixtures("sim")
def test_stack_stays_in_the_classes_reserve(path):
    doc = golden.load(path)
    r = UnoSimRuntime()
    assert golden.compare(doc, r.name, golden.replay_doc(doc, r)) is None
    reserve = r.last_sizes["stack_reserve"]
    assert reserve == firmware.STACK_RESERVE["atmega328p"] + ovr_firmware.CLASSES_STACK
    assert r.last_result.stack_bytes <= reserve
    assert r.last_sizes["ram"] + reserve <= 2048


@pytest.mark.parametrize("path", [RKP3, CKP3], ids=os.path.basename)
@pytest.mark.usefixtures("sim")
def test_frames_of_k_classes(path):
    """INFO says K; a label K is refused and changes nothing, K - 1 is learnt; a query answers
    the host's class and largest score; a dump is the K memories; count sums the learners."""
    mb = model_of(path)
    spec = registry.of_file(mb)
    m, _ = spec.load(mb)
    K, dims, top = m.classes, m.dims, (1 << m.bits) - 1
    u = [(3 * j + 1) % (top + 1) for j in range(dims)]
    frames = [protocol.info_frame(), protocol.learn_frame(K, u), protocol.dump_frame(),
              protocol.learn_frame(K - 1, u), protocol.query_frame(u), protocol.dump_frame(),
              protocol.stop_frame()]
    replies, _, _ = session(mb, b"".join(frames), "uno")
    info, err, dump0, learnt, query, dump1, stop = replies
    assert info.info()["classes"] == K and info.info()["dims"] == dims
    assert err.code == "E" and err.error == protocol.ERR_LABEL
    assert dump0.memory == m.memory() and len(dump0.memory) == K * len(m.learners[0].memory())
    score, stored = m.learn(u, K - 1)
    assert (learnt.score, learnt.pred, learnt.mistake, learnt.count) == (
        score, m._last, int(stored), m.count)
    assert (query.score, query.pred, query.count) == (m.score(u), m.predict_class(u), m.count)
    assert dump1.memory == m.memory() and dump1.count == m.count and stop.code == "S"


def test_reply_parses_a_class_byte_only_when_there_is_one():
    binary = protocol.Reply(ord("L"), bytes([3, 5, 0, 0xFE, 0xFF]))
    assert (binary.pred, binary.mistake, binary.count, binary.score) == (1, 1, 5, -2)
    multi = protocol.Reply(ord("Q"), bytes([1, 7, 0, 9, 0, 0, 0, 4]))
    assert (multi.pred, multi.count, multi.score) == (4, 7, 9)


@pytest.mark.parametrize("path", [RKP3, CKP3], ids=os.path.basename)
@pytest.mark.usefixtures("sim")
def test_k_learners_checkpoint_and_survive_power_cuts(path):
    r = powercut.run(path, "uno", steps=12, cuts=range(1, 400, 37))
    assert r["scheme"] == "slots" and r["checkpoints"] >= 5
    assert r["tried"] >= 10 and r["recovered"] == r["tried"], r["failures"][:3]


@pytest.mark.usefixtures("sim")
def test_k_learners_too_big_for_the_eeprom_are_refused_clearly():
    mb = model_of(os.path.join(HERE, "golden", "rkp-laplace-b4-t10-m16-a-3-k10-s42.json"))
    with pytest.raises(firmware.FitError, match="does not fit uno: no crash-safe checkpoint fits "
                                                "its EEPROM: learnt state"):
        firmware.build(mb, "uno", checkpoint_every=1)


@pytest.mark.usefixtures("sim")
def test_what_does_not_fit_is_refused_clearly():
    with pytest.raises(RuntimeFailure, match=r"does not fit uno: static RAM 2\d\d\d B \+ stack "
                                             r"reserve 80 B"):
        UnoSimRuntime().replay(model_of(CKP255), [])
    with pytest.raises(RuntimeFailure, match=r"does not fit attiny2313: the rkp firmware runs "
                                             r"several classes on the Uno \(atmega328p\) only"):
        Attiny2313SimRuntime().replay(model_of(RKP3), [])


def test_export_of_k_classes_is_refused_clearly(tmp_path, capsys):
    from kilobit.cli import main
    path = tmp_path / "k3.kb"
    path.write_bytes(model_of(RKP3))
    assert main(["export", str(path), "-o", str(tmp_path / "k3.h")]) == 2
    assert "kilobit: error: kilobit export holds one binary learner; this model has 3 classes" \
        in capsys.readouterr().err
    assert not (tmp_path / "k3.h").exists()
