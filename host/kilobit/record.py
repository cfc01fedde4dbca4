"""`kilobit record`: labelled windows of sensor readings from a MicroPython board into a CSV that
`kilobit train --data` takes.

    kilobit record --port /dev/ttyACM0 --sensor lis3dh --window 64 --rate 100 --label walk \\
                   --windows 20 -o walk.csv
    kilobit record --port PTY --sensor stream --feed readings.csv --window 64 --label idle \\
                   -o idle.csv                     # the virtual Pico, fed by the host

The host talks to the board's raw REPL itself (pyserial): it sends kbit.sensor's source (the
board needs nothing installed) and a call of its record(), which prints one line per window
(the protocol is in kbit.sensor.record's docstring). With --sensor stream the host also feeds
the board its readings on the same port, as decimal text, two windows ahead of what the board
has sent back, and an "e" when the feed has no more.

Each CSV row is one window, A*N readings interleaved (a0_0, a1_0, ..., a0_1, ...) then the
label; the file gets a header row, written once. --append adds rows to a file with the same
columns. The file is written when every window has arrived, atomically (kilobit.core.outfile):
a failure leaves the old file as it was.
"""
import math
import os
import sys
import time

import numpy as np

from kilobit.core import kbfile, outfile
from kilobit.core.errors import DataError, KilobitError

#: --sensor's names besides adc:PIN
SENSORS = ("mpu6050", "adxl345", "lis3dh", "stream")
#: seconds a board has to show its raw REPL prompt, and to start sampling once it has the script
ANSWER_S = 10.0
#: a window's readings at most (array("h") on the board: 2 bytes each, and a line of text each)
READINGS_MAX = 4096
WINDOW_MAX = 1024
AXES_MAX = 16
#: what the board's raw REPL shows (pyexec.c), and what ends each of its two outputs
RAW_PROMPT = b"raw REPL; CTRL-B to exit\r\n>"
EOT = b"\x04"


class RecordError(KilobitError):
    """The board, the sensor or a window failed."""


def parse_sensor(text):
    """(kind, pin) of --sensor: one of SENSORS, or adc:PIN (a pin number or name)."""
    if text in SENSORS:
        return text, None
    kind, sep, pin = text.partition(":")
    if kind == "adc" and sep and pin:
        return "adc", int(pin) if pin.isdigit() else pin
    raise KilobitError("--sensor %r: want one of %s, or adc:PIN (e.g. adc:26)"
                       % (text, ", ".join(SENSORS)))


def i2c_address(text):
    """--addr: a 7-bit I2C address outside the reserved ones, decimal or 0x hex."""
    import argparse
    try:
        v = int(text, 0)
    except ValueError:
        raise argparse.ArgumentTypeError("%r is not an I2C address (e.g. 0x68)" % text) from None
    if not 0x08 <= v <= 0x77:
        raise argparse.ArgumentTypeError("%s is out of range: 0x08 to 0x77" % text)
    return v


def check_label(label):
    """The label, or DataError unless a model file can store it (kbfile.label_ok) and the CSV
    reader reads it back as it was."""
    if not kbfile.label_ok(label.encode("utf-8", "replace")) or label != label.strip():
        raise DataError("label %r: labels are 1..%d printable ASCII characters, no space at "
                        "either end" % (label, kbfile.LABEL_LEN))
    try:
        v = float(label)
    except ValueError:
        return label
    if not math.isfinite(v):
        raise DataError("label %r: a number label must be finite" % label)
    return label


def read_feed(path, axes):
    """The readings of a feed CSV: (samples, axes) int64, one sample a row (a header allowed),
    every reading an int16. axes None: as many as the file has columns."""
    from kilobit.data import read_matrix
    x = read_matrix(path, min_rows=1, min_cols=1)
    if axes is not None and x.shape[1] != axes:
        raise DataError("%s: %d column%s a row, --axes is %d (one reading of each axis a row)"
                        % (path, x.shape[1], "" if x.shape[1] == 1 else "s", axes))
    if x.shape[1] > AXES_MAX:
        raise DataError("%s: %d columns, at most %d axes" % (path, x.shape[1], AXES_MAX))
    if not np.all(x == np.floor(x)) or x.min() < -32768 or x.max() > 32767:
        bad = np.argwhere((x != np.floor(x)) | (x < -32768) | (x > 32767))[0]
        raise DataError("%s: data row %d, column %d: %g is not an int16 reading (-32768..32767)"
                        % (path, bad[0] + 1, bad[1] + 1, x[tuple(bad)]))
    return x.astype(np.int64)


