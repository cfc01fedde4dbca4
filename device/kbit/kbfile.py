"""The kilobit model container (docs/contract.md, section 4), read from bytes or a stream.

    b"KBIT" | version u8 | model type u8 | reserved u16 | payload length u32 | payload | crc32 u32

`Reader` takes bytes-like data or a stream with readinto() (anything else: ModelFileError),
checks the header, hands the payload out piece by piece (so a model's memory can be
read straight into its own buffer: loading never holds the file twice) and checks length and
CRC-32 in `finish()`. The CRC is computed in two 16-bit halves, so MicroPython stays in small
ints. Errors are `ModelFileError` (a ValueError) with a distinct message per cause.
"""
from .compat import (
    check_codes as _check_codes,
    const,
    label_id as _label_id,
    label_of as _label_of,
    lock as _lock,
    unlock as _unlock,
)

MAGIC = b"KBIT"
VERSION = const(1)
TYPE_RKP = const(1)
TYPE_CKP = const(2)
TYPE_BONSAI = const(3)
TYPES = (TYPE_RKP, TYPE_CKP)
TYPES += (TYPE_BONSAI,)
TYPE_ASSOC = const(5)
TYPES += (TYPE_ASSOC,)
TYPE_PROTONN = const(4)
TYPES += (TYPE_PROTONN,)
# a model type's name, its module and class in kbit (kbit.load imports only the one it needs)
NAMES = {TYPE_RKP: ("rkp", "RKP"), TYPE_CKP: ("ckp", "CKP"), TYPE_BONSAI: ("bonsai", "Bonsai"),
         TYPE_PROTONN: ("protonn", "ProtoNN"), TYPE_ASSOC: ("assoc", "Assoc")}

# CRC-32 (reflected polynomial 0xEDB88320), nibble table split into high and low 16 bits.
_CRC_HI = (0x0000, 0x1DB7, 0x3B6E, 0x26D9, 0x76DC, 0x6B6B, 0x4DB2, 0x5005,
           0xEDB8, 0xF00F, 0xD6D6, 0xCB61, 0x9B64, 0x86D3, 0xA00A, 0xBDBD)
_CRC_LO = (0x0000, 0x1064, 0x20C8, 0x30AC, 0x4190, 0x51F4, 0x6158, 0x713C,
           0x8320, 0x9344, 0xA3E8, 0xB38C, 0xC2B0, 0xD2D4, 0xE278, 0xF21C)
_CHUNK = const(64)


class ModelFileError(ValueError):
    """A model file this runtime refuses; str(e) says why."""


class Crc32:
    """Incremental CRC-32 (as zlib.crc32) with every intermediate below 2^16."""

    def __init__(self):
        self.hi = 0xFFFF
        self.lo = 0xFFFF

    def update(self, buf, n=-1):
        if n < 0:
            n = len(buf)
        hi = self.hi
        lo = self.lo
        th = _CRC_HI
        tl = _CRC_LO
        for i in range(n):
            lo ^= buf[i]
            k = lo & 15
            lo = ((lo >> 4) | ((hi & 15) << 12)) ^ tl[k]
            hi = (hi >> 4) ^ th[k]
            k = lo & 15
            lo = ((lo >> 4) | ((hi & 15) << 12)) ^ tl[k]
            hi = (hi >> 4) ^ th[k]
        self.hi = hi
        self.lo = lo

    def matches(self, b4):
        """True when the 4 little-endian bytes b4 hold this CRC."""
        return (b4[0] | b4[1] << 8) == self.lo ^ 0xFFFF and (b4[2] | b4[3] << 8) == self.hi ^ 0xFFFF

    def value(self):
        return (self.hi ^ 0xFFFF) << 16 | (self.lo ^ 0xFFFF)


def crc32(data):
    c = Crc32()
    c.update(data)
    return c.value()


class _BytesSource:
    """readinto() over a bytes-like object, without copying it. ModelFileError for anything
    else (None, a number, a list): a loader's source is bytes or a stream."""

    def __init__(self, data):
        try:
            self.mv = memoryview(data)
        except TypeError:
            raise ModelFileError("not a model file: expected a path, bytes or a stream with "
                                 "readinto()")
        self.pos = 0

    def readinto(self, buf):
        n = min(len(buf), len(self.mv) - self.pos)
        buf[:n] = self.mv[self.pos:self.pos + n]
        self.pos += n
        return n


