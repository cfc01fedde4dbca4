"""How the host talks to a board's firmware: a simulated chip (kb_sim, cycle-exact) or a real
board on a serial port (pyserial), each yielding the replies to a stream of frames (a long
stream's progress bar is kilobit.core.progress)."""
import os
import subprocess
import tempfile
import time

from kilobit.core.errors import KilobitError
from kilobit.runtimes.avr import firmware, kb_sim, protocol


class PortError(KilobitError):
    """The board did not answer, answered garbage, or the simulator failed."""


def check_port(port):
    """Refuse, before any tool starts, a serial port that is a path to nothing (a pyserial URL
    such as socket://127.0.0.1:PORT passes): the tools' own errors would come later, as a
    difference or in their words."""
    if "://" not in port and not os.path.exists(port):
        raise PortError("no serial port %s (nothing at that path: is the board plugged in?)"
                        % port)
    return port


class SimPort:
    """The firmware on kb_sim. All frames are written up front by a thread (kb_sim feeds the
    chip's UART from stdin as fast as the chip reads, and blocks when stdin has nothing yet, so
    a lock-step exchange would stall it); the replies are read as the simulation produces them.
    Cycle-exact whatever the pacing."""

    def __init__(self, elf, board_name):
        b = firmware.board(board_name)
        self.mcu, self.freq = b["mcu"], b["clock_hz"]
        self.elf = elf
        self.result = None

    def replies(self, frames):
        """Yield the reply to each frame, in order; .result is the SimResult afterwards."""
        import json
        import threading

        fd, report = tempfile.mkstemp(prefix="kb_stream_", suffix=".json")
        os.close(fd)
        cmd = [kb_sim.build_sim(), "--mcu", self.mcu, "--freq", str(self.freq),
               "--max-cycles", str(4 * 10 ** 10), "--report", report, self.elf]
        proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE)
        data = b"".join(frames)

        def write():
            try:
                proc.stdin.write(data)
                proc.stdin.close()
            except OSError:
                pass

        writer = threading.Thread(target=write, daemon=True)
        writer.start()
        reader = protocol.ReplyReader()
        output = bytearray()
        try:
            while True:
                chunk = os.read(proc.stdout.fileno(), 65536)
                if not chunk:
                    break
                output += chunk
                reader.feed(chunk)
                while reader.replies:
                    yield reader.replies.pop(0)
            err = proc.stderr.read().decode("utf-8", "replace")
            proc.wait()
            writer.join()
            try:
                with open(report) as f:
                    rep = json.load(f)
            except (OSError, ValueError):
                raise PortError("kb_sim wrote no report: %s" % err.strip()) from None
            self.result = kb_sim.SimResult(rep, bytes(output), proc.returncode, err)
            if not self.result.ok:
                raise PortError("%s on %s: %s" % (self.result.stop, self.mcu,
                                                  self.result.message))
            if reader.buf:
                raise PortError("the chip's output ends inside a reply")
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
            try:
                os.unlink(report)
            except OSError:
                pass


class SerialPort:
    """A real board on a serial port (pyserial), already running the model's firmware."""

    def __init__(self, url, baud=firmware.BAUD, timeout=2.0, reset_wait=0.0):
        try:
            import serial
        except ImportError:
            raise KilobitError("a serial --port needs pyserial (pip install pyserial, or the "
                               "kilobit[deploy] extra)") from None
        try:
            self.ser = serial.serial_for_url(url, baudrate=baud, timeout=timeout)
        except (serial.SerialException, ValueError) as e:
            raise KilobitError("cannot open serial port %s: %s" % (url, e)) from None
        self.url = url
        self.reader = protocol.ReplyReader()
        # An Uno resets when its port opens (DTR), and its bootloader listens for about a
        # second before it starts the firmware: frames sent meanwhile would be lost.
        time.sleep(reset_wait)
        self.ser.reset_input_buffer()

    result = None

    def transact(self, frame):
        self.ser.write(frame)
        while not self.reader.replies:
            chunk = self.ser.read(max(1, self.reader.needed()))
            if not chunk:
                raise PortError("no reply from the board on %s (is the firmware flashed and "
                                "the baud rate %d?)" % (self.url, self.ser.baudrate))
            self.reader.feed(chunk)
        return self.reader.replies.pop(0)

    def replies(self, frames):
        """Send each frame and wait for its reply (lock-step), yielding the replies."""
        try:
            for f in frames:
                yield self.transact(f)
        finally:
            self.ser.close()
