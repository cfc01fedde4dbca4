"""The versioned binary model container (docs/contract.md, section 4).

    b"KBIT" | version u8 | model type u8 | reserved u16 | payload length u32 | payload | crc32 u32
"""
import struct
import zlib

import numpy as np

from kilobit.core.errors import ModelFileError

MAGIC = b"KBIT"
VERSION = 1
MODEL_TYPES = {"rkp": 1}
MODEL_TYPES["bonsai"] = 3  # docs/contract.md section 8
MODEL_TYPES["ckp"] = 2  # docs/contract.md section 6
MODEL_TYPES["assoc"] = 5  # docs/contract.md section 9
MODEL_TYPES["protonn"] = 4  # docs/contract.md section 10
MODEL_NAMES = {v: k for k, v in MODEL_TYPES.items()}
_HEAD = struct.Struct("<4sBBHI")


def pack(model_name, payload):
    head = _HEAD.pack(MAGIC, VERSION, MODEL_TYPES[model_name], 0, len(payload))
    body = head + bytes(payload)
    return body + struct.pack("<I", zlib.crc32(body) & 0xFFFFFFFF)


def unpack(data):
    """Return (model name, payload) or raise ModelFileError saying what is wrong."""
    data = bytes(data)
    if len(data) < 4 or data[:4] != MAGIC:
        raise ModelFileError("not a kilobit model file (bad magic %r)" % data[:4])
    if len(data) < _HEAD.size + 4:
        raise ModelFileError("truncated model file (%d bytes)" % len(data))
    _, version, mtype, _, length = _HEAD.unpack_from(data)
    if version != VERSION:
        raise ModelFileError("unsupported model file version %d (this kilobit reads %d)"
                             % (version, VERSION))
    if mtype not in MODEL_NAMES:
        raise ModelFileError("unknown model type %d" % mtype)
    end = _HEAD.size + length
    if len(data) != end + 4:
        raise ModelFileError("truncated or padded model file: %d bytes, header says %d"
                             % (len(data), end + 4))
    (crc,) = struct.unpack_from("<I", data, end)
    if zlib.crc32(data[:end]) & 0xFFFFFFFF != crc:
        raise ModelFileError("corrupt model file (CRC mismatch)")
    return MODEL_NAMES[mtype], data[_HEAD.size:end]


def write(path, data):
    """Write a model file as every output is written (kilobit.core.outfile): all or nothing."""
    from kilobit.core import outfile
    outfile.write(path, bytes(data))


EXTRA_SCALER, EXTRA_QUANT, EXTRA_LABELS = 1, 2, 4  # the trailer's extras bits (contract 4.1)
EXTRA_PIPELINE = 8
LABELS_MAX, LABEL_LEN = 255, 32


class Extras:
    """What a payload's trailer holds besides the model (contract 4.1): the float scaler
    ((lo, hi) float32, host use) or the integer quantizer (kilobit.core.quant.IntQuantizer,
    every runtime's), and the user's labels of class ids 0 .. K-1 (a tuple of str)."""

    def __init__(self, scaler=None, quant=None, labels=None, pipeline=None):
        if scaler is not None and quant is not None:
            raise ValueError("a model stores a float scaler or an integer quantizer, not both")
        if pipeline is not None and quant is None:
            raise ValueError("a model that takes windows quantizes their features with the "
                             "integer quantizer (contract 4.1 bit 3)")
        self.scaler, self.quant, self.pipeline = scaler, quant, pipeline
        self.labels = None if labels is None else tuple(str(v) for v in labels)
        if self.labels is not None:
            check_labels(self.labels)

    @classmethod
    def of(cls, inputs, labels=None, pipeline=None):
        """The extras of a trainer's input map (a MinMaxScaler or an IntQuantizer), labels and
        window pipeline (kilobit.core.pipeline)."""
        if inputs is None:
            return cls(labels=labels, pipeline=pipeline)
        if hasattr(inputs, "codes"):
            return cls(quant=inputs, labels=labels, pipeline=pipeline)
        return cls(scaler=(inputs.lo_, inputs.hi_), labels=labels, pipeline=pipeline)

    @classmethod
    def of_split(cls, inputs, split):
        """The extras of a trainer's input map and its training split's labels and pipeline."""
        return cls.of(inputs, split.labels, getattr(split, "pipeline", None))

    def label(self, cid):
        """The user's label of class id `cid` (the id itself past the map)."""
        cid = int(cid)
        return self.labels[cid] if self.labels is not None and cid < len(self.labels) else cid


def label_ok(b):
    """True for a label a model file can store (contract 4.1): 1..32 bytes of printable ASCII."""
    return 1 <= len(b) <= LABEL_LEN and all(0x20 <= c <= 0x7E for c in b)


def check_labels(labels):
    if not 1 <= len(labels) <= LABELS_MAX:
        raise ValueError("a model stores 1..%d labels, not %d" % (LABELS_MAX, len(labels)))
    for v in labels:
        if not label_ok(v.encode("utf-8", "replace")):
            raise ValueError("label %r: labels are 1..%d printable ASCII characters"
                             % (v, LABEL_LEN))