class Reader:
    """Read one model file: the header at construction, then the payload, then `finish()`.

    Checks in the order of the host (kilobit.core.kbfile.unpack): magic, too short, version, model
    type, length; the CRC in `finish()`. Callers must report payload errors only after
    `finish()` succeeded, so that a corrupt file is called corrupt, not "bad parameters".
    """

    def __init__(self, src, size=-1):
        """size: the file's length where the caller knows it (a path's), else -1."""
        if not hasattr(src, "readinto"):
            src = _BytesSource(src)
            size = len(src.mv)
        self.src = src
        self.crc = Crc32()
        head = bytearray(12)
        n = self._fill(head, 4)
        if n < 4 or head[:4] != MAGIC:
            raise ModelFileError("not a kilobit model file (bad magic)")
        n += self._fill(memoryview(head)[4:], 8)
        # the host refuses a file shorter than header + CRC as truncated, before looking at it
        self.ahead = bytearray(4)
        self.nahead = self._fill(self.ahead, 4) if n == 12 else 0
        if n + self.nahead < 16:
            raise ModelFileError("truncated model file")
        if head[4] != VERSION:
            raise ModelFileError("unsupported model file version %d (this kbit reads %d)"
                                 % (head[4], VERSION))
        if head[5] not in TYPES:
            raise ModelFileError("unknown model type %d" % head[5])
        self.type = head[5]
        self.crc.update(head)
        if head[11] >> 6:  # the length cannot be this large: keep it a small int
            raise ModelFileError("truncated model file (payload length too large)")
        self.length = head[8] | head[9] << 8 | head[10] << 16 | head[11] << 24
        # Where the source knows its size, the header's length is held to it now, as the host
        # does, before a loader allocates what the payload's fields claim.
        if size >= 0 and size != 16 + self.length:
            raise ModelFileError("truncated or padded model file: %d bytes, header says %d"
                                 % (size, 16 + self.length))
        self.left = self.length  # payload bytes not yet handed out

    def _fill(self, buf, n):
        """Read up to n bytes into buf (a bytearray or memoryview); return how many."""
        got = 0
        mv = memoryview(buf)
        while got < n:
            r = self.src.readinto(mv[got:n])
            if not r:
                break
            got += r
        return got

    def _take(self, buf, n):
        """Payload or trailer bytes, the 4 look-ahead bytes first; return how many."""
        k = 0
        if self.nahead:
            k = min(n, self.nahead)
            for i in range(k):
                buf[i] = self.ahead[i]
            self.ahead[:self.nahead - k] = self.ahead[k:self.nahead]
            self.nahead -= k
        if k < n:
            k += self._fill(memoryview(buf)[k:], n - k)
        return k

    def readinto(self, buf, n=-1):
        """Fill buf[:n] with the next n payload bytes. Short file -> truncated."""
        if n < 0:
            n = len(buf)
        if n > self.left or self._take(buf, n) != n:
            self.left = -1
            raise ModelFileError("truncated model file")
        self.crc.update(buf, n)
        self.left -= n

    def read(self, n):
        b = bytearray(n)
        self.readinto(b, n)
        return b

    def finish(self):
        """Consume the rest of the payload and the CRC; check length and CRC."""
        buf = bytearray(_CHUNK)
        while self.left > 0:
            self.readinto(buf, min(self.left, _CHUNK))
        if self._take(buf, 5) != 4:  # exactly 4 bytes must remain: the CRC
            raise ModelFileError("truncated or padded model file")
        if not self.crc.matches(buf):
            raise ModelFileError("corrupt model file (CRC mismatch)")


def with_reader(src, read):
    """read(r) for a Reader r of src: a path (str; the file is closed after), bytes-like, a
    stream with readinto(), or a Reader already made (kbit.load's)."""
    if isinstance(src, str):
        try:
            f = open(src, "rb")
        except OSError as e:
            raise ModelFileError("cannot open %s (%s)" % (src, e))
        try:
            n = f.seek(0, 2)
            f.seek(0)
            return read(Reader(f, n))
        finally:
            f.close()
    return read(src if isinstance(src, Reader) else Reader(src))


def load_any(src):
    """kbit.load: the model of whichever type the file holds, its module imported then."""
    return with_reader(src, _any)


def _any(r):
    mod, cls = NAMES[r.type]
    pkg = __name__[:__name__.rfind(".")]
    return getattr(__import__(pkg + "." + mod, None, None, (cls,)), cls).load(r)


def type_error(r, mtype):
    """None when r holds a model of type mtype, else the complaint, both types by name."""
    if r.type == mtype:
        return None
    want = NAMES[mtype][0]
    got = NAMES[r.type][0]
    return "not %s %s model: the file holds %s %s model" % (
        "an" if want[0] in "ar" else "a", want, "an" if got[0] in "ar" else "a", got)


