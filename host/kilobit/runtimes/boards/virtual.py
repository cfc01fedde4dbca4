"""Virtual boards: what `kilobit board virtual` and `kilobit board sim` serve, so that the tools
of a real board (mpremote, a serial client) run against them unchanged.

    with VirtualBoard() as vb:             # MicroPython 1.27 (WebAssembly) behind a pty
        subprocess.run(["mpremote", "connect", vb.port, "exec", "print(1)"])
    with VirtualBoard(board="rp2040") as vb:   # the emulated Pico (tools/pico, rp2040js)
    with VirtualBoard(board="rp2040", flash="pico.img") as vb:   # its flash kept in pico.img
        vb.cut_power()                      # power off now; a new board on pico.img boots on
    with SimBoard("uno", model_bytes) as sb:   # the RKP firmware on a simulated ATmega328P
        kilobit.stream.SerialPort(sb.port) ...  # its UART on a pty

VirtualBoard runs tools/mpwasm/board.mjs (the build's REPL, byte for byte, with soft reset and
MicroPython's errno numbers), or for board="rp2040" tools/pico/board.mjs (the emulated Pico's
UART0) and relays it to the master side of a pty, whose slave
(/dev/pts/N) is the board's serial port; or, with `tcp_port`, to one TCP client at a time on
127.0.0.1 (pyserial URL socket://127.0.0.1:PORT). SimBoard runs kb_sim in its interactive mode
(--rx-mode interactive) with the pty's master as its UART.

Both keep a descriptor of the pty's slave open themselves: a client may come and go (each
mpremote command opens and closes the port) without the other side seeing a hang-up. The slave
is put in raw mode at once, so no byte is echoed or translated before a client has opened it.
"""
import os
import select
import socket
import subprocess
import threading
import tty
import weakref

from kilobit.core import paths
from kilobit.core.errors import KilobitError

BOARD_JS = paths.tools("mpwasm", "board.mjs")


class BoardError(KilobitError):
    """A virtual board could not start or died."""


def _raw_pty():
    master, slave = os.openpty()
    tty.setraw(slave)
    return master, slave, os.ttyname(slave)


def check_link(path):
    """Refuse, before a board starts, a --link that could not be made."""
    if os.path.lexists(path) and not os.path.islink(path):
        raise BoardError("%s exists and is not a symlink: choose another --link" % path)
    folder = os.path.dirname(path) or "."
    if not os.path.isdir(folder):
        raise BoardError("cannot make --link %s: no directory %s" % (path, folder))


def _unlink_if(path, target):
    """Remove the symlink `path` if it still names `target`: another board may have taken the
    same --link since."""
    try:
        if os.readlink(path) == target:
            os.unlink(path)
    except OSError:
        pass


def _link(path, target):
    """Make `path` a symlink to `target` (replacing an old symlink, never a file)."""
    check_link(path)
    if os.path.islink(path):
        os.unlink(path)
    try:
        os.symlink(target, path)
    except OSError as e:
        raise BoardError("cannot make --link %s: %s" % (path, e.strerror)) from None


class _PtyBoard:
    """What both boards share: a process behind a serial port (`.port`, a pty slave or `link`),
    the descriptors they keep open, and the life cycle around them."""

    def __init__(self, link, log):
        if link:
            check_link(link)
        self.link, self.log = link, log
        self.proc = None
        self.port = None
        self._fds = []
        self._unlink = None

    def _expose(self, name):
        self.port = name
        if self.link:
            # removed by _release(); and at the interpreter's exit if a signal (Terminated,
            # KeyboardInterrupt) came between start() and the caller's try/finally. Set before
            # the link is made, so that no moment has a link that nothing removes.
            self._unlink = weakref.finalize(self, _unlink_if, self.link, name)
            _link(self.link, name)
            self.port = self.link

    def alive(self):
        return self.proc is not None and self.proc.poll() is None

    def wait(self):
        """Block until the board's process ends (or KeyboardInterrupt)."""
        while self.alive():
            try:
                self.proc.wait(timeout=0.5)
            except subprocess.TimeoutExpired:
                pass

    def _release(self):
        for fd in self._fds:
            try:
                os.close(fd)
            except OSError:
                pass
        self._fds = []
        if self._unlink is not None:
            self._unlink()

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.close()


