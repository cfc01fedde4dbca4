"""The board commands of the kilobit command line: fit, deploy, run, flash-firmware, board.

    kilobit fit m.kb --board attiny2313
    kilobit deploy m.kb --board rp2040 --port /dev/ttyACM0 [--runtime circuitpython] [--dry-run]
    kilobit deploy m.kb --board uno --port /dev/ttyACM0 [--programmer arduino] [--dry-run]
    kilobit run examples/rkp_codes.py --board rp2040 --port /dev/ttyACM0 [--dry-run]
    kilobit flash-firmware --board esp32 --port /dev/ttyUSB0 FIRMWARE.bin [--erase] [--dry-run]
    kilobit board list | manifest [--check] | virtual [--tcp PORT] [--link PATH]
    kilobit board virtual --board rp2040 [--flash FILE] [--power-cut N]
    kilobit board sim --board uno|attiny2313 [--model m.kb] [--link PATH]

cli.py adds these parsers (add_parsers) and dispatches to COMMANDS.
"""
import os
import sys

from kilobit.core import options
from kilobit.core.errors import KilobitError

DEPLOY_DESCRIPTION = (
    "Put kbit and a model of any type (%s) on a board and verify "
    "it. On a MicroPython or CircuitPython board the deploy ends with verify.py run on the "
    "board: it replays a golden file (--golden, default a checked-in one of the model's type) "
    "with that file's own model, every step's fields and memory bit for bit, then loads the "
    "deployed model from the board's file and checks its answers to a few inputs against the "
    "host integer reference's (the model is only asked, never taught: its file is left as "
    "deployed). An AVR board gets the model's firmware, built and flashed.")


