"""Mutated and random frames to a learner firmware on a simulated chip (issue 15): every one must
be answered with exactly the error reply docs/uart-protocol.md names for it, none may be learnt
from (the state dumped before and after is byte-identical), and the chip must go on working (a
valid step afterwards is the host reference's, bit for bit).

    result = framefuzz.run(model_bytes, "attiny2313", n=100000, seed=1)

The frames are complete (sync, op, length, payload, CRC byte), so each gets one reply: a broken
CRC, an op that is none of L Q D I S (or a valid-CRC S, never sent), a wrong length, a label or a
code out of range; the expected error code follows the firmware's order of checks. A length is
at most MAX_LEN, so a frame never keeps the chip waiting for bytes that do not come.
"""
import random

from kilobit.core.errors import KilobitError
from kilobit.models import registry
from kilobit.runtimes.avr import protocol
from kilobit.runtimes.avr.sim_runtimes import dialog, session
from kilobit.runtimes.host import HostRuntime

MAX_LEN = 300
#: the ops of the learners' firmwares
OPS = b"LQDIS"


def _frame(op, payload, crc_ok=True):
    f = bytearray(protocol.frame(op, payload))
    if not crc_ok:
        f[-1] ^= 1 + random.Random(len(f) * 131 + f[-1]).randrange(255)
    return bytes(f)


class Spec:
    """What a firmware accepts: the payload lengths, and the label and input ranges."""

    def __init__(self, kind, m, checkpoint=False):
        self.kind = kind
        self.ops = OPS + (b"C" if checkpoint else b"")  # C: a firmware built with checkpoints
        if kind == "predictor":  # predict_stream.c: U start u16 + 1..chunk codes, P, I, S
            from kilobit.runtimes.avr.fw_predict import CHUNK
            self.n, self.top, self.chunk, self.label_max = m.dims, (1 << m.in_bits) - 1, CHUNK, 0
            self.value = lambda v: v <= self.top
            return
        if kind == "learner":
            self.n, self.top, self.label_max = m.dims, (1 << m.bits) - 1, 1
            self.value = lambda v: v <= self.top
        else:  # classes: int8 values of B bits (checked when B < 8), labels 0..255
            self.n, self.label_max = m.T, 255
            lo, hi = -(1 << (m.bits - 1)), (1 << (m.bits - 1)) - 1
            self.value = lambda v: lo <= (v - 256 if v > 127 else v) <= hi

    def expected(self, op, payload, crc_ok):
        """The error code the firmware must answer (None: the frame is valid)."""
        if not crc_ok:
            return protocol.ERR_CRC
        if self.kind == "predictor":
            return self._expected_predictor(op, payload)
        if op not in self.ops:
            return protocol.ERR_OP
        n = len(payload)
        if op == ord("L"):
            if n != self.n + 1:
                return protocol.ERR_LEN
            if self.kind == "learner" and payload[0] > self.label_max:
                return protocol.ERR_LABEL
            if not all(self.value(v) for v in payload[1:]):
                return protocol.ERR_CODE
            return None
        if op == ord("Q"):
            if n != self.n:
                return protocol.ERR_LEN
            return None if all(self.value(v) for v in payload) else protocol.ERR_CODE
        if op == ord("D"):
            return protocol.ERR_LEN if n > 1 else None
        return protocol.ERR_LEN if n else None  # I, S, C


    def _expected_predictor(self, op, payload):
        """docs/uart-protocol.md, "Predictor firmware": op, length, index, code (the stream's
        next index is 0: only refused frames are sent before the check)."""
        n = len(payload)
        if op not in b"UPIS":
            return protocol.ERR_OP
        if op != ord("U"):
            return protocol.ERR_LEN if n else None
        if n < 3 or n > 2 + self.chunk:
            return protocol.ERR_LEN
        start = payload[0] | payload[1] << 8
        if start > self.n or start + n - 2 > self.n:
            return ERR_INDEX
        return None if all(self.value(v) for v in payload[2:]) else protocol.ERR_CODE


#: the predictor firmware's error code for an update outside the input (docs/uart-protocol.md)
ERR_INDEX = 6


