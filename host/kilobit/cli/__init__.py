"""kilobit command line: train, eval, inspect, predict, data, golden, bench, stream, demo, fit,
deploy, run, export, board.

Every user error (bad data, bad model file, parameters that cannot fit) ends with one line
`kilobit: error: ...` on stderr and exit status 2; nothing is half-written. Every option has a
help text that shows its default (HelpFormatter); the lists of data sets and runtimes in them
are made from the tables the code reads (kilobit.data.DATASETS, kilobit.runtimes.catalog).
"""
import sys

from kilobit.core import interrupt

if sys.argv[:1] == ["-m"]:  # `python -m kilobit.cli`, while runpy imports this package
    interrupt.install()  # before the imports below: Ctrl-C in them is then no traceback

import argparse
import contextlib
import io
import os

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
#: the outputs a command checks before its work, beside -o/--output
OUTPUTS = ("plot",)
#: the commands whose -o may be left out (then they write to stdout)
OPTIONAL_OUTPUT = ("predict",)

SEED_HELP = "the seed of the train/test split's shuffle"


class HelpFormatter(argparse.HelpFormatter):
    """argparse's help with every option's default shown: "(default: X)" is added to a help
    text that does not already say its default."""

    def _get_help_string(self, action):
        text = action.help or ""
        d = action.default
        if "default" in text or d is None or d is False or d == [] \
                or d is argparse.SUPPRESS or not action.option_strings:
            return text
        if isinstance(d, (tuple, list)):
            d = ",".join(map(str, d))
        return "%s (default: %s)" % (text, str(d).replace("%", "%%"))


class Parser(argparse.ArgumentParser):
    """argparse's parser whose errors end as every other user error does: one line `kilobit:
    error: ...` and exit status 2 (its subcommands' parsers are of this class too), and whose
    help shows the defaults (HelpFormatter)."""

    def __init__(self, *args, **kw):
        kw.setdefault("formatter_class", HelpFormatter)
        super().__init__(*args, **kw)

    def error(self, message):
        where = self.prog.partition(" ")[2]
        self.exit(2, "kilobit: error: %s%s (see %s -h)\n"
                  % (where + ": " if where else "", message, self.prog))


