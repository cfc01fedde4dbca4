"""Cycle-exact AVR simulation: build firmware with avr-gcc, run it under simavr (kb_sim).

    from kilobit.runtimes.avr import kb_sim
    elf, sizes = kb_sim.avr_build(["firmware_c/sim/test_echo.c"], "attiny2313", "build/x/echo.elf")
    r = kb_sim.run(elf, "attiny2313", 4_000_000, b"\\x01\\x02\\xff")
    r.output, r.markers, r.cycles, r.stack_bytes, r.between(3, 4)

kb_sim (firmware_c/sim/kb_sim.c) is a small C program linked with libsimavr. It bridges UART0 to
stdin/stdout, records every write to the marker register (GPIOR1 by default) with the cycle at
which the writing instruction started, tracks the lowest stack pointer after every instruction,
and fails on a crash or a stack/static-RAM collision. Everything runs in C: a stream of tens of
thousands of UART bytes takes well under a second.
"""
import json
import os
import shutil
import subprocess
import tempfile

from kilobit.core import paths
from kilobit.core.errors import KilobitError

SIM_DIR = paths.firmware_c("sim")
BUILD_DIR = paths.cache("sim")
KB_SIM = os.path.join(BUILD_DIR, "kb_sim")

#: clock each supported MCU runs at in kilobit (boards/), used when no frequency is given
DEFAULT_FREQ = {"attiny2313": 4000000, "attiny4313": 4000000, "atmega328p": 16000000}

#: flash and SRAM of the supported MCUs, bytes
MCU_FLASH = {"attiny2313": 2048, "attiny4313": 4096, "atmega328p": 32768}
MCU_RAM = {"attiny2313": 128, "attiny4313": 256, "atmega328p": 2048}
#: first SRAM address (data space) of the supported MCUs
RAMSTART = {"attiny2313": 0x60, "attiny4313": 0x60, "atmega328p": 0x100}

AVR_CFLAGS = ("-std=c99", "-Os", "-Wall", "-Wextra", "-Werror",
              "-ffunction-sections", "-fdata-sections")
AVR_LDFLAGS = ("-Wl,--gc-sections",
               # simavr's AVR_MCU tags (avr_mcu_section.h) must not land where .data is loaded from
               "-Wl,--section-start=.mmcu=0x910000")

# kb_sim exit codes
EXIT_OK, EXIT_FAIL, EXIT_USAGE, EXIT_MAXCYCLES = 0, 1, 2, 3


class SimError(KilobitError):
    """The simulated firmware crashed, collided its stack with static RAM, ran out of cycles, or
    could not be built or loaded. `.result` holds the SimResult when the simulation ran."""

    def __init__(self, message, result=None):
        KilobitError.__init__(self, message)
        self.result = result


class SimResult:
    """What one kb_sim run reports.

    output       bytes the chip sent on its UART
    markers      [(value, cycle)] for every write to the marker register, in order; `cycle` is the
                 cycle at which the writing instruction started
    marker_sp    lowest SP between the previous marker and each marker (same length as markers)
    cycles       total cycles simulated
    min_sp       lowest stack pointer seen after any instruction
    ramend       last SRAM address; stack_bytes = ramend - min_sp (return addresses included)
    static_end   first SRAM address after .data/.bss/.noinit; stack_headroom = min_sp+1-static_end
    state        simavr's final cpu state name ("cpu_Done", ...)
    stop         why the run ended: done, done-marker, idle, crashed, stack-collision, max-cycles
    ok           False for crashed, stack-collision and max-cycles
    report       the raw JSON report (dict)
    """

    def __init__(self, report, output, returncode, stderr):
        self.report = report
        self.output = output
        self.returncode = returncode
        self.stderr = stderr
        self.markers = [(m[0], m[1]) for m in report["markers"]]
        self.marker_sp = [m[2] for m in report["markers"]]
        self.cycles = report["cycles"]
        self.min_sp = report["min_sp"]
        self.ramend = report["ramend"]
        self.ramstart = report["ramstart"]
        self.static_end = report["static_end"]
        self.stack_bytes = report["stack_bytes"]
        self.stack_headroom = report["stack_headroom"]
        self.state = report["state"]
        self.stop = report["stop"]
        self.ok = report["ok"]
        self.message = report["message"]
        self.data_bytes = report["data_bytes"]
        self.bss_bytes = report["bss_bytes"]

    def between(self, start, end):
        """Cycles from each `start` marker to the next `end` marker, as a list."""
        out, t0 = [], None
        for value, cycle in self.markers:
            if value == start and t0 is None:
                t0 = cycle
            elif value == end and t0 is not None:
                out.append(cycle - t0)
                t0 = None
        return out

    def __repr__(self):
        return "SimResult(stop=%s, cycles=%d, markers=%d, stack_bytes=%d, output=%d bytes)" % (
            self.stop, self.cycles, len(self.markers), self.stack_bytes, len(self.output))


