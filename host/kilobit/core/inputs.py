"""How every command reads an input file (issue 30): once, whole, into memory, with a cap.

    blob = inputs.read(path, "model file", inputs.MODEL_CAP)    # bytes
    text = inputs.text(path, "data file", inputs.DATA_CAP)      # str (UTF-8, a BOM dropped)
    doc = inputs.json_document(path, "golden file", inputs.GOLDEN_CAP)

What a path may name:

- a regular file, a FIFO, a pipe (`<(cat f)`, `/dev/stdin` fed by `|`), a character device:
  read in chunks until its end, never seeked (a pipe cannot seek back after a sniff); the
  bytes are then parsed from memory;
- anything longer than the cap (a device with no end such as /dev/zero, a runaway pipe): refused
  once the cap is passed, with the cap in the message, before memory runs out;
- a directory, a socket, a missing or unreadable path: refused, naming the path as given.

A FIFO, a pipe or a device cannot be read twice (the second open of a FIFO waits for a writer
that is gone, a pipe is empty): what was read is kept for the rest of the process, keyed by the
path's device and inode, so a command that reads an input twice (eval --plot, stream --model)
gets the same bytes. A regular file is read again each time: it may have been rewritten since.

JSON documents are refused above MAX_DEPTH levels of nesting before the parser sees them: the
standard parser recurses and a document nested 200,000 deep ends in a RecursionError.
"""
import json
import os
import re
import stat

from kilobit.core.errors import KilobitError

MIB = 1 << 20
#: a CSV of data: far above any data set kilobit trains on (MNIST's 5000 x 784 is 9 MiB)
DATA_CAP = 256 * MIB
#: a model file: an rkp memory of 65535 support vectors x 784 features at 8 bits is 49 MiB
MODEL_CAP = 64 * MIB
#: a golden file: the model file in hex (twice its bytes) and the steps
GOLDEN_CAP = 2 * MODEL_CAP + 32 * MIB
#: a script run on a board: a board's RAM is a few hundred KiB
SCRIPT_CAP = 1 * MIB
#: the deepest JSON nesting read; a golden file nests 3 levels deep
MAX_DEPTH = 64

_CHUNK = MIB
_KEPT = {}  # (st_dev, st_ino) of a FIFO, pipe or device -> the bytes read from it


def _size(n):
    return "%d MiB" % (n // MIB) if n % MIB == 0 else "%d bytes" % n


def read(path, what, cap, error=KilobitError):
    """The bytes of the input `path` (a `what`: "model file", ...), at most `cap` of them;
    `error` (a KilobitError class) says what is wrong, naming the path as the user gave it."""
    def refuse(why):
        return error("cannot read %s %s: %s" % (what, path, why))

    if path is None or str(path) == "":
        raise error("the %s name is empty" % what)
    path = os.fspath(path)
    try:
        st = os.stat(path)
    except OSError as e:
        raise refuse(e.strerror or e) from None
    if stat.S_ISDIR(st.st_mode):
        raise refuse("it is a directory")
    if stat.S_ISSOCK(st.st_mode) or stat.S_ISBLK(st.st_mode):
        raise refuse("it is a special file (a socket or a block device)")
    regular = stat.S_ISREG(st.st_mode)
    key = (st.st_dev, st.st_ino)
    if not regular and key in _KEPT:
        return _KEPT[key]
    if regular and st.st_size > cap:
        raise refuse("it is larger than the %s a %s may be (%d bytes)"
                     % (_size(cap), what, st.st_size))
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError as e:
        raise refuse(e.strerror or e) from None
    buf = bytearray()
    try:
        while True:
            chunk = os.read(fd, min(_CHUNK, cap + 1 - len(buf)))
            if not chunk:
                break
            buf += chunk
            if len(buf) > cap:
                raise refuse("it goes on past the %s a %s may be (an endless device or "
                              "stream?)" % (_size(cap), what))
    except OSError as e:
        raise refuse(e.strerror or e) from None
    finally:
        os.close(fd)
    blob = bytes(buf)
    if not regular:
        _KEPT[key] = blob
    return blob


def text(path, what, cap, error=KilobitError):
    """read()'s bytes as UTF-8 text, a spreadsheet's byte-order mark dropped."""
    blob = read(path, what, cap, error)
    try:
        return blob.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise error("%s: not a text %s (not UTF-8)" % (path, what)) from None


# a JSON string (its brackets are not nesting), or one bracket
_JSON_TOKENS = re.compile(r'"(?:[^"\\]|\\.)*"|[\[\]{}]', re.S)


def depth(doc_text):
    """The deepest nesting of [ and { in a JSON text (an upper bound when it is malformed)."""
    level = deepest = 0
    for m in _JSON_TOKENS.finditer(doc_text):
        c = m.group()
        if c in "[{":
            level += 1
            if level > deepest:
                deepest = level
                if deepest > MAX_DEPTH:
                    break
        elif c in "]}":
            level -= 1
    return deepest


def json_document(path, what, cap, error=KilobitError):
    """The parsed JSON document of the input `path`: read() once, its nesting bounded by
    MAX_DEPTH; error("cannot read <what> <path>: ...") for text that is not JSON."""
    doc_text = text(path, what, cap, error)
    if depth(doc_text) > MAX_DEPTH:
        raise error("cannot read %s %s: JSON nested deeper than %d levels"
                    % (what, path, MAX_DEPTH))
    try:
        return json.loads(doc_text)
    except ValueError as e:
        raise error("cannot read %s %s: %s" % (what, path, e)) from None
