"""`kilobit golden make`: a golden file of any model type.

    kilobit golden make MODEL --seed N [--steps N] [--PARAM VALUE ...] -o g.json
    kilobit golden make --model m.kb --data NAME|CSV [--steps N] [--seed N] -o g.json

The first draws the case's parameters not given from the seed (the model type's
random_params(seed, given=...): the others are drawn as if none were given,
kilobit.models.draw); a parameter is any argument of the type's golden `make` (listed by
`golden make -h` and by the error for a wrong one). The second replays the user's
own trained model on their own data (the model type's from_model), so that `kilobit golden
check g.json --runtime BOARD@PORT` tells whether their board agrees with the host, step by step.

    kilobit golden make features --window N --axes A --features TEXT --seed S [--count C] -o g.json

writes windows of raw readings drawn from the seed (edge shapes first: constant, extremes,
a spike, tiny amplitudes, sinusoids; then random ones) and the host's features of each under
the selection TEXT (docs/contract.md 12.1), which every runtime must compute bit for bit.
"""
import inspect

from kilobit.core import goldenfeatures, goldenfile, options
from kilobit.core.errors import KilobitError
from kilobit.models import registry

#: the positional MODEL of `golden make` that makes a features file instead of a model's case
FEATURES = "features"


def params_of(spec):
    """{name: default or inspect.Parameter.empty} of a model type's golden make()."""
    sig = inspect.signature(spec.golden.make)
    return {n: p.default for n, p in sig.parameters.items()
            if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)}


#: every parameter name of every model type's cases, each an option of `golden make`
OPTIONS = sorted({n for s in registry.REGISTRY for n in params_of(s)} - {"seed", "steps"})


def option_help(name):
    """The help of `golden make --NAME`: the model types whose cases take it, and for each
    whether --seed draws it when not given or make()'s default stands."""
    out = []
    for s in registry.REGISTRY:
        default = params_of(s).get(name, None)
        if name not in params_of(s):
            continue
        if name in s.golden.random_params(0):
            out.append("%s (drawn from --seed when not given)" % s.name)
        else:
            out.append("%s (default %s)" % (s.name, default))
    return "a parameter of the cases of " + ", ".join(out)


def _value(text):
    try:
        return int(text)
    except ValueError:
        return text


def given(a, spec):
    """The parameters given on the command line ({name: value}), refused when foreign."""
    out = {}
    for name in OPTIONS:
        v = getattr(a, "p_" + name, None)
        if v is not None:
            out[name] = _value(v)
    for item in a.param:
        name, eq, v = item.partition("=")
        if not eq:
            raise KilobitError("--param wants NAME=VALUE, got %r" % item)
        out[name] = _value(v)
    known = params_of(spec)
    foreign = sorted(set(out) - set(known))
    if foreign:
        raise KilobitError("%s cases take no %s (they take: %s)"
                           % (spec.name, ", ".join("--" + f for f in foreign),
                              ", ".join("--" + n for n in known)))
    return out


def add_features_args(g):
    """The options of `golden make features` (a features golden file)."""
    g.add_argument("--window", type=options.integer(1, 256), metavar="N",
                   help="with features: samples per window per axis (1..256)")
    g.add_argument("--axes", type=options.integer(1, 255), metavar="A",
                   help="with features: axes of a window (1..255)")
    g.add_argument("--features", metavar="TEXT",
                   help="with features: the selection, e.g. time, mean,mad,energy,fft64:8 "
                        "(docs/contract.md 12.1; default time)")
    g.add_argument("--count", type=options.integer(1, 100000), metavar="C",
                   help="with features: windows in the file (default %d)"
                        % goldenfeatures.COUNT)


def _features_only(a):
    """The --window/--axes/--features/--count given, which only a features file takes."""
    return ["--" + k for k in ("window", "axes", "features", "count")
            if getattr(a, k, None) is not None]


