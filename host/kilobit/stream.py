"""`kilobit stream`: stream a data set through a board running a model's firmware.

    kilobit stream --board attiny2313 --port sim --data banana
    kilobit stream --board uno --port /dev/ttyACM0 --data banana --model m.kb

Every model type with an AVR firmware (the registry's spec.boards) streams, in its kind's frames
(kilobit.runtimes.avr.sim_runtimes.dialog): a learner (rkp, ckp) or class learner (assoc) gets the
training split as learn frames (the board predicts each example, then learns it: the running
accuracy is the prequential one), then the test split as query frames (test accuracy); a
predictor (bonsai, protonn) gets the test split, each input's features in update frames, then a
predict frame. Every reply is compared with the host integer reference fed the same steps from
the same model file (kilobit.runtimes.host): the board must agree bit for bit, its final memory
included.

--port sim runs the firmware on a simulated chip (kb_sim, cycle-exact), built for the model by
kilobit.runtimes.avr.firmware; any other --port is a serial port (pyserial URL or device), whose
board must already run the firmware of the same model (the info reply is checked first).

Progress goes to stderr (kilobit.core.progress: a bar on a terminal, a line per tenth in a log);
--plot FILE.png draws the learning curve: the running accuracy of the examples learnt so far and
of the last few, then the test accuracy (kilobit.plot).
"""
import sys

import numpy as np

from kilobit import data
from kilobit.core import progress
from kilobit.core.errors import KilobitError
from kilobit.core.quant import MinMaxScaler
from kilobit.models import registry
from kilobit.runtimes.avr import firmware, protocol
from kilobit.runtimes.avr.sim_runtimes import dialog
from kilobit.runtimes.base import PREDICTION
from kilobit.runtimes.boards.ports import SerialPort, SimPort
from kilobit.runtimes.host import HostRuntime


def _model(split, model_path, kernel, bits, budget, width, C, seed):
    """(spec, model bytes): a model file, or a fresh rkp model with the given parameters."""
    if model_path:
        return registry.read(model_path)
    from kilobit.models.rkp.model import RKPInt
    try:
        m = RKPInt(kernel, bits, split.dims, budget, width, C, seed=seed)
    except ValueError as e:
        raise KilobitError(str(e)) from None
    return registry.get("rkp"), m.to_bytes()


def steps_of(spec, m, scaler, split, limit=None):
    """(steps, labels of the steps): the data as the model's kind streams it. Rows become the
    device's inputs through the file's scaler (fitted on the training split when it has none)."""
    data.check_dims(split.X_train, m.dims, what=split.name, source="the model")
    sc = MinMaxScaler.stored_or_fitted(scaler, split.X_train)
    ute = spec.inputs(m, sc.transform(split.X_test))
    if spec.kind == "predictor":
        return [("P", None, [int(c) for c in u]) for u in ute], list(split.y_test)
    utr = spec.inputs(m, sc.transform(split.X_train))
    ytr = split.y_train
    if limit is not None:
        utr, ytr = utr[:limit], ytr[:limit]
    steps = [("L", int(y), [int(c) for c in u]) for u, y in zip(utr, ytr)]
    steps += [("Q", None, [int(c) for c in u]) for u in ute]
    return steps, list(ytr) + list(split.y_test)