def add_parsers(sub):
    from kilobit.models import registry
    from kilobit.runtimes import boards
    names = list(boards.load_all())
    board_help = "the board (boards/*.json; `kilobit board list`): %s" % ", ".join(names)
    py_names = [n for n, b in boards.load_all().items() if b["runtime"] != "c"]

    p = sub.add_parser("fit", help="flash and RAM a model takes on a board, against its budget")
    p.add_argument("model", help="a .kb model file")
    p.add_argument("--board", required=True, help=board_help)
    p.add_argument("--checkpoint-every", type=options.integer(0, 255), metavar="N",
                   help="an AVR learner that checkpoints its state to EEPROM every N learning "
                        "steps that changed it (0: on a checkpoint frame only): does a "
                        "crash-safe layout fit?")

    p = sub.add_parser("deploy", help="put kbit and a model on a board (mpy-cross + mpremote, "
                                      "ampy), or flash an AVR with the model's firmware (avrdude)",
                       description=DEPLOY_DESCRIPTION % ", ".join(registry.NAMES))
    p.add_argument("model", help="a .kb model file")
    p.add_argument("--board", required=True, help=board_help)
    p.add_argument("--port", help="serial port or pyserial URL (AVR ISP programmers may do "
                                  "without)")
    p.add_argument("--runtime", choices=("micropython", "circuitpython"),
                   help="the board's Python (default: the board file's)")
    p.add_argument("--programmer", help="avrdude programmer (default: the board file's)")
    p.add_argument("--golden", help="golden file the MicroPython board is verified with "
                                    "(default: a checked-in one of the model's type)")
    p.add_argument("--as", dest="on_board", metavar="NAME.kb",
                   help="the model's file name on a MicroPython board, in its root folder "
                        "(default: the model file's own name; either must be a plain NAME.kb, "
                        "so a model never becomes the board's main.py or lands in /lib)")
    p.add_argument("--dry-run", action="store_true", help="print the commands, run nothing")
    p.add_argument("--checkpoint-every", type=options.integer(0, 255), metavar="N",
                   help="AVR learners: checkpoint the learnt state to EEPROM every N learning "
                        "steps that changed it (0: on a checkpoint frame only)")

    p = sub.add_parser("run", help="run a script on a MicroPython board (mpremote run)")
    p.add_argument("script", help="the Python script (e.g. examples/*.py)")
    p.add_argument("--board", required=True, help="a MicroPython board: %s" % ", ".join(py_names))
    p.add_argument("--port", required=True, help="its serial port or pyserial URL")
    p.add_argument("--runtime", choices=("micropython", "circuitpython"),
                   help="the board's Python (default: the board file's)")
    p.add_argument("--dry-run", action="store_true", help="print the command, run nothing")

    p = sub.add_parser("flash-firmware", help="put MicroPython itself on a board (esptool; "
                                              "the UF2 drive of an RP2040)")
    p.add_argument("firmware", help="the MicroPython firmware file (.bin for esp32, .uf2 for "
                                    "rp2040)")
    p.add_argument("--board", required=True, help="a MicroPython board: %s" % ", ".join(py_names))
    p.add_argument("--port", required=True,
                   help="serial port (esp32) or the mounted RPI-RP2 drive (rp2040)")
    p.add_argument("--erase", action="store_true", help="erase the whole flash first (esp32)")
    p.add_argument("--dry-run", action="store_true", help="print the commands, run nothing")

    p = sub.add_parser("board", help="boards: list, the mip manifest, virtual boards")
    bsub = p.add_subparsers(dest="action", required=True)
    bsub.add_parser("list", help="the boards/*.json files")
    b = bsub.add_parser("manifest", help="write device/kbit/package.json (mip) from the package")
    b.add_argument("--check", action="store_true", help="only check it, exit 1 when stale")
    b = bsub.add_parser("virtual", help="serve a virtual MicroPython board on a pty or a TCP port, "
                                        "for mpremote: MicroPython 1.27 (WebAssembly), or with "
                                        "--board rp2040 an emulated Pico")
    b.add_argument("--board", choices=["rp2040"],
                   help="rp2040: the emulated Raspberry Pi Pico (MicroPython 1.23's core on "
                        "kilobit's minimal RP2040 port under rp2040js; UART REPL, files in a flash "
                        "file table, 192 KiB heap; not the official rp2 firmware). Default: "
                        "MicroPython 1.27 (WebAssembly)")
    b.add_argument("--tcp", type=options.integer(0, 65535), metavar="PORT",
                   help="serve socket://127.0.0.1:PORT instead of a pty (0: any free port)")
    b.add_argument("--link", help="also make PATH a symlink to the pty")
    b.add_argument("--flash", metavar="FILE",
                   help="rp2040: keep the board's flash (its file table, 1408 KiB) in FILE across "
                        "runs, as a power cycle keeps a Pico's: loaded at start when FILE exists "
                        "(it must be an image this command wrote), rewritten atomically at every "
                        "filesystem update (a written file closed or flushed, rm, mv, mkdir, "
                        "rmdir). Whatever stops the board, Ctrl-C, SIGTERM or SIGKILL, FILE holds "
                        "the files as of the last update; a file still open for writing is lost. "
                        "Default: the files last as long as the board")
    b.add_argument("--power-cut", type=options.integer(1), metavar="N",
                   help="rp2040: power the board off just after its N-th filesystem update "
                        "(counted from start; FILE keeps that update; the port then hangs up, "
                        "as a Pico's USB does), to test what survives a cut at that moment")
    b = bsub.add_parser("sim", help="run the AVR firmware on a simulated chip, its UART on a pty; "
                                    "a client opening the port resets the chip (as DTR resets "
                                    "an Uno), the EEPROM kept")
    from kilobit.runtimes.avr import firmware
    b.add_argument("--board", required=True, choices=firmware.boards(),
                   help="the simulated board")
    b.add_argument("--model", help="the model file whose firmware runs (default: a fresh Banana "
                                   "model: rkp laplace, 4 bits, 62 SVs, A=-6, 2 inputs)")
    b.add_argument("--link", help="also make PATH a symlink to the pty")
    _add_record(sub)


def _model(path):
    from kilobit.models import registry
    return registry.read(path)[1]  # checked whole, the values inside too


