"""kilobit command line: train, eval, golden, bench, stream, demo, fit, deploy, run, board.

Every user error (bad data, bad model file, parameters that cannot fit) ends with one line
`kilobit: error: ...` on stderr and exit status 2; nothing is half-written.
"""
import argparse
import os
import sys

from kilobit.cli import golden as golden_cli
from kilobit.core import options, outfile
from kilobit.core.errors import KilobitError
from kilobit.models import registry
from kilobit.models.rkp import commands as rkp_commands

# attiny2313-sim is not a default: most golden models do not fit its 128 B of RAM
# (tests/test_avr_firmware.py replays the ones that do).
DEFAULT_RUNTIMES = ("host", "kbit-cpython", "kbit-micropython", "kbit-unix", "kbit-unix-bytecode",
                    "c-host", "uno-sim")
# The demo's model fits the ATtiny2313 too; most golden files do not (128 B of RAM), so the
# golden default leaves it out and tests/test_avr_firmware.py checks the ones that fit.
DEMO_RUNTIMES = DEFAULT_RUNTIMES + ("attiny2313-sim",)
# With no board attached the demo also runs on the virtual boards: MicroPython behind a pty driven
# by mpremote, and the simulated Uno's UART on a pty (kilobit demo --board NAME --port PORT
# puts a real board in their place).
DEMO_RUNTIMES += ("virtual-board", "uno-sim-uart")
DEMO_OUTPUT = os.path.join("build", "demo-banana.kb")


#: the arguments that name files a command reads: its output may not be one of them
INPUTS = ("model", "model_file", "data", "test", "files", "golden", "script", "firmware")


class Parser(argparse.ArgumentParser):
    """argparse's parser whose errors end as every other user error does: one line `kilobit:
    error: ...` and exit status 2 (its subcommands' parsers are of this class too)."""

    def error(self, message):
        where = self.prog.partition(" ")[2]
        self.exit(2, "kilobit: error: %s%s (see %s -h)\n"
                  % (where + ": " if where else "", message, self.prog))


def build_parser():
    ap = Parser(prog="kilobit", description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)

    p = sub.add_parser("train", help="train a model on the host and write a .kb file")
    tsub = p.add_subparsers(dest="model", required=True)
    for spec in registry.REGISTRY:
        spec.commands.add_train_args(tsub.add_parser(spec.name, help="%s (%s)"
                                                     % (spec.title, spec.paper)))

    p = sub.add_parser("eval", help="accuracy of a .kb model on a data set's test split")
    p.add_argument("model")
    p.add_argument("--data", required=True)
    p.add_argument("--test", help="CSV test split (with a CSV --data)")
    p.add_argument("--seed", type=options.seed(), default=0, help="the split's shuffle seed")

    p = sub.add_parser("golden", help="make or check golden vectors")
    gsub = p.add_subparsers(dest="action", required=True)
    g = gsub.add_parser("make", help="write one golden file: a model type's case drawn from "
                                     "--seed (parameters given override the draw), or --model "
                                     "FILE --data NAME|CSV: your trained model on your data")
    g.add_argument("type", nargs="?", metavar="MODEL", help="model type: %s" % ", ".join(
        registry.NAMES))
    g.add_argument("--seed", type=options.seed(), default=0)
    g.add_argument("--steps", type=options.integer(1, options.STEPS_MAX), default=None)
    g.add_argument("--model", dest="model_file", help="a trained .kb model file")
    g.add_argument("--data", help="with --model: the data set whose rows become the steps")
    g.add_argument("--test", help="CSV test split (with a CSV --data)")
    g.add_argument("--param", action="append", default=[], metavar="NAME=VALUE",
                   help="a parameter of the model type's cases (repeatable)")
    for name in golden_cli.OPTIONS:
        g.add_argument("--" + name, dest="p_" + name, default=None, help=argparse.SUPPRESS)
    g.add_argument("-o", "--output", required=True)
    g = gsub.add_parser("make-set", help="rewrite the checked-in golden set")
    g.add_argument("directory", nargs="?", default="tests/golden")
    g = gsub.add_parser("check", help="replay golden files on runtimes, bit for bit")
    g.add_argument("files", nargs="+")
    g.add_argument("--runtime", action="append", dest="runtimes",
                   help="runtime name (repeatable); default: %s" % ", ".join(DEFAULT_RUNTIMES))

    p = sub.add_parser("bench", help="run a benchmark and write docs/benchmarks/NAME.md")
    bsub = p.add_subparsers(dest="name", required=True)
    for name, mod in bench_modules():
        b = bsub.add_parser(name, help=mod.HELP)
        mod.add_args(b)
        # the committed page is the default of a full run only (bench_output)
        b.set_defaults(page=b.get_default("output"), output=None)

    p = sub.add_parser("stream", help="stream a data set through a board running a model's "
                                      "firmware (simulated or on a serial port): %s" % ", ".join(
                                          s.name for s in registry.REGISTRY if s.boards))
    p.add_argument("--board", required=True, help="attiny2313, uno or attiny4313")
    p.add_argument("--port", default="sim", help="'sim' (simavr) or a serial port / pyserial URL")
    p.add_argument("--data", required=True, help="banana, checkerboard, pendigits, digits or a CSV")
    p.add_argument("--test", help="CSV test split (with a CSV --data)")
    p.add_argument("--model", help="a .kb model file of any type with an AVR firmware, to "
                                   "continue from (default: a fresh rkp model with the "
                                   "parameters below)")
    rkp_commands.add_params(p)
    p.add_argument("--limit", type=options.integer(0),
                   help="stream only the first N training examples")
    p.add_argument("--baud", type=options.integer(1, 10 ** 7), default=250000,
                   help="serial baud rate (real ports)")

    p = sub.add_parser("demo", help="train on Banana, then learn on every device runtime")
    p.add_argument("--runtime", action="append", dest="runtimes")
    p.add_argument("-o", "--output", help="the model file (default: %s)" % DEMO_OUTPUT)
    p.add_argument("--board", help="an attached board (rp2040, esp32: kbit deployed; uno: the "
                                   "demo model's firmware flashed), used instead of its virtual "
                                   "stand-in")
    p.add_argument("--port", help="the attached board's serial port")

    from kilobit.cli import boards as cli_boards
    cli_boards.add_parsers(sub)
    from kilobit.cli import export as cli_export
    cli_export.add_parsers(sub)
    return ap