def predictor_mutations(spec, n, seed):
    """n (frame, expected error code) pairs for the predictor firmware, each refused."""
    g = random.Random(seed)
    out = []

    def update(start, codes):
        return ord("U"), bytes([start & 0xFF, start >> 8]) + bytes(codes)

    while len(out) < n:
        r = g.random()
        k = g.randrange(1, spec.chunk + 1)
        codes = [g.randrange(spec.top + 1) for _ in range(k)]
        op, payload = update(g.randrange(spec.n), codes)
        crc_ok = True
        if r < 0.2:  # a byte hit on the line
            crc_ok = False
        elif r < 0.35:  # an op nobody speaks
            op = g.choice([b for b in range(256) if b not in b"UPIS"])
        elif r < 0.5:  # too short, too long, or a payload on P / I
            op, payload = g.choice([(ord("U"), payload[:g.randrange(3)]),
                                    update(0, [0] * (spec.chunk + 1)),
                                    (ord("P"), b"\x00"), (ord("I"), b"\x01\x02")])
        elif r < 0.75 or spec.top == 255:  # outside the input: past its end, or running past
            start = g.choice([min(0xFFFF, spec.n + g.randrange(1, 1000)),
                              max(0, spec.n - g.randrange(0, k))])
            op, payload = update(start, codes)
        else:  # a code above 2^B - 1
            codes[g.randrange(k)] = g.randrange(spec.top + 1, 256)
            op, payload = update(g.randrange(max(1, spec.n - k + 1)), codes)
        want = spec.expected(op, payload, crc_ok)
        if want is not None:
            out.append((_frame(op, payload, crc_ok), want))
    return out


def mutations(spec, n, seed):
    """n (frame, expected error code) pairs, each an invalid frame."""
    g = random.Random(seed)
    out = []
    while len(out) < n:
        r = g.random()
        op = g.choice(b"LQ")
        size = spec.n + (op == ord("L"))
        payload = bytearray(g.randrange(256) for _ in range(size))
        if op == ord("L") and spec.kind == "learner":
            payload[0] = g.randrange(2)
        crc_ok = True
        if r < 0.25:  # a byte hit on the line: the CRC no longer holds
            crc_ok = False
        elif r < 0.4:  # an op nobody speaks
            op = g.choice([b for b in range(256) if b not in spec.ops])
        elif r < 0.6:  # a length off by a little or by a lot
            k = g.choice([-2, -1, 1, 2, g.randrange(0, MAX_LEN)])
            payload = bytearray(payload[:max(0, len(payload) + k)]) if k < 0 else \
                payload + bytearray(g.randrange(256) for _ in range(k))
            if op == ord("D") or g.random() < 0.2:
                op = g.choice(b"DI" + (b"C" if b"C" in spec.ops else b""))
                payload = bytearray(g.randrange(256) for _ in range(g.randrange(2, 20)))
        elif r < 0.8 and spec.kind == "learner":  # a label other than 0/1
            op = ord("L")
            payload = bytearray([g.randrange(2, 256)]) + payload[1:spec.n + 1]
            payload = payload + bytearray(spec.n + 1 - len(payload))
        else:  # one input out of range
            j = (op == ord("L")) + g.randrange(spec.n)
            bad = [v for v in range(256) if not spec.value(v)]
            if not bad:  # 8-bit values: every byte is in range; hit the length instead
                payload.append(0)
            else:
                payload[j] = g.choice(bad)
        want = spec.expected(op, bytes(payload), crc_ok)
        if want is not None:
            out.append((_frame(op, bytes(payload), crc_ok), want))
    return out


