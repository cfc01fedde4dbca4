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


def pack_scaler(scaler):
    """The payload's trailer: has_scaler (0/1), then lo and hi as float32 (host use only)."""
    if scaler is None:
        return b"\x00"
    lo, hi = scaler
    return b"\x01" + np.asarray(lo, dtype="<f4").tobytes() + np.asarray(hi, dtype="<f4").tobytes()


def unpack_scaler(p, off, n, model):
    """(lo, hi) of n features, or None, from the trailer at p[off], which must end the payload."""
    if p[off] == 1:
        if len(p) != off + 1 + 8 * n:
            raise ModelFileError("truncated or padded %s scaler" % model)
        lo = np.frombuffer(p, dtype="<f4", count=n, offset=off + 1).copy()
        hi = np.frombuffer(p, dtype="<f4", count=n, offset=off + 1 + 4 * n).copy()
        return lo, hi
    if p[off] != 0 or len(p) != off + 1:
        raise ModelFileError("bad %s trailer" % model)
    return None


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
