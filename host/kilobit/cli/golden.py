"""`kilobit golden make`: a golden file of any model type.

    kilobit golden make MODEL --seed N [--steps N] [--PARAM VALUE ...] -o g.json
    kilobit golden make --model m.kb --data NAME|CSV [--steps N] [--seed N] -o g.json

The first draws the case's parameters not given from the seed (the model type's
random_params(seed, given=...): the others are drawn as if none were given,
kilobit.models.draw); a parameter is any argument of the type's golden `make` (listed by
`golden make -h` and by the error for a wrong one). The second replays the user's
own trained model on their own data (the model type's from_model), so that `kilobit golden
check g.json --runtime BOARD@PORT` tells whether their board agrees with the host, step by step.
"""
import inspect

from kilobit.core.errors import KilobitError
from kilobit.models import registry


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


def make(a):
    from kilobit.core import goldenfile

    if a.model_file:
        if a.type:
            raise KilobitError("give a model type or --model FILE, not both")
        if not a.data:
            raise KilobitError("--model needs --data (the rows that become the steps)")
        spec, blob = registry.read(a.model_file)
        try:
            doc = spec.golden.from_model(blob, a.data, test=a.test, steps=a.steps, seed=a.seed)
        except ValueError as e:
            raise KilobitError(str(e)) from None
    else:
        if not a.type:
            raise KilobitError("name a model type (%s) or give --model FILE"
                               % ", ".join(registry.NAMES))
        if a.data:
            raise KilobitError("--data goes with --model FILE")
        spec = registry.get(a.type)
        want = given(a, spec)
        drawn = spec.golden.random_params(a.seed, a.steps)
        for name, v in want.items():
            if isinstance(drawn.get(name), int) and not isinstance(v, int):
                raise KilobitError("--%s wants a whole number, got %r" % (name, v))
        try:
            p = spec.golden.random_params(a.seed, a.steps, given=want)
            doc = spec.golden.make(**p)
        except (ValueError, TypeError) as e:
            raise KilobitError("cannot make a %s case of %s: %s"
                               % (spec.name, dict(drawn, **want), e)) from None
    goldenfile.dump(doc, a.output)
    print("wrote %s (%s, %d steps)" % (a.output, spec.name, len(doc["steps"])))
    return 0