def run(board, port, data_name, kernel="laplace", bits=4, budget=62, width=-6, C=255, seed=0,
        model=None, test=None, limit=None, baud=firmware.BAUD, out=None, err=None, quiet=False,
        plot=None):
    """Stream; print running accuracy and the final summary (no progress on stderr when quiet;
    the learning curve drawn into the PNG file `plot`, checked writable first). Returns 0 when
    the board agreed with the host reference on every frame, 1 otherwise."""
    out = out if out is not None else sys.stdout
    err = err if err is not None else sys.stderr
    if plot is not None:
        from kilobit.core import outfile
        outfile.check(plot, [p for p in (model, data_name, test) if p])
    b = firmware.board(board)
    from kilobit.core import pipeline
    peek, given = registry.read(model) if model else (registry.get("rkp"), None)
    pipe = pipeline.of(peek.load(given)[1]) if given else None  # its rows are windows
    split = data.load(data_name, seed=seed, test=test, binary=peek.kind == "learner",
                      pipeline=pipe)
    spec, blob = _model(split, model, kernel, bits, budget, width, C, seed)
    if b["name"] not in spec.boards:
        raise KilobitError("%s models have no firmware for %s (they run on %s)"
                           % (spec.name, b["name"], ", ".join(spec.boards)))
    ref, scaler = spec.load(blob)
    steps, labels = steps_of(spec, ref, scaler, split, limit)
    want = HostRuntime().replay(blob, steps)
    fw = dialog(spec.kind)
    sim = port == "sim"
    if sim:
        try:
            elf, sizes = firmware.build(blob, b["name"])
        except firmware.FitError as e:  # `kilobit fit`'s sentence, the model named first
            raise KilobitError("%s %s" % (model or "the %s model" % spec.name, e)) from None
        p = SimPort(elf, b["name"])
        where = "%s (simulated, %g MHz)" % (b["name"], b["clock_hz"] / 1e6)
    else:
        sizes = None
        p = SerialPort(port, baud=baud, reset_wait=2.0 if b["mcu"] == "atmega328p" else 0.0)
        where = "%s on %s" % (b["name"], port)
    frames = fw.frames(ref, steps) + ([protocol.stop_frame()] if sim else [])
    nlearn = sum(op == "L" for op, _, _ in steps)
    nquery = len(steps) - nlearn
    print("%s: %s, %s model (%s), %d learn frames then %d %s"
          % (where, split.name, spec.name, _shape(spec, ref), nlearn, nquery,
             "query frames" if spec.kind != "predictor" else "inputs (update + predict frames)"),
          file=out)
    bar = progress.bar(len(steps), "stream to %s" % b["name"], quiet=quiet, stream=err)
    tally = dict(right=0, mistakes=0, agree=0, tright=0, ref_right=0)
    curve = []  # (op, right) of every step: the learning curve of --plot
    every = max(1, nlearn // 10)
    k = PREDICTION[spec.kind]

    nf = 4 if spec.kind != "predictor" else None  # the fields (a learner's memory apart)

    def on_row(i, row):
        op, y = steps[i][0], labels[i]
        tally["agree"] += all(g is None or g == w for g, w in zip(row[:nf], want[i][:nf]))
        curve.append((op, int(row[k]) == int(y)))
        if op == "L":
            tally["right"] += int(row[k]) == int(y)
            tally["mistakes"] += int(row[k]) != int(y)
            bar.update(1, "learn %d/%d, running accuracy %.2f%%"
                       % (i + 1, nlearn, 100.0 * tally["right"] / (i + 1)))
            if (i + 1) % every == 0 or i + 1 == nlearn:
                bar.print("  %5d learnt: running accuracy %.2f%%, %d mistakes, %s"
                          % (i + 1, 100.0 * tally["right"] / (i + 1), tally["mistakes"],
                             "%d SVs" % row[3] if spec.kind == "learner" else
                             "%d classes, %d anchors" % (row[2], row[3])), file=out)
            return
        tally["tright"] += int(row[k]) == int(y)
        tally["ref_right"] += int(want[i][k]) == int(y)
        j = i + 1 - nlearn
        bar.update(1, "%s %d/%d, test accuracy %.2f%%"
                   % ("query" if op == "Q" else "input", j, nquery,
                      100.0 * tally["tright"] / j))

    if not sim and spec.learns_online:  # a real board must start from the file's state
        d = p.transact(protocol.dump_frame())
        mem = d.memory if spec.kind == "learner" else bytes(d.payload[3:])
        if d.code != "D" or mem != ref.memory():
            raise KilobitError("%s: the board's learner is not in the model file's state (or "
                               "runs a different model): reset the board" % where)
    replies = p.replies(frames) if sim else (p.transact(f) for f in frames)
    take = protocol.taker(replies, where)
    try:
        rows = fw.read(take, ref, steps, where, on_row=on_row)
    except KilobitError as e:
        raise KilobitError("the board runs a different model or answers wrongly (%s); build "
                           "its firmware and flash it with kilobit deploy" % e) from None
    finally:
        bar.close()
    if sim:
        take("S")
        for _ in replies:  # the simulation ends
            pass
    else:
        p.ser.close()
    result = p.result
    mem_same = True
    if rows and spec.kind != "predictor":
        mem_same = rows[-1][-1] == want[-1][-1]
    if nlearn:
        print("prequential accuracy (predict, then learn): %.2f%% over %d examples, %d mistakes"
              % (100.0 * tally["right"] / nlearn, nlearn, tally["mistakes"]), file=out)
    if nquery:
        print("test accuracy: %.2f%% over %d %s (host integer reference: %.2f%%)"
              % (100.0 * tally["tright"] / nquery, nquery,
                 "queries" if spec.kind != "predictor" else "inputs",
                 100.0 * tally["ref_right"] / nquery), file=out)
    print("agreement with the host integer reference: %d/%d frames identical (%.2f%%)%s"
          % (tally["agree"], len(steps), 100.0 * tally["agree"] / max(len(steps), 1),
             "" if spec.kind == "predictor" else
             ", final memory %s" % ("identical" if mem_same else "DIFFERENT")), file=out)
    if result is not None:
        _cycles(spec, fw, result, out)
        print("program %d B, static RAM %d B + measured stack %d B = %d B of %d B"
              % (sizes["flash"], sizes["ram"], result.stack_bytes,
                 sizes["ram"] + result.stack_bytes, b["ram_bytes"]), file=out)
    if plot is not None:
        from kilobit import plot as plots
        plots.learning_curve(plot, curve, "%s model on %s, %s: %s" % (
            spec.name, where, split.name, "predict, then learn" if nlearn else "predict"),
            reference=100.0 * tally["ref_right"] / nquery if nquery else None)
        print("learning curve -> %s" % plot, file=out)
    return 0 if tally["agree"] == len(steps) and mem_same else 1


def _shape(spec, m):
    if spec.name == "rkp":
        return "%s B=%d T=%d A=%d, %d/%d SVs" % (m.kernel, m.bits, m.budget, m.width, m.count,
                                                  m.budget)
    return "%d inputs, model file type %d" % (m.dims, spec.type_id)


def _cycles(spec, fw, result, out):
    mhz = result.report["freq"] / 1e6
    if spec.kind == "predictor":
        cyc = fw.cycles(result)
        if cyc:
            print("cycles per prediction (updates + predict): mean %.0f, max %d (%.3f ms at %g "
                  "MHz)" % (np.mean(cyc), max(cyc), np.mean(cyc) / mhz / 1000, mhz), file=out)
        return
    learn, query = result.between(*fw.MARK_LEARN), result.between(*fw.MARK_QUERY)
    if learn:
        print("cycles per learning step: mean %.0f, max %d (%.3f ms at %g MHz)"
              % (np.mean(learn), max(learn), np.mean(learn) / mhz / 1000, mhz), file=out)
    if query:
        print("cycles per query: mean %.0f, max %d" % (np.mean(query), max(query)), file=out)
