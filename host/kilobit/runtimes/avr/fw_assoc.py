"""The associative-memory firmware (firmware_c/avr/assoc_stream.c) on a simulated board: its
frames and a replay over the simulated UART (the header is kilobit.models.assoc.firmware's, the
build kilobit.runtimes.avr.firmware's).

    out, sim, sizes = fw_assoc.replay(model_bytes, steps, "uno")
"""
import struct

from kilobit.core.errors import KilobitError
from kilobit.models.assoc.model import AssocInt
from kilobit.runtimes.avr import kb_sim, protocol
from kilobit.runtimes.avr.firmware import board, build

INFO = struct.Struct("<BBBBBBBBBH")
INFO_FIELDS = ("version", "model_type", "approach", "bits", "P", "d", "cap", "kt", "R",
               "mem_bytes")


# ---- frames (docs/uart-protocol.md, "Associative memory firmware") ----

def learn_frame(y, values):
    return protocol.frame("L", bytes([int(y)]) + bytes(int(v) & 0xFF for v in values))


def query_frame(values):
    return protocol.frame("Q", bytes(int(v) & 0xFF for v in values))


def step_frame(op, y, values):
    """The frame of one step (learn or query)."""
    return learn_frame(y, values) if op == "L" else query_frame(values)


def step_reply(r):
    """(prediction, count, classes, anchors) of a learn/query reply."""
    p = r.payload
    if len(p) != 6:
        raise protocol.ProtocolError("step reply of %d bytes" % len(p))
    pred = p[1] if p[0] & 1 else -1
    return pred, p[2], p[3], p[4] | p[5] << 8


row = step_reply  # the fields of a step reply, in the golden file's order


def info(r):
    return dict(zip(INFO_FIELDS, INFO.unpack_from(r.payload)))


def dump_memory(r):
    """The memory of a dump reply, or None when the chip left it out (unchanged)."""
    return bytes(r.payload[3:]) if len(r.payload) > 3 else None


def session(model_bytes, frames, board_name="uno", max_cycles=4 * 10 ** 9, timeout=900):
    """Build, run `frames` on the simulated board; (replies, SimResult, sizes)."""
    elf, sizes = build(model_bytes, board_name)
    b = board(board_name)
    result = kb_sim.run(elf, b["mcu"], b["clock_hz"], bytes(frames), max_cycles=max_cycles,
                        timeout=timeout)
    return protocol.parse_replies(result.output), result, sizes


#: the cycle markers around a learning step and a query (assoc_stream.c)
MARK_LEARN, MARK_QUERY = (1, 2), (3, 4)


def frames(m, steps):
    """Every frame of a replay of `steps` on the firmware of model m (no stop frame)."""
    out = [protocol.info_frame()]
    for op, y, values in steps:
        if op == "L":
            out += [learn_frame(y, values), protocol.dump_frame(if_changed=True)]
        else:
            out.append(query_frame(values))
    return out + [protocol.dump_frame()]


def read(take, m, steps, who, on_row=None):
    """The runtime rows (prediction, count, classes, anchors, memory or None) of a replay's
    replies (kilobit.runtimes.avr.fw_learner.read's contract)."""
    got = info(take("I"))
    want = dict(version=protocol.VERSION, model_type=5, approach=m.approach, bits=m.bits, P=m.P,
                d=m.d, cap=m.cap, kt=m.kt, R=m.R, mem_bytes=len(m.memory()))
    for k, v in want.items():
        if got[k] != v:
            raise KilobitError("%s: info says %s = %r, model file %r" % (who, k, got[k], v))
    out = []
    for i, (op, _, _) in enumerate(steps):
        row = step_reply(take(op))
        mem = dump_memory(take("D")) if op == "L" else None
        out.append(row + (mem,))
        if on_row:
            on_row(i, out[-1])
    final = dump_memory(take("D"))
    if out:
        out[-1] = out[-1][:4] + (final,)
    return out


def replay(model_bytes, steps, board_name="uno"):
    """Replay golden steps on the simulated board: (runtime tuples, SimResult, sizes)."""
    m, _ = AssocInt.from_bytes(model_bytes)
    fr = frames(m, steps) + [protocol.stop_frame()]
    replies, result, sizes = session(model_bytes, b"".join(fr), board_name)
    take = protocol.taker(replies, board_name)
    out = read(take, m, steps, board_name)
    take("S")
    return out, result, sizes
