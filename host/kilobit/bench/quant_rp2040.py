"""`python -m kilobit.bench.quant_rp2040 [N] [RUNTIME]`: m.quantize of N raw int16 readings
(default 48, a 3-axis sensor's 16 samples) on the emulated Pico (rp2040-sim, cycles at 125 MHz)
or on the unix port (kbit-unix, microseconds), native (_kb_quant.mpy) and bytecode, every call
under micropython.heap_lock(): tools/replay/time_quant.py on an RKP model of N inputs with an
integer quantizer (contract 1.1). Issue 28's target: <= 20 us native on the Pico for N = 48."""
import os
import struct
import sys
import tempfile
import zlib

from kilobit.core import paths
from kilobit.runtimes.base import RuntimeFailure
from kilobit.runtimes.micropython import kbit_unix, natmod, rp2040_sim

SCRIPT = paths.tools("replay", "time_quant.py")
PICO_HZ = 125_000_000


def model(n):
    """An RKP model of n inputs (4-bit codes) whose trailer holds an integer quantizer of
    12-bit ADC-like bounds, each feature its own."""
    from kilobit.models.rkp.model import RKPInt
    data = RKPInt("laplace", 4, n, 8, -2, 255, seed=0).to_bytes()
    lo = [-2048 + 10 * j for j in range(n)]
    hi = [2047 - 7 * j for j in range(n)]
    payload = data[12:-5] + b"\x02" + struct.pack("<%di" % (2 * n), *(lo + hi))
    body = struct.pack("<4sBBHI", b"KBIT", 1, data[5], 0, len(payload)) + payload
    return body + struct.pack("<I", zlib.crc32(body))


def measure(n=48, runtime="rp2040-sim", repeat=50):
    """The script's output lines (see tools/replay/time_quant.py)."""
    mod, arch = (rp2040_sim, "armv6m") if runtime == "rp2040-sim" else (kbit_unix, "x64")
    with tempfile.TemporaryDirectory(prefix="kb-quant-") as tmp:
        path = os.path.join(tmp, "q.kb")
        with open(path, "wb") as f:
            f.write(model(n))
        p = mod.run([SCRIPT, "/q.kb", str(repeat)],
                    files=[("/q.kb", path)] + natmod.files(arch))
    if p.returncode != 0:
        raise RuntimeFailure("time_quant.py on %s: %s" % (runtime, (p.stderr or p.stdout)[-2000:]))
    return p.stdout.splitlines()


#: how each timing of time_quant.py calls it, in its output's order
CALLS = ("m.quantize", "bound", "q.quantize")


def figures(lines):
    """measure()'s lines as {path: {call: (mean, median, max)}}, path "native" or "bytecode"
    (no "native" when the native module did not load: the line saying why is under "why")."""
    out = {}
    for line in lines:
        f = line.split()
        if f and f[0] in ("native", "bytecode"):
            out[f[0]] = {c: tuple(int(v) for v in f[3 + 5 * i:6 + 5 * i])
                         for i, c in enumerate(CALLS)}
        elif line.startswith("bytecode only: "):
            out["why"] = line[len("bytecode only: "):]
    return out


def main(argv):
    n = int(argv[0]) if argv else 48
    runtime = argv[1] if len(argv) > 1 else "rp2040-sim"
    lines = measure(n, runtime)
    print("\n".join(lines))
    if runtime == "rp2040-sim":
        for path, t in figures(lines).items():
            if path != "why":
                print("  %s, medians at 125 MHz: %s" % (path, ", ".join(
                    "%s %.1f us" % (c, 1e6 * t[c][1] / PICO_HZ) for c in CALLS)))


if __name__ == "__main__":
    main(sys.argv[1:])
