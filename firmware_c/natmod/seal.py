"""Seal a native module for kbit: seal.py RAW.mpy OUT.mpy

OUT is RAW followed by a 12-byte trailer: b"KBNT", then RAW's length and its CRC-32 (zlib's),
both u32 little-endian. MicroPython ignores bytes after a module; kbit (kbit.compat.native)
checks the trailer before it imports the module, because MicroPython's loader (1.23 to 1.29
at least) hangs or crashes on a truncated native .mpy instead of raising.
"""
import os
import struct
import sys
import zlib

MAGIC = b"KBNT"


def seal(body):
    return body + MAGIC + struct.pack("<II", len(body), zlib.crc32(body) & 0xFFFFFFFF)


def main(raw, out):
    with open(raw, "rb") as f:
        body = f.read()
    tmp = out + ".tmp"
    with open(tmp, "wb") as f:
        f.write(seal(body))
    os.replace(tmp, out)


if __name__ == "__main__":
    main(*sys.argv[1:3])
