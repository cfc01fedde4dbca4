"""The RKP firmware (firmware_c/avr/rkp_stream.c) on simulated AVRs: golden files, the UART
protocol and its refusals, a host-trained model continuing on the chip, the Banana stream and
the ATtiny2313's size facts. Cycle figures are the benchmark's business
(`kilobit bench avr`, docs/benchmarks/avr-rkp.md), not asserted here.
"""
import glob
import io
import os
import re
import subprocess

import numpy as np
import pytest

from conftest import need
from kilobit import golden
from kilobit.bench import avr as bench_avr
from kilobit.cli import DEFAULT_RUNTIMES, main
from kilobit.models import learner
from kilobit.models.rkp import firmware as rkp_firmware
from kilobit.models.rkp.model import RKPInt
from kilobit.runtimes import REPO, RuntimeFailure, catalog as rt
from kilobit.runtimes.avr import firmware, kb_sim, protocol
from kilobit.runtimes.avr.sim_runtimes import Attiny2313SimRuntime, UnoSimRuntime, session
from kilobit.runtimes.c.c_host import CHostRuntime
from kilobit.runtimes.host import HostRuntime

HERE = os.path.dirname(os.path.abspath(__file__))
FILES = sorted(glob.glob(os.path.join(HERE, "golden", "rkp-*.json")))  # the rkp firmware's
NAMES = [os.path.basename(f) for f in FILES]

# The golden models whose firmware fits the ATtiny2313 (2 KB flash; static RAM + stack reserve
# <= 128 B). Listed by name so that the set cannot shrink unnoticed.
ATTINY_FITS = {
    "rkp-laplace-b1-t1-m1-a0-s5.json",
    "rkp-laplace-b2-t112-m2-a-6-s2.json",     # the paper's 70-byte configurations ...
    "rkp-laplace-b4-t62-m2-a-6-s1.json",
    "rkp-laplace-b6-t43-m2-a-6-s3.json",
    "rkp-laplace-b8-t32-m2-a-6-s4.json",      # ... all four
    "rkp-laplace-b3-t90-m2-a-4-s18.json",     # four scalar accumulators, 79 B of memory
    "rkp-laplace-b5-t40-m3-a0-s10.json",      # log-method weights (J = 8), 32-bit window
    "rkp-laplace-b7-t5-m5-a-4-s11.json",      # field-stream reader (36-bit support vectors)
    "rkp-rbf-b1-t5-m3-a-8-s14.json",
    "rkp-rbf-b2-t200-m1-a0-s16.json",         # budget 200, 32-bit score
    "rkp-rbf-b3-t24-m4-a-4-s19.json",
    "rkp-rbf-b3-t12-m10-a0-s20.json",
    "rkp-rbf-b4-t62-m2-a-6-s12.json",
}
# ... and why the others do not (memory larger than the RAM, or for rbf B=6 M=4 the flash).
ATTINY_MISFITS = {
    "rkp-laplace-b3-t10-m64-a-2-s8.json": "static RAM 310 B",
    "rkp-laplace-b5-t20-m16-a-8-s6.json": "static RAM 223 B",
    "rkp-laplace-b8-t200-m8-a4-s7.json": "static RAM 1637 B",
    "rkp-laplace-b8-t24-m64-a2-s9.json": "static RAM 1607 B",
    "rkp-rbf-b3-t30-m12-a-1-s17.json": "static RAM 155 B",
    "rkp-rbf-b6-t50-m4-a-3-s15.json": "program 2230 B > 2048 B flash",
    "rkp-rbf-b8-t16-m64-a4-s13.json": "static RAM 1094 B",
    # several classes run on the Uno only (kilobit.models.ovr_firmware.CLASSES_MCU)
    "rkp-laplace-b4-t12-m4-a-4-k3-s40.json": "several classes on the Uno (atmega328p) only",
    "rkp-rbf-b3-t6-m6-a-2-k5-s41.json": "this model has 5 classes",
    "rkp-laplace-b4-t10-m16-a-3-k10-s42.json": "this model has 10 classes",
    "rkp-rbf-b1-t1-m1-a0-k255-s43.json": "this model has 255 classes",
}


@pytest.fixture(scope="module")
def sim():
    need(kb_sim.missing())
    kb_sim.build_sim()


def model_of(path):
    return bytes.fromhex(golden.load(path)["model_file"])


# ---- golden files ----

