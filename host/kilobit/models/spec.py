"""A model type as the rest of kilobit sees it: one ModelSpec per type, defined in the type's
own package (kilobit/models/<name>/__init__.py) and collected by kilobit.models.registry.

Every tool reads these fields instead of naming model types one by one:

    name          the one name of the type in all three runtimes (rkp: kilobit.models.rkp,
                  device/kbit/rkp.py, firmware_c/kb_rkp.h)
    type_id       its model type in the .kb header (kilobit.core.kbfile.MODEL_TYPES)
    kind          how its steps look, which decides how runtimes drive it:
                  "learner"    binary online learner, ("L", y, codes) / ("Q", None, codes) steps,
                               fields score, prediction, mistake, count + memory
                               (kilobit.models.learner)
                  "predictor"  host-trained, features streamed, ("P", None, codes) steps,
                               fields of the model's own (kilobit.models.predictor)
                  "classes"    class-incremental online learner, labels 0..255, int8 values
    int_class     the integer reference (from_bytes, to_bytes); it defines the semantics
    inputs        inputs(m, X01): the device's inputs (codes, int8 values) of rows scaled to
                  [0, 1] by the model file's scaler
    golden        its module of golden cases: GOLDEN_SET, make(**params), random_params(seed,
                  steps, given) (the given parameters not drawn: kilobit.models.draw),
                  from_model(model_bytes, split, steps); and parse_step/doc_steps
    firmware      its AVR firmware module: SOURCE, DEPENDS (paths under firmware_c/),
                  header(model_bytes, frames=True) (frames=False: without the UART frames'
                  limits, for `kilobit export`), optional EXTRA_SOURCES, MCUS, STACK_RESERVE
    commands      its command-line module: add_train_args(parser), train(args),
                  evaluate(args, model_bytes)
    kbit          "module:Class" of its device/kbit class
    learns_online True when it keeps learning on the device
    boards        the boards/*.json names its firmware runs on (C runtime)
    describe      describe(m): [(name, value text)] of a loaded integer model, its parameters
                  first and then its learnt state (`kilobit inspect`)
"""


class ModelSpec:
    def __init__(self, name, type_id, title, paper, kind, int_class, golden, firmware, commands,
                 kbit, learns_online, boards, inputs, describe, kbit_fields=()):
        self.name, self.type_id, self.title, self.paper = name, type_id, title, paper
        self.kind, self.int_class, self.golden = kind, int_class, golden
        self.firmware, self.commands, self.kbit = firmware, commands, kbit
        self.learns_online, self.boards = learns_online, tuple(boards)
        self.kbit_fields = tuple(kbit_fields)
        self.inputs = inputs
        self.describe = describe

    def kbit_class(self):
        """The device/kbit class (imported on demand: kbit is its own package)."""
        import importlib
        mod, cls = self.kbit.split(":")
        return getattr(importlib.import_module(mod), cls)

    def load(self, model_bytes):
        """(integer reference, scaler or None) of a model file of this type."""
        return self.int_class.from_bytes(model_bytes)

    def __repr__(self):
        return "<model %s (%s, type %d)>" % (self.name, self.kind, self.type_id)