def cmd_fit(a):
    from kilobit.core import kbfile
    from kilobit.runtimes import boards
    b = boards.get(a.board)
    data = _model(a.model)
    name, _ = kbfile.unpack(data)
    f = boards.fit(data, b, checkpoint_every=a.checkpoint_every)
    print("%s: %s model, file %d B" % (a.model, name, len(data)))
    for line in f.lines():
        print(line)
    if not f.ok:
        raise KilobitError("%s does not fit %s: %s" % (a.model, b["name"], f.reason))
    return 0


def cmd_deploy(a):
    from kilobit.runtimes import boards
    from kilobit.runtimes.boards import deploy
    b = boards.get(a.board)
    if a.port and not a.dry_run and b["runtime"] != "c":  # avrdude also takes usb, ...
        from kilobit.runtimes.boards.ports import check_port
        check_port(a.port)
    steps = deploy.plan_deploy(a.model, b, a.port, a.runtime, a.programmer, a.golden,
                               a.checkpoint_every, a.on_board)
    deploy.execute(steps, dry_run=a.dry_run)
    if not a.dry_run:
        print("deployed %s to %s%s" % (a.model, b["name"], " on " + a.port if a.port else ""))
    return 0


def cmd_run(a):
    import stat
    import subprocess
    import tempfile

    from kilobit.core import inputs
    from kilobit.runtimes import boards
    from kilobit.runtimes.boards import deploy
    from kilobit.runtimes.boards.ports import check_port
    board = boards.get(a.board)
    deploy.plan_run(a.script, board, a.port, a.runtime)  # what the board refuses comes first
    # read here, once: a folder or an endless device is refused in kilobit's words (mpremote
    # says "could not read file"), and a FIFO or a pipe, which mpremote could not read again,
    # reaches it as a file of what was read
    source = inputs.read(a.script, "script", inputs.SCRIPT_CAP)
    with tempfile.TemporaryDirectory(prefix="kilobit-run-") as tmp:
        script = a.script
        if not a.dry_run and not stat.S_ISREG(os.stat(a.script).st_mode):
            script = os.path.join(tmp, os.path.basename(a.script) or "script.py")
            with open(script, "wb") as f:
                f.write(source)
        steps = deploy.plan_run(script, board, a.port, a.runtime)
        if a.dry_run:
            return deploy.execute(steps, dry_run=True)
        check_port(a.port)
        return subprocess.run(deploy.tool_argv(steps[0].argv)).returncode


def cmd_flash_firmware(a):
    from kilobit.runtimes import boards
    from kilobit.runtimes.boards import deploy
    if not a.dry_run and not os.path.exists(a.firmware):
        raise KilobitError("no firmware file %s" % a.firmware)
    steps = deploy.plan_flash_firmware(a.firmware, boards.get(a.board), a.port, a.erase,
                                       check=not a.dry_run)
    return deploy.execute(steps, dry_run=a.dry_run)


def _serve(board, what):
    print(what, flush=True)
    try:
        board.wait()
    finally:  # Ctrl-C, SIGTERM, SIGHUP (kilobit.core.interrupt): the board, and its link, go
        board.close()
    return 0


def cmd_board(a):
    from kilobit.runtimes import boards
    if a.action == "list":
        for name, b in boards.load_all().items():
            print("%-11s %-32s %-10s %4g MHz  flash %7d B  RAM %6d B  %s"
                  % (name, b["title"], b["mcu"], b["clock_hz"] / 1e6, b["flash_bytes"],
                     b["ram_bytes"], "/".join(b.get("runtimes", [b["runtime"]]))))
        return 0
    if a.action == "manifest":
        path = os.path.join(boards.KBIT_DIR, "package.json")
        if a.check:
            problem = boards.manifest_problem()
            print(problem or "%s lists every module of device/kbit" % path)
            return 1 if problem else 0
        from kilobit.runtimes.boards.deploy import _write
        _write(path, boards.manifest_text())
        print("wrote %s (%d modules)" % (path, len(boards.package_modules())))
        return 0
    from kilobit.runtimes.boards import virtual
    if a.action == "virtual":
        vb = virtual.VirtualBoard(tcp_port=a.tcp, link=a.link, log=sys.stderr, board=a.board,
                                  flash=a.flash, power_cut=a.power_cut).start()
        return _serve(vb, "virtual board (%s) on %s\n  mpremote connect %s repl\n%s"
                          "(Ctrl-C stops it)" % (vb.KINDS[a.board], vb.port, vb.port,
                                                 "its flash in %s\n" % a.flash if a.flash else ""))
    if a.model:
        data = _model(a.model)
    else:
        from kilobit.models.rkp.model import RKPInt
        data = RKPInt("laplace", 4, 2, 62, -6, 255, seed=0).to_bytes()
    sb = virtual.SimBoard(a.board, data, link=a.link, log=sys.stderr).start()
    return _serve(sb, "simulated %s (%s, %g MHz) running the firmware of %s; its UART on %s\n"
                      "  kilobit stream --board %s --port %s --data banana%s\n(opening the "
                      "port resets the chip; Ctrl-C stops it)"
                  % (a.board, sb.mcu, sb.freq / 1e6, a.model or "a fresh Banana model", sb.port,
                     a.board, sb.port, " --model " + a.model if a.model else ""))