def test_which_golden_files_fit_the_attiny(sim):
    assert set(NAMES) == ATTINY_FITS | set(ATTINY_MISFITS)
    for path, name in zip(FILES, NAMES):
        ok, why = firmware.fits(model_of(path), "attiny2313")
        if name in ATTINY_FITS:
            assert ok, why
        else:
            assert not ok and why.startswith("does not fit attiny2313: "), why
            assert ATTINY_MISFITS[name] in why, why
    # the golden set keeps the configurations the ATtiny must run
    fit = [golden.load(os.path.join(HERE, "golden", n))["params"] for n in ATTINY_FITS]
    assert {p["kernel"] for p in fit} == {"laplace", "rbf"}
    assert {(p["bits"], p["budget"]) for p in fit if p["kernel"] == "laplace" and
            p["dims"] == 2 and p["width"] == -6} == {(2, 112), (4, 62), (6, 43), (8, 32)}
    assert {p["bits"] for p in fit} == set(range(1, 9))


@pytest.mark.parametrize("name", sorted(ATTINY_FITS))
def test_golden_file_on_attiny2313(sim, name):
    doc = golden.load(os.path.join(HERE, "golden", name))
    runtime = Attiny2313SimRuntime()
    mismatch = golden.compare(doc, runtime.name, golden.replay_doc(doc, runtime))
    assert mismatch is None, str(mismatch)
    res, sizes = runtime.last_result, runtime.last_sizes
    assert res.stack_bytes <= firmware.STACK_RESERVE["attiny2313"]
    assert sizes["ram"] + res.stack_bytes <= 128 and sizes["flash"] <= 2048


def test_misfit_is_a_clear_runtime_failure(sim):
    name = "rkp-laplace-b8-t24-m64-a2-s9.json"
    with pytest.raises(RuntimeFailure, match=r"does not fit attiny2313: static RAM \d+ B \+ "
                                             r"stack reserve 40 B = \d+ B > 128 B RAM"):
        Attiny2313SimRuntime().replay(model_of(os.path.join(HERE, "golden", name)), [])


def test_every_golden_file_fits_the_uno_and_runs_in_ci(sim):
    """All of them fit the Uno's 2 KB, the one-vs-rest learners' (K > 2 classes) included;
    tests/test_golden.py replays every file on every runtime of DEFAULT_RUNTIMES, uno-sim
    included, so they are not replayed twice here."""
    assert "uno-sim" in DEFAULT_RUNTIMES
    assert any(golden.load(path)["params"].get("classes", 2) > 2 for path in FILES)
    for path in FILES:
        ok, why = firmware.fits(model_of(path), "uno")
        assert ok, why


def test_uno_stack_stays_in_its_reserve(sim):
    doc = golden.load(os.path.join(HERE, "golden", "rkp-laplace-b5-t20-m16-a-8-s6.json"))
    runtime = UnoSimRuntime()
    assert golden.compare(doc, runtime.name, golden.replay_doc(doc, runtime)) is None
    assert runtime.last_result.stack_bytes <= firmware.STACK_RESERVE["atmega328p"]


# ---- a host-trained model continues on the chip ----

def _trained(kernel, bits, dims, budget, width, n, seed):
    m = RKPInt(kernel, bits, dims, budget, width, seed=seed)
    gen = np.random.default_rng(seed)
    for _ in range(n):
        m.learn(gen.integers(0, 1 << bits, dims), int(gen.integers(2)))
    return m


def _steps(bits, dims, n, seed):
    return learner.make_steps(bits, dims, n, seed)


@pytest.mark.parametrize("runtime", [Attiny2313SimRuntime, UnoSimRuntime])
def test_host_trained_snapshot_continues_on_the_chip(sim, runtime):
    m = _trained("laplace", 4, 2, 62, -6, 800, seed=3)
    assert m.count == 62 and m.rng.state != 3 + 1  # full, and removal has advanced the generator
    model = m.to_bytes(scaler=(np.zeros(2, np.float32), np.ones(2, np.float32)))
    assert "KB_RKP_CONST_MEM_INIT" in rkp_firmware.header(model)
    steps = _steps(4, 2, 300, seed=9)
    assert runtime().replay(model, steps) == HostRuntime().replay(model, steps)


def test_generated_header_on_the_host_c_build(sim, tmp_path):
    """The generated header (weight table, initial memory) also drives kb_replay on the host."""
    m = _trained("laplace", 6, 2, 43, -6, 400, seed=5)  # J = 3: an 8-entry weight table
    model = m.to_bytes()
    header = tmp_path / "model.h"
    header.write_text(rkp_firmware.header(model))
    assert "KB_RKP_CONST_WTAB_INIT" in header.read_text()
    assert "KB_RKP_CONST_MEM_INIT" in header.read_text()
    build = os.path.join(REPO, "build", "firmware_c")
    r = subprocess.run(["make", "-s", "-C", os.path.join(REPO, "firmware_c"), "BUILD=" + build,
                        "replay-const", "NAME=test_header", "DEFS=-include %s" % header],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True)
    assert r.returncode == 0, r.stdout
    runtime = CHostRuntime()
    runtime.program = "kb_replay_test_header"
    steps = _steps(6, 2, 300, seed=2)
    assert runtime.replay(model, steps) == HostRuntime().replay(model, steps)