def missing():
    """None when avr-gcc, avr-size, a host C compiler, make, the simavr headers, libsimavr and
    libelf are all there; otherwise a short text naming what is missing."""
    lacks = []
    for tool in ("avr-gcc", "avr-size", "make"):
        if shutil.which(tool) is None:
            lacks.append(tool)
    if shutil.which(os.environ.get("CC", "cc")) is None:
        lacks.append("a host C compiler (cc)")
    if not _simavr_header():
        lacks.append("simavr headers (libsimavr-dev: sim_avr.h)")
    if not _find_lib("simavr"):
        lacks.append("libsimavr (libsimavr-dev)")
    if not _find_lib("elf"):
        lacks.append("libelf (libelf-dev)")
    if shutil.which("avr-gcc") and not _avr_libc():
        lacks.append("avr-libc")
    return ", ".join(lacks) if lacks else None


def _simavr_header():
    dirs = ["/usr/include/simavr", "/usr/local/include/simavr"]
    try:
        cflags = subprocess.run(["pkg-config", "--cflags", "simavr"], capture_output=True,
                                text=True, timeout=10).stdout.split()
        dirs = [f[2:] for f in cflags if f.startswith("-I")] + dirs
    except (OSError, subprocess.SubprocessError):
        pass
    return any(os.path.exists(os.path.join(d, "sim_avr.h")) for d in dirs)


def _find_lib(name):
    """True when the host C compiler can link -l<name> (shared or static development file)."""
    cc = os.environ.get("CC", "cc")
    for ext in (".so", ".a"):
        try:
            out = subprocess.run([cc, "-print-file-name=lib%s%s" % (name, ext)],
                                 capture_output=True, text=True, timeout=30).stdout.strip()
        except (OSError, subprocess.SubprocessError):
            return False
        if os.path.isabs(out) and os.path.exists(out):
            return True
    return False


def _avr_libc():
    try:
        out = subprocess.run(["avr-gcc", "-mmcu=attiny2313", "-print-file-name=crtattiny2313.o"],
                             capture_output=True, text=True, timeout=30).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return False
    return os.path.isabs(out) and os.path.exists(out)


_built = None


def build_sim():
    """Build kb_sim (make, incremental) once per process; return its path."""
    global _built
    if _built is None:
        from kilobit.runtimes import buildcache  # one make at a time writes there
        why = buildcache.make(SIM_DIR, ["BUILD=" + BUILD_DIR], "building kb_sim")
        if why is not None or not os.path.exists(KB_SIM):
            raise SimError(why or "building kb_sim wrote no %s" % KB_SIM)
        _built = KB_SIM
    return _built


def avr_build(sources, mcu, out_elf, defines=(), include_dirs=(), f_cpu=None, extra_flags=()):
    """Compile and link `sources` for `mcu` into `out_elf` with avr-gcc (C99, -Os, warnings are
    errors, -DF_CPU). `defines` are "NAME" or "NAME=VALUE" strings. Returns (out_elf, sizes) with
    sizes from `avr-size -A`: text, data, bss, noinit, flash = text + data (program bytes),
    ram = data + bss (+ noinit) static RAM bytes."""
    if f_cpu is None:
        f_cpu = DEFAULT_FREQ.get(mcu)
        if f_cpu is None:
            raise SimError("no default clock for %s: pass f_cpu" % mcu)
    out_elf = os.path.abspath(out_elf)
    os.makedirs(os.path.dirname(out_elf), exist_ok=True)
    cmd = ["avr-gcc", "-mmcu=" + mcu, "-DF_CPU=%dUL" % f_cpu]
    cmd += list(AVR_CFLAGS)
    cmd += ["-D" + d for d in defines]
    cmd += ["-I" + os.path.abspath(d) for d in include_dirs]
    cmd += list(extra_flags)
    cmd += ["-o", out_elf]
    cmd += [os.path.abspath(s) for s in sources]
    cmd += list(AVR_LDFLAGS)
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        raise SimError("avr-gcc failed for %s:\n%s\n%s" % (mcu, " ".join(cmd), p.stderr))
    return out_elf, avr_size(out_elf)


