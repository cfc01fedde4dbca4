"""`kilobit bench features` -> docs/benchmarks/features.md: a window's integer features
(docs/contract.md 12, 12.1, 13) on the boards, and kilobit's integer FFT beside emlearn's float
one on the same emulated chip (issue 29).

- **Emulated Pico, kbit** (rp2040-sim, 125 MHz, rp2040js cycles): Extractor.run of 3-axis
  windows natively (_kb_features.mpy, firmware_c/natmod/features.c) and in bytecode, the
  native calls under micropython.heap_lock(): the time domain of 3 x 100 samples (and
  features(window, axes, out), the plain function), the band energies of 64, 128 and 256-point
  FFTs (fftP:8 over 3 x P), and time + fft64:8 over 3 x 100 (tools/replay/time_features.py).
- **Simulated Uno** (ATmega328P, 16 MHz, simavr cycles): kb_features_extract in
  firmware_c/avr/features_stream.c (kilobit.runtimes.avr.fw_features), the same windows.
- **The FFT peer**: emlearn's eml_fft.h (PyPI emlearn 0.23.2's sdist, pinned by sha256 and
  unpacked under build/ by scripts/setup.sh; float32, soft float on the M0+), one axis of P =
  64, 128, 256, as a native module on the emulated Pico (tools/pico/eml_natmod, libgcc's
  soft-float helpers linked in) beside kbit's, and as bare C on the rp2040-c floor beside
  kb_fft.h's kb_fft_bands (tools/pico/floor/fft_peer.c).
- **Accuracy against numpy**: the band energies (and, with B = P/2, every bin's power) against
  numpy's float64 FFT of the same deviations x_i - m, scaled as contract 13 says
  (sum |D_k|^2 / (32 P^2)); emlearn's bins against numpy's, and its band powers the same way.

Every integer any board returns is checked against the host's reference
(kilobit.core.features.extract / fft_bands) before a figure is used: a mismatch is an error.
`--quick` (a test's smoke run) measures fewer cases, windows and repeats.
"""
import os
import shutil
import struct
import subprocess
import tempfile
import time

import numpy as np

from kilobit.core import paths
from kilobit.core.errors import KilobitError

HELP = "window features: kbit native/bytecode on the emulated Pico, C on the Uno, FFT vs emlearn"

PICO_HZ = 125_000_000
UNO_HZ = 16_000_000
TARGET_US = 300  # issue 29: 3 x 100 time domain, native on the emulated Pico
PEER_RATIO = 1.5  # issue 29: a 128-point FFT within 1.5x of emlearn's, or faster
SCRIPT = paths.tools("replay", "time_features.py")
PEER_SOURCE = paths.tools("pico", "floor", "fft_peer.c")
EMLEARN = paths.fetched("emlearn-0.23.2")
BUILD = paths.cache("bench-features")
SEED = 29

#: (label, axes, n, selection text) of the board rows
CASES = (("time 3x100", 3, 100, "time"),
         ("fft64:8 3x64", 3, 64, "fft64:8"),
         ("fft128:8 3x128", 3, 128, "fft128:8"),
         ("fft256:8 3x256", 3, 256, "fft256:8"),
         ("time,fft64:8 3x100", 3, 100, "time,fft64:8"))
QUICK_CASES = CASES[:2]
PEER_P = (64, 128, 256)
BANDS = 8


def windows(rng, axes, n, count):
    """count windows of axes x n int16 readings, interleaved, like an accelerometer's: per axis
    an offset (gravity), one or two sinusoids of random frequency and amplitude, and noise."""
    t = np.arange(n)
    out = np.empty((count, n, axes), dtype=np.int64)
    for c in range(count):
        for a in range(axes):
            x = rng.integers(-2000, 2000) + rng.normal(0, rng.choice([3, 40, 400]), n)
            for _ in range(int(rng.integers(1, 3))):
                f = rng.uniform(0.5, n / 2.0 - 0.5) / n
                x = x + rng.uniform(50, 6000) * np.sin(2 * np.pi * f * t + rng.uniform(0, 6.3))
            out[c, :, a] = np.clip(np.round(x), -32768, 32767)
    return out.reshape(count, n * axes)