def test_header_refuses_what_the_uart_cannot_carry():
    m = RKPInt("laplace", 1, 300, 2, 0)
    with pytest.raises(Exception, match="at most 255 codes"):
        rkp_firmware.header(m.to_bytes())


# ---- the protocol ----

def test_crc8_and_frames():
    assert protocol.crc8(b"123456789") == 0xF4  # CRC-8/SMBUS check value
    f = protocol.learn_frame(1, [3, 15])
    assert f == bytes([0xA5, ord("L"), 3, 0, 1, 3, 15, protocol.crc8(f[1:-1])])
    assert protocol.crc8(f[1:]) == 0  # the chip's check: the CRC over the crc byte gives 0
    reply = protocol.frame("L", b"\x03\x05\x00\xfe\xff", sync=protocol.SYNC_REP)
    (r,) = protocol.parse_replies(reply)
    assert (r.code, r.pred, r.mistake, r.count, r.score) == ("L", 1, 1, 5, -2)
    with pytest.raises(protocol.ProtocolError):
        protocol.parse_replies(reply[:-1] + bytes([reply[-1] ^ 1]))
    with pytest.raises(protocol.ProtocolError):
        protocol.parse_replies(reply[:-2])


def _bad_frames():
    good = protocol.learn_frame(1, [5, 9])
    body = bytearray(good)
    body[5] ^= 0x01  # a payload bit flipped in transit
    yield "payload bit flipped", bytes(body), protocol.ERR_CRC, "L"
    yield "check byte wrong", good[:-1] + bytes([good[-1] ^ 0x80]), protocol.ERR_CRC, "L"
    yield "label 2", protocol.frame("L", bytes([2, 5, 9])), protocol.ERR_LABEL, "L"
    yield "code 16 (B = 4)", protocol.frame("L", bytes([1, 16, 9])), protocol.ERR_CODE, "L"
    yield "code 255", protocol.frame("L", bytes([0, 3, 255])), protocol.ERR_CODE, "L"
    yield "too few codes", protocol.frame("L", bytes([1, 5])), protocol.ERR_LEN, "L"
    yield "too many codes", protocol.frame("L", bytes([1, 5, 9, 9])), protocol.ERR_LEN, "L"
    yield "empty learn", protocol.frame("L", b""), protocol.ERR_LEN, "L"
    yield "long learn", protocol.frame("L", bytes(300)), protocol.ERR_LEN, "L"
    yield "query code 16", protocol.frame("Q", bytes([16, 0])), protocol.ERR_CODE, "Q"
    yield "query length", protocol.frame("Q", bytes([1, 2, 3])), protocol.ERR_LEN, "Q"
    yield "unknown op", protocol.frame("X", bytes([1, 5, 9])), protocol.ERR_OP, "X"
    yield "lower-case op", protocol.frame("l", bytes([1, 5, 9])), protocol.ERR_OP, "l"
    yield "dump with 2 bytes", protocol.frame("D", b"\x01\x01"), protocol.ERR_LEN, "D"
    yield "info with payload", protocol.frame("I", b"\x00"), protocol.ERR_LEN, "I"
    yield "stop with payload", protocol.frame("S", b"\x00"), protocol.ERR_LEN, "S"


BAD = list(_bad_frames())