def columns(axes, n):
    """The CSV's header: reading columns in the board's order (sample by sample, each of its
    axes), then the label."""
    return ["a%d_%d" % (a, i) for i in range(n) for a in range(axes)] + ["label"]


def _existing(path, header):
    """The text of the file --append adds to ("" when there is none), refusing one whose columns
    differ from header's (a header row must be the same names; rows without one the same
    count)."""
    if not os.path.lexists(path):
        return ""
    if not os.path.isfile(path):
        raise KilobitError("cannot append to %s: not a regular file" % path)
    try:
        with open(path, encoding="utf-8-sig") as f:
            text = f.read()
    except (OSError, UnicodeDecodeError) as e:
        raise KilobitError("cannot append to %s: %s"
                           % (path, getattr(e, "strerror", None) or e)) from None
    first = next((ln for ln in text.splitlines() if ln.strip()), None)
    if first is None:
        return ""
    cells = [c.strip() for c in first.split(",")]
    from kilobit.data import _is_header
    if _is_header(cells) and cells != header:
        raise KilobitError("cannot append to %s: its columns (%s) are not these windows' (%s)"
                           % (path, _shown(cells), _shown(header)))
    if len(cells) != len(header):
        raise KilobitError("cannot append to %s: its rows have %d columns, these windows' %d "
                           "(%d readings and the label)"
                           % (path, len(cells), len(header), len(header) - 1))
    return text if text.endswith("\n") else text + "\n"


def _shown(cells):
    return ",".join(cells) if len(cells) <= 4 else "%s,...,%s: %d" % (
        ",".join(cells[:3]), cells[-1], len(cells))


def board_program(call):
    """The text the board runs: kbit.sensor's source, made standalone (its one import of kbit
    becomes MicroPython's own const), then `call`."""
    import kbit.sensor
    with open(kbit.sensor.__file__, encoding="utf-8") as f:
        src = f.read()
    rel = "from .compat import const\n"
    if src.count(rel) != 1:
        raise KilobitError("kbit/sensor.py must import only const from kbit, once")
    src = src.replace(rel, "from micropython import const\n")
    # comments only cost the serial link time; the code and docstrings are sent as they are
    lines = [ln for ln in src.splitlines() if ln.strip() and not ln.lstrip().startswith("#")]
    return "\n".join(lines) + "\n" + call + "\n"


