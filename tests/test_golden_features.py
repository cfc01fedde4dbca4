"""The features golden files (kind "features", tests/golden/features): windows of raw readings
and their features (docs/contract.md 12, 12.1, 13), made by the host and replayed bit for bit on
host, kbit-cpython, kbit-unix, kbit-unix-bytecode, rp2040-sim, rp2040-sim-bytecode, c-host and
uno-sim; a corrupt or foreign file refused before any runtime runs, a tampered expected value
reported with its window and feature."""
import glob
import json
import os
import re
import struct

import pytest

from conftest import need
from kilobit import golden
from kilobit.cli import main
from kilobit.core import goldenfeatures
from kilobit.core.errors import KilobitError
from kilobit.runtimes import catalog as rt
from kilobit.runtimes.avr import fw_features, kb_sim, protocol
from kilobit.runtimes.base import RuntimeFailure
from kilobit.runtimes.micropython import natmod

HERE = os.path.dirname(os.path.abspath(__file__))
FILES = sorted(glob.glob(os.path.join(HERE, "golden", "features", "*.json")))
#: the file the tampering tests change: FFT bands and every time-domain feature of 3 axes
TAMPER = os.path.join(HERE, "golden", "features", "features-n100-a3-time+fft64b8-s5.json")

def _kb_err(name):
    """A kb_err_t's value, counted in kb_file.h's enum (KB_OK first)."""
    from kilobit.core.paths import REPO
    with open(os.path.join(REPO, "firmware_c", "kb_file.h")) as f:
        names = re.findall(r"^\s+(KB_\w+)", f.read().split("kb_err_t;")[0], re.M)
    return names.index(name)


RUNTIMES = ("host", "kbit-cpython", "kbit-unix", "kbit-unix-bytecode", "rp2040-sim",
            "rp2040-sim-bytecode", "c-host", "uno-sim")


def test_the_set_is_what_the_host_makes_now():
    """The checked-in files are the FEATURES_SET's, and the host reference has not drifted."""
    assert sorted(map(os.path.basename, FILES)) == sorted(
        golden.features_name(p) for p in golden.FEATURES_SET)
    for p in golden.FEATURES_SET:
        with open(os.path.join(HERE, "golden", "features", golden.features_name(p))) as f:
            assert json.load(f) == json.loads(json.dumps(goldenfeatures.make(**p)))


