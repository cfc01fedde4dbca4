"""A model's firmware on a simulated ATtiny2313 or Arduino Uno (the learners' here; the
predictors' and assoc's through their firmware modules fw_predict and fw_assoc).

For each model the firmware is built with the model's header (kilobit.runtimes.avr.firmware), then
every step
is streamed to the chip over its UART through kb_sim (kilobit.runtimes.avr.kb_sim), cycle-exact:

    info                              the chip's parameters must be the model file's
    per step  learn + dump-if-changed   or   query
    finally   dump, stop

and the replies become the Runtime tuples. A model that cannot fit the chip is refused with
RuntimeFailure("does not fit attiny2313: ...").
"""
from kilobit.core.errors import KilobitError
from kilobit.models import registry
from kilobit.runtimes.avr import firmware, fw_learner, kb_sim, protocol
from kilobit.runtimes.base import Runtime, RuntimeFailure


def session(model, frames, board, max_cycles=4 * 10 ** 9, timeout=900, checkpoint_every=None):
    """Build the firmware for `model` (bytes of a model file; with EEPROM checkpoints when
    checkpoint_every is given), send `frames` (bytes) to it on the simulated `board` and return
    (replies, SimResult, sizes). Frames should end with a stop frame. Raises RuntimeFailure (does
    not fit, crash, unparsable replies)."""
    try:
        elf, sizes = firmware.build(model, board, checkpoint_every=checkpoint_every)
    except firmware.FitError as e:
        raise RuntimeFailure(str(e)) from None
    except kb_sim.SimError as e:
        raise RuntimeFailure("firmware build failed: %s" % e) from None
    b = firmware.board(board)
    try:
        result = kb_sim.run(elf, b["mcu"], b["clock_hz"], bytes(frames), max_cycles=max_cycles,
                            timeout=timeout)
    except kb_sim.SimError as e:
        raise RuntimeFailure("%s: %s" % (board, e)) from None
    try:
        replies = protocol.parse_replies(result.output)
    except protocol.ProtocolError as e:
        raise RuntimeFailure("%s: %s" % (board, e)) from None
    return replies, result, sizes


def dialog(kind):
    """The firmware dialog module of a model kind: frames(m, steps) and read(take, m, steps,
    who, on_row=None) (kilobit.runtimes.avr.fw_learner, fw_predict, fw_assoc)."""
    from kilobit.runtimes.avr import fw_assoc, fw_learner, fw_predict
    return {"learner": fw_learner, "predictor": fw_predict, "classes": fw_assoc}[kind]


check_info = fw_learner.check_info  # noqa: F401 (callers of this module's name)


class AvrSimRuntime(Runtime):
    """After replay(), `last_result` is the kilobit.runtimes.avr.kb_sim.SimResult of the run
    (cycles, markers, stack) and `last_sizes` the firmware's sizes."""

    board = "?"
    last_result = last_sizes = None

    def missing(self):
        return kb_sim.missing()

    def replay(self, model, steps):
        """Any model with an AVR firmware: its kind's frames, all sent at once to the simulated
        chip (cycle-exact), the replies read back into rows."""
        try:
            spec = registry.of_file(model)
            m, _ = spec.load(model)
        except KilobitError as e:
            raise RuntimeFailure(str(e)) from None
        fw = dialog(spec.kind)
        frames = fw.frames(m, steps) + [protocol.stop_frame()]
        replies, self.last_result, self.last_sizes = session(model, b"".join(frames), self.board)
        take = protocol.taker(replies, self.name, RuntimeFailure)
        try:
            out = fw.read(take, m, steps, self.name)
        except KilobitError as e:
            raise RuntimeFailure(str(e)) from None
        take("S")
        return [tuple(r) for r in out]

    def replay_features(self, windows, axes, n, mask, p, bands):
        """A features golden file's windows, a frame each, on the chip (fw_features)."""
        from kilobit.runtimes.avr import fw_features
        try:
            rows, self.last_result, self.last_sizes = fw_features.replay(
                self.board, windows, axes, n, mask, p, bands, RuntimeFailure)
        except firmware.FitError as e:
            raise RuntimeFailure(str(e)) from None
        except kb_sim.SimError as e:
            raise RuntimeFailure("firmware build failed: %s" % e) from None
        return rows


class Attiny2313SimRuntime(AvrSimRuntime):
    name = "attiny2313-sim"
    board = "attiny2313"


class UnoSimRuntime(AvrSimRuntime):
    name = "uno-sim"
    board = "uno"
