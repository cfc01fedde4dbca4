"""Ctrl-C, SIGTERM and SIGHUP at any moment of a command (issue 30, item 6).

Each command runs in a fresh process, in a session of its own (so its process group says which
processes it started), and gets one signal sent to its pid alone, as `kill -INT PID` does. What
must hold at every moment: the status is 128 + the signal (130, 143, 129; 0 only when the
command had already finished, its output then complete), no traceback, the old output file as
it was (or the complete new one), no temporary file in the working folder or under build/, and
no process it started still running (compilers, kb_sim, node).

The delays count from the moment the entry point has set its handlers (its SIGTERM is caught:
/proc/PID/status), not from the spawn: before that line nothing of kilobit runs (the
interpreter's start-up; kilobit.core.interrupt says what a signal does there), and a loaded
machine makes that start-up last anything from 10 to 100 ms. Mid-work moments are found the
same way, by what the command is doing: a compiler or kb_sim among its processes.
"""
import os
import shutil
import signal
import subprocess
import sys
import time

import pytest

from conftest import need
from kilobit.core.interrupt import descendants

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BUILD = os.path.join(REPO, "build")
#: the console script pyproject installs, and `python -m kilobit.cli`
ENTRIES = {"script": [os.path.join(os.path.dirname(sys.executable), "kilobit")],
           "module": [sys.executable, "-m", "kilobit.cli"]}
COMPILERS = ("cc1", "cc1plus", "as", "collect2", "ld")
#: the moments after the handlers are set, in seconds
DELAYS = (0, 0.05, 0.1, 0.2, 0.5)
OLD = b"the old output, which an interrupted command must leave as it was\n"


def _stat(pid):
    """(state, ppid, pgrp, name) of a process, None when it is gone."""
    try:
        with open("/proc/%d/stat" % pid) as f:
            text = f.read()
    except OSError:
        return None
    name = text[text.index("(") + 1:text.rindex(")")]
    fields = text[text.rindex(")") + 2:].split()
    return fields[0], int(fields[1]), int(fields[2]), name


def _caught(pid):
    try:
        with open("/proc/%d/status" % pid) as f:
            for line in f:
                if line.startswith("SigCgt:"):
                    return int(line.split()[1], 16)
    except OSError:
        return None
    return 0


def _processes():
    out = {}
    for d in os.listdir("/proc"):
        if d.isdigit():
            st = _stat(int(d))
            if st is not None:
                out[int(d)] = st
    return out


def names_under(pid):
    """The names of the processes below pid."""
    return [st[3] for st in map(_stat, descendants(pid)) if st is not None]


def spawn(entry, args, cwd):
    return subprocess.Popen(ENTRIES[entry] + list(args), cwd=cwd, stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)


def wait_for(p, ready, what, timeout=180):
    """Poll until ready() is true while p runs; fail when p ends first or time runs out."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if ready():
            return
        if p.poll() is not None:
            out, err = p.communicate()
            pytest.fail("the command ended (%s) before %s: %s" % (p.returncode, what,
                                                                 (err or out)[-800:]))
        time.sleep(0.002)
    p.kill()
    p.communicate()
    pytest.fail("no %s within %d s" % (what, timeout))


def handlers_set(p):
    """The entry point's handlers are in place: SIGTERM, which the interpreter leaves to its
    default, is caught."""
    return lambda: (_caught(p.pid) or 0) & (1 << (signal.SIGTERM - 1))


def stop(p, sig):
    """Send sig to the command's pid alone; (status, stdout, stderr) once it ended."""
    p.send_signal(sig)
    try:
        out, err = p.communicate(timeout=120)
    except subprocess.TimeoutExpired:
        p.kill()
        out, err = p.communicate()
        pytest.fail("still running 120 s after %s: %s" % (sig.name, err[-500:]))
    return p.returncode, out, err


def no_stragglers(p):
    """No process of the command's group runs on (a grace time for them to die)."""
    left = {}
    for _ in range(250):
        left = {pid: st[3] for pid, st in _processes().items()
                if st[2] == p.pid and st[0] not in "ZX"}
        if not left:
            return
        time.sleep(0.02)
    for pid in left:
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass
    pytest.fail("processes the command started still run after it ended: %s" % left)


def build_temps(where):
    """Temporary files and folders under build/WHERE (anyone's: others build there too)."""
    out = set()
    for root, dirs, files in os.walk(os.path.join(BUILD, where)):
        for n in dirs + files:
            if n.endswith(".tmp") or ".tmp." in n or n.startswith((".kilobit-", ".stale.")):
                out.add(os.path.join(root, n))
    return out


def no_new_build_temps(where, before):
    """No temporary file under build/ that was not there before stays: one made by another
    process's build is gone once that build ends, so only a leftover lasts 10 s."""
    new = build_temps(where) - before
    deadline = time.monotonic() + 10
    while new and time.monotonic() < deadline:
        time.sleep(0.2)
        new = {n for n in new if os.path.lexists(n)}
    assert not new, "left under build/%s: %s" % (where, sorted(new))


