"""Ctrl-C, SIGTERM and SIGHUP, clean from a command's first line (issue 30).

Left to the interpreter, SIGINT raises KeyboardInterrupt wherever the main thread is, in the
middle of an import too (a traceback), and SIGTERM and SIGHUP kill the process on the spot (no
`finally` runs: a temporary file, a build folder or a --link stays behind). So the command's
entry point (kilobit.__main__, and kilobit.cli under `python -m kilobit.cli`) calls install()
before anything heavy is imported, and the command itself runs inside raising():

- outside raising() (imports, parsing the command line, after the command returned) nothing
  is half-written, so a signal ends the process at once with status 128 + its number;
- inside it, SIGINT raises KeyboardInterrupt and SIGTERM or SIGHUP raise Terminated where the
  main thread is, so every `finally` and `except BaseException` runs (outfile drops its
  temporary file, a build its private folder, a virtual board its link) and the CLI returns
  128 + the number: 130, 143, 129, without a traceback;
- the signal is passed on to every process the command started, grandchildren included
  (avr-gcc's cc1 and ld, node under a virtual board, kb_sim, mpremote), as a terminal's Ctrl-C
  reaches its whole foreground group: `kill -INT PID` reaches PID alone, and subprocess.run
  kills only its direct child, which would leave a compiler writing into build/ after the exit.
  The handler waits (a second at most) for them to end, so that the cleanup runs after them.
  Only when kilobit is the program (install() was called): a program that calls the CLI
  in-process (a test) may have children of its own that are not kilobit's to signal;
- while the first signal unwinds, a second one is ignored (a user's repeated Ctrl-C must not cut
  the cleanup short); a third ends the process at once;
- inside held(), a signal waits for the block's end: the few lines that make a temporary file
  and hand it to the code that removes it (kilobit.core.outfile) must not be cut in between.

A signal the process inherited as ignored (nohup, a script's background job) stays ignored.
What no Python code can cover is the interpreter's own start-up before the entry point's first
line: a SIGINT there kills the process with the signal (as a shell counts it, status 130) or,
while `site` imports, prints CPython's "Failed to import the site module".
"""
import contextlib
import os
import signal
import threading
import time

SIGNALS = tuple(getattr(signal, n) for n in ("SIGINT", "SIGTERM", "SIGHUP") if hasattr(signal, n))
#: how long the handler waits for the processes it passed the signal on to
CHILDREN_WAIT = 1.0

_installed = False  # install() ran: this process is the kilobit command
_raising = False  # inside raising(): signals raise instead of ending the process
_caught = 0       # signals since raising() began (or since install() outside it)
_holding = 0      # held() blocks running
_pending = []     # the signal that came inside held(), raised at its end


class Terminated(BaseException):
    """SIGTERM (kill, a CI's timeout) or SIGHUP (the terminal went away) arrived: raised where
    the program was, so that whatever it was writing cleans up as for Ctrl-C."""

    def __init__(self, signum):
        super().__init__(signum)
        self.signum = signum


def status(signum):
    """The exit status of a command ended by the signal, as a shell reports it."""
    return 128 + signum


def _parents():
    """{parent pid: [child pids]} of every process (Linux /proc; {} elsewhere)."""
    out = {}
    try:
        names = os.listdir("/proc")
    except OSError:
        return out
    for d in names:
        if not d.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % d, "rb") as f:
                ppid = int(f.read().rsplit(b")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            continue
        out.setdefault(ppid, []).append(int(d))
    return out


def descendants(pid=None):
    """The pids of every process below `pid` (this one by default)."""
    tree = _parents()
    out, todo = [], [os.getpid() if pid is None else pid]
    while todo:
        for child in tree.get(todo.pop(), ()):
            out.append(child)
            todo.append(child)
    return out


def _running(pid):
    try:
        with open("/proc/%d/stat" % pid, "rb") as f:
            return f.read().rsplit(b")", 1)[1].split()[0] not in (b"Z", b"X")
    except (OSError, IndexError):
        return False


def _pass_on(signum):
    pids = descendants()
    for pid in pids:
        with contextlib.suppress(OSError):
            os.kill(pid, signum)
    deadline = time.monotonic() + CHILDREN_WAIT
    while pids and time.monotonic() < deadline:
        pids = [p for p in pids if _running(p)]
        if pids:
            time.sleep(0.01)


def _handler(signum, frame):
    global _caught
    _caught += 1
    if _caught == 1 and _installed:
        _pass_on(signum)
    if not _raising or _caught >= 3:
        os._exit(status(signum))
    if _caught > 1:
        return
    if _holding:
        _pending.append(signum)
        return
    _raise(signum)


def _raise(signum):
    if signum == signal.SIGINT:
        raise KeyboardInterrupt
    raise Terminated(signum)


def install():
    """From now on the signals end the process cleanly (see the module's docstring): call it
    first thing in a program's entry point, before heavy imports."""
    global _installed
    _installed = True
    for s in SIGNALS:
        if signal.getsignal(s) not in (signal.SIG_IGN, None):
            signal.signal(s, _handler)


@contextlib.contextmanager
def raising():
    """While the block runs in the main thread, the signals raise KeyboardInterrupt or
    Terminated where it is; the handlers before are put back after (so a test calling the CLI
    in-process gets its own handlers back)."""
    global _raising, _caught
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    before = {s: signal.getsignal(s) for s in SIGNALS}
    _caught = 0
    del _pending[:]
    for s, h in before.items():
        if h not in (signal.SIG_IGN, None):
            signal.signal(s, _handler)
    _raising = True
    try:
        yield
    finally:
        # the handlers first: a signal between the two lines must not end a test's process
        for s, h in before.items():
            if h is not None:
                signal.signal(s, h)
        _raising = False


@contextlib.contextmanager
def held():
    """A signal that comes while the block runs is raised at its end (in raising() only): for
    making a temporary file together with what removes it again."""
    global _holding
    _holding += 1
    try:
        yield
    finally:
        _holding -= 1
        if not _holding and _pending:
            signum = _pending[0]
            del _pending[:]
            _raise(signum)
