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

A command that writes a folder (a golden set, the Arduino library) does it the same way, whole or
not at all (issue 30):

    target = outfile.check_directory(path, inputs, replace)   # at the start
    with outfile.directory(path, inputs, replace) as work:     # at the end: fill `work`
        outfile.write(os.path.join(work, "a.json"), text)

The tree is written into a private folder made beside the path (inside it when files are added to
an existing folder) and renamed into place only once complete, so a full disk, an exception or an
interrupt leaves no half-made folder; see directory().
"""
import builtins
import contextlib
import os
import shutil
import stat
import tempfile

from kilobit.core import interrupt
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
    with interrupt.held():  # Ctrl-C waits until the probe is gone again
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


def _within(path, folder):
    """Whether the resolved `path` is `folder` or lies under it."""
    return path == folder or path.startswith(folder.rstrip(os.sep) + os.sep)


def _folder(path, inputs=(), replace=False):
    """(the resolved folder, whether it exists) of an output folder after every check."""
    if path is None or str(path) == "":
        raise KilobitError("the output directory name is empty")
    path = os.fspath(path)

    def refuse(why):
        raise KilobitError("cannot write into %s: %s" % (path, why))

    if os.path.islink(path.rstrip(os.sep) or os.sep) and not os.path.exists(path):
        refuse("it is a symlink to nothing (%s)" % os.path.realpath(path))
    target = os.path.realpath(path)  # through a link (written through, the link stays), '.', '..'
    exists = os.path.lexists(target)
    if exists and not os.path.isdir(target):
        refuse("it is not a directory")
    try:
        cwd = os.path.realpath(os.getcwd())
    except OSError:
        cwd = None
    if cwd == target:
        refuse("it is the working directory (name a folder beside or below it)")
    if replace and cwd and _within(cwd, target):
        refuse("the working directory %s is inside it, and it would be replaced whole" % cwd)
    for inp in inputs:
        if _within(os.path.realpath(inp), target) if replace else \
                os.path.realpath(inp) == target:
            refuse("it holds %s, an input of this command" % inp)
    parent = os.path.dirname(target)
    if not os.path.isdir(parent):
        refuse("no directory %s" % os.path.dirname(os.path.abspath(path)))
    # a new folder and a replaced one are made beside it, a merged tree inside it: the final
    # renames then stay within one file system
    where = target if exists and not replace else parent
    with interrupt.held():  # Ctrl-C waits until the probe is gone again
        try:
            fd, probe = tempfile.mkstemp(dir=where, prefix=".kilobit-probe-")
        except OSError as e:
            refuse("cannot create a file in %s (%s)" % (where, e.strerror))
        os.close(fd)
        os.unlink(probe)
    return target, exists


def check_directory(path, inputs=(), replace=False):
    """Refuse a folder that files are to be written into (made when missing, from an existing
    parent) unless directory() could write it; return the folder the files will land in."""
    return _folder(path, inputs, replace)[0]


def _umask_mode(bits):
    umask = os.umask(0)
    os.umask(umask)
    return bits & ~umask


@contextlib.contextmanager
def directory(path, inputs=(), replace=False):
    """A private new folder to fill with an output tree (plain open() or write() into it); on
    leaving the block the tree lands at `path` whole, or, on any exception, a full disk or an
    interrupt, nothing does and the private folder is removed.

    replace=False (a set of files): a folder that does not exist yet appears with all of the
    tree at once; into an existing one the files are moved only once every one of them is
    written (a rename needs no space), each replacing its namesake (keeping its mode; a symlink
    is written through), the folder's other files left alone. replace=True (a tree that is one
    thing, such as a library): an existing folder is replaced whole, and refused when the working
    directory or an input lies inside it.

    The path is checked as check_directory() does (a symlink is written through to its folder, the
    link kept; the working directory, and an input of the command, are refused); a new folder
    gets its mode from the umask, a replaced one keeps its own."""
    target, exists = _folder(path, inputs, replace)
    parent = os.path.dirname(target)
    merge = exists and not replace
    work = None
    try:
        with interrupt.held():  # Ctrl-C waits until `work` names the folder for the except
            work = tempfile.mkdtemp(dir=target if merge else parent, prefix=".kilobit-new-")
        yield work
        if merge:
            _merge(path, work, target, inputs)
        else:
            os.chmod(work, stat.S_IMODE(os.stat(target).st_mode) if exists
                     else _umask_mode(0o777))
            _swap(work, target, parent)
    except BaseException as e:  # an interrupt too: never leave the private folder behind
        if work is not None:
            shutil.rmtree(work, ignore_errors=True)
        if isinstance(e, OSError):
            raise KilobitError("cannot write into %s: %s" % (path, e.strerror or e)) from None
        if isinstance(e, KilobitError) and e.args and isinstance(e.args[0], str):
            # a file of the tree refused: named where the user will look for it
            e.args = (e.args[0].replace(work, os.fspath(path).rstrip(os.sep)),) + e.args[1:]
        raise
    if merge:
        shutil.rmtree(work, ignore_errors=True)


def _tree(work):
    """(folders, files) of the tree under `work`, as paths relative to it, parents first."""
    dirs, files = [], []
    for root, ds, fs in os.walk(work):
        rel = os.path.relpath(root, work)
        dirs += [os.path.normpath(os.path.join(rel, d)) for d in sorted(ds)]
        files += [os.path.normpath(os.path.join(rel, f)) for f in sorted(fs)]
    return dirs, files


def _merge(path, work, target, inputs):
    dirs, files = _tree(work)
    ins = {os.path.realpath(i) for i in inputs}
    # every clash is found before the first file moves: all or nothing
    for rel in dirs:
        dest = os.path.join(target, rel)
        if os.path.lexists(dest) and not os.path.isdir(dest):
            raise KilobitError("cannot write into %s: %s is not a directory" % (path, rel))
    for rel in files:
        dest = os.path.join(target, rel)
        if os.path.lexists(dest) and not os.path.isfile(dest):  # a folder, a device, a dead link
            raise KilobitError("cannot write into %s: %s is not a regular file" % (path, rel))
        if os.path.realpath(dest) in ins:
            raise KilobitError("cannot write into %s: %s is an input of this command"
                               % (path, rel))
    for rel in dirs:
        os.makedirs(os.path.join(target, rel), mode=0o777, exist_ok=True)
    for rel in files:
        src, dest = os.path.join(work, rel), os.path.join(target, rel)
        if os.path.islink(dest):
            with builtins.open(src, "rb") as f:
                write(dest, f.read())
            continue
        if os.path.exists(dest):
            os.chmod(src, stat.S_IMODE(os.stat(dest).st_mode))
        os.replace(src, dest)


def _swap(work, target, parent):
    """Put the folder `work` at `target`, an existing folder there moved aside first and
    removed once the new one is in place (put back if it cannot be). Ctrl-C waits for the end:
    between two renames it would leave the old folder aside."""
    with interrupt.held():
        old = None
        if os.path.lexists(target):
            old = tempfile.mkdtemp(dir=parent, prefix=".kilobit-old-")
            os.rename(target, os.path.join(old, "tree"))
        try:
            os.rename(work, target)
        except BaseException:
            if old:
                os.rename(os.path.join(old, "tree"), target)
                os.rmdir(old)
            raise
        if old:
            shutil.rmtree(old)


def _new_file_mode(target):
    """The mode the written file gets: the replaced file's, else what open() would give."""
    try:
        return stat.S_IMODE(os.stat(target).st_mode)
    except OSError:
        return _umask_mode(0o666)