def load(cls, src, name):
    """cls._read(r) -> a model, for a Reader r of src (with_reader), its type checked first
    (cls.TYPE), and the container checked in full before a payload error is reported: a
    corrupt file is called corrupt, not "bad <name> model: ..."."""
    def run(r):
        err = type_error(r, cls.TYPE)
        m = None
        if not err:
            try:
                m = cls._read(r)
            except ModelFileError:
                raise
            except ValueError as e:
                err = "bad %s model: %s" % (name, e)
        r.finish()
        if err:
            raise ModelFileError(err)
        return m

    return with_reader(src, run)


def write(stream, mtype, parts):
    """Write a model file whose payload is the concatenation of `parts` (bytes-like)."""
    n = 0
    for p in parts:
        n += len(p)
    head = bytearray(12)
    head[:4] = MAGIC
    head[4] = VERSION
    head[5] = mtype
    for i in range(4):
        head[8 + i] = (n >> (8 * i)) & 0xFF
    c = Crc32()
    c.update(head)
    stream.write(head)
    for p in parts:
        c.update(p)
        stream.write(p)
    stream.write(bytes((c.lo & 0xFF ^ 0xFF, c.lo >> 8 ^ 0xFF, c.hi & 0xFF ^ 0xFF,
                        c.hi >> 8 ^ 0xFF)))


class Inputs:
    """What every model class takes from the file's trailer: `quantizer` (None or a Quantizer),
    `names` (None or the user's labels of class ids, a tuple of str), the float scaler's bytes
    (host use), and `quantize` (kbit.quant.Quantizer's). Class attributes, so a model without
    extras stores nothing."""

    quantizer = None
    names = None
    #: (samples, axes, mask, p, bands) of a model that takes windows (kbit.pipeline), or None
    pipeline = None
    _scaler = None

    def quantize(self, raw, out=None):
        """The model's codes of raw integer readings (Quantizer.quantize); ValueError when its
        file has no integer quantizer."""
        q = self.quantizer
        if q is None:
            raise ValueError("this model has no integer quantizer (train it on integer readings "
                             "to get one)")
        return q.quantize(raw, out)


class Binary(Inputs):
    """predict and learn of the binary learners (kbit.rkp, kbit.ckp), around their kernels'
    _predict_id(u) and _learn_id(u, y) (native or bytecode): the user's labels in and out. A
    bytearray, the kernels' own codes, goes to the kernel, which checks it (the bytecode with
    kbit.compat.check_codes, which the native glue runs for what it refuses); anything else is
    checked here first (a str would pass the glue as a buffer), so no Python call is added to
    the native path."""

    def predict(self, u):
        """The class of codes u (score > 0: 1, else 0): its label when the file named it."""
        if type(u) is not bytearray:
            _check_codes(u, self.dims, 0, (1 << self.bits) - 1)
        i = self._predict_id(u)
        names = self.names
        return i if names is None else _label_of(i, names)

    def learn(self, u, y):
        """One learning step for codes u and label y: class id 0 or 1, or its name in the
        model's labels (names). Returns the score before learning; sets self.mistake. Refused
        before anything changes: TypeError for what is not an int (nor a label), ValueError
        for a wrong length, a code outside 0 .. 2^B-1 or an unknown label."""
        if type(u) is not bytearray:
            _check_codes(u, self.dims, 0, (1 << self.bits) - 1)
        if type(y) is not int or y >> 1:
            y = _label_id(y, self.names, 2)
        return self._learn_id(u, y)

    # The bytecode under the kernels' functions (kbit.compat.native_methods): the glue runs
    # these for what it does not take, so they check what the wrappers above let through.
    def _predict_id(self, u):
        _check_codes(u, self.dims, 0, (1 << self.bits) - 1)
        _lock()
        try:
            return 1 if self._score(u) > 0 else 0  # a tie predicts the negative class
        finally:
            _unlock()

    def _learn_id(self, u, y):
        _check_codes(u, self.dims, 0, (1 << self.bits) - 1)
        _lock()
        try:
            return self._learn(u, y)  # the score before the step
        finally:
            _unlock()


def read_trailer(r, m, n, name, bits, floor=False, signed=False, bad=""):
    """Read the payload's trailer (contract 4.1), the rest of Reader r's payload, into model m
    of n raw inputs and code width bits (the quantizer's floor and signed as
    kbit.quant.Quantizer's), once for the five loaders: None, or what is wrong, a bad trailer's
    complaint prefixed by `bad`. An empty trailer is read here; kbit.quant, imported only then
    (the board's heap), reads any other."""
    flags = r.read(1)[0]
    if not flags and not r.left:
        return None
    from .quant import read_extras
    return read_extras(r, m, flags, n, name, bits, floor, signed, bad)


def trailer(m):
    """The trailer of model m's payload: exactly the bytes read_trailer read."""
    if m._scaler is None and m.quantizer is None and m.names is None and m.pipeline is None:
        return b"\x00"
    from .quant import trailer
    return trailer(m)
