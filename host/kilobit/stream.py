"""`kilobit stream`: stream a data set through a board running the RKP firmware.

    kilobit stream --board attiny2313 --port sim --data banana
    kilobit stream --board uno --port /dev/ttyACM0 --data banana --model m.kb

The training split goes to the board as learn frames (the board predicts each example, then
learns it: the running accuracy is the prequential one), then the test split as query frames
(test accuracy). Every reply is compared with the host integer reference (kilobit.rkp.RKPInt)
fed the same frames from the same model file: the board must agree bit for bit.

--port sim runs the firmware on a simulated chip (kb_sim, cycle-exact), built for the model by
kilobit.firmware; any other --port is a serial port (pyserial URL or device), whose board must
already run the firmware of the same model (the info and dump replies are checked first).
"""
import sys

import numpy as np

from kilobit.runtimes import firmware, protocol
from kilobit import data
from kilobit.core.errors import KilobitError
from kilobit.core.quant import MinMaxScaler, quantize
from kilobit.models.rkp.model import RKPInt
from kilobit.runtimes.avr_sim import check_info
from kilobit.runtimes.ports import Progress, SerialPort, SimPort


def _model_and_codes(split, model_path, kernel, bits, budget, width, C, seed):
    """(model bytes, train codes, test codes): from a model file (its scaler when it has one) or
    a fresh model with the given parameters (scaler fitted on the training split)."""
    if model_path:
        try:
            with open(model_path, "rb") as f:
                blob = f.read()
        except OSError as e:
            raise KilobitError("cannot read model file %s: %s" % (model_path, e.strerror)) from None
        m, sc = RKPInt.from_bytes(blob)
        data.check_dims(split.X_train, m.dims, what=split.name, source=model_path)
        scaler = MinMaxScaler()
        if sc is not None:
            scaler.lo_, scaler.hi_ = sc
        else:
            scaler.fit(split.X_train)
    else:
        try:
            m = RKPInt(kernel, bits, split.dims, budget, width, C, seed=seed)
        except ValueError as e:
            raise KilobitError(str(e)) from None
        blob = m.to_bytes()
        scaler = MinMaxScaler().fit(split.X_train)
    return (blob, quantize(scaler.transform(split.X_train), m.bits),
            quantize(scaler.transform(split.X_test), m.bits))