def avr_size(elf):
    """Section sizes of an AVR ELF from `avr-size -A` (see avr_build)."""
    p = subprocess.run(["avr-size", "-A", elf], capture_output=True, text=True)
    if p.returncode != 0:
        raise SimError("avr-size failed: " + p.stderr)
    sec = {}
    for line in p.stdout.splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[0].startswith(".") and parts[1].isdigit():
            sec[parts[0]] = int(parts[1])
    sizes = {"text": sec.get(".text", 0), "data": sec.get(".data", 0),
             "bss": sec.get(".bss", 0), "noinit": sec.get(".noinit", 0)}
    sizes["flash"] = sizes["text"] + sizes["data"]
    sizes["ram"] = sizes["data"] + sizes["bss"] + sizes["noinit"]
    return sizes


def run(elf, mcu, freq=None, input_bytes=b"", max_cycles=2 * 10 ** 9, idle_cycles=None,
        marker_reg=None, done_marker=None, rx_mode="stream", check=True, timeout=600,
        eeprom=None, cut_write=None, cut_value=None, profile=None):
    """Run `elf` on a simulated `mcu` at `freq` Hz, feeding `input_bytes` to UART0.

    The run ends when the firmware sleeps with interrupts off (stop "done"), writes `done_marker`
    to the marker register ("done-marker"), or has read all input and then stays `idle_cycles`
    cycles without sending a byte or writing a marker ("idle"; kb_sim's default is 5,000,000).
    With check=True (default) a crash, a stack collision or reaching `max_cycles` raises SimError;
    with check=False the SimResult says so in .ok / .stop / .message.

    rx_mode "stream" hands the chip as many bytes as its receive buffer takes (the line runs at
    the firmware's baud rate with no gaps); "byte" hands over the next byte only once the
    previous one has been read. Both read ahead on stdin: a host that waits for a reply before
    it sends the next frame stalls them. "interactive" is for such a live line (a pty,
    kilobit.runtimes.boards.virtual.SimBoard / `kilobit board sim`): bytes are handed over as they
    come, and kb_sim waits for stdin only once the chip has read everything, answered and gone back
    to polling its receiver (a sketch reading its receiver from an interrupt is offered stdin every
    4096 cycles: kilobit.runtimes.avr.arduino.Session); the cycle counts then depend on the host's
    pacing.

    `eeprom` is a file holding the chip's EEPROM across runs (missing: blank), written back when
    the run ends. `cut_write` N cuts the power as the N-th EEPROM byte write starts (stop
    "power-cut"); that byte keeps its old value, or holds `cut_value` (a torn write).

    `profile` (path, marker values) writes to path the cycles spent at each flash address while
    the latest marker is one of the values (all when empty): "0xADDR cycles" lines, for
    kilobit.runtimes.avr.profile.
    """
    if freq is None:
        freq = DEFAULT_FREQ[mcu]
    sim = build_sim()
    fd, report_path = tempfile.mkstemp(prefix="kb_sim_", suffix=".json")
    os.close(fd)
    try:
        cmd = [sim, "--mcu", mcu, "--freq", str(int(freq)), "--max-cycles", str(int(max_cycles)),
               "--rx-mode", rx_mode, "--report", report_path]
        if idle_cycles is not None:
            cmd += ["--idle-cycles", str(int(idle_cycles))]
        if marker_reg is not None:
            cmd += ["--marker-reg", str(int(marker_reg))]
        if done_marker is not None:
            cmd += ["--done-marker", str(int(done_marker))]
        if eeprom is not None:
            cmd += ["--eeprom", os.path.abspath(eeprom)]
        if profile is not None:
            cmd += ["--profile", os.path.abspath(profile[0])]
            if profile[1]:
                cmd += ["--profile-open", ",".join(str(int(v)) for v in profile[1])]
        if cut_write is not None:
            cmd += ["--cut-eeprom-write", str(int(cut_write))]
            if cut_value is not None:
                cmd += ["--cut-value", str(int(cut_value))]
        cmd.append(os.path.abspath(elf))
        try:
            p = subprocess.run(cmd, input=bytes(input_bytes), capture_output=True,
                               timeout=timeout)
        except subprocess.TimeoutExpired:
            raise SimError("kb_sim timed out after %ss on %s" % (timeout, elf)) from None
        stderr = p.stderr.decode("utf-8", "replace")
        if p.returncode == EXIT_USAGE:
            raise SimError("kb_sim could not run %s: %s" % (elf, stderr.strip()))
        try:
            with open(report_path) as f:
                report = json.load(f)
        except (OSError, ValueError):
            raise SimError("kb_sim wrote no report (exit %d): %s"
                           % (p.returncode, stderr.strip())) from None
    finally:
        try:
            os.unlink(report_path)
        except OSError:
            pass
    result = SimResult(report, p.stdout, p.returncode, stderr)
    if check and (p.returncode != EXIT_OK or not result.ok):
        raise SimError("%s on %s: %s" % (result.stop, mcu, result.message), result)
    return result