@contextlib.contextmanager
def open(path, mode="w", encoding="utf-8", in_place=False):
    """A file object for the output `path` ("w" or "wb"); see the module's docstring.
    in_place: a regular file is written straight into, not renamed over, for a drive that acts
    on the blocks as they arrive and may vanish once it has them all (a UF2 boot drive)."""
    target, device = _resolve(path)
    kw = {} if "b" in mode else {"encoding": encoding}
    if device or in_place:
        try:
            with builtins.open(target, mode, **kw) as f:
                yield f
        except OSError as e:
            _refuse(path, e.strerror or e)
        return
    folder, name = os.path.split(target)
    tmp = None
    try:
        with interrupt.held():  # Ctrl-C waits until `tmp` names the file for the except
            fd, tmp = tempfile.mkstemp(dir=folder or ".", prefix="." + name + ".", suffix=".tmp")
        with os.fdopen(fd, mode, **kw) as f:
            yield f
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, _new_file_mode(target))
        os.replace(tmp, target)
    except BaseException as e:  # an interrupt too: never leave the temporary file behind
        if tmp is not None:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
        if isinstance(e, OSError):
            _refuse(path, e.strerror or e)
        raise


def write(path, data, encoding="utf-8", in_place=False):
    """Write text or bytes to the output `path`; see the module's docstring (and open's)."""
    binary = isinstance(data, (bytes, bytearray, memoryview))
    with open(path, "wb" if binary else "w", encoding, in_place) as f:
        f.write(data)
