"""Arduino sketches built against the real Arduino AVR core and run in simavr (kb_sim).

    from kilobit.runtimes.avr import arduino
    elf, sizes, log = arduino.build("path/to/Sketch", libraries="build/arduino")
    with arduino.Session(elf, eeprom="ee.bin") as s:
        s.readline()                       # what setup() prints
        reply = s.request("Q 3 7")         # one line in, one line out

The core is Debian's arduino-core-avr (1.8.7) built by arduino-builder (1.3.25) for
arduino:avr:uno with Debian's avr-gcc 5.4, which needs DECIMAL_DIG defined for the core's
WString.cpp (../shared/DESIGN.md, "Arduino, offline"). Builds are cached under
build/arduino-builds/<hash>/, the hash covering every file of the sketch and of the libraries
folder: a sketch compiles once until one of them changes.

A Session runs the ELF with kb_sim's interactive line (--rx-mode interactive): a request is sent
only once the previous reply has come, as a host program talks to a board, so the sketch's
64-byte receive buffer never overflows while it computes. The simulated clock runs on while
the host waits, so a Session reports no cycle counts worth comparing; the stack (lowest SP) is
exact.
"""
import hashlib
import json
import os
import select
import shutil
import subprocess
import tempfile
import time

from kilobit.core import paths
from kilobit.core.errors import KilobitError
from kilobit.runtimes.avr import kb_sim

HARDWARE = "/usr/share/arduino/hardware"
BUILDER_DIR = "/usr/share/arduino-builder"  # its platform.txt names arduino-ctags
PLATFORM = os.path.join(HARDWARE, "arduino", "avr", "platform.txt")
FQBN = "arduino:avr:uno"
MCU, CLOCK = "atmega328p", 16000000
#: Debian's avr-gcc 5.4 lacks DECIMAL_DIG, which the core's WString.cpp needs
PREFS = ("compiler.cpp.extra_flags=-DDECIMAL_DIG=17",)
CACHE = paths.cache("arduino-builds")


class SketchError(KilobitError):
    """arduino-builder refused the sketch (its log in the message)."""


def missing():
    """None when arduino-builder, the Arduino AVR core and kb_sim's toolchain are there, else
    what is missing."""
    lacks = []
    if shutil.which("arduino-builder") is None:
        lacks.append("arduino-builder (Debian arduino-builder)")
    if not os.path.exists(PLATFORM):
        lacks.append("the Arduino AVR core (Debian arduino-core-avr)")
    if not os.path.exists(os.path.join(BUILDER_DIR, "platform.txt")):
        lacks.append("arduino-builder's platform.txt (Debian arduino-builder)")
    sim = kb_sim.missing()
    if sim:
        lacks.append(sim)
    return ", ".join(lacks) if lacks else None


def _tree_digest(h, root):
    for folder, dirs, files in os.walk(root):
        dirs.sort()
        for f in sorted(files):
            p = os.path.join(folder, f)
            h.update(os.path.relpath(p, root).encode() + b"\0")
            with open(p, "rb") as fh:
                h.update(fh.read())


def build(sketch_dir, libraries=None, warnings="all"):
    """Compile the sketch folder `sketch_dir` (holding <name>.ino) for the Uno; `libraries` is
    a folder of Arduino libraries (e.g. the one `kilobit export --arduino-library` made).
    Returns (elf, sizes, log): sizes as kb_sim.avr_size, log arduino-builder's output (its
    warnings included). Raises SketchError when it does not compile."""
    lacks = missing()
    if lacks:
        raise KilobitError("cannot build an Arduino sketch: missing %s" % lacks)
    sketch_dir = os.path.abspath(sketch_dir)
    name = os.path.basename(sketch_dir)
    h = hashlib.sha256()
    h.update(("%s %s %s %s" % (name, FQBN, PREFS, warnings)).encode())
    _tree_digest(h, sketch_dir)
    if libraries:
        _tree_digest(h, libraries)
    out = os.path.join(CACHE, h.hexdigest()[:20])
    elf = os.path.join(out, name + ".ino.elf")
    logf = os.path.join(out, "builder.log")
    if not (os.path.exists(elf) and os.path.exists(logf)):
        work = out + ".%d.tmp" % os.getpid()
        shutil.rmtree(work, ignore_errors=True)
        os.makedirs(work)
        cmd = ["arduino-builder", "-compile", "-hardware", HARDWARE, "-hardware", BUILDER_DIR,
               "-tools", BUILDER_DIR, "-fqbn", FQBN, "-warnings", warnings,
               "-build-path", work]
        cmd += ["-prefs=" + p for p in PREFS]
        if libraries:
            cmd += ["-libraries", os.path.abspath(libraries)]
        cmd.append(os.path.join(sketch_dir, name + ".ino"))
        p = subprocess.run(cmd, capture_output=True, text=True)
        log = p.stdout + p.stderr
        if p.returncode != 0 or not os.path.exists(os.path.join(work, name + ".ino.elf")):
            shutil.rmtree(work, ignore_errors=True)
            raise SketchError("arduino-builder could not build %s:\n%s" % (sketch_dir, log))
        with open(os.path.join(work, "builder.log"), "w") as f:
            f.write(log)
        shutil.rmtree(out, ignore_errors=True)
        os.replace(work, out)
    with open(logf) as f:
        log = f.read()
    return elf, kb_sim.avr_size(elf), log