def build_parser():
    ap = Parser(prog="kilobit", description=" ".join(__doc__.split("\n\n")[0].split()))
    from kilobit import __version__
    ap.add_argument("--version", action="version", version="%(prog)s " + __version__)
    sub = ap.add_subparsers(dest="cmd", required=True)

    p = sub.add_parser("train", help="train a model on the host and write a .kb file")
    tsub = p.add_subparsers(dest="model", required=True)
    for spec in registry.REGISTRY:
        spec.commands.add_train_args(tsub.add_parser(spec.name, help="%s (%s)"
                                                     % (spec.title, spec.paper)))

    from kilobit import data
    from kilobit.runtimes import catalog

    p = sub.add_parser("eval", help="accuracy of a .kb model on a data set's test split")
    p.add_argument("model", help="a .kb model file (any model type)")
    p.add_argument("--data", required=True, help=data.help_text())
    p.add_argument("--test", help="CSV test split (with a CSV --data; without it a CSV is "
                                  "shuffled with --seed and split 80/20)")
    p.add_argument("--seed", type=options.seed(), default=0,
                   help=SEED_HELP + " (the one the model was trained with)")
    p.add_argument("--plot", metavar="PNG",
                   help="also draw the test split's confusion matrix into this PNG file")

    from kilobit.cli import model as cli_model
    cli_model.add_parsers(sub, data.help_text(), SEED_HELP)
    from kilobit.cli import data as cli_data
    cli_data.add_parsers(sub)

    p = sub.add_parser("golden", help="make or check golden vectors")
    gsub = p.add_subparsers(dest="action", required=True)
    g = gsub.add_parser("make", help="write one golden file: a model type's case drawn from "
                                     "--seed (parameters given override the draw), or --model "
                                     "FILE --data NAME|CSV: your trained model on your data")
    g.add_argument("type", nargs="?", metavar="MODEL", help="model type: %s; or %s: a features "
                   "file (--window, --axes, --features)" % (", ".join(registry.NAMES),
                                                           golden_cli.FEATURES))
    g.add_argument("--seed", type=options.seed(), default=0,
                   help="draws the case's parameters not given and its steps; with --model: "
                        + SEED_HELP)
    g.add_argument("--steps", type=options.integer(1, options.STEPS_MAX), default=None,
                   help="steps of the case (default: drawn from --seed; with --model: 400 "
                        "for a learner, 100 for a predictor)")
    g.add_argument("--model", dest="model_file", help="a trained .kb model file")
    g.add_argument("--data", help="with --model: the data set whose rows become the steps: "
                                  + data.help_text())
    g.add_argument("--test", help="CSV test split (with a CSV --data)")
    g.add_argument("--param", action="append", default=[], metavar="NAME=VALUE",
                   help="a parameter of the model type's cases (repeatable); the same as "
                        "--NAME VALUE")
    for name in golden_cli.OPTIONS:
        g.add_argument("--" + name, dest="p_" + name, default=None, metavar="VALUE",
                       help=golden_cli.option_help(name))
    golden_cli.add_features_args(g)
    g.add_argument("-o", "--output", required=True, help="the golden file to write (JSON)")
    g = gsub.add_parser("make-set", help="rewrite the checked-in golden set")
    g.add_argument("directory", nargs="?", default="tests/golden",
                   help="where the golden files go (default: tests/golden)")
    g.add_argument("--raw", action="store_true",
                   help="write the raw-readings set instead (default folder tests/golden/raw): "
                        "every model type trained on integer readings, its steps with the raw "
                        "rows they are quantized from")
    g.add_argument("--features", dest="features_set", action="store_true",
                   help="write the features set instead (default folder tests/golden/features): "
                        "windows of raw readings and their features, time-domain and FFT bands")
    g = gsub.add_parser("check", help="replay golden files on runtimes, bit for bit")
    g.add_argument("files", nargs="+", help="golden files (JSON)")
    g.add_argument("--runtime", action="append", dest="runtimes", metavar="NAME",
                   help="runtime to replay on (repeatable; default: those marked default). "
                        + catalog.help_text(DEFAULT_RUNTIMES))

    p = sub.add_parser("bench", help="run a benchmark and write docs/benchmarks/NAME.md")
    bsub = p.add_subparsers(dest="name", required=True)
    for name, mod in bench_modules():
        b = bsub.add_parser(name, help=mod.HELP)
        mod.add_args(b)
        b.add_argument("--quiet", action="store_true",
                       help="no progress lines: only where the page went, and errors")
        # the committed page is the default of a full run only (bench_output)
        page = b.get_default("output")
        b.set_defaults(page=page, output=None)
        for act in b._actions:
            if act.dest == "output" and not act.help:
                act.help = "the page to write (default: %s, or build/benchmarks/%s with " \
                           "--quick)" % (page, os.path.basename(page or "NAME.md"))

    p = sub.add_parser("stream", help="stream a data set through a board running a model's "
                                      "firmware (simulated or on a serial port): %s" % ", ".join(
                                          s.name for s in registry.REGISTRY if s.boards))
    from kilobit.runtimes.avr import firmware
    p.add_argument("--board", required=True, choices=firmware.boards(),
                   help="the board whose firmware runs")
    p.add_argument("--port", default="sim", help="'sim' (simavr) or a serial port / pyserial URL")
    p.add_argument("--data", required=True, help=data.help_text())
    p.add_argument("--test", help="CSV test split (with a CSV --data)")
    p.add_argument("--model", help="a .kb model file of any type with an AVR firmware, to "
                                   "continue from (default: a fresh rkp model with the "
                                   "parameters below)")
    rkp_commands.add_params(p, seed_help=SEED_HELP + ", and the fresh model's generator")
    p.add_argument("--limit", type=options.integer(0), metavar="N",
                   help="stream only the first N training examples")
    p.add_argument("--baud", type=options.integer(1, 10 ** 7), default=250000,
                   help="serial baud rate (real ports)")
    p.add_argument("--plot", metavar="PNG",
                   help="draw the learning curve (running and test accuracy) into this PNG file")
    p.add_argument("--quiet", action="store_true", help="no progress on stderr")

    p = sub.add_parser("demo", help="train on Banana, then learn on every device runtime")
    p.add_argument("--runtime", action="append", dest="runtimes", metavar="NAME",
                   help="run on this runtime only (repeatable; default: %s)"
                        % ", ".join(DEMO_RUNTIMES))
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
    code = spec.commands.evaluate(a, blob)
    if a.plot:
        from kilobit import plot, predict
        r = predict.run(a.model, a.data, test=a.test, seed=a.seed, split=True)
        cm, labels = predict.confusion(r)
        plot.confusion(a.plot, cm, "%s (%s) on the %s" % (a.model, spec.name, r["what"]),
                       labels)
        print("confusion matrix -> %s" % a.plot)
    return code