def test_bad_frames_are_refused_and_not_learnt(sim):
    """Each bad frame gets its own error reply; memory, count and generator are untouched; the
    stream stays in step (a good frame afterwards is served normally)."""
    m = RKPInt("laplace", 4, 2, 62, -6, seed=4)
    model = m.to_bytes()
    first = protocol.learn_frame(1, [5, 9])
    frames = [first, protocol.dump_frame()]
    for _, f, _, _ in BAD:
        frames += [f, protocol.dump_frame()]
    frames += [b"\x00\x13\x37", protocol.query_frame([5, 9])]  # noise before a sync byte
    frames += [protocol.learn_frame(0, [5, 9]), protocol.dump_frame(), protocol.stop_frame()]
    for board in ("attiny2313", "uno"):
        replies, res, _ = session(model, b"".join(frames), board)
        it = iter(replies)
        r = next(it)
        assert (r.code, r.mistake, r.count, r.score) == ("L", 1, 1, 0)
        before = next(it)
        assert before.code == "D" and before.count == 1 and before.memory is not None
        for (what, _, err, op), _ in zip(BAD, range(len(BAD))):
            r = next(it)
            assert (r.code, r.error, chr(r.payload[1])) == ("E", err, op), what
            d = next(it)
            assert (d.code, d.rng, d.count, d.memory) == ("D", before.rng, 1, before.memory), what
        q = next(it)
        assert (q.code, q.score, q.count) == ("Q", 255, 1)
        r = next(it)
        assert (r.code, r.mistake, r.count) == ("L", 1, 2)
        d = next(it)
        assert d.count == 2 and d.memory != before.memory
        assert next(it).code == "S" and next(it, None) is None
        # one learn marker pair per accepted learn frame, one query pair: nothing else computed
        values = [v for v, _ in res.markers]
        assert values == [1, 2, 3, 4, 1, 2]


def test_info_and_conditional_dump(sim):
    m = RKPInt("rbf", 2, 1, 200, 0, seed=1)  # budget 200 x C 255 > 32767: 4-byte scores
    model = m.to_bytes()
    frames = [protocol.info_frame(), protocol.dump_frame(if_changed=True),
              protocol.dump_frame(if_changed=True), protocol.learn_frame(0, [3]),
              protocol.dump_frame(if_changed=True), protocol.query_frame([3]),
              protocol.dump_frame(if_changed=True), protocol.stop_frame()]
    replies, _, _ = session(model, b"".join(frames), "attiny2313")
    info = replies[0].info()
    assert info == dict(version=1, model_type=1, kernel=1, bits=2, dims=1, budget=200, width=0,
                        C=255, ntab=len(m.table), score_bytes=4, mem_bytes=75, table=m.table,
                        classes=2)  # a binary firmware's INFO has no K byte: 2 classes
    assert replies[1].memory == bytes(75)  # never dumped before: sent
    assert replies[2].memory is None  # unchanged since
    assert replies[3].mistake == 1 and len(replies[3].payload) == 3 + 4
    assert replies[4].memory == bytes([0b110, *bytes(74)]) and replies[4].count == 1
    assert replies[5].score == -255 and replies[6].memory is None


# ---- Banana on the ATtiny2313: accuracy and size facts ----

def test_banana_stream_on_attiny2313_equals_the_host_reference(sim):
    """Training split as learn frames, test split as queries (the paper's Table 3 protocol):
    the chip's accuracy is the host integer reference's exactly, every reply identical; and the
    issue's size facts for the 4-bit, 62-SV, 70-byte model."""
    r = bench_avr.measure("banana", "attiny2313", 4, 62, seed=0)
    assert r["identical"]
    assert r["acc"] == r["host_acc"] and r["frames"] == 5300
    assert r["count"] == 62 and r["mem"] == 70
    assert r["flash"] <= 1700, r["flash"]
    assert r["static"] + r["stack"] <= 128, (r["static"], r["stack"])


# ---- command line ----

def test_cli_stream_sim(sim, capsys):
    assert main(["stream", "--board", "attiny2313", "--port", "sim", "--data", "banana",
                 "--limit", "400"]) == 0
    out = capsys.readouterr()
    assert "running accuracy" in out.out and "5300" not in out.out
    assert re.search(r"agreement with the host integer reference: 900/900 frames identical "
                     r"\(100\.00%\), final memory identical", out.out), out.out
    assert "cycles per learning step: mean" in out.out
    assert "\r" not in out.err  # stderr is no terminal: progress lines, no bar (issue 24)


def test_cli_stream_continues_a_trained_model_on_the_uno(sim, tmp_path, capsys):
    path = str(tmp_path / "m.kb")
    assert main(["train", "rkp", "--data", "checkerboard", "--bits", "4", "--budget", "62",
                 "--seed", "1", "-o", path]) == 0
    capsys.readouterr()
    assert main(["stream", "--board", "uno", "--port", "sim", "--data", "checkerboard",
                 "--seed", "1", "--model", path, "--limit", "300"]) == 0
    out = capsys.readouterr().out
    assert "62/62 SVs" in out and "800/800 frames identical" in out


def test_cli_stream_errors(sim, capsys):
    assert main(["stream", "--board", "atmega2560", "--port", "sim", "--data", "banana"]) == 2
    assert "invalid choice: 'atmega2560'" in capsys.readouterr().err  # the boards with firmware
    assert main(["stream", "--board", "attiny2313", "--port", "sim", "--data", "pendigits",
                 "--bits", "8", "--budget", "62"]) == 2
    assert "does not fit attiny2313" in capsys.readouterr().err


