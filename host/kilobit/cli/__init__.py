"""kilobit command line: train, eval, golden, bench, stream, demo, fit, deploy, run, board.

Every user error (bad data, bad model file, parameters that cannot fit) ends with one line
`kilobit: error: ...` on stderr and exit status 2; nothing is half-written.
"""
import argparse
import sys

from kilobit.core.errors import KilobitError

# attiny2313-sim is not a default: most golden models do not fit its 128 B of RAM
# (tests/test_avr_firmware.py replays the ones that do).
DEFAULT_RUNTIMES = ("host", "kbit-cpython", "kbit-micropython", "c-host", "uno-sim")
# The demo's model fits the ATtiny2313 too; most golden files do not (128 B of RAM), so the
# golden default leaves it out and tests/test_avr_firmware.py checks the ones that fit.
DEMO_RUNTIMES = DEFAULT_RUNTIMES + ("attiny2313-sim",)
# With no board attached the demo also runs on the virtual boards: MicroPython behind a pty driven
# by mpremote, and the simulated Uno's UART on a pty (kilobit demo --board NAME --port PORT
# puts a real board in their place).
DEMO_RUNTIMES += ("virtual-board", "uno-sim-uart")


def _add_rkp_params(p, budget=62, dims=False):
    p.add_argument("--kernel", choices=("laplace", "rbf"), default="laplace")
    p.add_argument("--bits", type=int, default=4, help="input bits B (1-8)")
    p.add_argument("--budget", type=int, default=budget, help="support vectors T")
    p.add_argument("--width", type=int, default=-6, help="kernel width exponent A (2^A)")
    p.add_argument("--C", type=int, default=255, help="weight scale C (1-255)")
    p.add_argument("--seed", type=int, default=0)
    if dims:
        p.add_argument("--dims", type=int, required=True, help="input dimension M")


def build_parser():
    ap = argparse.ArgumentParser(prog="kilobit", description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)

    p = sub.add_parser("train", help="train a model on the host and write a .kb file")
    tsub = p.add_subparsers(dest="model", required=True)
    t = tsub.add_parser("rkp", help="Random Kernel Perceptron (one online pass, integer rules)")
    _add_rkp_params(t)
    t.add_argument("--data", required=True, help="banana, checkerboard, pendigits, digits or a CSV")
    t.add_argument("--test", help="CSV test split (with a CSV --data)")
    t.add_argument("-o", "--output", required=True)
    from kilobit.cli import bonsai as cli_bonsai
    cli_bonsai.add_train_parser(tsub)
    from kilobit.cli import ckp as cli_ckp
    cli_ckp.add_train_parser(tsub)
    from kilobit.cli import protonn as cli_protonn
    cli_protonn.add_train_parser(tsub)

    p = sub.add_parser("eval", help="accuracy of a .kb model on a data set's test split")
    p.add_argument("model")
    p.add_argument("--data", required=True)
    p.add_argument("--test", help="CSV test split (with a CSV --data)")
    p.add_argument("--seed", type=int, default=0, help="the split's shuffle seed")

    p = sub.add_parser("golden", help="make or check golden vectors")
    gsub = p.add_subparsers(dest="action", required=True)
    g = gsub.add_parser("make", help="write one golden file")
    g.add_argument("model", choices=("rkp", "ckp"))
    _add_rkp_params(g, dims=True)
    g.add_argument("--L", type=int, default=560, help="ckp: budget in bits (--width is then "
                                                      "A in thousandths, --bits P)")
    g.add_argument("--steps", type=int, default=200)
    g.add_argument("-o", "--output", required=True)
    g = gsub.add_parser("make-set", help="rewrite the checked-in golden set")
    g.add_argument("directory", nargs="?", default="tests/golden")
    g = gsub.add_parser("check", help="replay golden files on runtimes, bit for bit")
    g.add_argument("files", nargs="+")
    g.add_argument("--runtime", action="append", dest="runtimes",
                   help="runtime name (repeatable); default: %s" % ", ".join(DEFAULT_RUNTIMES))

    p = sub.add_parser("bench", help="run a benchmark and write docs/benchmarks/NAME.md")
    bsub = p.add_subparsers(dest="name", required=True)
    b = bsub.add_parser("rkp", help="the RKP paper's experiments (Tables 3-5, Figures 2-4)")
    b.add_argument("-o", "--output", default="docs/benchmarks/rkp.md")
    b.add_argument("--shuffles", type=int, default=10)
    b.add_argument("--quick", action="store_true", help="a smoke run: fewer shuffles and A values")

    b = bsub.add_parser("assoc", help="the associative memory paper's experiments (Tables "
                                      "I-III, Figures 3-4), one-shot, the Uno build")
    b.add_argument("-o", "--output", default="docs/benchmarks/assoc.md")
    b.add_argument("--quick", action="store_true", help="a smoke run: subsets, fewer seeds")

    b = bsub.add_parser("bonsai", help="Bonsai: float/int16/int8 accuracy, bytes, training "
                                       "time, Uno cycles and RAM (issue 5)")
    b.add_argument("-o", "--output", default="docs/benchmarks/bonsai.md")
    b.add_argument("--quick", action="store_true", help="a smoke run: few rows and epochs")

    cli_ckp.add_bench_parser(bsub)
    cli_protonn.add_bench_parser(bsub)

    b = bsub.add_parser("avr", help="the RKP firmware on simulated AVRs (paper Tables 3-5)")
    b.add_argument("-o", "--output", default="docs/benchmarks/avr-rkp.md")
    b.add_argument("--quick", action="store_true", help="a smoke run: short streams")

    p = sub.add_parser("stream", help="stream a data set through a board running the RKP "
                                      "firmware (simulated or on a serial port)")
    p.add_argument("--board", required=True, help="attiny2313, uno or attiny4313")
    p.add_argument("--port", default="sim", help="'sim' (simavr) or a serial port / pyserial URL")
    p.add_argument("--data", required=True, help="banana, checkerboard, pendigits, digits or a CSV")
    p.add_argument("--test", help="CSV test split (with a CSV --data)")
    p.add_argument("--model", help="a .kb model file to continue from (default: a fresh model "
                                   "with the parameters below)")
    _add_rkp_params(p)
    p.add_argument("--limit", type=int, help="stream only the first N training examples")
    p.add_argument("--baud", type=int, default=250000, help="serial baud rate (real ports)")

    p = sub.add_parser("demo", help="train on Banana, then learn on every device runtime")
    p.add_argument("--runtime", action="append", dest="runtimes")
    p.add_argument("-o", "--output", default="build/demo-banana.kb")
    p.add_argument("--board", help="an attached board (rp2040, esp32: kbit deployed; uno: the "
                                   "demo model's firmware flashed), used instead of its virtual "
                                   "stand-in")
    p.add_argument("--port", help="the attached board's serial port")

    from kilobit.cli import boards as cli_boards
    cli_boards.add_parsers(sub)
    return ap