def _spec(text):
    from kilobit.core.features import Spec
    return Spec.parse(text)


def _want(w, axes, text):
    from kilobit.core.features import extract
    return [[int(v) for v in row] for row in extract(np.array(w), axes, _spec(text))]


# ---- the emulated Pico, kbit native and bytecode -----------------------------------------

def pico(cases, peers, repeat, rng):
    """{label: {call: {path: (mean, median, max)}}} in cycles: every case's Extractor.run (and
    features for the time domain), natively and in bytecode, and for each P of `peers` the label
    "peer P" with kbit's native run and emlearn's native module ("kbit", "eml": {"native": ...}).
    Every case's features are checked against the host's, emlearn's band powers against
    numpy's."""
    from kilobit.runtimes.micropython import natmod, rp2040_sim
    miss = rp2040_sim.missing() or natmod.missing("armv6m")
    if miss:
        raise KilobitError("bench features needs the emulated Pico: missing %s" % miss)
    rows, want = [], {}
    for label, axes, n, text in cases:
        s = _spec(text)
        w = windows(rng, axes, n, 1)[0].tolist()
        rows.append((label, axes, n, s.mask, s.p, s.bands, w))
        want[label] = _want([w], axes, text)[0]
    peer_rows = []
    for P in peers:
        w = windows(rng, 1, P, 1).tolist()
        p = P.bit_length() - 1
        m, tab = eml_tables(w, p)
        peer_rows.append((P, BANDS, w[0], int(m[0]), tab))
        want["peer %d kbit" % P] = fft_bands_of(w, p)[0]
        want["peer %d eml" % P] = reference(w, p, BANDS)[1][0] * (32.0 * P * P)
    files = natmod.files("armv6m")
    if peers:
        files.append(("/lib/_eml_fft.mpy", build_eml_natmod()))
    with tempfile.TemporaryDirectory(prefix="kb-bench-features-") as tmp:
        cases_py = os.path.join(tmp, "bench_cases.py")
        with open(cases_py, "w") as f:
            f.write("CASES = %r\nPEERS = %r\n" % (rows, peer_rows))
        p = rp2040_sim.run([SCRIPT, str(repeat)], files=files + [("/bench_cases.py", cases_py)],
                           timeout=1800)
    if p.returncode != 0:
        raise KilobitError("time_features.py on rp2040-sim: %s" % (p.stderr or p.stdout)[-2000:])
    res = parse_pico(p.stdout, want)
    if any("peer %d" % P not in res for P in peers):
        raise KilobitError("emlearn's native module did not run on rp2040-sim")
    return res


def fft_bands_of(ws, p):
    from kilobit.core.features import fft_bands
    return fft_bands(np.array(ws), 1, p, BANDS).tolist()


def parse_pico(stdout, want):
    """time_features.py's output as pico() returns it; KilobitError when the board's features
    are not the host's (want: {label: features}; for emlearn's "peer P eml", numpy's band
    powers, which its float32 ones must match within 1e-4) or kbit did not run natively."""
    lines = stdout.splitlines()
    if not lines or lines[0] != "path native":
        raise KilobitError("kbit on rp2040-sim did not run natively: %s" % (lines[:1],))
    res = {}
    for line in lines[1:]:
        f = line.split()
        label = " ".join(f[:2])
        call, what = f[2], f[3]
        if what == "out":
            got = [int(v) for v in f[4:]]
            if label.startswith("peer ") and call == "eml":
                ok = np.allclose(np.array(got, dtype="<i4").view("<f4"), want[label + " eml"],
                                 rtol=1e-4, atol=0)
            else:
                ok = got == want[label + " kbit" if label.startswith("peer ") else label]
            if not ok:
                raise KilobitError("%s %s on rp2040-sim: features differ from the host's"
                                   % (label, call))
        elif label.startswith("peer "):
            res.setdefault(label, {})[call] = {"native": tuple(int(v) for v in f[4:7])}
        else:
            res.setdefault(label, {}).setdefault(call, {})[what] = tuple(int(v) for v in f[5:8])
    return res


