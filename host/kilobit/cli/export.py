"""`kilobit export`: a model file as one C header for your own firmware, or the Arduino library.

    kilobit export m.kb -o model.h [--name NAME] [--target avr|arm|host] [--runtime include]
                   [--checkpoint-every N | --no-checkpoint] [--eeprom-at ADDR]
    kilobit export --arduino-library DIR

cli.py adds the parser (add_parsers) and dispatches to COMMANDS.
"""
import os

from kilobit.core import outfile
from kilobit.core.errors import KilobitError
from kilobit.core.options import integer


def add_parsers(sub):
    from kilobit.runtimes.export import TARGETS

    p = sub.add_parser("export", help="a model as one C header for your own firmware (AVR, "
                                      "ARM, host), or the Arduino library with examples")
    p.add_argument("model", nargs="?", help="a .kb model file")
    p.add_argument("-o", dest="header", metavar="HEADER", help="the header to write")
    p.add_argument("--name", help="prefix of the header's C names: lower-case letters, digits "
                                  "and _, not a C/C++ keyword or a library's macro (default: "
                                  "the model type, e.g. rkp_learn); two models in one program "
                                  "need two names")
    p.add_argument("--target", choices=sorted(TARGETS), default="avr",
                   help="what it is measured on and must fit: avr (Arduino Uno), arm "
                        "(Cortex-M0+, the RP2040's memories), host (default: avr)")
    p.add_argument("--runtime", choices=("embed", "include"), default="embed",
                   help="embed: the header carries the C runtime it needs (default); include: "
                        "it #includes it from the kilobit Arduino library or firmware_c/")
    p.add_argument("--checkpoint-every", type=integer(0, 255), default=0, metavar="N",
                   help="learners on an AVR: NAME_save/NAME_restore keep the learnt state in "
                        "the EEPROM; N > 0 also checkpoints after every N learning steps that "
                        "changed it (default 0: on request only)")
    p.add_argument("--no-checkpoint", action="store_true",
                   help="no EEPROM checkpoints (no NAME_save/NAME_restore)")
    p.add_argument("--eeprom-at", type=integer(0, 1023), default=0, metavar="ADDR",
                   help="the first EEPROM byte the checkpoints use (default 0)")
    p.add_argument("--arduino-library", metavar="DIR",
                   help="write the kilobit Arduino library (src/, examples with their models, "
                        "library.properties, library.json) into DIR instead")


def cmd_export(a):
    if a.arduino_library:
        if a.model or a.header:
            raise KilobitError("--arduino-library makes the library only: give no model "
                               "or -o with it")
        from kilobit import arduino
        path = arduino.make_library(a.arduino_library, progress=print)
        print("Arduino library -> %s (examples: %s)" % (path, ", ".join(
            e.sketch for e in arduino.EXAMPLES)))
        return 0
    if not a.model or not a.header:
        raise KilobitError("export needs a model file and -o HEADER (or --arduino-library "
                           "DIR)")
    outfile.check(a.header, [a.model])
    from kilobit.models import registry
    from kilobit.runtimes import export

    _, blob = registry.read(a.model)
    try:
        text, sizes = export.header(
            blob, name=a.name, target=a.target, embed=a.runtime == "embed",
            checkpoint_every=None if a.no_checkpoint else a.checkpoint_every,
            eeprom_at=a.eeprom_at, source_name=os.path.basename(a.model))
    except export.FitError as e:
        raise KilobitError("%s %s" % (a.model, e)) from None
    write_header(a.header, text)
    print("%s -> %s: %s B flash, %s B static RAM on %s" % (
        a.model, a.header, format(sizes["flash"], ","), format(sizes["ram"], ","),
        export.TARGETS[a.target]["title"]))
    return 0


def write_header(path, text):
    """The one place export writes its -o: whole or not at all (kilobit.core.outfile)."""
    outfile.write(path, text)


COMMANDS = {"export": cmd_export}