def run(model_bytes, board, n=1000, seed=1, max_cycles=4 * 10 ** 10, checkpoint_every=None):
    """Send n invalid frames between two dumps, then one valid learn step. Returns a dict: frames,
    right (error replies with the expected code), wrong (the first few that were not), same
    (state identical before and after), step_ok (the valid step is the reference's), cycles.
    With checkpoint_every the firmware checkpoints to EEPROM (C is then a valid op, refused with
    a payload), and eeprom_same says the bad frames wrote no EEPROM byte: the run's writes are
    exactly those of the valid step alone."""
    spec_m = registry.of_file(model_bytes)
    m, _ = spec_m.load(model_bytes)
    spec = Spec(spec_m.kind, m, checkpoint=checkpoint_every is not None)
    if spec.kind == "predictor":
        return _run_predictor(model_bytes, spec_m, m, spec, board, n, seed, max_cycles)
    bad = mutations(spec, n, seed)
    g = random.Random(seed + 1)
    if spec.kind == "learner":
        u = [g.randrange(spec.top + 1) for _ in range(spec.n)]
        step = [("L", 1, u)]
    else:
        lo, hi = -(1 << (m.bits - 1)), (1 << (m.bits - 1)) - 1
        step = [("L", 7, [g.randint(lo, hi) for _ in range(spec.n)])]
    fw = dialog(spec.kind)
    frames = [protocol.info_frame(), protocol.dump_frame()] + [f for f, _ in bad] + \
        [protocol.dump_frame()] + fw.frames(m, step)[1:] + [protocol.stop_frame()]
    replies, result, sizes = session(model_bytes, b"".join(frames), board,
                                     max_cycles=max_cycles, timeout=3600,
                                     checkpoint_every=checkpoint_every)
    if len(replies) != len(frames):
        raise KilobitError("%s: %d replies to %d frames" % (board, len(replies), len(frames)))
    before, errs, after = replies[1], replies[2:2 + n], replies[2 + n]
    right, wrong = 0, []
    for (f, want), r in zip(bad, errs):
        if r.code == "E" and r.payload[0] == want and r.payload[1] == f[1]:
            right += 1
        elif len(wrong) < 5:
            wrong.append((f.hex(), want, repr(r)))

    # the chip goes on: the info reply, then the valid step's replies, read as a replay's
    take = protocol.taker(replies[:1] + replies[3 + n:-1], board)
    got = fw.read(take, m, step, board)
    want = HostRuntime().replay(model_bytes, step)
    extra = {}
    if checkpoint_every is not None:
        alone = [protocol.info_frame(), protocol.dump_frame(), protocol.dump_frame()] + \
            fw.frames(m, step)[1:] + [protocol.stop_frame()]
        _, ref, _ = session(model_bytes, b"".join(alone), board, max_cycles=max_cycles,
                            checkpoint_every=checkpoint_every)
        extra = dict(eeprom_same=result.report["eeprom_writes"] == ref.report["eeprom_writes"],
                     eeprom_writes=result.report["eeprom_writes"])
    return dict(extra, frames=n, right=right, wrong=wrong, model=spec_m.name, board=board,
                same=bytes(before.payload) == bytes(after.payload) and before.code == "D",
                step_ok=[r[:4] for r in got] == [tuple(r[:4]) for r in want],
                cycles=result.cycles, flash=sizes["flash"], stack=result.stack_bytes)


def _run_predictor(model_bytes, spec_m, m, spec, board, n, seed, max_cycles):
    """The predictor firmware: n refused frames, then one sparse input (its zeros not sent, so
    a code a refused frame had written would show) whose prediction must be the host's."""
    from kilobit.runtimes.avr import fw_predict
    bad = predictor_mutations(spec, n, seed)
    g = random.Random(seed + 1)
    u = [g.randrange(1, spec.top + 1) if g.random() < 0.3 else 0 for _ in range(spec.n)]
    step = [("P", None, u)]
    valid = fw_predict.frames(m, step, skip_zeros=True)[1:]
    frames = [protocol.info_frame()] + [f for f, _ in bad] + valid + [protocol.stop_frame()]
    replies, result, sizes = session(model_bytes, b"".join(frames), board,
                                     max_cycles=max_cycles, timeout=3600)
    if len(replies) != len(frames):
        raise KilobitError("%s: %d replies to %d frames" % (board, len(replies), len(frames)))
    right, wrong = 0, []
    for (f, want), r in zip(bad, replies[1:1 + n]):
        if r.code == "E" and r.payload[0] == want and r.payload[1] == f[1]:
            right += 1
        elif len(wrong) < 5:
            wrong.append((f.hex(), want, repr(r)))
    take = protocol.taker(replies[:1] + replies[1 + n:-1], board)
    got = fw_predict.read(take, m, step, board, skip_zeros=True)
    want = HostRuntime().replay(model_bytes, step)
    same = all(a is None or a == b for a, b in zip(got[0], want[0]))
    return dict(frames=n, right=right, wrong=wrong, model=spec_m.name, board=board, same=same,
                step_ok=same, cycles=result.cycles, flash=sizes["flash"],
                stack=result.stack_bytes)