class RawRepl:
    """A MicroPython board's raw REPL on a serial port, as mpremote drives it: Ctrl-C to stop
    what runs, Ctrl-A for the raw prompt, the program, Ctrl-D to run it; then its output, an
    EOT, its errors, an EOT. While the program runs the port is its stdin and stdout."""

    def __init__(self, port):
        from kilobit.runtimes.boards.ports import check_port
        check_port(port)
        try:
            import serial
        except ImportError:
            raise KilobitError("kilobit record needs pyserial (pip install pyserial, or the "
                               "kilobit[deploy] extra)") from None
        try:
            self.ser = serial.serial_for_url(port, baudrate=115200, timeout=0.05)
        except (serial.SerialException, ValueError, OSError) as e:
            raise RecordError("cannot open serial port %s: %s" % (port, e)) from None
        self.port = port
        self.buf = b""

    def close(self):
        try:
            self.ser.close()
        except OSError:
            pass

    def _read(self):
        try:
            return self.ser.read(4096)
        except Exception as e:  # pyserial raises its own SerialException, or OSError
            raise RecordError("the board on %s hung up: %s" % (self.port, e)) from None

    def until(self, end, deadline):
        """The bytes up to and including `end` (kept in self.buf past it), or None when
        `deadline` (time.monotonic()) passes first."""
        while True:
            i = self.buf.find(end)
            if i >= 0:
                got, self.buf = self.buf[:i + len(end)], self.buf[i + len(end):]
                return got
            if time.monotonic() > deadline:
                return None
            self.buf += self._read()

    def write(self, data):
        try:
            self.ser.write(data)
        except Exception as e:
            raise RecordError("cannot write to the board on %s: %s" % (self.port, e)) from None

    def start(self, program):
        """Stop whatever runs, enter the raw REPL and start `program`."""
        self.write(b"\r\x03\x03")
        time.sleep(0.1)
        self.ser.reset_input_buffer()
        self.buf = b""
        self.write(b"\r\x01")
        if self.until(RAW_PROMPT, time.monotonic() + ANSWER_S) is None:
            raise RecordError("the board on %s does not answer: no MicroPython raw REPL prompt "
                              "within %g s (is it a MicroPython board, and not busy in a "
                              "program that ignores Ctrl-C?)" % (self.port, ANSWER_S))
        data = program.encode()
        for i in range(0, len(data), 256):  # what a USB CDC port takes without losing bytes
            self.write(data[i:i + 256])
        self.write(EOT)
        ok = self.until(b"OK", time.monotonic() + ANSWER_S)
        if ok is None or ok != b"OK":
            raise RecordError("the board on %s did not take the record script: %r"
                              % (self.port, (ok or self.buf)[-60:]))

    def line(self, deadline):
        """The program's next output line (str, no line end), "" at its end (EOT), or None when
        deadline passes."""
        i = self.buf.find(b"\n")
        j = self.buf.find(EOT)
        while i < 0 and j < 0:
            if time.monotonic() > deadline:
                return None
            self.buf += self._read()
            i, j = self.buf.find(b"\n"), self.buf.find(EOT)
        if j >= 0 and (i < 0 or j < i):
            return ""
        got, self.buf = self.buf[:i], self.buf[i + 1:]
        return got.decode("utf-8", "replace").rstrip("\r")

    def errors(self):
        """After the program's output: what it wrote to stderr (a traceback), then the
        prompt."""
        out = self.until(EOT, time.monotonic() + ANSWER_S)
        if out is None:
            return ""
        err = self.until(EOT, time.monotonic() + ANSWER_S)
        return (err or b"").rstrip(EOT).decode("utf-8", "replace").replace("\r\n", "\n")

    def stop(self):
        """Interrupt a program still running and leave the raw REPL for the friendly one."""
        try:
            self.write(b"\x03\x03")
            time.sleep(0.2)
            self.write(b"\x02")
        except RecordError:
            pass


def _call(kind, axes, rate, n, count, timeout_s, addr, bus, sda, scl, pin):
    hz = max(1, int(math.ceil(rate)))
    return "record(lambda: make(%r, axes=%r, hz=%d, addr=%r, bus=%r, sda=%r, scl=%r, pin=%r), " \
           "%d, %d, %d, %d)" % (kind, axes, hz, addr, bus, sda, scl, pin, n, period_us(rate), count,
                        int(timeout_s * 1000))


def period_us(rate):
    return max(1, int(round(1e6 / rate)))


class _Feed:
    """The readings of --feed as the board's stream sensor takes them: window by window, as
    text, then "e" when the feed has fewer than the windows asked for. Never a reading past
    the last window: what the program leaves unread, the raw REPL would take for code."""

    def __init__(self, x, n, count):
        self.x, self.n, self.count, self.next, self.ended = x, n, count, 0, False

    def send(self, repl, windows):
        for _ in range(windows):
            if self.ended or self.next >= self.count:
                return
            rows = self.x[self.next * self.n:(self.next + 1) * self.n]
            text = "".join(" ".join(str(int(v)) for v in r) + "\n" for r in rows)
            self.next += 1
            if len(rows) < self.n:
                text += "e\n"
                self.ended = True
            repl.write(text.encode())


