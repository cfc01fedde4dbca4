"""A minimal reader of R's .rda files (XDR serialization, version 2 or 3), enough for the data
frames of the R package mlbench: numeric and integer columns, factors, names, row names.

    frames = read("Shuttle.rda")          # {"Shuttle": RFrame}
    f = frames["Shuttle"]; f.columns["V1"], f.levels["Class"]

No R and no pandas needed; compression gzip, bzip2 or xz, as R writes them.
"""
import bz2
import gzip
import lzma
import struct

import numpy as np

from kilobit.core.errors import DataError

_NIL, _REF, _SYM, _LIST, _CHAR, _LGL, _INT, _REAL, _STR, _VEC = 254, 255, 1, 2, 9, 10, 13, 14, \
    16, 19


class RFrame:
    """A data frame: `columns` name -> numpy array (factors as integer codes 1..K),
    `levels` name -> list of level names for the factor columns."""

    def __init__(self, columns, levels):
        self.columns, self.levels = columns, levels


def _decompress(raw, path):
    for magic, fn in ((b"\x1f\x8b", gzip.decompress), (b"BZh", bz2.decompress),
                      (b"\xfd7zXZ", lzma.decompress)):
        if raw.startswith(magic):
            try:
                return fn(raw)
            except (OSError, EOFError, lzma.LZMAError, ValueError) as e:
                raise DataError("%s: cannot decompress: %s" % (path, e)) from None
    return raw


def read(path):
    """{name: RFrame or the raw object} of an .rda file; raises DataError."""
    try:
        with open(path, "rb") as f:
            data = _decompress(f.read(), path)
    except OSError as e:
        raise DataError("cannot read %s: %s" % (path, e.strerror or e)) from None
    if data[:5] not in (b"RDX2\n", b"RDX3\n") or data[5:7] != b"X\n":
        raise DataError("%s: not an XDR .rda file" % path)
    r = _Reader(data, path)
    r.pos = 7
    version = r.i32()
    r.i32()
    r.i32()
    if version == 3:
        r.string(r.i32())  # native encoding
    top = r.item()
    if not isinstance(top, _Pairs):
        raise DataError("%s: expected a list of named objects" % path)
    return {name: _frame(obj) for name, obj in top.items}


class _Pairs:
    def __init__(self, items):
        self.items = items


class _Vec:
    def __init__(self, values, attrs):
        self.values, self.attrs = values, attrs


def _frame(obj):
    if not isinstance(obj, _Vec) or "names" not in obj.attrs:
        return obj
    names = obj.attrs["names"].values
    columns, levels = {}, {}
    for name, col in zip(names, obj.values):
        columns[name] = col.values
        if "levels" in col.attrs:
            levels[name] = list(col.attrs["levels"].values)
    return RFrame(columns, levels)


class _Reader:
    def __init__(self, data, path):
        self.data, self.path, self.pos, self.refs = data, path, 0, []

    def fail(self, what):
        raise DataError("%s: %s at byte %d" % (self.path, what, self.pos))

    def i32(self):
        if self.pos + 4 > len(self.data):
            self.fail("truncated")
        (v,) = struct.unpack_from(">i", self.data, self.pos)
        self.pos += 4
        return v

    def string(self, n):
        s = self.data[self.pos:self.pos + n].decode("latin-1")
        self.pos += n
        return s

    def item(self):
        flags = self.i32()
        t = flags & 0xFF
        has_attr, has_tag = flags & (1 << 9), flags & (1 << 10)
        if t == _NIL:
            return None
        if t == _REF:
            idx = flags >> 8 or self.i32()
            return self.refs[idx - 1]
        if t == _SYM:
            sym = ("sym", self.item())
            self.refs.append(sym)
            return sym
        if t == _LIST:
            items = []
            while True:
                attr = self.item() if has_attr else None
                del attr
                tag = self.item() if has_tag else None
                items.append((tag[1] if tag else None, self.item()))
                flags = self.i32()
                if flags & 0xFF == _NIL:
                    return _Pairs(items)
                if flags & 0xFF != _LIST:
                    self.fail("unsupported pairlist tail %d" % (flags & 0xFF))
                has_attr, has_tag = flags & (1 << 9), flags & (1 << 10)
        if t == _CHAR:
            n = self.i32()
            return None if n == -1 else self.string(n)
        if t in (_LGL, _INT, _REAL, _STR, _VEC):
            n = self.i32()
            if t in (_LGL, _INT):
                v = np.frombuffer(self.data, ">i4", n, self.pos).astype(np.int64)
                self.pos += 4 * n
            elif t == _REAL:
                v = np.frombuffer(self.data, ">f8", n, self.pos).astype(np.float64)
                self.pos += 8 * n
            else:
                v = [self.item() for _ in range(n)]
            attrs = {}
            if has_attr:
                pairs = self.item()
                attrs = dict(pairs.items) if isinstance(pairs, _Pairs) else {}
            return _Vec(v, attrs)
        self.fail("unsupported R object type %d" % t)