def _deviation_spans(doc):
    """Per window and axis of an FFT file: the largest |x_i - m| over the FFT's first P samples
    (contract 13's M), m the axis's rounded mean over all N."""
    n, axes, size = doc["N"], doc["A"], 1 << doc["p"]
    out = []
    for w in doc["windows"]:
        for a in range(axes):
            x = w[a::axes]
            m = (sum(x) + 32768 * n + n // 2) // n - 32768
            out.append(max(abs(v - m) for v in x[:size]))
    return out


def test_the_set_covers_sizes_and_edges():
    docs = [golden.load(f) for f in FILES]
    assert {d["p"] for d in docs} == {0, 5, 6, 7, 8}
    assert {d["N"] for d in docs} >= {1, 256} and max(d["A"] for d in docs) >= 12
    assert any(d["B"] == 1 << (d["p"] - 1) for d in docs if d["p"])  # one bin a band
    spans = [s for d in docs if d["p"] for s in _deviation_spans(d)]
    # contract 13's normalisation at both ends (s = -2 and s >= 12) and M == 0 (bands all 0)
    assert max(spans) >= 1 << 15 and 0 in spans and any(0 < s <= 3 for s in spans)
    readings = [v for d in docs for w in d["windows"] for v in w]
    assert min(readings) == -32768 and max(readings) == 32767


@pytest.mark.parametrize("runtime", RUNTIMES)
def test_the_set_agrees(runtime):
    """Every file of the set on the runtime; the MicroPython runtimes say which path ran: the
    native module where it is built for the board, else the bytecode."""
    r = rt.get(runtime)
    need(r.missing())
    native = runtime in ("kbit-unix", "rp2040-sim") and "features" in natmod.MODELS
    docs = [golden.load(path) for path in FILES]
    if runtime == "uno-sim":  # a firmware per file: its RAM check counted on this much stack
        rows = []
        for doc in docs:
            rows.append(golden.replay_features(doc, r))
            assert r.last_result.stack_bytes <= r.last_sizes["stack_reserve"]
    else:  # one start of a board for the whole set
        rows = r.replay_features_many([golden.features_job(doc) for doc in docs])
    for path, doc, got in zip(FILES, docs, rows):
        bad = goldenfeatures.compare(doc, runtime, got)
        assert bad is None, "%s: %s" % (os.path.basename(path), bad)
    if runtime.startswith(("kbit-unix", "rp2040-sim")):
        assert r.path == "native" if native else r.path.startswith("bytecode: "), r.path


def _tampered(tmp_path, change):
    with open(TAMPER) as f:
        doc = json.load(f)
    change(doc)
    path = str(tmp_path / "tampered.json")
    with open(path, "w") as f:
        json.dump(doc, f)
    return path


def test_a_changed_feature_is_named_by_window_and_column(tmp_path, capsys):
    column = goldenfeatures.spec_of(golden.load(TAMPER)).columns(3).index("a2.band5")

    def change(doc):
        doc["expect"][5][column] += 1

    path = _tampered(tmp_path, change)
    assert main(["golden", "check", path, "--runtime", "host", "--runtime", "kbit-cpython"]) == 1
    out = capsys.readouterr().out
    for name in ("host", "kbit-cpython"):
        assert "%s: window 5, feature a2.band5: expected" % name in out
    assert main(["golden", "check", TAMPER, "--runtime", "host"]) == 0


@pytest.mark.parametrize("change, says", [
    (lambda d: d.update(kind="spectra"), "unknown kind 'spectra'"),
    (lambda d: d.pop("windows"), "no 'windows' key"),
    (lambda d: d.update(p=9), "its selection"),
    (lambda d: d.update(mask=0, p=0, B=0), "its selection"),
    (lambda d: d.update(A=0), "'A' (axes) 0"),
    (lambda d: d["windows"][3].pop(), "window 3 is not a list of"),
    (lambda d: d["windows"][2].__setitem__(7, 32768), "window 2: reading 32768 is not an int16"),
    (lambda d: d["windows"][1].__setitem__(0, 1.5), "window 1: reading 1.5"),
    (lambda d: d["expect"].pop(), "windows but"),
    (lambda d: d["expect"][4].append(0), "expect row 4 is not"),
    (lambda d: d.update(N="100"), "'N' is not a whole number"),
])
def test_a_corrupt_file_is_refused_before_any_runtime(tmp_path, capsys, change, says):
    path = _tampered(tmp_path, change)
    with pytest.raises(KilobitError, match="golden file .*" + re.escape(says)):
        golden.read(path)
    assert main(["golden", "check", path, "--runtime", "host"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("kilobit: error: golden file") and says in err
    assert "Traceback" not in err


def test_a_truncated_file_is_refused(tmp_path, capsys):
    with open(TAMPER) as f:
        text = f.read()
    path = tmp_path / "cut.json"
    path.write_text(text[:len(text) // 2])
    assert main(["golden", "check", str(path), "--runtime", "host"]) == 2
    assert capsys.readouterr().err.startswith("kilobit: error: cannot read golden file")


def test_cli_make_writes_a_file_every_cheap_runtime_accepts(tmp_path, capsys):
    path = str(tmp_path / "f.json")
    assert main(["golden", "make", "features", "--window", "48", "--axes", "2", "--features",
                 "mean,cross,fft32", "--seed", "9", "--count", "13", "-o", path]) == 0
    doc = golden.load(path)
    assert (doc["N"], doc["A"], doc["p"], doc["B"], len(doc["windows"])) == (48, 2, 5, 8, 13)
    assert doc["params"]["features"] == "mean,cross,fft32:8"
    assert golden.check(path, ["host", "kbit-cpython"], log=lambda *a: None) == []
    # the seed decides the windows
    other = str(tmp_path / "g.json")
    assert main(["golden", "make", "features", "--window", "48", "--axes", "2", "--features",
                 "mean,cross,fft32", "--seed", "10", "--count", "13", "-o", other]) == 0
    assert golden.load(other)["windows"] != doc["windows"]


@pytest.mark.parametrize("args, says", [
    (["--axes", "3"], "needs --window"),
    (["--window", "100"], "needs --axes"),
    (["--window", "100", "--axes", "3", "--features", "fft128"], "128"),
    (["--window", "100", "--axes", "3", "--features", "energy,mean"], "order"),
    (["--window", "100", "--axes", "3", "--features", "fft64:3"], "power of two"),
    (["--window", "0", "--axes", "3"], "out of range"),
    (["--window", "100", "--axes", "256"], "out of range"),
    (["--window", "100", "--axes", "3", "--bits", "4"], "no model, data, steps or parameters"),
])
def test_cli_make_refuses_bad_values(tmp_path, capsys, args, says):
    path = tmp_path / "f.json"
    assert main(["golden", "make", "features"] + args + ["-o", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("kilobit: error:") and says in err, err
    assert not path.exists()


def test_a_model_case_refuses_the_features_options(capsys):
    assert main(["golden", "make", "rkp", "--window", "10", "-o", "/dev/null"]) == 2
    assert "--window go with golden make features" in capsys.readouterr().err


def test_uno_refuses_a_window_beyond_its_ram(tmp_path):
    """4 axes x 256 readings and a 256-point FFT's scratch: 3 KB of buffers on a 2 KB chip."""
    r = rt.get("uno-sim")
    need(r.missing())
    doc = goldenfeatures.make(256, 4, "mean,fft256:4", seed=1, count=2)
    with pytest.raises(RuntimeFailure, match=r"does not fit uno: static RAM \d+ B"):
        golden.replay_features(doc, r)


def test_uno_firmware_answers_bad_frames_and_stays_in_step():
    """A frame with a bad checksum, one whose length is not its header's and a selection
    beyond the build's buffers are each answered with an error; the windows around them still
    give the host's features."""
    need(kb_sim.missing())
    doc = golden.load(TAMPER)
    sel = (doc["A"], doc["N"], doc["mask"], doc["p"], doc["B"])
    elf, _ = fw_features.build("uno", *sel)
    good = [fw_features.extract_frame(w, *sel) for w in doc["windows"][:2]]
    bad_crc = good[0][:-1] + bytes([good[0][-1] ^ 1])
    short = fw_features.extract_frame(doc["windows"][0][:-1], *sel)  # one reading missing
    beyond = fw_features.extract_frame(doc["windows"][0], sel[0], sel[1], sel[2], 7, 8)
    frames = [good[0], bad_crc, short, beyond, good[1], protocol.stop_frame()]
    out = kb_sim.run(elf, "atmega328p", input_bytes=b"".join(frames)).output
    replies = protocol.parse_replies(out)
    assert [r.code for r in replies] == ["X", "E", "E", "X", "X", "S"]
    assert replies[1].error == protocol.ERR_CRC and replies[2].error == protocol.ERR_LEN
    # a 128-point FFT in a 64-point build
    assert list(replies[3].payload) == [_kb_err("KB_ERR_LIMIT")]
    for r, exp in zip((replies[0], replies[4]), doc["expect"][:2]):
        assert r.payload[0] == 0
        assert list(struct.unpack_from("<%di" % len(exp), r.payload, 1)) == exp


def test_a_board_behind_mpremote_replays_through_it():
    """virtual-board (a MicroPython board at a pty, kbit deployed, mpremote): the replay runs on
    the board, not on the adapter's own MicroPython, and says which path ran there."""
    r = rt.get("virtual-board")
    need(r.missing())
    doc = golden.load(TAMPER)
    assert goldenfeatures.compare(doc, r.name, golden.replay_features(doc, r)) is None
    # the deployed board holds the Pico's armv6m module, which this port cannot run; the
    # adapter's own MicroPython would have had no module at all
    assert r.path.startswith("bytecode: ") and "armv6m" in r.path, r.path