def pack_scaler(extras):
    """The payload's trailer (contract 4.1) of None, a (lo, hi) float scaler, a MinMaxScaler,
    an IntQuantizer or an Extras."""
    if extras is None:
        return b"\x00"
    if isinstance(extras, tuple):
        extras = Extras(scaler=extras)
    elif not isinstance(extras, Extras):
        extras = Extras.of(extras)
    flags, out = 0, b""
    if extras.scaler is not None:
        lo, hi = extras.scaler
        flags |= EXTRA_SCALER
        out += np.asarray(lo, dtype="<f4").tobytes() + np.asarray(hi, dtype="<f4").tobytes()
    if extras.quant is not None:
        flags |= EXTRA_QUANT
        out += np.asarray(extras.quant.lo_, dtype="<i4").tobytes()
        out += np.asarray(extras.quant.hi_, dtype="<i4").tobytes()
    if extras.labels is not None:
        flags |= EXTRA_LABELS
        out += bytes((len(extras.labels),))
        for v in extras.labels:
            out += bytes((len(v),)) + v.encode("ascii")
    if getattr(extras, "pipeline", None) is not None:
        flags |= EXTRA_PIPELINE
        out += extras.pipeline.pack()
    return bytes((flags,)) + out


def unpack_scaler(p, off, n, model, bits=None):
    """The Extras of n raw inputs, or None when the trailer at p[off] is empty; it must end the
    payload. `bits`: the model's code width (the integer quantizer's b)."""
    from kilobit.core.quant import IntQuantizer
    p = bytes(p)
    flags = p[off]
    bad = ModelFileError("bad %s trailer" % model)
    if flags & ~15 or flags & 3 == 3 or flags & EXTRA_PIPELINE and not flags & EXTRA_QUANT:
        raise bad
    if flags == 0:
        if len(p) != off + 1:
            raise bad
        return None
    pos, scaler, quant, labels, pipeline = off + 1, None, None, None, None
    if flags & EXTRA_PIPELINE:  # the last section: cut it off first, so the rest reads as before
        from kilobit.core.pipeline import SIZE, Pipeline
        if len(p) < pos + SIZE:
            raise bad
        try:
            pipeline = Pipeline.unpack(p[-SIZE:], n)
        except ValueError:
            raise bad from None
        p = p[:-SIZE]
    if flags & 3:
        if len(p) < pos + 8 * n or (not flags & EXTRA_LABELS and len(p) != pos + 8 * n):
            raise bad  # a section of the wrong length (contract 4.1), as firmware_c says
        kind = "<f4" if flags & EXTRA_SCALER else "<i4"
        lo = np.frombuffer(p, dtype=kind, count=n, offset=pos).copy()
        hi = np.frombuffer(p, dtype=kind, count=n, offset=pos + 4 * n).copy()
        pos += 8 * n
        if flags & EXTRA_SCALER:
            # a valid CRC says nothing of the values: an infinite or NaN bound makes codes out
            # of range (contract 4.1: a bad trailer, as every runtime says)
            if not (np.isfinite(lo).all() and np.isfinite(hi).all()):
                raise bad
            scaler = (lo, hi)
        else:
            quant = IntQuantizer(bits or 8, floor=(model == "ckp"))
            if quant.set_bounds(lo, hi):
                raise bad
    if flags & EXTRA_LABELS:
        if pos >= len(p) or not 1 <= p[pos] <= LABELS_MAX:
            raise bad
        k, pos, labels = p[pos], pos + 1, []
        for _ in range(k):
            raw = p[pos + 1:pos + 1 + p[pos]] if pos < len(p) else b""
            if not label_ok(raw) or len(raw) != p[pos]:
                raise bad
            labels.append(raw.decode("ascii"))
            pos += 1 + p[pos]
        if pos != len(p):
            raise bad
    return Extras(scaler, quant, labels, pipeline)


class PayloadModel:
    """The model-file methods of a host-trained predictor (Bonsai, ProtoNN): the subclass names
    itself in NAME, writes its payload with payload(scaler) (ending with the host-only trailer,
    one byte when there is no scaler) and parses it with the classmethod _parse(payload) ->
    (model, scaler or None), raising ValueError or struct.error on a bad payload."""
    NAME = None

    def device_bytes(self):
        """Bytes the device stores: the payload without the host-only trailer."""
        return len(self.payload()) - 1

    def to_bytes(self, scaler=None):
        return pack(self.NAME, self.payload(scaler))

    @classmethod
    def from_bytes(cls, data):
        """(model, scaler or None); ModelFileError says what is wrong."""
        name, pl = unpack(data)
        if name != cls.NAME:
            raise ModelFileError("bad parameters: not a %s model (%s)" % (cls.NAME, name))
        try:
            return cls._parse(pl)
        except (ValueError, struct.error) as e:
            prefix, msg = "bad %s model: " % cls.NAME, str(e)
            raise ModelFileError(msg if msg.startswith(prefix) else prefix + msg) from None
