"""A model's firmware on a simulated ATtiny2313 or Arduino Uno (the learners' here; the
predictors' and assoc's through their firmware modules fw_predict and fw_assoc).

For each model the firmware is built with the model's header (kilobit.runtimes.firmware), then every step
is streamed to the chip over its UART through kb_sim (kilobit.avrsim), cycle-exact:

    info                              the chip's parameters must be the model file's
    per step  learn + dump-if-changed   or   query
    finally   dump, stop

and the replies become the Runtime tuples. A model that cannot fit the chip is refused with
RuntimeFailure("does not fit attiny2313: ...").
"""
from kilobit.runtimes import avrsim, firmware, protocol
from kilobit.core.errors import KilobitError
from kilobit.models import registry
from kilobit.runtimes.host import load as host_load
from kilobit.runtimes import kinds
from kilobit.runtimes.base import Runtime, RuntimeFailure


def session(model, frames, board, max_cycles=4 * 10 ** 9, timeout=900):
    """Build the firmware for `model` (bytes of a model file), send `frames` (bytes) to it on the
    simulated `board` and return (replies, SimResult, sizes). Frames should end with a stop
    frame. Raises RuntimeFailure (does not fit, crash, unparsable replies)."""
    try:
        elf, sizes = firmware.build(model, board)
    except firmware.FitError as e:
        raise RuntimeFailure(str(e)) from None
    except avrsim.SimError as e:
        raise RuntimeFailure("firmware build failed: %s" % e) from None
    b = firmware.board(board)
    try:
        result = avrsim.run(elf, b["mcu"], b["clock_hz"], bytes(frames), max_cycles=max_cycles,
                            timeout=timeout)
    except avrsim.SimError as e:
        raise RuntimeFailure("%s: %s" % (board, e)) from None
    try:
        replies = protocol.parse_replies(result.output)
    except protocol.ProtocolError as e:
        raise RuntimeFailure("%s: %s" % (board, e)) from None
    return replies, result, sizes


def check_info(reply, m, board):
    """The info reply must describe model m exactly."""
    if reply.code != "I":
        raise RuntimeFailure("%s: expected an info reply, got %r" % (board, reply))
    info = reply.info()
    want = dict(registry.of_class(type(m)).firmware.info(m), version=protocol.VERSION)
    for k, v in want.items():
        if info[k] != v:
            raise RuntimeFailure("%s: info says %s = %r, model file %r" % (board, k, info[k], v))
    return info


def step_frames(steps):
    """Frames of a replay: each learn is followed by a dump-if-changed."""
    out = []
    for op, y, codes in steps:
        if op == "L":
            out.append(protocol.learn_frame(y, codes))
            out.append(protocol.dump_frame(if_changed=True))
        else:
            out.append(protocol.query_frame(codes))
    return out


class AvrSimRuntime(Runtime):
    """After replay(), `last_result` is the kilobit.avrsim.SimResult of the run (cycles, markers,
    stack) and `last_sizes` the firmware's sizes."""

    board = "?"
    last_result = last_sizes = None

    def missing(self):
        return avrsim.missing()

    def replay_predictor(self, model, steps):
        from kilobit.runtimes import fw_predict
        try:
            rows, self.last_result, self.last_sizes = fw_predict.replay(
                model, kinds.predictor_inputs(steps), self.board)
        except KilobitError as e:
            raise RuntimeFailure(str(e)) from None
        return [tuple(r) for r in rows]

    def replay_classes(self, model, steps):
        from kilobit.runtimes import fw_assoc
        try:
            out, self.last_result, self.last_sizes = fw_assoc.replay(model, steps, self.board)
        except KilobitError as e:
            raise RuntimeFailure(str(e)) from None
        return out

    def replay_learner(self, model, steps):
        try:
            m, _ = host_load(model)  # rkp or ckp, by the header's type
        except KilobitError as e:
            raise RuntimeFailure(str(e)) from None
        frames = [protocol.info_frame()] + step_frames(steps)
        frames += [protocol.dump_frame(), protocol.stop_frame()]
        replies, self.last_result, self.last_sizes = session(model, b"".join(frames), self.board)
        take = protocol.taker(replies, self.name, RuntimeFailure)

        check_info(take("I"), m, self.name)
        out = []
        for op, y, codes in steps:
            r = take(op)
            mem = take("D").memory if op == "L" else None
            out.append((r.score, r.pred, r.mistake, r.count, mem))
        final = take("D")
        take("S")
        if out:
            out[-1] = out[-1][:4] + (final.memory,)
        return out


class Attiny2313SimRuntime(AvrSimRuntime):
    name = "attiny2313-sim"
    board = "attiny2313"


class UnoSimRuntime(AvrSimRuntime):
    name = "uno-sim"
    board = "uno"