def record(port, sensor, label, n, rate, output, windows=None, axes=None, feed=None,
           append=False, timeout=None, addr=None, bus=0, sda=None, scl=None, err=None):
    """Record `windows` windows of n samples at `rate` Hz from `sensor` (--sensor's text) on
    the board at `port`, labelled `label`, into the CSV `output`. Returns 0."""
    err = err if err is not None else sys.stderr
    kind, pin = parse_sensor(sensor)
    check_label(label)
    want = {"stream": None, "adc": 1}.get(kind, 3)
    if want is not None and axes is not None and axes != want:
        raise KilobitError("--sensor %s gives %d ax%s, not --axes %d"
                           % (sensor, want, "is" if want == 1 else "es", axes))
    if (feed is None) != (kind != "stream"):
        raise KilobitError("--feed FILE gives --sensor stream its readings, and only it: %s"
                           % ("give one" if feed is None else "drop --feed"))
    if kind != "stream" and windows is None:
        raise KilobitError("--windows K: how many windows to record")
    if kind in ("adc", "stream") and (addr is not None or sda is not None or scl is not None):
        raise KilobitError("--addr, --sda and --scl are for an I2C accelerometer")
    if (sda is None) != (scl is None):
        raise KilobitError("give both --sda and --scl, or neither (the bus's own pins)")
    x = None
    if feed is not None:
        x = read_feed(feed, axes)
        axes = x.shape[1]
        if windows is None:
            windows = len(x) // n
            if windows == 0:
                raise DataError("%s: %d samples, fewer than one window of %d"
                                % (feed, len(x), n))
    axes = want if axes is None else axes
    if axes * n > READINGS_MAX:
        raise KilobitError("a window of %d axes x %d samples: at most %d readings"
                           % (axes, n, READINGS_MAX))
    window_s = n / rate
    if timeout is None:
        timeout = min(500.0, 2 * window_s + 5)
    if timeout <= window_s:
        raise KilobitError("--timeout %g s is shorter than a window (%d samples at %g Hz: %g s)"
                           % (timeout, n, rate, window_s))
    header = columns(axes, n)
    outfile.check(output, [feed] if feed else [])
    old = _existing(output, header) if append else ""

    repl = RawRepl(port)
    rows = []
    try:
        repl.start(board_program(_call(kind, axes, rate, n, windows, timeout, addr, bus, sda,
                                       scl, pin)))
        fed = _Feed(x, n, windows) if x is not None else None
        if fed:
            fed.send(repl, 2)
        rows = _windows(repl, sensor, axes, n, windows, timeout, fed, err)
    except BaseException:
        repl.stop()
        raise
    finally:
        repl.close()
    import csv
    import io
    text = io.StringIO()
    w = csv.writer(text, lineterminator="\n")
    if not old:
        w.writerow(header)
    for r in rows:
        w.writerow([str(v) for v in r] + [label])
    outfile.write(output, old + text.getvalue())
    print("%s: %d window%s of %d x %d readings labelled %s%s"
          % (output, len(rows), "" if len(rows) == 1 else "s", axes, n, label,
             " (appended)" if old else ""))
    return 0


def _windows(repl, sensor, axes, n, count, timeout, fed, err):
    """The windows' readings as the board prints them (kbit.sensor.record's protocol)."""
    def next_line(what, wait, failed="%s did not arrive: %s"):
        ln = repl.line(time.monotonic() + wait)
        if ln is None:
            raise RecordError("%s did not arrive within %g s" % (what, wait))
        if ln == "":
            tb = repl.errors().strip().splitlines()
            raise RecordError("the board's record script failed before %s: %s"
                              % (what, tb[-1] if tb else "no message"))
        if ln.startswith("kbit-record error "):
            why = ln[len("kbit-record error "):]
            if fed and fed.ended:
                why += " (the feed holds %d samples: %d whole windows of %d)" % (
                    len(fed.x), len(fed.x) // n, n)
            raise RecordError(failed % (what, why))
        return ln

    hello = ""
    while not hello.startswith("kbit-record "):  # past a board's own output, its banner say
        hello = next_line("--sensor %s on %s" % (sensor, repl.port), ANSWER_S, "%s: %s")
    if hello.split()[1:] != [str(axes), str(n)]:
        raise RecordError("the board answered %r to a record of %d axes x %d" % (hello, axes, n))
    rows, late = [], 0
    for k in range(count):
        ln = next_line("window %d of %d" % (k + 1, count), timeout + ANSWER_S)
        f = ln.split()
        if len(f) != 4 + axes * n or f[:2] != ["W", str(k)]:
            raise RecordError("window %d of %d: a garbled line from the board: %r"
                              % (k + 1, count, ln[:80]))
        late += int(f[3])
        rows.append([int(v) for v in f[4:]])
        if fed:
            fed.send(repl, 1)
    ln = next_line("the board's last line", ANSWER_S)
    if ln != "kbit-record done":
        raise RecordError("the board's last line is %r, not kbit-record done" % ln[:80])
    repl.errors()
    repl.write(b"\x02")
    if late:
        print("kilobit: warning: %d sample%s came a whole period or more late: the board "
              "cannot keep up with the rate" % (late, "" if late == 1 else "s"), file=err)
    return rows