def make_features(a):
    from kilobit.core.errors import DataError

    params = [n for n in OPTIONS if getattr(a, "p_" + n, None) is not None]
    if a.model_file or a.data or a.test or a.steps is not None or a.param or params:
        raise KilobitError("golden make features takes --window, --axes, --features, --seed, "
                           "--count and -o, no model, data, steps or parameters, no --test")
    for k in ("window", "axes"):
        if getattr(a, k) is None:
            raise KilobitError("golden make features needs --%s" % k)
    try:
        doc = goldenfeatures.make(a.window, a.axes, a.features or "time", a.seed,
                                  a.count or goldenfeatures.COUNT)
    except DataError as e:
        raise KilobitError("golden make features: %s" % e) from None
    goldenfile.dump(doc, a.output)
    print("wrote %s (features %s, %d windows of %d x %d readings)"
          % (a.output, doc["params"]["features"], len(doc["windows"]), a.axes, a.window))
    return 0


#: parameters whose range no model's make() checks: pretrain counts learning steps as --steps
#: does (a negative count made no steps, a huge one ran for hours); norm is an int32 of the
#: file; zero_bias is a flag (any other number was recorded as 1)
BOUNDS = {"pretrain": (0, options.STEPS_MAX), "norm": (-(1 << 31), (1 << 31) - 1),
          "zero_bias": (0, 1)}


def _honoured(spec, want, p):
    """Refuse the given parameters that the case `p` about to be made would not take as given
    (a parameter ignored is a golden file unlike the one asked for), or out of BOUNDS."""
    off = sorted(k for k, v in want.items() if p.get(k) != v)
    if off:
        raise KilobitError("golden make %s cannot honour %s" % (spec.name, ", ".join(
            "--%s %s" % (k, want[k]) for k in off)))
    for k, (lo, hi) in BOUNDS.items():
        v = want.get(k)
        if v is not None and not (isinstance(v, int) and lo <= v <= hi):
            raise KilobitError("golden make %s: --%s must be a whole number %d to %d, got %r"
                               % (spec.name, k, lo, hi, v))


def make(a):
    if a.type == FEATURES:
        return make_features(a)
    if _features_only(a):
        raise KilobitError("%s go with golden make features" % ", ".join(_features_only(a)))
    if a.model_file:
        if a.type:
            raise KilobitError("give a model type or --model FILE, not both")
        if not a.data:
            raise KilobitError("--model needs --data (the rows that become the steps)")
        params = ["--" + n for n in OPTIONS if getattr(a, "p_" + n, None) is not None]
        if params or a.param:
            raise KilobitError("%s: a model file's parameters are its own; they go with a "
                               "model type's case (golden make MODEL)"
                               % ", ".join(params + ["--param " + p for p in a.param]))
        spec, blob = registry.read(a.model_file)
        try:
            doc = spec.golden.from_model(blob, a.data, test=a.test, steps=a.steps, seed=a.seed)
        except ValueError as e:
            raise KilobitError(str(e)) from None
    else:
        if not a.type:
            raise KilobitError("name a model type (%s) or give --model FILE"
                               % ", ".join(registry.NAMES))
        if a.data or a.test:
            raise KilobitError("%s goes with --model FILE" % ("--data" if a.data else "--test"))
        spec = registry.get(a.type)
        want = given(a, spec)
        drawn = spec.golden.random_params(a.seed, a.steps)
        defaults = params_of(spec)
        for name, v in want.items():
            if isinstance(drawn.get(name, defaults[name]), int) and not isinstance(v, int):
                raise KilobitError("--%s wants a whole number, got %r" % (name, v))
        try:
            p = spec.golden.random_params(a.seed, a.steps, given=want)
            # a parameter with a default in make() (rkp's C) is not drawn: given, it goes to
            # make() as it is, which checks it; one the draw changed or left out is refused
            p.update((k, v) for k, v in want.items() if k not in p)
            _honoured(spec, want, p)
            doc = spec.golden.make(**p)
        except (ValueError, TypeError) as e:
            raise KilobitError("cannot make a %s case of %s: %s"
                               % (spec.name, dict(drawn, **want), e)) from None
    goldenfile.dump(doc, a.output)
    print("wrote %s (%s, %d steps)" % (a.output, spec.name, len(doc["steps"])))
    return 0


def make_features_set(a):
    """`golden make-set --features [DIR]`: the checked-in features set (kilobit.golden)."""
    import os

    from kilobit import golden
    from kilobit.core import outfile
    d = os.path.join(a.directory, "features") if a.directory == "tests/golden" else a.directory
    outfile.check_directory(d)
    golden.make_features_set(d)
    return 0
