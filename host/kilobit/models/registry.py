"""REGISTRY: the table of model types (kilobit.models.spec.ModelSpec), in model-type order.

    from kilobit.models import registry
    spec = registry.get("ckp")                 # by name
    spec = registry.of_file(model_bytes)       # by the type in a model file's header
    [s.name for s in registry.REGISTRY if s.learns_online]

A new model type is one package under kilobit/models/ that defines SPEC, listed here once.
"""
from kilobit.core import inputs, kbfile
from kilobit.core.errors import KilobitError, ModelFileError
from kilobit.models.assoc.spec import SPEC as _assoc
from kilobit.models.bonsai.spec import SPEC as _bonsai
from kilobit.models.ckp.spec import SPEC as _ckp
from kilobit.models.protonn.spec import SPEC as _protonn
from kilobit.models.rkp.spec import SPEC as _rkp

REGISTRY = tuple(sorted((_rkp, _ckp, _bonsai, _protonn, _assoc), key=lambda s: s.type_id))
NAMES = tuple(s.name for s in REGISTRY)
_BY_NAME = {s.name: s for s in REGISTRY}
_BY_TYPE = {s.type_id: s for s in REGISTRY}
assert all(kbfile.MODEL_TYPES[s.name] == s.type_id for s in REGISTRY)


def get(name):
    """The spec of a model type by name; KilobitError naming the known ones."""
    try:
        return _BY_NAME[name]
    except KeyError:
        raise KilobitError("unknown model type %r (known: %s)" % (name, ", ".join(NAMES))) \
            from None


def of_type(type_id):
    return _BY_TYPE.get(type_id)


def of_file(model_bytes):
    """The spec of a model file's type, by its header (the file checked whole first):
    ModelFileError for a bad or foreign file."""
    name, _ = kbfile.unpack(model_bytes)
    return _BY_NAME[name]


def of_class(cls):
    """The spec whose integer reference is `cls` (None: none)."""
    return next((s for s in REGISTRY if s.int_class is cls), None)


def peek(model_bytes):
    """The spec named by a model file's header byte, without checking the rest (None: none);
    for dispatch only: the model's own loader refuses a bad file with its reason."""
    b = bytes(model_bytes[:6])
    if len(b) < 6 or b[:4] != kbfile.MAGIC:
        return None
    return _BY_TYPE.get(b[5])


def load(model_bytes):
    """(spec, integer reference, scaler) of a model file."""
    spec = of_file(model_bytes)
    m, scaler = spec.load(model_bytes)
    return spec, m, scaler


def read(path):
    """(spec, model bytes) of a model file, read once whatever the path names
    (kilobit.core.inputs: a FIFO or /dev/stdin too, at most MODEL_CAP), checked whole and
    loaded once, so that values only the model type checks (a finite scaler) are refused here
    too; KilobitError for a missing, unreadable or bad file."""
    blob = inputs.read(path, "model file", inputs.MODEL_CAP)
    try:
        spec = of_file(blob)
        spec.load(blob)
    except ModelFileError as e:
        raise KilobitError("%s: %s" % (path, e)) from None
    return spec, blob


def supporting(what):
    """The specs for which the predicate `what(spec)` holds, e.g. lambda s: "uno" in s.boards."""
    return [s for s in REGISTRY if what(s)]