def assert_clean(code, err, sig, finished_ok=True):
    assert "Traceback" not in err and "Fatal Python error" not in err, err[-2000:]
    allowed = (128 + sig, 0) if finished_ok else (128 + sig,)
    assert code in allowed, (code, err[-1000:])


def write_csv(path, rows=2000):
    with open(path, "w") as f:
        f.write("x1,x2,label\n")
        for i in range(rows):
            a, b = (i * 7919) % 97, (i * 104729) % 89
            f.write("%d,%d,%d\n" % (a, b, (a > 48) ^ (b > 44)))


def valid_new(path, kind):
    """The file is a complete output of the command (it finished before the signal)."""
    if kind == "model":
        from kilobit.models import registry
        with open(path, "rb") as f:
            registry.of_file(f.read())
    else:
        from kilobit.core import goldenfile
        goldenfile.load(path)
    return True


# --- any moment: imports, parsing, data, training, writing -------------------------------------

COMMANDS = [  # (arguments, the output it replaces, what kind of file that is)
    (["train", "rkp", "--data", "d.csv", "--budget", "40", "-o", "m.kb"], "m.kb", "model"),
    (["golden", "make", "rkp", "--seed", "1", "--steps", "400", "-o", "g.json"], "g.json",
     "golden"),
]
SCHEDULE = [(s, d) for s in (signal.SIGINT, signal.SIGTERM) for d in DELAYS] + \
    [(signal.SIGHUP, 0), (signal.SIGHUP, 0.2)]


@pytest.mark.parametrize("entry", sorted(ENTRIES))
def test_a_signal_at_any_moment_exits_cleanly(entry, tmp_path):
    if entry == "script" and not os.path.exists(ENTRIES["script"][0]):
        pytest.fail("no console script %s: pip install -e . makes it" % ENTRIES["script"][0])
    interrupted = []
    for i, (sig, delay) in enumerate(SCHEDULE):
        args, out, kind = COMMANDS[i % len(COMMANDS)]
        cwd = tmp_path / ("run%d" % i)
        cwd.mkdir()
        write_csv(cwd / "d.csv")
        (cwd / out).write_bytes(OLD)
        before = sorted(os.listdir(cwd))
        p = spawn(entry, args, cwd)
        wait_for(p, handlers_set(p), "the entry point's handlers")
        time.sleep(delay)
        code, _, err = stop(p, sig)
        what = "%s %s at +%gs: " % (" ".join(args[:2]), sig.name, delay)
        assert_clean(code, err, sig, finished_ok=delay > 0)
        assert sorted(os.listdir(cwd)) == before, what + "files appeared or vanished"
        data = (cwd / out).read_bytes()
        assert data == OLD or valid_new(str(cwd / out), kind), what + "the output is half-made"
        if code == 0:
            assert data != OLD, what + "exit 0 without its output"
        else:
            interrupted.append(sig)
        no_stragglers(p)
    # delay 0 lands in the imports: every signal kind was really seen by a running command
    assert set(interrupted) == {signal.SIGINT, signal.SIGTERM, signal.SIGHUP}


def test_repeated_signals_let_the_cleanup_finish_and_a_third_one_ends_it():
    code = (
        "import os, signal, sys, time\n"
        "from kilobit.core import interrupt\n"
        "interrupt.install()\n"
        "n = int(sys.argv[1])\n"
        "with interrupt.raising():\n"
        "    try:\n"
        "        os.kill(os.getpid(), signal.SIGINT)\n"
        "        time.sleep(5)\n"
        "    except KeyboardInterrupt:\n"
        "        for _ in range(n - 1):\n"
        "            os.kill(os.getpid(), signal.SIGINT)\n"
        "        time.sleep(0.05)\n"
        "        print('cleaned up')\n"
        "sys.exit(7)\n")
    two = subprocess.run([sys.executable, "-c", code, "2"], capture_output=True, text=True,
                         timeout=60)
    assert (two.returncode, two.stdout, two.stderr) == (7, "cleaned up\n", "")
    three = subprocess.run([sys.executable, "-c", code, "3"], capture_output=True, text=True,
                           timeout=60)
    assert (three.returncode, three.stdout, three.stderr) == (130, "", "")


def test_raising_gives_back_the_handlers_it_found():
    from kilobit.core import interrupt
    before = {s: signal.getsignal(s) for s in interrupt.SIGNALS}
    with pytest.raises(interrupt.Terminated) as e:
        with interrupt.raising():
            os.kill(os.getpid(), signal.SIGTERM)
            time.sleep(5)
    assert e.value.signum == signal.SIGTERM
    assert {s: signal.getsignal(s) for s in interrupt.SIGNALS} == before


# --- mid-work: a firmware build, the simulated chip, an export's compile ---------------------