class Session:
    """A sketch's ELF running in kb_sim on a line the host paces: request() sends a line and
    waits for the reply line. `eeprom` is a file holding the chip's EEPROM across sessions (a
    second Session on the same file is the chip after a reset). close() (or leaving the with
    block) ends the run and returns kb_sim's report (kb_sim.SimResult)."""

    def __init__(self, elf, eeprom=None, timeout=60, idle_cycles=2000000):
        self.timeout = timeout
        sim = kb_sim.build_sim()
        fd, self._report = tempfile.mkstemp(prefix="kb_sim_", suffix=".json")
        os.close(fd)
        cmd = [sim, "--mcu", MCU, "--freq", str(CLOCK), "--rx-mode", "interactive",
               "--idle-cycles", str(idle_cycles), "--max-cycles", str(10 ** 12),
               "--report", self._report]
        if eeprom is not None:
            cmd += ["--eeprom", os.path.abspath(eeprom)]
        self.proc = subprocess.Popen(cmd + [os.path.abspath(elf)], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        self._buf = b""
        self.result = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        if self.result is None:
            if exc[0] is None:
                self.close()
            else:
                self.kill()

    def readline(self):
        """The next line the sketch prints, without its line end."""
        deadline = time.monotonic() + self.timeout
        while b"\n" not in self._buf:
            left = deadline - time.monotonic()
            if left <= 0:
                self.kill()
                raise KilobitError("the sketch sent no line within %ds (got %r)"
                                   % (self.timeout, self._buf))
            r, _, _ = select.select([self.proc.stdout], [], [], left)
            if r:
                chunk = os.read(self.proc.stdout.fileno(), 4096)
                if not chunk:
                    err = self.proc.stderr.read().decode(errors="replace").strip()
                    raise KilobitError("kb_sim ended before the sketch's line (got %r): %s"
                                       % (self._buf, err))
                self._buf += chunk
        line, _, self._buf = self._buf.partition(b"\n")
        return line.decode(errors="replace").rstrip("\r")

    def send(self, line):
        self.proc.stdin.write(line.encode() + b"\n")
        self.proc.stdin.flush()

    def request(self, line):
        self.send(line)
        return self.readline()

    def close(self):
        """End the run (stdin closed: kb_sim stops once the sketch is idle) and return its
        report; KilobitError when the chip crashed or its stack hit static RAM."""
        try:  # communicate closes stdin first
            rest, err = self.proc.communicate(timeout=self.timeout)
        except subprocess.TimeoutExpired:
            self.kill()
            raise KilobitError("kb_sim did not stop within %ds" % self.timeout) from None
        self._buf += rest
        try:
            with open(self._report) as f:
                report = json.load(f)
        except (OSError, ValueError):
            raise KilobitError("kb_sim wrote no report: %s"
                               % err.decode(errors="replace")) from None
        finally:
            os.unlink(self._report)
        self.result = kb_sim.SimResult(report, self._buf, self.proc.returncode,
                                       err.decode(errors="replace"))
        if not self.result.ok:
            raise KilobitError("%s: %s" % (self.result.stop, self.result.message))
        return self.result

    def kill(self):
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        for f in (self.proc.stdin, self.proc.stdout, self.proc.stderr):
            try:
                f.close()
            except (OSError, ValueError):
                pass
        try:
            os.unlink(self._report)
        except OSError:
            pass