def _add_record(sub):
    from kilobit import record
    p = sub.add_parser(
        "record", help="record labelled windows of sensor readings from a MicroPython board "
                       "into a CSV for train --data",
        description="Sample windows on a MicroPython board (nothing to install on it: the host "
                    "sends kbit.sensor through the raw REPL) and write one CSV row a window: "
                    "A*N readings, interleaved (a0_0,a1_0,...,a0_1,...), then the label.")
    p.add_argument("--port", required=True, help="the board's serial port or pyserial URL")
    p.add_argument("--sensor", required=True, metavar="{%s,adc:PIN}" % ",".join(record.SENSORS),
                   help="an I2C accelerometer (x, y, z; machine.I2C), an analog pin (one axis, "
                        "read_u16() >> 1), or stream: readings the host sends (--feed)")
    p.add_argument("--label", required=True, help="the windows' label (1..32 printable ASCII)")
    p.add_argument("--window", type=options.integer(1, record.WINDOW_MAX), required=True,
                   metavar="N", help="samples a window")
    p.add_argument("--rate", type=options.real(0.01, 10000), required=True, metavar="HZ",
                   help="samples a second (paced by time.ticks_us on the board)")
    p.add_argument("--windows", type=options.integer(1, options.STEPS_MAX), metavar="K",
                   help="windows to record (stream: default as many whole ones as --feed holds)")
    p.add_argument("--axes", type=options.integer(1, record.AXES_MAX), metavar="A",
                   help="readings a sample (accelerometers 3, adc 1; stream: --feed's columns)")
    p.add_argument("--feed", metavar="FILE",
                   help="--sensor stream: a CSV of raw int16 readings, one sample of A axes a row")
    p.add_argument("-o", "--output", required=True, help="the CSV file written")
    p.add_argument("--append", action="store_true",
                   help="add the rows to --output (its columns must be the same)")
    p.add_argument("--timeout", type=options.real(hi=500, above=0), metavar="S",
                   help="seconds a window may take (default: twice its own time plus 5)")
    p.add_argument("--addr", type=record.i2c_address, metavar="ADDR",
                   help="the accelerometer's I2C address (default: the chip's usual one: "
                        "mpu6050 0x68, adxl345 0x53, lis3dh 0x18)")
    p.add_argument("--bus", type=options.integer(0, 9), default=0, help="machine.I2C's bus id")
    p.add_argument("--sda", help="SDA pin (with --scl; default: the port's pins of --bus)")
    p.add_argument("--scl", help="SCL pin")


def cmd_record(a):
    from kilobit import record

    def pin(v):
        return int(v) if v is not None and v.isdigit() else v

    return record.record(a.port, a.sensor, a.label, a.window, a.rate, a.output,
                         windows=a.windows, axes=a.axes, feed=a.feed, append=a.append,
                         timeout=a.timeout, addr=a.addr, bus=a.bus, sda=pin(a.sda),
                         scl=pin(a.scl))


COMMANDS = {"fit": cmd_fit, "deploy": cmd_deploy, "run": cmd_run,
            "flash-firmware": cmd_flash_firmware, "board": cmd_board, "record": cmd_record}