def cmd_train(a):
    if a.model == "ckp":
        from kilobit.cli import ckp as cli_ckp
        return cli_ckp.cmd_train(a)
    if a.model == "bonsai":
        from kilobit.cli import bonsai as cli_bonsai
        return cli_bonsai.cmd_train(a)
    if a.model == "protonn":
        from kilobit.cli import protonn as cli_protonn
        return cli_protonn.cmd_train(a)
    import numpy as np

    from kilobit import data
    from kilobit.core import kbfile
    from kilobit.models.rkp.model import RandomKernelPerceptron, mem_bytes

    split = data.load(a.data, seed=a.seed, test=a.test)
    scaler, Xtr, Xte = data.scale(split)
    est = RandomKernelPerceptron(a.kernel, a.bits, a.budget, a.width, a.C, a.seed)
    try:
        est.fit(Xtr, split.y_train)
    except ValueError as e:
        raise KilobitError(str(e)) from None
    blob = est.model_.to_bytes(scaler=(scaler.lo_, scaler.hi_))
    kbfile.write(a.output, blob)
    acc = est.score(Xte, split.y_test)
    m = est.model_
    print("rkp %s B=%d T=%d A=%d C=%d on %s: %d train / %d test rows, M=%d"
          % (a.kernel, a.bits, a.budget, a.width, a.C, split.name, len(Xtr), len(Xte), Xtr.shape[1]))
    print("support vectors %d/%d, memory %d B, model file %d B -> %s"
          % (m.count, m.budget, mem_bytes(m.budget, m.dims, m.bits), len(blob), a.output))
    print("test accuracy (integer model) %.4f" % acc)
    return 0


def eval_codes(a, m, scaler, quantize, bits, binary=True):
    """(split, codes) for `kilobit eval`: --data's split, refused unless it has the model's
    m.dims features, and its test rows as `bits`-bit codes through the model file's scaler (or
    one fitted on the training split when the file has none) and the model's `quantize`."""
    from kilobit import data
    from kilobit.core.quant import MinMaxScaler

    split = data.load(a.data, seed=a.seed, test=a.test, binary=binary)
    if split.X_test.shape[1] != m.dims:
        raise KilobitError("model expects %d features, %s has %d"
                           % (m.dims, split.name, split.X_test.shape[1]))
    sc = MinMaxScaler()
    if scaler is not None:
        sc.lo_, sc.hi_ = scaler
    else:
        sc.fit(split.X_train)
    return split, quantize(sc.transform(split.X_test), bits)


