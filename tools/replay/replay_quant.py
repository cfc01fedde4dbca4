# Quantize raw readings with a model file's own integer quantizer (docs/contract.md 1.1) on kbit,
# on every MicroPython runtime (tools/mpwasm/run.mjs, the unix port, the emulated Pico):
#
#   replay_quant.py MODEL ROWS
#
# ROWS holds one row of raw integer readings a line. The model is loaded with kbit.load (any
# type); each row goes into one preallocated array("i") and through m.quantize(raw, out) under
# micropython.heap_lock(), so the replay also proves that quantizing allocates nothing. Per row
# it prints the codes (assoc: its signed values). The first line says which path ran.
import sys
from array import array

import micropython

import kbit
from kbit import quant

model_path, rows_path = sys.argv[1:3]
m = kbit.load(model_path)
q = m.quantizer
if q is None:
    raise SystemExit("the model file has no integer quantizer")
print("path", "native" if getattr(quant, "native", False) else
      "bytecode: %s" % (getattr(quant, "NATIVE_WHY", None) or "no native quantizer"))


def replay(m, rows):
    n = q.n
    raw = array("i", bytes(4 * n))
    out = array("b", bytes(n)) if q.off else bytearray(n)
    quantize = m.quantize
    if m.pipeline is not None:  # a row is a window: its features, then the quantizer
        from kbit.pipeline import Window
        w = Window(m)
        n = w.size
        raw = array("h", bytes(2 * n))
        out = w.codes

        def quantize(window, codes):
            w.inputs(window)
    for line in rows:
        f = line.split()
        if not f:
            continue
        if len(f) != n:
            raise ValueError("row %r: expected %d readings" % (line, n))
        for j in range(n):
            raw[j] = int(f[j])
        micropython.heap_lock()
        try:
            quantize(raw, out)
        finally:
            micropython.heap_unlock()
        print(" ".join(str(c) for c in out))


with open(rows_path) as f:
    replay(m, f)