def bench_modules():
    """(name, module) of every benchmark: the modules of kilobit.bench with add_args."""
    import importlib
    import pkgutil

    from kilobit import bench
    out = []
    for info in pkgutil.iter_modules(bench.__path__):
        mod = importlib.import_module("kilobit.bench." + info.name)
        if hasattr(mod, "add_args"):
            out.append((info.name, mod))
    return out


def cmd_train(a):
    return registry.get(a.model).commands.train(a)


def cmd_eval(a):
    spec, blob = registry.read(a.model)
    return spec.commands.evaluate(a, blob)


def cmd_golden(a):
    from kilobit import golden

    if a.action == "make":
        return golden_cli.make(a)
    if a.action == "make-set":
        outfile.check_directory(a.directory)
        golden.make_set(a.directory)
        return 0
    names = a.runtimes or list(DEFAULT_RUNTIMES)
    # every file and runtime name is checked before the first replay starts
    for f in a.files:
        golden.read(f)
    golden.runtimes(names)
    bad = 0
    for f in a.files:
        print(f)
        failures = golden.check(f, names)
        bad += bool(failures)
    print("%d of %d golden files agree on %s" % (len(a.files) - bad, len(a.files), ", ".join(names)))
    return 1 if bad else 0


def cmd_bench(a):
    return dict(bench_modules())[a.name].main(a)


def bench_output(a):
    """Where `bench` writes: -o, else the committed page (docs/benchmarks/NAME.md) for a full
    run and build/benchmarks/NAME.md for a --quick one, which says so."""
    if a.output is not None or a.page is None:
        return
    if getattr(a, "quick", False):
        a.output = os.path.join("build", "benchmarks", os.path.basename(a.page))
        os.makedirs(os.path.dirname(a.output), exist_ok=True)
        print("--quick: writing %s (the committed %s only with -o)" % (a.output, a.page))
    else:
        a.output = a.page


def check_output(a):
    """Refuse, before any work, an -o the command could not write or that is one of its
    inputs."""
    if a.cmd == "bench":
        bench_output(a)
    if a.cmd == "demo" and a.output is None:
        os.makedirs(os.path.dirname(DEMO_OUTPUT), exist_ok=True)
        a.output = DEMO_OUTPUT
    if "output" not in vars(a):
        return
    inputs = []
    for k in INPUTS:
        v = getattr(a, k, None) if (a.cmd, k) != ("train", "model") else None  # a type's name
        inputs += v if isinstance(v, list) else [v] if v else []
    outfile.check(a.output, inputs)


def cmd_stream(a):
    from kilobit import stream

    return stream.run(a.board, a.port, a.data, kernel=a.kernel, bits=a.bits, budget=a.budget,
                      width=a.width, C=a.C, seed=a.seed, model=a.model, test=a.test,
                      limit=a.limit, baud=a.baud)


def cmd_demo(a):
    from kilobit import demo

    names = a.runtimes or list(DEMO_RUNTIMES)
    if a.board or a.port:
        from kilobit.runtimes.boards.remote import attached
        names = attached(names, a.board, a.port)
    return demo.run(names, a.output)


def cli_boards_commands():
    from kilobit.cli import boards as cli_boards
    from kilobit.cli import export as cli_export
    return dict(cli_boards.COMMANDS, **cli_export.COMMANDS)


def main(argv=None):
    try:
        a = build_parser().parse_args(argv)
    except SystemExit as e:  # argparse's refusal, its line already printed
        if e.code == 2:
            return 2
        raise
    try:
        check_output(a)
        return {"train": cmd_train, "eval": cmd_eval, "golden": cmd_golden,
                "bench": cmd_bench, "stream": cmd_stream, "demo": cmd_demo,
                **cli_boards_commands()}[a.cmd](a)
    except KilobitError as e:
        print("kilobit: error: %s" % e, file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