def build_eml_natmod():
    """emlearn's FFT as an armv6m native module (tools/pico/eml_natmod): its path."""
    import sys
    r = subprocess.run(["make", "-s", "-C", paths.tools("pico", "eml_natmod"),
                        "PYTHON=" + sys.executable, "OUT=" + BUILD, "EMLEARN=" + EMLEARN,
                        "MPY_DIR=" + paths.fetched("micropython-1.23")], stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, universal_newlines=True)
    if r.returncode != 0:
        raise KilobitError("building emlearn's native module failed:\n%s" % r.stdout[-3000:])
    return os.path.join(BUILD, "_eml_fft.mpy")


# ---- the simulated Uno ----------------------------------------------------------------------

def uno(cases, rng):
    """{label: cycles of kb_features_extract, or the reason it does not run there}."""
    from kilobit.runtimes.avr import firmware, fw_features, kb_sim
    miss = kb_sim.missing()
    if miss:
        raise KilobitError("bench features needs the simulated Uno: missing %s" % miss)
    res = {}
    for label, axes, n, text in cases:
        s = _spec(text)
        w = windows(rng, axes, n, 2).tolist()
        try:
            rows, result, _ = fw_features.replay("uno", w, axes, n, s.mask, s.p, s.bands,
                                                 KilobitError)
        except firmware.FitError as e:
            res[label] = str(e)
            continue
        if rows != _want(w, axes, text):
            raise KilobitError("%s on the simulated Uno: features differ from the host's" % label)
        cycles = result.between(1, 2)
        res[label] = max(cycles)
    return res


# ---- the FFT peer: emlearn and kb_fft_bands, bare C on the emulated RP2040 -----------------

FLOOR_FLAGS = ["-mcpu=cortex-m0plus", "-mthumb", "-Os", "-std=c99", "-Wall", "-Wextra",
               "-Werror", "-pedantic", "-Wconversion", "-Wsign-conversion", "-Wshadow",
               "-Wstrict-prototypes", "-Wmissing-prototypes", "-Wcast-qual",
               "-Wdouble-promotion", "-ffreestanding", "-fno-tree-loop-distribute-patterns",
               "-ffunction-sections", "-fdata-sections"]


def peer_missing():
    """None when the peer program can be built and run here, else what is missing."""
    from kilobit.runtimes.c import rp2040_floor
    miss = rp2040_floor.missing()
    if miss:
        return miss
    if not os.path.exists(os.path.join(EMLEARN, "eml_fft.h")):
        return ("emlearn 0.23.2's headers under %s (bash scripts/setup.sh downloads them, "
                "pinned by sha256)" % paths.shown(EMLEARN))
    return None


def build_peer():
    """The image of tools/pico/floor/fft_peer.c (floor.c, tools/pico's start-up, linker script
    and SIO divider, as the floor's Makefile links its programs; libgcc's soft float allowed)."""
    miss = peer_missing()
    if miss:
        raise KilobitError("bench features' FFT peer: missing %s" % miss)
    pico = paths.tools("pico")
    os.makedirs(BUILD, exist_ok=True)
    elf, image = os.path.join(BUILD, "fft_peer.elf"), os.path.join(BUILD, "fft_peer.bin")
    cmd = (["arm-none-eabi-gcc"] + FLOOR_FLAGS
           + ["-I" + pico, "-I" + paths.firmware_c(), "-I" + EMLEARN,
              "-nostdlib", "-T", os.path.join(pico, "pico.ld"), "-Wl,--gc-sections",
              "-o", elf, PEER_SOURCE, os.path.join(pico, "floor", "floor.c"),
              os.path.join(pico, "startup.c"), os.path.join(pico, "divider.S"), "-lgcc"])
    for c in (cmd, ["arm-none-eabi-objcopy", "-O", "binary", elf, image]):
        r = subprocess.run(c, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           universal_newlines=True)
        if r.returncode != 0:
            raise KilobitError("building fft_peer.c failed:\n%s" % r.stdout[-3000:])
    return image