def _model(path, seed, budget=37):
    # parameters no other test uses: an interrupted build never completes, so this firmware
    # stays uncached and the next run compiles it again
    from kilobit.models.rkp.model import RKPInt
    with open(path, "wb") as f:
        f.write(RKPInt("laplace", 4, 2, budget, -3, 201, seed=seed).to_bytes())


def _interrupt_when(tmp_path, args, names, sig, out=None, build="avr-rkp"):
    before_build = build_temps(build)
    if out:
        (tmp_path / out).write_bytes(OLD)
    before = sorted(os.listdir(tmp_path))
    p = spawn("module", args, tmp_path)
    wait_for(p, lambda: set(names) & set(names_under(p.pid)),
             "a %s among its processes (a cached build? see _model)" % "/".join(names))
    code, _, err = stop(p, sig)
    assert_clean(code, err, sig, finished_ok=False)
    no_stragglers(p)
    assert sorted(os.listdir(tmp_path)) == before
    if out:
        assert (tmp_path / out).read_bytes() == OLD
    no_new_build_temps(build, before_build)


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_a_signal_mid_firmware_build_leaves_no_compiler_and_no_temporary_file(tmp_path, sig):
    from kilobit.runtimes.avr import kb_sim
    need(kb_sim.missing())
    _model(str(tmp_path / "m.kb"), seed=30301)
    write_csv(tmp_path / "d.csv", rows=200)
    _interrupt_when(tmp_path, ["stream", "--board", "uno", "--port", "sim", "--model", "m.kb",
                               "--data", "d.csv", "--quiet"], COMPILERS, sig)


def test_a_signal_mid_simulation_ends_kb_sim(tmp_path):
    from kilobit.runtimes.avr import kb_sim
    need(kb_sim.missing())
    write_csv(tmp_path / "d.csv", rows=4000)
    _interrupt_when(tmp_path, ["stream", "--board", "uno", "--port", "sim", "--data", "d.csv",
                               "--quiet", "--plot", "curve.png"], ("kb_sim",), signal.SIGINT,
                    out="curve.png")


def test_a_signal_mid_export_compile_keeps_the_old_header(tmp_path):
    need(None if shutil.which(os.environ.get("CC", "cc")) else "a C compiler (cc)")
    _model(str(tmp_path / "m.kb"), seed=30302, budget=41)
    _interrupt_when(tmp_path, ["export", "m.kb", "-o", "m.h", "--target", "host"], COMPILERS,
                    signal.SIGTERM, out="m.h", build="export")


# --- a virtual board's --link ------------------------------------------------------------------

@pytest.mark.parametrize("sig", [signal.SIGHUP, signal.SIGTERM, signal.SIGINT])
def test_a_virtual_board_removes_its_link_whatever_stops_it(tmp_path, sig):
    from kilobit.runtimes.micropython.kbit_wasm import missing_wasm
    need(missing_wasm())
    link = tmp_path / "board"
    p = spawn("module", ["board", "virtual", "--link", str(link)], tmp_path)
    wait_for(p, lambda: os.path.islink(link) and descendants(p.pid), "the board's link",
             timeout=120)
    target = os.readlink(link)
    assert target.startswith("/dev/pts/")
    code, _, err = stop(p, sig)
    assert_clean(code, err, sig, finished_ok=False)
    assert not os.path.lexists(link), "the link still names %s" % target
    no_stragglers(p)


# --- the moments between making a temporary file and the code that removes it ---------------

@pytest.mark.parametrize("what", ["file", "probe", "folder", "replaced folder"])
def test_an_interrupt_just_after_a_temporary_is_made_leaves_nothing(tmp_path, monkeypatch,
                                                                    what):
    """SIGINT delivered the instant tempfile made the file or folder (before the caller holds
    its name): outfile's cleanup still runs, the old output stays, nothing else appears."""
    import tempfile

    from kilobit.core import interrupt, outfile
    out = tmp_path / "out"
    if what == "replaced folder":
        out.mkdir()
        (out / "a").write_bytes(OLD)
    elif what != "folder":  # a new folder: nothing there before, nor after
        out.write_bytes(OLD)
    before = sorted(os.listdir(tmp_path))

    def interrupted(make):
        def wrapper(*args, **kw):
            made = make(*args, **kw)
            os.kill(os.getpid(), signal.SIGINT)  # its handler runs at the next line of Python
            return made
        return wrapper

    for name in ("mkstemp", "mkdtemp"):
        monkeypatch.setattr(tempfile, name, interrupted(getattr(tempfile, name)))
    with pytest.raises(KeyboardInterrupt):
        with interrupt.raising():
            if what == "file":
                outfile.write(str(out), b"new")
            elif what == "probe":
                outfile.check(str(out))
            else:
                with outfile.directory(str(out), replace=True) as work:
                    with open(os.path.join(work, "a"), "wb") as f:
                        f.write(b"new")
    assert sorted(os.listdir(tmp_path)) == before
    if what != "folder":
        assert (out / "a" if what == "replaced folder" else out).read_bytes() == OLD
