"""How every build writes its cache and runs its toolchain (issue 30): safe under any number of
processes at once, and a failing toolchain said in one sentence.

    d = buildcache.entry(root, key, make_it, complete)  # root/key, made whole or not at all
    buildcache.run(cmd, "compiling the header", outputs=[elf])
    err = buildcache.make(folder, ["host"], "make -C firmware_c host")

- A cache entry is made by `make_it(tmp)` in a private temporary folder beside it, then renamed
  into place whole: no process ever sees a half-made entry, two processes making the same one
  both succeed (the second rename finds the first's folder and keeps it), and a failure or an
  interrupt (KeyboardInterrupt included) removes the temporary folder.
- A toolchain command that fails, or "succeeds" without writing what it must (CC=/bin/true),
  raises ToolchainError: one line saying what failed, the first error the tool printed, and the
  path of its whole log under build/logs/; its output is never parsed as if it had worked.
- make keeps its own incremental outputs, so a make-driven build (firmware_c, the native
  modules, the emulated Pico's firmware, kb_sim) runs under an exclusive lock on its folder:
  one make at a time writes there, and the next finds everything up to date.
"""
import contextlib
import errno
import fcntl
import os
import re
import shutil
import subprocess
import tempfile

from kilobit.core import interrupt, paths
from kilobit.core.errors import KilobitError

LOGS = paths.cache("logs")


class ToolchainError(KilobitError):
    """A compiler, linker, size tool or make that failed or wrote nothing: one sentence and the
    path of its log."""


def entry(root, key, make_it, complete=os.path.isdir):
    """The folder root/key, made by make_it(tmp) in a private temporary folder and renamed into
    place whole unless complete(root/key) already holds. A folder left by an older kilobit that
    is not complete (its build interrupted in place) is moved aside and replaced."""
    final = os.path.join(root, key)
    if complete(final):
        return final
    os.makedirs(root, exist_ok=True)
    tmp = None
    try:
        with interrupt.held():  # a signal waits until the finally below knows the folder
            tmp = tempfile.mkdtemp(dir=root, prefix=".%s." % key, suffix=".tmp")
        make_it(tmp)
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o777 & ~umask)  # mkdtemp's 0700 is for while it is private
        _install(tmp, final, complete)
    finally:
        if tmp is not None:  # gone when installed; a failure's leftovers
            shutil.rmtree(tmp, ignore_errors=True)
    return final


def _install(tmp, final, complete):
    for _ in range(3):
        try:
            os.rename(tmp, final)
            return
        except OSError as e:
            if e.errno not in (errno.EEXIST, errno.ENOTEMPTY):
                raise
        if complete(final):  # another process made the same entry first: keep its
            return
        aside = tempfile.mkdtemp(dir=os.path.dirname(final), prefix=".stale.")
        with contextlib.suppress(FileNotFoundError):  # another process moved it already
            os.rename(final, os.path.join(aside, "old"))
        shutil.rmtree(aside, ignore_errors=True)
    raise KilobitError("cannot install the build %s: it keeps reappearing incomplete" % final)


def _first_error(text):
    for line in text.splitlines():
        if re.search(r"\berror\b|\bError\b|undefined reference|No such file|not found", line):
            return line.strip()[:240]
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    return lines[-1][:240] if lines else "it printed nothing"


def log(what, text):
    """Write a tool's output to a log of its own under build/logs/; its path."""
    os.makedirs(LOGS, exist_ok=True)
    slug = re.sub(r"[^A-Za-z0-9]+", "-", what).strip("-")[:60] or "build"
    fd, path = tempfile.mkstemp(dir=LOGS, prefix=slug + "-", suffix=".log")
    with os.fdopen(fd, "w") as f:
        f.write(text)
    return path


def failure(what, cmd, code, output, lacking=None):
    """The ToolchainError of a command that ended with `code` (None: it could not start) and
    printed `output`, or that ended with 0 `lacking` what it had to make; its log holds the
    command line and the whole output."""
    path = log(what, "$ %s\n(exit %s)\n%s" % (" ".join(cmd), code, output))
    tool = os.path.basename(cmd[0])
    if code is None:
        how = "could not run %s: %s" % (cmd[0], _first_error(output))
    elif lacking:
        how = "%s exited with %d but %s" % (tool, code, lacking)
    else:
        how = "%s exited with %d: %s" % (tool, code, _first_error(output))
    e = ToolchainError("%s failed (%s); the whole log: %s" % (what, how, path))
    e.output, e.log = output, path  # for a caller that tells a known failure apart
    return e


def discard(e):
    """Remove the log of a ToolchainError its caller turned into another error (a model too
    big is said in fit's words: no log to keep)."""
    with contextlib.suppress(OSError):
        os.unlink(e.log)


def run(cmd, what, outputs=(), cwd=None):
    """Run a toolchain command; its stdout. ToolchainError when it fails, cannot start, or ends
    with status 0 without writing each of `outputs` (a non-empty file)."""
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, cwd=cwd)
    except OSError as e:
        raise failure(what, cmd, None, str(e)) from None
    if p.returncode != 0:
        raise failure(what, cmd, p.returncode, p.stderr + p.stdout)
    for out in outputs:
        if not os.path.isfile(out) or os.path.getsize(out) == 0:
            raise failure(what, cmd, 0, p.stderr + p.stdout,
                          "wrote no %s" % os.path.basename(out))
    return p.stdout


def lock_path(folder):
    """The lock file of `folder`'s build: build/locks/<its absolute path, flattened>.lock."""
    name = re.sub(r"[^A-Za-z0-9]+", "-", os.path.abspath(folder)).strip("-") + ".lock"
    return paths.cache("locks", name)


@contextlib.contextmanager
def locked(folder):
    """An exclusive lock on `folder`'s build (a lock file under build/locks/), held for the
    block."""
    path = lock_path(folder)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # closing releases the lock


def make(folder, args, what):
    """Run `make -s -C folder ARGS` under the folder's lock; None when it worked, else the
    ToolchainError's sentence (callers remember it once per process)."""
    cmd = ["make", "-s", "-C", folder] + list(args)
    try:
        with locked(folder):
            run(cmd, what)
    except ToolchainError as e:
        return str(e)
    return None