def eval_perceptron(a, m, scaler, quantize):
    """`kilobit eval` of a kernel perceptron (RKP, CKP): class 1 where the score is > 0."""
    split, codes = eval_codes(a, m, scaler, quantize, m.bits)
    pred = [int(m.score(u) > 0) for u in codes]
    acc = sum(int(p == t) for p, t in zip(pred, split.y_test)) / len(pred)
    print("%s on %s test split (%d rows): accuracy %.4f" % (a.model, split.name, len(pred), acc))
    return 0


def cmd_eval(a):
    from kilobit.core.quant import quantize
    from kilobit.models.rkp.model import RKPInt

    try:
        with open(a.model, "rb") as f:
            blob = f.read()
    except OSError as e:
        raise KilobitError("cannot read model file %s: %s" % (a.model, e.strerror)) from None
    from kilobit.core.kbfile import unpack
    if unpack(blob)[0] == "ckp":
        from kilobit.cli import ckp as cli_ckp
        return cli_ckp.cmd_eval(a, blob)
    if unpack(blob)[0] == "bonsai":
        from kilobit.cli import bonsai as cli_bonsai
        return cli_bonsai.cmd_eval(a, blob)
    if unpack(blob)[0] == "protonn":
        from kilobit.cli import protonn as cli_protonn
        return cli_protonn.cmd_eval(a, blob)
    m, scaler = RKPInt.from_bytes(blob)
    return eval_perceptron(a, m, scaler, quantize)


def cmd_golden(a):
    from kilobit import golden

    if a.action == "make" and a.model == "ckp":
        try:
            doc = golden.make_ckp(a.bits, a.dims, a.L, a.width, a.steps, a.seed, a.C)
        except ValueError as e:
            raise KilobitError(str(e)) from None
        golden.dump(doc, a.output)
        print("wrote %s (%d steps)" % (a.output, a.steps))
        return 0
    if a.action == "make":
        doc = golden.make(a.kernel, a.bits, a.budget, a.width, a.dims, a.steps, a.seed, a.C)
        golden.dump(doc, a.output)
        print("wrote %s (%d steps)" % (a.output, a.steps))
        return 0
    if a.action == "make-set":
        golden.make_set(a.directory)
        return 0
    names = a.runtimes or list(DEFAULT_RUNTIMES)
    bad = 0
    for f in a.files:
        print(f)
        failures = golden.check(f, names)
        bad += bool(failures)
    print("%d of %d golden files agree on %s" % (len(a.files) - bad, len(a.files), ", ".join(names)))
    return 1 if bad else 0


def cmd_bench(a):
    if a.name == "ckp":
        from kilobit.cli import ckp as cli_ckp
        return cli_ckp.cmd_bench(a)
    if a.name == "protonn":
        from kilobit.cli import protonn as cli_protonn
        return cli_protonn.cmd_bench(a)
    if a.name == "assoc":
        from kilobit.bench import assoc

        assoc.run(out=a.output, quick=a.quick)
        print("wrote %s" % a.output)
        return 0
    if a.name == "bonsai":
        from kilobit.bench import bonsai

        bonsai.run(out=a.output, quick=a.quick)
        return 0
    if a.name == "avr":
        from kilobit.bench import avr

        avr.run(out=a.output, quick=a.quick)
        print("wrote %s" % a.output)
        return 0
    from kilobit.bench import rkp

    rkp.run(out=a.output, shuffles=a.shuffles, quick=a.quick)
    print("wrote %s" % a.output)
    return 0


def cmd_stream(a):
    from kilobit import stream

    if a.limit is not None and a.limit < 0:
        raise KilobitError("--limit must be non-negative")
    return stream.run(a.board, a.port, a.data, kernel=a.kernel, bits=a.bits, budget=a.budget,
                      width=a.width, C=a.C, seed=a.seed, model=a.model, test=a.test,
                      limit=a.limit, baud=a.baud)


def cmd_demo(a):
    from kilobit import demo

    names = a.runtimes or list(DEMO_RUNTIMES)
    if a.board or a.port:
        from kilobit.runtimes.board import attached
        names = attached(names, a.board, a.port)
    return demo.run(names, a.output)


def cli_boards_commands():
    from kilobit.cli import boards as cli_boards
    return cli_boards.COMMANDS


def main(argv=None):
    a = build_parser().parse_args(argv)
    try:
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