def eml_tables(ws, p):
    """(means, tables): the windows' rounded means (contract 12) and emlearn's twiddle tables
    as eml_fft_fill makes them, float32 cos then sin of 2 pi i / P, i < P/2, as bytes."""
    from kilobit.core.features import window_features
    P = 1 << p
    i = np.arange(P // 2)
    tab = np.concatenate([np.cos(2 * np.pi * i / P), np.sin(2 * np.pi * i / P)]).astype("<f4")
    return window_features(np.array(ws), 1, names=("mean",))[:, 0], tab.tobytes()


def peer_input(p, bands, ws):
    """fft_peer.c's input: p, B, count, emlearn's tables, the windows, their rounded means."""
    means, tab = eml_tables(ws, p)
    return (struct.pack("<3I", p, bands, len(ws)) + tab
            + np.array(ws, dtype="<i2").tobytes() + means.astype("<i2").tobytes())


def run_peer(image, p, bands, ws):
    """(ours, eml_bins, times): per window kb_fft_bands' B energies, emlearn's P/2+1 complex
    bins, and cycles (ours, emlearn's transform, emlearn to bands)."""
    node = shutil.which("node")
    with tempfile.TemporaryDirectory(prefix="kb-fft-peer-") as tmp:
        inp, times = os.path.join(tmp, "in.bin"), os.path.join(tmp, "times.txt")
        with open(inp, "wb") as f:
            f.write(peer_input(p, bands, ws))
        r = subprocess.run([node, paths.tools("pico", "floor", "run.mjs"),
                            "--times", times, image, inp], input=b"", stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, timeout=1800)
        if r.returncode != 0:
            raise KilobitError("fft_peer on the emulated RP2040: %s"
                               % r.stderr.decode(errors="replace")[-2000:])
        with open(times) as f:
            tl = f.read().split("\n")
    over = int(tl[0].split()[1])
    counts = [int(v) - over for v in tl[1:] if v.strip()]
    ours, bins = [], []
    for line in r.stdout.decode().splitlines():
        f = line.split()
        if f[0] == "K":
            ours.append([int(v) for v in f[1:]])
        elif f[0] == "E":
            v = np.frombuffer(bytes.fromhex("".join(f[1:])), dtype=">f4").astype(np.float64)
            bins.append(v[0::2] + 1j * v[1::2])
    if len(ours) != len(ws) or len(bins) != len(ws) or len(counts) != 3 * len(ws):
        raise KilobitError("fft_peer: %d windows, %d/%d results, %d times"
                           % (len(ws), len(ours), len(bins), len(counts)))
    return ours, bins, [counts[3 * i:3 * i + 3] for i in range(len(ws))]


def reference(ws, p, bands):
    """numpy's float64 view of contract 13: the DFT D of the deviations d = x - m, and the band
    energies the contract approximates, sum |D_k|^2 / (32 P^2) over each band's bins."""
    from kilobit.core.features import window_features
    P = 1 << p
    x = np.array(ws, dtype=np.float64)
    m = window_features(np.array(ws), 1, names=("mean",))[:, :1]
    D = np.fft.fft(x - m, axis=1)
    power = np.abs(D[:, 1:P // 2 + 1]) ** 2
    E = power.reshape(len(ws), bands, -1).sum(axis=2) / (32.0 * P * P)
    return D, E


def rel(a, b):
    """Per row, ||a - b|| / ||b|| (0 where b is all 0 and a equals it)."""
    a, b = np.asarray(a, dtype=np.complex128), np.asarray(b, dtype=np.complex128)
    num = np.linalg.norm(a - b, axis=1)
    den = np.linalg.norm(b, axis=1)
    return np.where(den > 0, num / np.where(den > 0, den, 1), np.where(num > 0, np.inf, 0.0))


def peer(sizes, count, rng):
    """{P: figures}: cycles (median over windows) of kb_fft_bands and emlearn, and the relative
    errors against numpy (median and max over windows): our band energies (B = 8) and bins'
    powers (B = P/2, computed by the host's bit-exact reference), emlearn's bins and band
    powers."""
    from kilobit.core.features import fft_bands
    image = build_peer()
    res = {}
    for P in sizes:
        p = P.bit_length() - 1
        ws = windows(rng, 1, P, count).tolist()
        ours, bins, cyc = run_peer(image, p, BANDS, ws)
        if ours != fft_bands(np.array(ws), 1, p, BANDS).tolist():
            raise KilobitError("kb_fft_bands on the emulated RP2040 differs from the host's")
        D, E = reference(ws, p, BANDS)
        _, Ebin = reference(ws, p, P // 2)
        ours_bins = fft_bands(np.array(ws), 1, p, P // 2)
        eml = np.array(bins)
        eml_bands = (np.abs(eml[:, 1:]) ** 2).reshape(count, BANDS, -1).sum(axis=2) \
            / (32.0 * P * P)
        c = np.array(cyc)
        res[P] = {
            "ours": int(np.median(c[:, 0])), "eml_fft": int(np.median(c[:, 1])),
            "eml_bands": int(np.median(c[:, 2])), "windows": count,
            "err_ours_bands": rel(ours, E), "err_ours_bins": rel(ours_bins, Ebin),
            "worst_peak": float(np.max(E[int(np.argmax(rel(ours, E)))])),
            "err_eml_bins": rel(eml, D[:, :P // 2 + 1]), "err_eml_bands": rel(eml_bands, E)}
    return res


# ---- the page ------------------------------------------------------------------------------

def _us(cycles, hz):
    return 1e6 * cycles / hz


def _pct(v):
    return "%.2g%%" % (100 * v) if np.isfinite(v) else "inf"


def report(pic, avr, fft, quick, seconds, repeat, acc=None):
    from kilobit.bench import must_show_lines, run_lines
    L = ["# Window features on the boards (issue 29)", ""]
    L += run_lines(seconds)
    if quick:
        L += ["**--quick: a smoke run (fewer cases, windows and repeats); not the committed "
              "figures.**", ""]
    L += ["Produced by `kilobit bench features` (kilobit.bench.features). The integers are "
          "contract 12, 12.1 and 13's; every board's were checked equal to the host's "
          "reference before a figure was kept. Cycle counts are the emulators' (rp2040js for "
          "the Pico: flash reads cost 1 cycle, no XIP cache misses; simavr for the Uno), not "
          "silicon measurements. Windows: seeded accelerometer-like signals (offset, one or "
          "two sinusoids, noise), seed %d." % SEED, ""]
    L += ["## Emulated Pico (RP2040, 125 MHz): kbit native and bytecode", "",
          "Extractor.run of one window (median of %d calls; the native ones under "
          "micropython.heap_lock()); `features` is kbit.features.features(window, axes, out). "
          "Native: _kb_features.mpy (firmware_c/natmod/features.c over kb_features.h and "
          "kb_fft.h, kern_features.c at -O2 with unrolled loops)." % repeat, "",
          "| selection, window | call | native cycles | native us | bytecode cycles | "
          "bytecode us | speed-up |", "|---|---|---|---|---|---|---|"]
    for label in [k for k in pic if not k.startswith("peer ")]:
        for call, t in pic[label].items():
            nat, byt = t["native"][1], t["bytecode"][1]
            L.append("| %s | %s | %d | %.1f | %d | %.0f | %.0fx |"
                     % (label, call, nat, _us(nat, PICO_HZ), byt, _us(byt, PICO_HZ),
                        byt / max(nat, 1)))
    L += ["", "## Simulated Uno (ATmega328P, 16 MHz): kb_features_extract", "",
          "firmware_c/avr/features_stream.c, -Os (the largest of two windows' counts).", "",
          "| selection, window | cycles | ms |", "|---|---|---|"]
    for label, v in avr.items():
        if isinstance(v, str):
            L.append("| %s | does not run: %s | - |" % (label, v))
        else:
            L.append("| %s | %d | %.2f |" % (label, v, 1e3 * v / UNO_HZ))
    L += ["", "## The FFT beside emlearn's, native modules on the emulated Pico", "",
          "One axis of P readings, %d bands, both called from MicroPython under "
          "micropython.heap_lock() (median of %d calls). kilobit: Extractor(1, P, 0, p, %d).run "
          "(_kb_features: the axis's time-domain features, for its mean, then kb_fft_bands). "
          "emlearn 0.23.2: _eml_fft.bands (tools/pico/eml_natmod: the deviations as float32, "
          "eml_fft_forward, the band powers; soft float from the toolchain's libgcc, linked into "
          "the module since MicroPython 1.23's dynruntime.mk links none; its twiddle tables made "
          "by the host as eml_fft_fill makes them). emlearn's band powers were checked against "
          "numpy's within 1e-4." % (BANDS, repeat, BANDS), "",
          "| P | kilobit cycles | us | emlearn cycles | us | kilobit / emlearn |",
          "|---|---|---|---|---|---|"]
    for label in [k for k in pic if k.startswith("peer ")]:
        k, e = pic[label]["kbit"]["native"][1], pic[label]["eml"]["native"][1]
        L.append("| %s | %d | %.0f | %d | %.0f | %.2f |"
                 % (label[5:], k, _us(k, PICO_HZ), e, _us(e, PICO_HZ), k / e))
    L += ["", "## The FFT beside emlearn's, bare C on the emulated RP2040", "",
          "tools/pico/floor/fft_peer.c, arm-none-eabi-gcc -Os for the Cortex-M0+, on the "
          "rp2040-c floor (no MicroPython). kilobit: kb_fft_bands of one axis (the deviations "
          "normalised, bit-reversed, the integer FFT, %d band energies). emlearn 0.23.2: "
          "eml_fft_forward on float32 (soft float), its tables made beforehand as "
          "eml_fft_fill makes them; `to bands` adds the float copy of the deviations and the "
          "band powers, the same work as ours. Median over %d windows."
          % (BANDS, next(iter(fft.values()))["windows"] if fft else 0), "",
          "| P | kilobit cycles | us | emlearn FFT cycles | us | emlearn to bands cycles | "
          "kilobit / emlearn FFT |", "|---|---|---|---|---|---|---|"]
    for P, f in fft.items():
        L.append("| %d | %d | %.0f | %d | %.0f | %d | %.2f |"
                 % (P, f["ours"], _us(f["ours"], PICO_HZ), f["eml_fft"],
                    _us(f["eml_fft"], PICO_HZ), f["eml_bands"], f["ours"] / f["eml_fft"]))
    L += ["", "## Accuracy against numpy's float64 FFT", "",
          "Relative error ||a - b|| / ||b|| per window (median, max over the windows), b from "
          "numpy: the band energies sum |D_k|^2 / (32 P^2) of the deviations' DFT D (contract "
          "13's scale); `bins` is the same with one bin a band (B = P/2, kilobit's from the "
          "host's bit-exact reference). emlearn's bins are compared with D itself, its band "
          "powers scaled alike.", "",
          "| P | kilobit %d bands | kilobit bins' power | emlearn bins | emlearn %d bands | "
          "largest band of kilobit's worst window |" % (BANDS, BANDS), "|---|---|---|---|---|---|"]
    for P, f in fft.items():
        cells = ["%s / %s" % (_pct(np.median(f[k])), _pct(np.max(f[k])))
                 for k in ("err_ours_bands", "err_ours_bins", "err_eml_bins", "err_eml_bands")]
        L.append("| %d | %s | %.1f |" % (P, " | ".join(cells), f["worst_peak"]))
    L += ["", "kilobit's band energies are integers (contract 13: about a^2/128 for a sinusoid of "
          "amplitude a), each rounded to the nearest unit: in a window of small amplitude the "
          "energies are a few units and that rounding (up to half a unit) dominates the "
          "relative error. The last column is numpy's largest band energy (in those units) in "
          "the window of each P whose relative error is the largest.", ""]
    claims = []
    t = pic.get("time 3x100", {}).get("run")
    if t:
        us = _us(t["native"][1], PICO_HZ)
        claims.append(("3 x 100 time-domain features <= %d us native on the emulated Pico"
                       % TARGET_US, "%.1f us (%d cycles)" % (us, t["native"][1]),
                       us <= TARGET_US))
    nat = pic.get("peer 128")
    if nat:
        k, e = nat["kbit"]["native"][1], nat["eml"]["native"][1]
        claims.append(("128-point FFT within %.1fx of emlearn's on the same emulated chip, or "
                       "faster (native modules)" % PEER_RATIO,
                       "%.2fx (%d vs %d cycles)" % (k / e, k, e), k / e <= PEER_RATIO))
    f = fft.get(128)
    if f:
        ratio = f["ours"] / f["eml_fft"]
        claims.append(("the same, bare C on the rp2040-c floor (kb_fft_bands vs "
                       "eml_fft_forward alone)",
                       "%.2fx (%d vs %d cycles)" % (ratio, f["ours"], f["eml_fft"]),
                       ratio <= PEER_RATIO))
        claims.append(("its accuracy against numpy stated",
                       "band energies: median %s, max %s relative error"
                       % (_pct(np.median(f["err_ours_bands"])), _pct(np.max(f["err_ours_bands"]))),
                       True))
    if acc:
        L += accuracy_lines(acc)
    L += must_show_lines(claims)
    return "\n".join(L)


#: (row label, data set, --window/--axes/--features args or None) of the accuracy table
ACCURACY_SETS = [
    ("host's 30 (mean, std, min, max, mean abs diff of acc + gyro, 2 s windows, float)",
     "basicmotions", None),
    ("board: time (7 per axis, 3 acc axes, 5 s windows)", "basicmotions-raw", "time"),
    ("board: time,fft32:4", "basicmotions-raw", "time,fft32:4"),
    ("board: the example's mean,mad,min,max,energy,diff,fft32:4", "basicmotions-raw",
     "mean,mad,min,max,energy,diff,fft32:4"),
    ("hand-made 6 of examples/basicmotions_online.py (log codes of mean abs a and of abs diff)",
     "basicmotions-raw", "hand6"),
]
ACCURACY_MODELS = ("rkp", "protonn")


def hand6(W):
    """examples/basicmotions_online.py's six features of windows W (rows of 3*N interleaved
    milli-units): per axis twice the bit length (at most 15) of the mean |a| and of the mean
    |a(t) - a(t-1)|, the readings first in its 0.25 units."""
    X = np.round(np.asarray(W, dtype=np.float64).reshape(len(W), -1, 3) / 250.0)
    X = np.clip(X, -127, 127).astype(np.int64)

    def code(v):
        return np.minimum(15, 2 * np.ceil(np.log2(v + 1)).astype(np.int64))

    a = np.abs(X).sum(axis=1) // X.shape[1]
    j = np.abs(np.diff(X, axis=1)).sum(axis=1) // (X.shape[1] - 1)
    return np.concatenate([code(a), code(j)], axis=1)


def accuracy(tmp, quick=False):
    """{(row, model): (test accuracy, inputs)}: each feature set of ACCURACY_SETS trained with
    `kilobit train MODEL` (defaults, seed 0) and its test split's accuracy."""
    import os
    import subprocess
    import sys

    from kilobit import data
    out = {}
    for label, name, feats in ACCURACY_SETS[:3] if quick else ACCURACY_SETS:
        args = ["--data", name]
        if feats == "hand6":  # a CSV of the six codes of every window, train then test
            s = data.load(name)
            path = os.path.join(tmp, "hand6.csv")
            test = os.path.join(tmp, "hand6-test.csv")
            for X, y, f in ((s.X_train, s.y_train, path), (s.X_test, s.y_test, test)):
                np.savetxt(f, np.column_stack([hand6(X), y]), fmt="%d", delimiter=",")
            args = ["--data", path, "--test", test]
        elif feats:
            args += ["--window", str(data.RAW_WINDOW), "--axes", str(data.RAW_AXES),
                     "--features", feats]
        for model in ACCURACY_MODELS:  # the command a user types (a bench is below the CLI)
            r = subprocess.run([sys.executable, "-m", "kilobit.cli", "train", model] + args
                               + ["--quiet", "-o", os.path.join(tmp, "m.kb")],
                               capture_output=True, text=True)
            if r.returncode != 0:
                raise KilobitError("training %s on %s failed: %s" % (model, label,
                                                                     r.stderr.strip()))
            acc = float(r.stdout.rsplit("integer model", 1)[1].split()[-1])
            from kilobit.models import registry
            spec, blob = registry.read(os.path.join(tmp, "m.kb"))
            out[label, model] = (acc, spec.load(blob)[0].dims)
    return out


def accuracy_lines(acc):
    L = ["## Accuracy on BasicMotions: the board's features against the host's and the "
         "hand-made ones", "",
         "Test accuracy of the integer model, `kilobit train MODEL` with its defaults (seed 0), "
         "the fixed 40 / 40 recordings' split. The board's features are computed from "
         "`basicmotions-raw` (3 acceleration axes in milli-units, windows of 50 samples, hop "
         "10: 240 / 240) exactly as kbit computes them on the board; the host's 30 come from "
         "2 s windows of all six channels (720 rows), so the rows differ as well as the "
         "features. The hand-made 6 are the example's codes on the same 5 s windows.", "",
         "| features | inputs | " + " | ".join(ACCURACY_MODELS) + " |",
         "|---|---|" + "---|" * len(ACCURACY_MODELS)]
    for label, _, _ in ACCURACY_SETS:
        got = [acc.get((label, m)) for m in ACCURACY_MODELS]
        if not any(got):
            continue
        L.append("| %s | %d | %s |" % (label, next(g for g in got if g)[1], " | ".join(
            "%.4f" % g[0] if g else "-" for g in got)))
    return L + [""]


def missing():
    """None when every part of the bench can run here, else what is missing (one line)."""
    from kilobit.runtimes.avr import kb_sim
    from kilobit.runtimes.micropython import natmod, rp2040_sim
    return (rp2040_sim.missing() or natmod.missing("armv6m") or kb_sim.missing()
            or peer_missing())


def run(out, quick=False, progress=print):
    miss = missing()  # before minutes of measuring
    if miss:
        raise KilobitError("kilobit bench features needs %s" % miss)
    t0 = time.time()
    rng = np.random.default_rng(SEED)
    repeat = 2 if quick else 5
    progress("emulated Pico: kbit native and bytecode ...")
    pic = pico(QUICK_CASES if quick else CASES, (64, 128) if quick else PEER_P, repeat, rng)
    progress("simulated Uno ...")
    avr = uno(QUICK_CASES if quick else CASES, rng)
    progress("FFT peer: emlearn and kb_fft_bands on the emulated RP2040 ...")
    fft = peer((64, 128) if quick else PEER_P, 3 if quick else 20, rng)
    progress("accuracy on BasicMotions ...")
    import tempfile
    with tempfile.TemporaryDirectory(prefix="kilobit-bench-") as tmp:
        acc = accuracy(tmp, quick)
    from kilobit.bench import write_report
    write_report(out, report(pic, avr, fft, quick, time.time() - t0, repeat, acc))
    return pic, avr, fft


def add_args(b):
    b.add_argument("-o", "--output", default="docs/benchmarks/features.md")
    b.add_argument("--quick", action="store_true",
                   help="a smoke run: fewer cases, windows and repeats")


def main(a):
    run(a.output, quick=a.quick)
    print("wrote %s" % a.output)
    return 0