def test_bench_avr_report(sim, tmp_path, monkeypatch):
    monkeypatch.setattr(bench_avr, "SETUPS", (("banana", "attiny2313"),))
    monkeypatch.setattr(bench_avr, "QUICK_TRAIN", 150)
    out = tmp_path / "avr.md"
    bench_avr.run(out=str(out), quick=True, progress=lambda *a: None)
    text = out.read_text()
    assert "| Program [B] (2048 B) | " in text and "1720" in text
    assert text.count("**PASS**") >= 4 and "identical to the host reference" in text


def test_make_avr_stream_is_float_free(sim):
    r = subprocess.run(["make", "-s", "-C", os.path.join(REPO, "firmware_c"),
                        "BUILD=" + os.path.join(REPO, "build", "firmware_c"), "avr-stream"],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True)
    assert r.returncode == 0, r.stdout
    assert "attiny2313: rkp_stream, no floating-point symbols" in r.stdout
    assert "atmega328p: rkp_stream, no floating-point symbols" in r.stdout


def test_runtimes_are_registered():
    assert rt.get("attiny2313-sim").name == "attiny2313-sim"
    assert rt.get("uno-sim").name == "uno-sim"


# ---- a serial port: the lock-step path, against a board emulated in Python on a pty ----

class _FakeBoard:
    """Speaks docs/uart-protocol.md on the master side of a pty, with the host reference as its
    learner: enough to drive `kilobit stream` through a real serial port (pyserial)."""

    def __init__(self, model):
        import threading
        self.m, _ = RKPInt.from_bytes(model)
        self.master, slave = os.openpty()
        self.path = os.ttyname(slave)
        self.slave = slave
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _reply(self, op, payload):
        os.write(self.master, protocol.frame(op, payload, sync=protocol.SYNC_REP))

    def _step(self, op, s, mistake):
        m = self.m
        nbytes = 2 if m.budget * m.C <= 32767 else 4
        self._reply(op, bytes([int(s > 0) | mistake << 1]) + m.count.to_bytes(2, "little")
                    + int(s).to_bytes(nbytes, "little", signed=True))

    def _serve(self):
        import struct
        buf = bytearray()
        m = self.m
        while True:
            try:
                buf += os.read(self.master, 4096)
            except OSError:
                return
            while buf:
                if buf[0] != protocol.SYNC_REQ:
                    del buf[0]
                    continue
                if len(buf) < 4 or len(buf) < 5 + struct.unpack_from("<H", buf, 2)[0]:
                    break
                n = struct.unpack_from("<H", buf, 2)[0]
                op, payload = chr(buf[1]), bytes(buf[4:4 + n])
                del buf[:5 + n]
                if op == "L":
                    s, mistake = m.learn(list(payload[1:]), payload[0])
                    self._step(op, s, int(mistake))
                elif op == "Q":
                    self._step(op, m.score(list(payload)), 0)
                elif op == "D":
                    self._reply(op, struct.pack("<HH", m.rng.state, m.count) + m.memory())
                elif op == "I":
                    self._reply(op, protocol.INFO.pack(
                        1, 1, ("laplace", "rbf").index(m.kernel), m.bits, m.dims, m.budget,
                        m.width, m.C, len(m.table), 2 if m.budget * m.C <= 32767 else 4,
                        len(m.memory())) + bytes(m.table))
                elif op == "S":
                    self._reply(op, b"")
                    return

    def close(self):
        os.close(self.slave)
        os.close(self.master)


def test_stream_over_a_serial_port(tmp_path):
    pytest.importorskip("serial")
    from kilobit import stream
    path = str(tmp_path / "m.kb")
    m = _trained("laplace", 4, 2, 62, -6, 500, seed=2)
    with open(path, "wb") as f:
        f.write(m.to_bytes())
    board = _FakeBoard(m.to_bytes())
    try:
        out, err = io.StringIO(), io.StringIO()
        assert stream.run("attiny2313", board.path, "banana", model=path, limit=150,
                          out=out, err=err) == 0
        assert "650/650 frames identical" in out.getvalue()
        assert "cycles" not in out.getvalue()  # a real board reports no cycle counts
    finally:
        board.close()
    other = _FakeBoard(RKPInt("laplace", 4, 2, 61, -6).to_bytes())
    try:
        with pytest.raises(Exception, match="runs a different model"):
            stream.run("attiny2313", other.path, "banana", model=path, limit=10,
                       out=io.StringIO(), err=io.StringIO())
    finally:
        other.close()
