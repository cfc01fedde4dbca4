"""The learner firmwares' dialog (rkp_stream.c, ckp_stream.c; docs/uart-protocol.md): the frames
of a replay and how its replies become the runtime rows, whatever carries them (a simulated chip
all at once, a serial port frame by frame).

    info            the chip's parameters must be the model file's
    per step        learn + dump-if-changed, or query
    finally         dump
"""
from kilobit.models import registry
from kilobit.models.ovr import learners_of
from kilobit.runtimes.avr import protocol
from kilobit.runtimes.base import RuntimeFailure

#: the cycle markers around a learning step and a query (rkp_stream.c, ckp_stream.c)
MARK_LEARN, MARK_QUERY = (1, 2), (3, 4)


def check_info(reply, m, board):
    """The info reply must describe model m exactly."""
    if reply.code != "I":
        raise RuntimeFailure("%s: expected an info reply, got %r" % (board, reply))
    info = reply.info()
    spec = registry.of_class(type(learners_of(m)[0]))  # K classes: their learners' type
    want = dict(spec.firmware.info(m), version=protocol.VERSION)
    for k, v in want.items():
        if info[k] != v:
            raise RuntimeFailure("%s: info says %s = %r, model file %r" % (board, k, info[k], v))
    return info


def step_frame(op, y, codes):
    """The frame of one step (learn or query)."""
    return protocol.learn_frame(y, codes) if op == "L" else protocol.query_frame(codes)


def row(r):
    """The fields of a learn or query reply, in the golden file's order."""
    return (r.score, r.pred, r.mistake, r.count)


def dump_memory(r):
    """The memory of a dump reply, or None when the chip left it out (unchanged)."""
    return r.memory


def step_frames(steps):
    """Frames of the steps: each learn is followed by a dump-if-changed."""
    out = []
    for op, y, codes in steps:
        if op == "L":
            out.append(protocol.learn_frame(y, codes))
            out.append(protocol.dump_frame(if_changed=True))
        else:
            out.append(protocol.query_frame(codes))
    return out


def frames(m, steps):
    """Every frame of a replay of `steps` on the firmware of model m (no stop frame)."""
    return [protocol.info_frame()] + step_frames(steps) + [protocol.dump_frame()]


def read(take, m, steps, who, on_row=None):
    """The runtime rows (score, pred, mistake, count, memory or None) of a replay's replies;
    `take(code)` gives the next reply (kilobit.runtimes.avr.protocol.taker); on_row(i, row) is
    called as each row arrives."""
    check_info(take("I"), m, who)
    out = []
    for i, (op, _, _) in enumerate(steps):
        r = take(op)
        mem = take("D").memory if op == "L" else None
        out.append((r.score, r.pred, r.mistake, r.count, mem))
        if on_row:
            on_row(i, out[-1])
    final = take("D")
    if out:
        out[-1] = out[-1][:4] + (final.memory,)
    return out
