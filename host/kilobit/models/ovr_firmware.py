"""The learner firmwares' headers for one learner or K >= 3 (one-vs-rest): what
kilobit.models.rkp.firmware and kilobit.models.ckp.firmware share (firmware_c/avr/kb_ovr_fw.h
reads it).

One learner: its state as KB_FW_<FIELD> defines and its memory as the model header's own
MEM_INIT, the lines the binary firmware always had. K learners: KB_FW_CLASSES, the K states as
one struct-array initialiser and the K memories as another, all in the Uno's RAM.
"""

#: the chip whose firmware holds several learners: the ATtinys' 128-256 B of RAM hold one, and
#: ckp's assembly step for cores without a multiplier reads one learner's state by name
CLASSES_MCU = "atmega328p"


#: stack the K-learner loop (kb_fw_step_all's frame) needs above the binary firmware's reserve
#: on the Uno: measured over the multi-class golden files, ckp 69 B against the binary's 61 B
#: deepest (64 B reserve), rkp 44 B
CLASSES_STACK = 16


def stack_extra(m):
    """{mcu: stack bytes} the firmware of model m needs above the AVR firmwares' own reserve
    (kilobit.runtimes.avr.firmware.STACK_RESERVE): CLASSES_STACK on the Uno for K >= 3."""
    return {} if getattr(m, "classes", 2) == 2 else {CLASSES_MCU: CLASSES_STACK}


def check_export(m, frames):
    """KilobitError for the header of `kilobit export` (frames False) of a model of K >= 3
    classes: the exported header holds one binary learner."""
    if not frames and getattr(m, "classes", 2) > 2:
        from kilobit.core.errors import KilobitError
        raise KilobitError("kilobit export holds one binary learner; this model has %d "
                           "classes (one-vs-rest)" % m.classes)


def c_array(values):
    """A C initialiser of integers."""
    return "{%s}" % ", ".join(str(int(v)) for v in values)


def refuse(name, m, mcu=None):
    """Why the `name` firmware cannot run model m on `mcu` (a text), or None."""
    K = getattr(m, "classes", 2)
    if K == 2 or mcu in (None, CLASSES_MCU):
        return None
    return ("the %s firmware runs several classes on the Uno (%s) only; this model has %d "
            "classes (one-vs-rest)" % (name, CLASSES_MCU, K))


def state_lines(fields, states, mems, mem_init):
    """Header lines of the learners' states and memories: `fields` names the state struct's
    members in order (("RNG", "COUNT"), ...), `states` holds one tuple of C literals per
    learner, `mems` their memories, `mem_init` the model header's memory define (one learner)."""
    if len(states) == 1:
        lines = ["#define KB_FW_%s %s" % fv for fv in zip(fields, states[0])]
        lines.append("/* support-vector memory: %d bytes */" % len(mems[0]))
        if any(mems[0]):
            lines.append("#define %s %s" % (mem_init, c_array(mems[0])))
        return lines
    lines = ["#define KB_FW_CLASSES %d /* one-vs-rest: learner k answers class k */" % len(states),
             "/* per learner: %s */" % ", ".join(f.lower() for f in fields),
             "#define KB_FW_STATES_INIT {%s}" % ", ".join("{%s}" % ", ".join(s) for s in states),
             "/* %d support-vector memories of %d bytes */" % (len(mems), len(mems[0]))]
    if any(any(mem) for mem in mems):
        lines.append("#define KB_FW_MEMS_INIT {%s}" % ", ".join(c_array(mem) for mem in mems))
    return lines
