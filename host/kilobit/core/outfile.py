"""How every command writes an output file (issue 23): one way, checked before the work starts.

    target = outfile.check(path, inputs)    # at the start: refuse what could not be written
    outfile.write(path, text_or_bytes)      # at the end: all of it, or nothing
    with outfile.open(path, "wb") as f:     # the same for a writer that wants a stream
        fig.savefig(f, format="png")

What a path may name, and what happens to it:

- a regular file, or nothing yet: the data goes to a temporary file in the same directory,
  renamed over the path once complete, so a failure or an interrupt (KeyboardInterrupt
  included) leaves the old file as it was, or no file, and never the temporary one;
- a symlink: written through to its target, as `cp` does (the link stays a link);
- a character device or a FIFO (/dev/null, /dev/stdout, a named pipe): written in place, as
  `gcc -o /dev/null` does; a rename over it would replace /dev/null with a regular file;
- a directory, a block device, a socket, an empty name, one of the command's own input files, a
  read-only file, a directory that does not exist or cannot be written in: refused with a
  KilobitError naming the path as the user gave it.

Writability is proved by creating (and removing) a file in the directory, not by os.access:
root passes os.access everywhere, and /sys refuses root anyway.
"""
import builtins
import contextlib
import os
import stat
import tempfile

from kilobit.core.errors import KilobitError


def _refuse(path, why):
    raise KilobitError("cannot write %s: %s" % (path, why))


def _resolve(path):
    """(target, in place) of an output path after every check but the inputs'."""
    if path is None or str(path) == "":
        raise KilobitError("the output file name is empty")
    path = os.fspath(path)
    if path.endswith(os.sep) and not os.path.islink(path.rstrip(os.sep)):
        _refuse(path, "it names a directory")
    try:
        st = os.stat(path)  # through a symlink: /dev/stdout names a pipe or a terminal
    except FileNotFoundError:
        st = None
    except OSError as e:
        _refuse(path, e.strerror)
    target = path
    if st is None and os.path.islink(path):
        _refuse(path, "it is a symlink to nothing (%s); cp would not write through it either"
                % os.path.realpath(path))
    if st is not None:
        if stat.S_ISDIR(st.st_mode):
            _refuse(path, "it is a directory")
        if stat.S_ISCHR(st.st_mode) or stat.S_ISFIFO(st.st_mode):
            if not os.access(path, os.W_OK):
                _refuse(path, "permission denied")
            return path, True
        if not stat.S_ISREG(st.st_mode):
            _refuse(path, "it is a special file (a block device or a socket)")
        if not os.access(path, os.W_OK):
            _refuse(path, "the file is read-only")
        target = os.path.realpath(path)  # a symlink is written through to its file
    folder = os.path.dirname(target) or "."
    if not os.path.isdir(folder):
        _refuse(path, "no directory %s" % folder)
    try:
        fd, probe = tempfile.mkstemp(dir=folder, prefix=".kilobit-probe-")
    except OSError as e:
        _refuse(path, "cannot create a file in %s (%s)" % (folder, e.strerror))
    os.close(fd)
    os.unlink(probe)
    return target, False


def check(path, inputs=()):
    """Refuse an output path that cannot be written, or that names one of `inputs` (the files
    the command reads); return the file the data will land in."""
    target, _ = _resolve(path)
    for inp in inputs:
        try:
            same = os.path.exists(target) and os.path.samefile(target, inp)
        except OSError:
            same = False
        if same:
            _refuse(path, "it is also an input of this command (%s)" % inp)
    return target


def check_directory(path):
    """Refuse a folder that files are to be written into (made when missing, from an existing
    parent) unless files can be created there."""
    if path is None or str(path) == "":
        raise KilobitError("the output directory name is empty")
    path = os.fspath(path)
    if os.path.lexists(path) and not os.path.isdir(path):
        raise KilobitError("cannot write into %s: it is not a directory" % path)
    parent = path if os.path.isdir(path) else os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(parent):
        raise KilobitError("cannot write into %s: no directory %s" % (path, parent))
    try:
        fd, probe = tempfile.mkstemp(dir=parent, prefix=".kilobit-probe-")
    except OSError as e:
        raise KilobitError("cannot write into %s: %s" % (path, e.strerror)) from None
    os.close(fd)
    os.unlink(probe)


def _new_file_mode(target):
    """The mode the written file gets: the replaced file's, else what open() would give."""
    try:
        return stat.S_IMODE(os.stat(target).st_mode)
    except OSError:
        umask = os.umask(0)
        os.umask(umask)
        return 0o666 & ~umask


@contextlib.contextmanager
def open(path, mode="w", encoding="utf-8"):
    """A file object for the output `path` ("w" or "wb"); see the module's docstring."""
    target, in_place = _resolve(path)
    kw = {} if "b" in mode else {"encoding": encoding}
    if in_place:
        try:
            with builtins.open(target, mode, **kw) as f:
                yield f
        except OSError as e:
            _refuse(path, e.strerror or e)
        return
    folder, name = os.path.split(target)
    fd, tmp = tempfile.mkstemp(dir=folder or ".", prefix="." + name + ".", suffix=".tmp")
    try:
        with os.fdopen(fd, mode, **kw) as f:
            yield f
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, _new_file_mode(target))
        os.replace(tmp, target)
    except BaseException as e:  # an interrupt too: never leave the temporary file behind
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        if isinstance(e, OSError):
            _refuse(path, e.strerror or e)
        raise


def write(path, data, encoding="utf-8"):
    """Write text or bytes to the output `path`; see the module's docstring."""
    binary = isinstance(data, (bytes, bytearray, memoryview))
    with open(path, "wb" if binary else "w", encoding) as f:
        f.write(data)
