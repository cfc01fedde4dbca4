"""argparse type functions for the numeric options of every command (issue 23): a value that is
not a number, not finite (inf, nan, 1e999) or out of its range is refused while the command line
is parsed, before any work, with the range in the message.

    p.add_argument("--A", type=options.real(0.001, 65.535), default=0.1)
    p.add_argument("--steps", type=options.integer(1, options.STEPS_MAX))

The upper bounds keep a typing slip from running for hours or filling the disk: the checked-in
golden files have at most 500 steps, the benchmarks' trainers at most 120 epochs.
"""
import argparse
import math

#: golden make --steps: about 30 MB of golden file at the widest models
STEPS_MAX = 100000
#: each count of train bonsai/protonn --epochs
EPOCHS_MAX = 10000
#: bench --reps, --shuffles
REPS_MAX = 1000
#: seeds feed numpy's generators and the device's 32-bit one
SEED_MAX = 2 ** 32 - 1


def _span(lo, hi):
    if hi is None:
        return "at least %s" % lo
    if lo is None:
        return "at most %s" % hi
    return "%s to %s" % (lo, hi)


def integer(lo=None, hi=None):
    """A whole number in lo .. hi (either end may be None: unbounded)."""
    def parse(text):
        try:
            v = int(text, 10)
        except ValueError:
            raise argparse.ArgumentTypeError("%r is not a whole number" % text) from None
        if (lo is not None and v < lo) or (hi is not None and v > hi):
            raise argparse.ArgumentTypeError("%d is out of range: %s" % (v, _span(lo, hi)))
        return v
    return parse


def real(lo=None, hi=None, above=None):
    """A finite number in lo .. hi, or greater than `above` (an open lower end)."""
    def parse(text):
        try:
            v = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError("%r is not a number" % text) from None
        if not math.isfinite(v):
            raise argparse.ArgumentTypeError("%s is not a finite number" % text)
        if above is not None and not v > above:
            raise argparse.ArgumentTypeError("%s is out of range: greater than %s" % (text, above))
        if (lo is not None and v < lo) or (hi is not None and v > hi):
            raise argparse.ArgumentTypeError("%s is out of range: %s" % (text, _span(lo, hi)))
        return v
    return parse


def seed():
    return integer(0, SEED_MAX)


def counts(n, want, nonzero=False, hi=EPOCHS_MAX):
    """n comma-separated counts 0 .. hi, like --epochs 30,60,30 (`want` shows the form in the
    error); nonzero: their sum must be positive too."""
    def parse(text):
        try:
            ep = tuple(int(x) for x in text.split(","))
        except ValueError:
            ep = ()
        if len(ep) != n or min(ep) < 0 or (nonzero and sum(ep) == 0):
            raise argparse.ArgumentTypeError("wants %s, got %r" % (want, text))
        if max(ep) > hi:
            raise argparse.ArgumentTypeError("%r: each count at most %d" % (text, hi))
        return ep
    return parse