#: tools/pico/board.mjs's exit status when it lost power (--power-cut, or its parent died)
POWER_CUT = 4


def check_flash(path):
    """Refuse, before a board starts, a --flash FILE the emulated Pico could not keep its flash
    in: board.mjs --check, the one place that knows the image's layout, says why."""
    from kilobit.runtimes.micropython import rp2040_sim
    from kilobit.runtimes.micropython.kbit_wasm import node
    p = subprocess.run([node(), rp2040_sim.BOARD_JS, "--flash", path, "--check"],
                       capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=60,
                       env=paths.child_env())
    if p.returncode:
        lines = p.stderr.strip().splitlines() or ["board.mjs --check failed (%d)" % p.returncode]
        raise BoardError(lines[0].replace("board.mjs: ", "", 1))


class VirtualBoard(_PtyBoard):
    """A MicroPython board on a serial port (a pty) or a TCP port: MicroPython 1.27
    (WebAssembly, node), or with board="rp2040" the emulated Pico (MicroPython 1.23's core on
    kilobit's minimal RP2040 port under rp2040js).

    .port is what mpremote connects to: /dev/pts/N (or `link`, a symlink to it), or
    socket://127.0.0.1:PORT when tcp_port is given (0: any free port).

    The emulated Pico only: `flash` names a host file that keeps its flash's file table across
    boards (loaded at start when it exists, rewritten atomically at every filesystem update, so
    it survives any stop, SIGKILL included, as of the last update); `power_cut=N` powers the
    board off just after its N-th filesystem update (its process ends with POWER_CUT)."""

    #: the boards it can be: name -> what it is
    KINDS = {None: "MicroPython 1.27 (WebAssembly)",
             "rp2040": "Raspberry Pi Pico, emulated: MicroPython 1.23's core on kilobit's minimal "
                       "RP2040 port (rp2040js)"}

    def __init__(self, tcp_port=None, link=None, heapsize=None, log=None, board=None,
                 flash=None, power_cut=None):
        super().__init__(link, log)
        if board not in self.KINDS:
            raise BoardError("no virtual board %r (known: %s)"
                             % (board, ", ".join(k for k in self.KINDS if k)))
        if board != "rp2040" and (flash is not None or power_cut is not None):
            raise BoardError("--flash and --power-cut need --board rp2040 (the WebAssembly "
                             "board has no flash)")
        self.tcp_port, self.heapsize, self.board = tcp_port, heapsize, board
        self.flash, self.power_cut = flash, power_cut
        self._stop = threading.Event()
        self._threads = []
        self._client = None
        self._server = None

    # -- life cycle --
    def start(self):
        from kilobit.runtimes.micropython import rp2040_sim
        from kilobit.runtimes.micropython.kbit_wasm import missing_wasm, node
        if self.board == "rp2040":
            miss = rp2040_sim.missing()
            if miss is None:
                try:
                    rp2040_sim.build()
                except KilobitError as e:
                    raise BoardError(str(e)) from None
            cmd = [node(), rp2040_sim.BOARD_JS]
            if miss is None and self.flash is not None:
                check_flash(self.flash)
                cmd += ["--flash", self.flash]
            if self.power_cut is not None:
                cmd += ["--power-cut", str(self.power_cut)]
        else:
            miss = missing_wasm()
            cmd = [node(), BOARD_JS]
            if self.heapsize:
                cmd += ["--heapsize", str(self.heapsize)]
        if miss:
            raise BoardError("virtual board: missing %s" % miss)
        err = self.log if self.log is not None else subprocess.DEVNULL
        self.proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=err,
                                     bufsize=0, env=paths.child_env())
        try:
            if self.tcp_port is not None:
                self._server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
                self._server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
                self._server.bind(("127.0.0.1", int(self.tcp_port)))
                self._server.listen(1)
                self.port = "socket://127.0.0.1:%d" % self._server.getsockname()[1]
                self._spawn(self._accept_loop)
            else:
                master, slave, name = _raw_pty()
                self._fds = [master, slave]
                self.master = master
                self._expose(name)
            self._spawn(self._from_board)
            if self.tcp_port is None:
                self._spawn(self._to_board_pty)
        except BaseException as e:
            self.close()
            if isinstance(e, OSError):  # the TCP port taken, no pty left
                raise BoardError("cannot serve the virtual board on %s: %s"
                                 % ("TCP port %d" % self.tcp_port if self.tcp_port is not None
                                    else "a pty", e.strerror or e)) from None
            raise
        return self

    def _spawn(self, fn):
        t = threading.Thread(target=fn, daemon=True)
        t.start()
        self._threads.append(t)

    def close(self):
        self._stop.set()
        if self.proc is not None:
            try:
                self.proc.stdin.close()
            except OSError:
                pass
            try:
                self.proc.wait(timeout=3)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
            self.proc.stdout.close()
        for t in self._threads:
            t.join(timeout=3)
        for s in (self._client, self._server):
            if s is not None:
                try:
                    s.close()
                except OSError:
                    pass
        self._release()

    def cut_power(self):
        """Power the board off now (SIGKILL to the emulator, mid-instruction if need be): its
        --flash file keeps what its last filesystem update wrote. Then close()."""
        if self.alive():
            self.proc.kill()
            self.proc.wait()
        self.close()

    # -- relays --
    def _write_board(self, data):
        try:
            self.proc.stdin.write(data)
            self.proc.stdin.flush()
            return True
        except (OSError, ValueError):
            return False

    def _to_board_pty(self):
        while not self._stop.is_set():
            r, _, _ = select.select([self.master], [], [], 0.2)
            if not r:
                continue
            try:
                data = os.read(self.master, 4096)
            except OSError:
                return
            if not data or not self._write_board(data):
                return

    def _from_board(self):
        out = self.proc.stdout
        while True:
            try:
                data = os.read(out.fileno(), 65536)
            except (OSError, ValueError):
                return
            if not data:
                if self.tcp_port is None:
                    self._unplug()
                return
            if self.tcp_port is None:
                self._write_pty(data)
            else:
                c = self._client
                if c is not None:  # no client: the bytes are lost, as on a USB port
                    try:
                        c.sendall(data)
                    except OSError:
                        pass

    def _unplug(self):
        """The board's process ended: hang its port up, as a board that loses power drops off
        USB, so that a client waiting for an answer fails instead of waiting for ever. The pty's
        descriptors are pointed at /dev/null rather than closed: the relay threads may still
        hold their numbers, which must not be reused under them."""
        null = os.open(os.devnull, os.O_RDWR)
        for fd in self._fds:
            os.dup2(null, fd)
        os.close(null)

    def _write_pty(self, data):
        while data and not self._stop.is_set():
            _, w, _ = select.select([], [self.master], [], 0.2)
            if not w:
                continue  # nobody reads: the pty is full; wait (a reader will come)
            try:
                n = os.write(self.master, data)
            except OSError:
                return
            data = data[n:]

    def _accept_loop(self):
        while not self._stop.is_set():
            r, _, _ = select.select([self._server], [], [], 0.2)
            if not r:
                continue
            try:
                c, _ = self._server.accept()
            except OSError:
                return
            c.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            self._client = c
            while not self._stop.is_set():
                r, _, _ = select.select([c], [], [], 0.2)
                if not r:
                    continue
                try:
                    data = c.recv(4096)
                    # ack at once: the client's small writes wait for our acks (Nagle)
                    c.setsockopt(socket.IPPROTO_TCP, getattr(socket, "TCP_QUICKACK", 12), 1)
                except OSError:
                    data = b""
                if not data:
                    break
                if not self._write_board(data):
                    self._stop.set()
                    break
            self._client = None
            c.close()


