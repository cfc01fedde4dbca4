"""The UART protocol of the RKP firmware (firmware_c/avr/rkp_stream.c; docs/uart-protocol.md).

    request  A5 | op | len (u16 LE) | payload[len] | crc8(op, len, payload)
    reply    5A | code | len (u16 LE) | payload[len] | crc8(code, len, payload)

CRC-8 is polynomial 0x07, initial value 0, no reflection, no final xor (CRC-8/SMBUS).

    op  request payload        reply code and payload
    L   label, c0 .. cM-1      L: flags, count u16, score (int16 or int32, LE)
    Q   c0 .. cM-1             Q: flags, count u16, score
    D   [] or [1]              D: rng u16, count u16, memory (omitted for [1] if unchanged)
    I   []                     I: version, type, kernel, bits, dims u16, budget u16, width i8,
                                  C, ntab, score bytes, memory bytes u16, table[ntab]
                                  (K >= 3 classes: then K)
    S   []                     S: (empty), then the chip stops
    C   []                     C: result (0 written, 1 unchanged), seq (a firmware built with
                                  checkpoints, firmware_c/avr/kb_persist.h)
    any bad frame              E: error code, op
flags: bit 0 the prediction (score > 0), bit 1 a mistake (the example was learnt), bit 2 a
checkpoint was written to EEPROM after the step.

A firmware of K >= 3 classes (one-vs-rest, firmware_c/avr/kb_ovr_fw.h) takes labels 0 .. K-1;
its learn and query replies end with the class answered (u8, after the score), their count is
the learners' summed, the score the largest, and a mistake means any learner stored; a dump's
memory is the K memories back to back (rng is learner 0's). A binary firmware's frames are
unchanged.
"""
import struct

from kilobit.core.errors import KilobitError

VERSION = 1
SYNC_REQ = 0xA5
SYNC_REP = 0x5A
OP_LEARN, OP_QUERY, OP_DUMP, OP_INFO, OP_STOP, OP_CHECKPOINT = b"LQDISC"
FLAG_CHECKPOINT = 4  # in a learn reply's flags: a checkpoint was written after the step
REP_ERROR = ord("E")

ERRORS = {1: "bad checksum", 2: "bad length", 3: "code out of range", 4: "label out of range",
          5: "unknown op"}
ERR_CRC, ERR_LEN, ERR_CODE, ERR_LABEL, ERR_OP = 1, 2, 3, 4, 5

INFO = struct.Struct("<BBBBHHbBBBH")
INFO_FIELDS = ("version", "model_type", "kernel", "bits", "dims", "budget", "width", "C",
               "ntab", "score_bytes", "mem_bytes")


class ProtocolError(KilobitError):
    """The chip's reply stream cannot be parsed (bad sync, checksum, length or code)."""


def _crc_table():
    table = []
    for i in range(256):
        c = i
        for _ in range(8):
            c = ((c << 1) ^ 0x07) & 0xFF if c & 0x80 else (c << 1) & 0xFF
        table.append(c)
    return table


_CRC8 = _crc_table()


def crc8(data, crc=0):
    for b in data:
        crc = _CRC8[crc ^ b]
    return crc


def frame(op, payload=b"", sync=SYNC_REQ):
    """One request frame (or, with sync=SYNC_REP, a reply frame: the same layout)."""
    if isinstance(op, str):
        op = ord(op)
    payload = bytes(payload)
    body = bytes([op]) + struct.pack("<H", len(payload)) + payload
    return bytes([sync]) + body + bytes([crc8(body)])


def learn_frame(y, codes):
    return frame(OP_LEARN, bytes([int(y)] + [int(c) for c in codes]))


def query_frame(codes):
    return frame(OP_QUERY, bytes(int(c) for c in codes))


def dump_frame(if_changed=False):
    return frame(OP_DUMP, b"\x01" if if_changed else b"")


def info_frame():
    return frame(OP_INFO)


def stop_frame():
    return frame(OP_STOP)


def checkpoint_frame():
    return frame(OP_CHECKPOINT)