def run(board, port, data_name, kernel="laplace", bits=4, budget=62, width=-6, C=255, seed=0,
        model=None, test=None, limit=None, baud=firmware.BAUD, out=None, err=None):
    """Stream; print running accuracy and the final summary. Returns 0 when the board agreed
    with the host reference on every frame, 1 otherwise."""
    out = out if out is not None else sys.stdout
    err = err if err is not None else sys.stderr
    split = data.load(data_name, seed=seed, test=test)
    blob, ctr, cte = _model_and_codes(split, model, kernel, bits, budget, width, C, seed)
    ytr, yte = split.y_train, split.y_test
    if limit is not None:
        ctr, ytr = ctr[:limit], ytr[:limit]
    ref, _ = RKPInt.from_bytes(blob)
    b = firmware.board(board)
    sim = port == "sim"

    if sim:
        elf, sizes = firmware.build(blob, b["name"])
        p = SimPort(elf, b["name"])
        where = "%s (simulated, %g MHz)" % (b["name"], b["clock_hz"] / 1e6)
    else:
        sizes = None
        p = SerialPort(port, baud=baud, reset_wait=2.0 if b["mcu"] == "atmega328p" else 0.0)
        where = "%s on %s" % (b["name"], port)

    def fail(text):
        raise KilobitError("%s: %s" % (where, text))

    def frames():
        yield protocol.info_frame()
        yield protocol.dump_frame()
        for u, y in zip(ctr, ytr):
            yield protocol.learn_frame(int(y), u)
        for u in cte:
            yield protocol.query_frame(u)
        yield protocol.dump_frame()
        if sim:
            yield protocol.stop_frame()

    replies = p.replies(frames())
    try:
        check_info(next(replies), ref, where)
    except KilobitError as e:
        fail("the board runs a different model (%s); build its firmware with "
             "kilobit.firmware.build and flash it" % e)
    d = next(replies)
    if (d.rng, d.count, d.memory) != (ref.rng.state, ref.count, ref.memory()):
        fail("the board's learner is not in the model file's state (count %d, file %d): "
             "reset the board" % (d.count, ref.count))

    print("%s: %s, %d learn frames then %d query frames; model %s B=%d T=%d A=%d, %d/%d SVs"
          % (where, split.name, len(ctr), len(cte), ref.kernel, ref.bits, ref.budget, ref.width,
             ref.count, ref.budget), file=out)
    bar = Progress(len(ctr) + len(cte), stream=err)
    frames_done = right = mistakes = agree = total = 0
    every = max(1, len(ctr) // 10)
    for i, (u, y) in enumerate(zip(ctr, ytr)):
        r = next(replies)
        if r.code != "L":
            fail("learn frame %d answered %r" % (i, r.error_text or r))
        s, mistake = ref.learn(u, int(y))
        same = (r.score, r.pred, r.mistake, r.count) == (s, int(s > 0), int(mistake), ref.count)
        agree += same
        total += 1
        right += r.pred == int(y)
        mistakes += r.mistake
        frames_done += 1
        bar.update(frames_done, "learn %d/%d, running accuracy %.2f%%"
                   % (i + 1, len(ctr), 100.0 * right / (i + 1)))
        if (i + 1) % every == 0 or i + 1 == len(ctr):
            bar.clear()
            print("  %5d learnt: running accuracy %.2f%%, %d mistakes, %d SVs"
                  % (i + 1, 100.0 * right / (i + 1), mistakes, r.count), file=out)
    preq = right / max(len(ctr), 1)
    tright = ref_right = 0
    for i, (u, y) in enumerate(zip(cte, yte)):
        r = next(replies)
        if r.code != "Q":
            fail("query frame %d answered %r" % (i, r.error_text or r))
        s = ref.score(u)
        agree += (r.score, r.pred, r.count) == (s, int(s > 0), ref.count)
        total += 1
        tright += r.pred == int(y)
        ref_right += int(s > 0) == int(y)
        frames_done += 1
        bar.update(frames_done, "query %d/%d, test accuracy %.2f%%"
                   % (i + 1, len(cte), 100.0 * tright / (i + 1)))
    d = next(replies)
    mem_same = (d.rng, d.count, d.memory) == (ref.rng.state, ref.count, ref.memory())
    for _ in replies:  # the stop reply; the simulation ends
        pass
    result = p.result
    bar.finish()

    print("prequential accuracy (predict, then learn): %.2f%% over %d examples, %d mistakes"
          % (100 * preq, len(ctr), mistakes), file=out)
    if len(cte):
        print("test accuracy: %.2f%% over %d queries (host integer reference: %.2f%%)"
              % (100.0 * tright / len(cte), len(cte), 100.0 * ref_right / len(cte)), file=out)
    print("agreement with the host integer reference: %d/%d frames identical (%.2f%%), final "
          "memory %s" % (agree, total, 100.0 * agree / max(total, 1),
                         "identical" if mem_same else "DIFFERENT"), file=out)
    if result is not None:
        learn, query = result.between(1, 2), result.between(3, 4)
        mhz = result.report["freq"] / 1e6
        if learn:
            print("cycles per learning step: mean %.0f, max %d (%.3f ms at %g MHz)"
                  % (np.mean(learn), max(learn), np.mean(learn) / mhz / 1000, mhz), file=out)
        if query:
            print("cycles per query: mean %.0f, max %d" % (np.mean(query), max(query)), file=out)
        print("program %d B, static RAM %d B + measured stack %d B = %d B of %d B"
              % (sizes["flash"], sizes["ram"], result.stack_bytes,
                 sizes["ram"] + result.stack_bytes, b["ram_bytes"]), file=out)
    return 0 if agree == total and mem_same else 1