class SimBoard(_PtyBoard):
    """A model's AVR firmware on a simulated chip (kb_sim, interactive UART) whose UART is the
    slave side of a pty: .port (/dev/pts/N, or `link`).

    Like an Arduino Uno, whose USB serial chip pulls RESET through DTR when a program opens the
    port, the chip is reset each time a client opens the port after the chip has been talked
    to: kb_sim is ended (its stdin closed: it saves the EEPROM image, which the next one loads,
    so EEPROM checkpoints survive as on a chip) and started again from the firmware's power-on
    state. A pty has no DTR line, so the opening itself is what is watched: the relay between
    the pty's master and kb_sim sees the master's hang-up (no client) end. reset() does the same
    on request; .resets counts them."""

    #: cycles kb_sim runs on after its input ends (a reset): the chip is idle by then
    IDLE_CYCLES = 100000

    def __init__(self, board_name, model_bytes, link=None, log=None):
        super().__init__(link, log)
        self.board_name, self.model = board_name, model_bytes
        self.sizes = None
        self.resets = 0
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._threads = []
        self._touched = False  # bytes went to the chip since it (re)started

    def start(self):
        import tempfile

        from kilobit.runtimes.avr import firmware, kb_sim
        miss = kb_sim.missing()
        if miss:
            raise BoardError("simulated board: missing %s" % miss)
        b = firmware.board(self.board_name)
        self.elf, self.sizes = firmware.build(self.model, b["name"])
        self.sim = kb_sim.build_sim()
        self.mcu, self.freq = b["mcu"], b["clock_hz"]
        self._tmp = tempfile.TemporaryDirectory(prefix="kilobit-simboard-")
        self.eeprom = os.path.join(self._tmp.name, "eeprom.bin")
        master, slave, name = _raw_pty()
        os.close(slave)  # no client yet: the master hangs up until one opens the port
        self.master = master
        self._fds = [master]
        try:  # an interrupt while it starts: no kb_sim, pty or link left
            self._start_sim()
            self._expose(name)
            t = threading.Thread(target=self._relay, daemon=True)
            t.start()
            self._threads.append(t)
        except BaseException:
            self.close()
            raise
        return self

    def _start_sim(self):
        self.proc = subprocess.Popen(
            [self.sim, "--mcu", self.mcu, "--freq", str(self.freq), "--rx-mode", "interactive",
             "--max-cycles", str(2 ** 62), "--idle-cycles", str(self.IDLE_CYCLES),
             "--eeprom", self.eeprom, "--report", os.devnull, self.elf],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=self.log if self.log is not None else subprocess.DEVNULL, bufsize=0)
        self._touched = False
        t = threading.Thread(target=self._from_chip, args=(self.proc,), daemon=True)
        t.start()
        self._threads.append(t)

    def _end_sim(self):
        """End kb_sim as a reset does: its input closed, so that it stops and saves the
        EEPROM (killed when it does not within seconds)."""
        proc = self.proc
        try:
            proc.stdin.close()
        except OSError:
            pass
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()

    def reset(self):
        """Reset the chip: the firmware starts again from power-on, the EEPROM kept."""
        with self._lock:
            self._end_sim()
            self._start_sim()
            self.resets += 1

    def _from_chip(self, proc):
        while True:
            try:
                data = os.read(proc.stdout.fileno(), 4096)
            except (OSError, ValueError):
                return
            if not data:
                return
            try:
                os.write(self.master, data)
            except OSError:  # no client: the bytes are lost, as on a port nobody reads
                pass

    def _relay(self):
        import select
        poll = select.poll()
        poll.register(self.master, select.POLLIN)
        open_ = False
        while not self._stop.is_set():
            events = dict(poll.poll(100)).get(self.master, 0)
            if events & select.POLLHUP:  # no client has the port open
                open_ = False
                self._stop.wait(0.02)
                continue
            if not open_:
                open_ = True
                if self._touched:  # a client opened the port: DTR resets the chip
                    self.reset()
            if events & select.POLLIN:
                try:
                    data = os.read(self.master, 4096)
                except OSError:
                    continue
                with self._lock:
                    try:
                        self.proc.stdin.write(data)
                        self._touched = True
                    except (OSError, ValueError):
                        pass

    def alive(self):
        if self._stop.is_set() or self.proc is None:
            return False
        with self._lock:  # a reset in progress is not an end
            return self.proc.poll() is None

    def close(self):
        self._stop.set()
        with self._lock:
            if self.proc is not None and self.proc.poll() is None:
                self.proc.terminate()
                try:
                    self.proc.wait(timeout=3)
                except subprocess.TimeoutExpired:
                    self.proc.kill()
                    self.proc.wait()
        for t in self._threads:
            t.join(timeout=3)
        self._release()
        if getattr(self, "_tmp", None) is not None:
            self._tmp.cleanup()
            self._tmp = None
