"""What the predictor benchmarks (bonsai, protonn, peers) measure of a model on the simulated
Uno: its firmware (firmware_c/avr/predict_stream.c, kilobit.runtimes.avr.fw_predict) fed the
test inputs over the UART, each input's update frames then a predict frame.

    r = uno.measure(model_bytes, inputs)      # inputs: lists of codes (the whole test split)

r: uno_n, identical (every reply equal to the host integer reference's fields, those the chip
keeps), cyc_mean and cyc_max (cycles of the update and predict handlers of one input, UART
excluded: markers 5-6 and 3-4), ms_mean and ms_max at the board's clock, flash, static (RAM of
the whole firmware), stack (the simulator's high-water mark), ram (static + stack), weights (the
non-zero weights the model stores) and per_weight (cycles mean / weights); or {"error": why}
when the firmware cannot be built or run here.
"""
import numpy as np

from kilobit.core.errors import KilobitError

CLOCK_HZ = 16_000_000
#: issue 22: no Uno row above this many cycles (mean) per stored non-zero weight
PER_WEIGHT_TARGET = 25


def measure(model_bytes, inputs):
    from kilobit.runtimes.avr import fw_predict
    try:
        spec, m, _ = fw_predict.load(model_bytes)
        rows, res, sizes = fw_predict.replay(model_bytes, inputs, "uno")
    except (KilobitError, OSError) as e:
        return {"error": "the Uno replay failed: %s" % e}
    cyc = fw_predict.cycles(res)
    want = m.field_rows(inputs)
    same = len(rows) == len(want) == len(cyc) and all(
        len(a) == len(b) and all(x is None or x == y for x, y in zip(a, b))
        for a, b in zip(rows, want))
    r = dict(uno_n=len(inputs), identical=same, cyc_mean=float(np.mean(cyc)),
             cyc_max=int(max(cyc)), flash=sizes["flash"], static=sizes["ram"],
             stack=res.stack_bytes, weights=m.stored_weights())
    r["ms_mean"] = 1000.0 * r["cyc_mean"] / CLOCK_HZ
    r["ms_max"] = 1000.0 * r["cyc_max"] / CLOCK_HZ
    r["ram"] = r["static"] + r["stack"]
    r["per_weight"] = r["cyc_mean"] / max(r["weights"], 1)
    return r


def per_weight_line(label, u):
    """The must-show line (claim, measured, passed) of issue 22's cycles per stored non-zero
    weight for the Uno figures u of measure()."""
    return ("%s on the Uno: <= %d cycles per stored non-zero weight (issue 22)"
            % (label, PER_WEIGHT_TARGET), u.get("error") or
            "%.1f (%.0f cycles, %d weights)" % (u["per_weight"], u["cyc_mean"], u["weights"]),
            "error" not in u and u["per_weight"] <= PER_WEIGHT_TARGET)