def cmd_golden(a):
    from kilobit import golden

    if a.action == "make":
        return golden_cli.make(a)
    if a.action == "make-set":
        if a.features_set:
            return golden_cli.make_features_set(a)
        if a.raw:
            d = os.path.join(a.directory, "raw") if a.directory == "tests/golden" else a.directory
            outfile.check_directory(d)
            golden.make_raw_set(d)
            return 0
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
    print("%d of %d golden files agree on %s"
          % (len(a.files) - bad, len(a.files), ", ".join(names)))
    return 1 if bad else 0


def cmd_bench(a):
    mod = dict(bench_modules())[a.name]
    if not a.quiet:
        return mod.main(a)
    # the benchmarks print their progress on stdout; errors go to stderr as always
    with contextlib.redirect_stdout(io.StringIO()):
        status = mod.main(a)
    if status == 0 and a.output:
        print("wrote %s" % a.output)
    return status


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
    inputs = []
    for k in INPUTS:
        v = getattr(a, k, None) if (a.cmd, k) != ("train", "model") else None  # a type's name
        inputs += v if isinstance(v, list) else [v] if v else []
    outs = [getattr(a, k) for k in OUTPUTS if getattr(a, k, None) is not None]
    if "output" in vars(a) and (a.output is not None or a.cmd not in OPTIONAL_OUTPUT):
        outs.append(a.output)  # None: refused as an empty name
    for path in outs:
        outfile.check(path, inputs)


def cmd_stream(a):
    from kilobit import stream

    return stream.run(a.board, a.port, a.data, kernel=a.kernel, bits=a.bits, budget=a.budget,
                      width=a.width, C=a.C, seed=a.seed, model=a.model, test=a.test,
                      limit=a.limit, baud=a.baud, quiet=a.quiet, plot=a.plot)


def cmd_demo(a):
    from kilobit import demo

    names = a.runtimes or list(DEMO_RUNTIMES)
    if a.board or a.port:
        from kilobit.runtimes.boards.remote import attached
        names = attached(names, a.board, a.port)
    return demo.run(names, a.output)


def cli_boards_commands():
    from kilobit.cli import (
        boards as cli_boards,
        data as cli_data,
        export as cli_export,
        model as cli_model,
    )
    return dict(cli_boards.COMMANDS, **cli_export.COMMANDS, **cli_model.COMMANDS,
                **cli_data.COMMANDS)


#: SIGTERM or SIGHUP arrived (kilobit.core.interrupt)
Terminated = interrupt.Terminated


def main(argv=None):
    try:
        a = build_parser().parse_args(argv)
    except SystemExit as e:  # argparse's refusal, its line already printed
        if e.code == 2:
            return 2
        raise
    try:
        with interrupt.raising():
            check_output(a)
            return {"train": cmd_train, "eval": cmd_eval, "golden": cmd_golden,
                    "bench": cmd_bench, "stream": cmd_stream, "demo": cmd_demo,
                    **cli_boards_commands()}[a.cmd](a)
    except KilobitError as e:
        print("kilobit: error: %s" % e, file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130  # 128 + SIGINT, as a shell reports it
    except Terminated as e:
        return interrupt.status(e.signum)


if __name__ == "__main__":
    sys.exit(main())