class Reply:
    """One parsed reply. `code` is the reply code character ("L", "Q", "D", "I", "S", "E")."""

    def __init__(self, code, payload):
        self.code = chr(code)
        self.payload = payload

    # learn / query
    @property
    def flags(self):
        return self.payload[0]

    @property
    def pred(self):
        """The class answered: the score's sign for one binary learner, else the class byte."""
        return self.payload[-1] if self._has_class() else self.payload[0] & 1

    def _has_class(self):
        # a score is 2 or 4 bytes after flags and count: one byte more is the class
        return len(self.payload) - 3 in (3, 5)

    @property
    def mistake(self):
        return (self.payload[0] >> 1) & 1

    @property
    def count(self):
        return struct.unpack_from("<H", self.payload, 2 if self.code == "D" else 1)[0]

    @property
    def score(self):
        raw = self.payload[3:len(self.payload) - self._has_class()]
        if len(raw) not in (2, 4):
            raise ProtocolError("score of %d bytes" % len(raw))
        return int.from_bytes(raw, "little", signed=True)

    # dump
    @property
    def rng(self):
        return struct.unpack_from("<H", self.payload, 0)[0]

    @property
    def memory(self):
        """The support-vector memory of a dump, or None when the chip left it out (unchanged)."""
        return bytes(self.payload[4:]) if len(self.payload) > 4 else None

    # info
    def info(self):
        d = dict(zip(INFO_FIELDS, INFO.unpack_from(self.payload)))
        end = INFO.size + d["ntab"]
        d["table"] = list(self.payload[INFO.size:end])
        d["classes"] = self.payload[end] if len(self.payload) > end else 2
        return d

    # error
    @property
    def error(self):
        return self.payload[0] if self.code == "E" else None

    @property
    def error_text(self):
        if self.code != "E":
            return None
        return "%s (op %r)" % (ERRORS.get(self.payload[0], "error %d" % self.payload[0]),
                               chr(self.payload[1]))

    def __repr__(self):
        return "Reply(%s, %s)" % (self.code, bytes(self.payload).hex())


class ReplyReader:
    """Incremental reply parser: feed() bytes, take complete replies from .replies."""

    def __init__(self):
        self.buf = bytearray()
        self.replies = []

    def feed(self, data):
        self.buf += data
        while True:
            if not self.buf:
                return
            if self.buf[0] != SYNC_REP:
                raise ProtocolError("expected reply sync 0x%02x, got 0x%02x"
                                    % (SYNC_REP, self.buf[0]))
            if len(self.buf) < 4:
                return
            n = struct.unpack_from("<H", self.buf, 2)[0]
            if len(self.buf) < 5 + n:
                return
            body = bytes(self.buf[1:4 + n])
            if crc8(body) != self.buf[4 + n]:
                raise ProtocolError("reply checksum mismatch (code %r)" % chr(self.buf[1]))
            self.replies.append(Reply(self.buf[1], body[3:]))
            del self.buf[:5 + n]

    def needed(self):
        """Bytes still missing for the reply being received (at least 1 when idle)."""
        if len(self.buf) < 4:
            return 4 - len(self.buf) + 1
        n = struct.unpack_from("<H", self.buf, 2)[0]
        return 5 + n - len(self.buf)


def parse_replies(data):
    """All replies in a complete byte stream; a trailing partial reply is an error."""
    r = ReplyReader()
    r.feed(data)
    if r.buf:
        raise ProtocolError("reply stream ends inside a reply (%d bytes left)" % len(r.buf))
    return r.replies


def taker(replies, who, error=KilobitError):
    """take(code): the next of `replies`, which must carry `code`; raises error("<who>: ...")
    when the replies end early, the chip refused a frame (an error reply) or the code differs."""
    it = iter(replies)

    def take(code):
        r = next(it, None)
        if r is None:
            raise error("%s: replies end early" % who)
        if r.code == "E":
            raise error("%s: the chip refused a frame: %s" % (who, r.error_text))
        if r.code != code:
            raise error("%s: expected reply %r, got %r" % (who, code, r))
        return r

    return take
