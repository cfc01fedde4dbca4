"""The window features of contract 12 in C (firmware_c/kb_features.h, issue 29): a driver built
with gcc against the host reference (kilobit.core.features.window_features) on the edge and random
windows of tests/test_features.py, the refusals of bad n or axes (out untouched), and the header
built for the ATtiny2313 and the ATmega328P: warning-free, float-free, its size, and on the
simulated Uno the same features and the cycles of one 3-axis 100-sample window. The same for
a selection (contract 12.1) with band energies (firmware_c/kb_fft.h, contract 13) through
kb_features_extract, on tests/test_fft.py's cases."""
import os
import random
import re
import shutil
import struct
import subprocess

import numpy as np
import pytest

from conftest import need
from kilobit.core.features import window_features
from kilobit.core.paths import REPO
from kilobit.runtimes.avr import firmware, kb_sim
from test_features import edge_windows, random_windows
from test_fft import SELECTIONS, want

FIRMWARE = os.path.join(REPO, "firmware_c")
CFLAGS = ["-std=c99", "-Wall", "-Wextra", "-Werror"] + list(firmware.WARN)
#: soft-float routines of libgcc/avr-libc, as firmware_c/Makefile's FLOAT_RE
FLOAT_RE = re.compile(r"(sf|df)[0-9]$|(sf|df)(si|di)$|(si|di)(sf|df)$|^__fp_")
SENTINEL = 0x5A5A5A5A

# Reads "axes n mask p bands count" then count readings, per window: mask 255 calls
# kb_features, any other kb_features_extract. Prints the error code, then the features (err 0)
# or how many out words changed (a refusal must write nothing).
DRIVER = r"""
#include <stdio.h>
#include "kb_features.h"

#define OUT_MAX ((KB_FEATURES_F + 128) * 255)

static int16_t w[255 * 257];
static int16_t scratch[2 * 256];
static int32_t out[OUT_MAX];

int main(void)
{
    long axes, n, mask, p, bands, count, v, i, f, changed;
    kb_err_t err;
    while (scanf("%ld %ld %ld %ld %ld %ld", &axes, &n, &mask, &p, &bands, &count) == 6) {
        for (i = 0; i < count; i++) {
            if (scanf("%ld", &v) != 1)
                return 1;
            w[i] = (int16_t)v;
        }
        for (i = 0; i < OUT_MAX; i++)
            out[i] = 0x5A5A5A5A;
        if (mask == 255) {
            err = kb_features(w, (uint16_t)n, (uint8_t)axes, out);
            f = KB_FEATURES_F;
        } else {
            err = kb_features_extract(w, (uint16_t)n, (uint8_t)axes, (uint8_t)mask, (uint8_t)p,
                                      (uint8_t)bands, p ? scratch : NULL, out);
            for (f = bands, i = 0; i < 7; i++)
                f += (mask >> i) & 1;
        }
        printf("%d", (int)err);
        changed = 0;
        for (i = 0; i < OUT_MAX; i++) {
            if (err == KB_OK && i < f * axes)
                printf(" %ld", (long)out[i]);
            else
                changed += out[i] != 0x5A5A5A5A;
        }
        printf(" | %ld\n", changed);
    }
    return 0;
}
"""

# The same on the chip: a window comes in on the UART (axes, n as uint16 LE, mask, p, bands,
# readings int16 LE), its features go out as int32 LE; axes 0 ends the run. mask 255 calls
# kb_features, any other kb_features_extract (P <= 128: the scratch). Markers 1 -> 2 bracket
# the call.
AVR_DRIVER = r"""
#include <avr/interrupt.h>
#include <avr/io.h>
#include <avr/sleep.h>
#include "kb_features.h"

#define BAUD 250000UL
#include <util/setbaud.h>

#define W_MAX 450

static int16_t w[W_MAX];
static int16_t scratch[2 * 128];
static int32_t out[(KB_FEATURES_F + 16) * 3];

static uint8_t getc_(void)
{
    while (!(UCSR0A & (1 << RXC0)))
        ;
    return UDR0;
}

static void putc_(uint8_t c)
{
    while (!(UCSR0A & (1 << UDRE0)))
        ;
    UDR0 = c;
}

int main(void)
{
    uint8_t axes, k, mask, p, bands, f;
    uint16_t n, i;
    kb_err_t err;
    UBRR0H = UBRRH_VALUE;
    UBRR0L = UBRRL_VALUE;
#if USE_2X
    UCSR0A = (uint8_t)(1 << U2X0);
#else
    UCSR0A = 0;
#endif
    UCSR0C = (uint8_t)((1 << UCSZ01) | (1 << UCSZ00));
    UCSR0B = (uint8_t)((1 << RXEN0) | (1 << TXEN0));
    while ((axes = getc_()) != 0) {
        n = getc_();
        n = (uint16_t)(n | (uint16_t)getc_() << 8);
        mask = getc_();
        p = getc_();
        bands = getc_();
        for (i = 0; i < (uint16_t)(axes * n) && i < W_MAX; i++) {
            w[i] = (int16_t)getc_();
            w[i] = (int16_t)((uint16_t)w[i] | (uint16_t)getc_() << 8);
        }
        if (mask == 255) {
            GPIOR1 = 1;
            err = kb_features(w, n, axes, out);
            GPIOR1 = 2;
            f = KB_FEATURES_F;
        } else {
            GPIOR1 = 1;
            err = kb_features_extract(w, n, axes, mask, p, bands, scratch, out);
            GPIOR1 = 2;
            for (f = bands, k = 0; k < 7; k++)
                f = (uint8_t)(f + (mask >> k & 1));
        }
        putc_((uint8_t)err);
        for (i = 0; err == KB_OK && i < (uint16_t)(f * axes); i++)
            for (k = 0; k < 32; k = (uint8_t)(k + 8))
                putc_((uint8_t)((uint32_t)out[i] >> k));
    }
    cli();
    sleep_enable();
    sleep_cpu();
    for (;;)
        ;
}
"""

# What the float-freeness and size checks link: one call the compiler cannot fold, of
# kb_features, of kb_fft_bands alone, or of kb_features_extract (CALL picks).
AVR_CALL = r"""
#include "kb_features.h"

#if CALL == 0 /* small enough for the ATtiny2313's 128 B of RAM */
static int16_t w[16];
static int16_t scratch[1];
static int32_t out[KB_FEATURES_F * 2];
volatile uint16_t g_n = 8;
#else
static int16_t w[64];
static int16_t scratch[64];
static int32_t out[(KB_FEATURES_F + 4) * 2];
volatile uint16_t g_n = 32;
#endif
volatile uint8_t g_axes = 2, g_p = 5, g_bands = 4;
volatile int16_t g_m = 0;

int main(void)
{
#if CALL == 0
    (void)scratch;
    return (int)kb_features(w, g_n, g_axes, out);
#elif CALL == 1
    kb_fft_bands(w, g_axes, g_m, g_p, g_bands, scratch, out);
    return (int)out[0];
#else
    return (int)kb_features_extract(w, g_n, g_axes, 0x7F, g_p, g_bands, scratch, out);
#endif
}
"""
CALLS = {"kb_features": 0, "kb_fft_bands": 1, "kb_features_extract": 2}


def cases():
    """(window, axes): tests/test_features.py's edge and random windows, plus the widest
    (255 axes) and a 6-axis 256-sample window of extremes."""
    rs = random.Random(1229)
    out = edge_windows() + random_windows(29, 60)
    out.append(([rs.randint(-32768, 32767) for _ in range(255 * 2)], 255))
    out.append(([rs.choice((-32768, 32767, 0, -1)) for _ in range(6 * 256)], 6))
    return out


@pytest.fixture(scope="module")
def driver(tmp_path_factory):
    need(None if shutil.which("gcc") else "gcc not found")
    d = tmp_path_factory.mktemp("features_c")
    (d / "drv.c").write_text(DRIVER)
    exe = str(d / "drv")
    subprocess.run(["gcc"] + CFLAGS + ["-O2", "-I", FIRMWARE, "-o", exe, str(d / "drv.c")],
                   check=True)
    return exe


TIME = (255, 0, 0)  # the driver's mask 255: kb_features, the seven of every axis


def per_axis(sel):
    mask, _, bands = sel
    return 7 if mask == 255 else bin(mask).count("1") + bands


def run_driver(exe, jobs):
    """jobs: (axes, n, readings) for kb_features, or (axes, n, readings, (mask, p, bands)) for
    kb_features_extract -> [(err, values, changed)] from the C driver."""
    text = "".join("%d %d %d %d %d %d %s\n" % ((j[0], j[1]) + (j[3] if len(j) > 3 else TIME) +
                                              (len(j[2]), " ".join(map(str, j[2]))))
                   for j in jobs)
    r = subprocess.run([exe], input=text, stdout=subprocess.PIPE, universal_newlines=True,
                       check=True)
    rows = []
    for line in r.stdout.splitlines():
        head, _, changed = line.partition("|")
        f = [int(v) for v in head.split()]
        rows.append((f[0], f[1:], int(changed)))
    assert len(rows) == len(jobs)
    return rows


def test_c_equals_the_host_reference(driver):
    windows = cases()
    rows = run_driver(driver, [(A, len(w) // A, w) for w, A in windows])
    for (w, A), (err, got, changed) in zip(windows, rows):
        want = window_features(np.array(w), A)[0].tolist()
        assert err == 0 and changed == 0
        assert got == want, "axes %d, n %d: C %s, host %s" % (A, len(w) // A, got[:14], want[:14])
    # the energy's bound (contract 12) is reached, so the hi/lo split is exercised at its top
    assert max(r[1][4] for r in rows) == 268427264


def test_c_extract_equals_the_host_reference(driver):
    """kb_features_extract (kb_fft.h's bands) on tests/test_fft.py's selections: edge and seeded
    windows, P 32..256, every band count, masks with and without time-domain features."""
    jobs = [(A, len(w) // A, w, (mask, p, B)) for w, A, mask, p, B in SELECTIONS]
    # the widest: 255 axes of 32 samples, 16 bands each
    rs = random.Random(255)
    wide = [rs.randint(-32768, 32767) for _ in range(255 * 32)]
    jobs.append((255, 32, wide, (0x7F, 5, 16)))
    rows = run_driver(driver, jobs)
    for (A, n, w, (mask, p, B)), (err, got, changed) in zip(jobs, rows):
        assert err == 0 and changed == 0
        assert got == want(w, A, mask, p, B), (A, n, mask, p, B)


def test_c_refuses_bad_n_or_axes_and_writes_nothing(driver):
    ok = [(1, 1, [5]), (1, 256, [0] * 256), (255, 1, [1] * 255),
          (1, 32, [0] * 32, (0, 5, 1)), (1, 256, [0] * 256, (0x7F, 8, 128)),
          (2, 5, [0] * 10, (0x40, 0, 0))]
    bad = [(1, 0, []), (1, 257, [0] * 257), (3, 65535, [0] * 3), (0, 10, [0] * 10),
           (0, 0, [])]
    # selections contract 12.1 refuses: no feature, bit 7, p outside 5..8 or P > n, bands 0, too
    # many or not a power of two, bands without an fft; and kb_features' own refusals
    bad += [(1, 64, [0] * 64, sel) for sel in (
        (0, 0, 0), (0x80, 0, 0), (0x81, 0, 0), (1, 4, 2), (1, 9, 2), (1, 7, 2), (0, 6, 0),
        (0, 6, 64), (0, 6, 3), (1, 0, 4))]
    bad += [(1, 0, [], (1, 0, 0)), (1, 257, [0] * 257, (1, 0, 0)), (0, 64, [0] * 64, (1, 6, 4))]
    rows = run_driver(driver, ok + bad)
    assert [r[0] for r in rows[:len(ok)]] == [0] * len(ok)
    for job, (err, got, changed) in zip(bad, rows[len(ok):]):
        assert err != 0 and got == [] and changed == 0, job[:2] + job[3:]
    # the error is kb_file.h's KB_ERR_PARAM, as the other headers report bad parameters
    with open(os.path.join(FIRMWARE, "kb_file.h")) as f:
        names = re.findall(r"^\s+(KB_\w+)", f.read().split("kb_err_t;")[0], re.M)
    assert {r[0] for r in rows[len(ok):]} == {names.index("KB_ERR_PARAM")}


def _avr_tools():
    missing = [t for t in ("avr-gcc", "avr-size", "avr-nm") if shutil.which(t) is None]
    need(" and ".join(missing) + " not found" if missing else None)


def _avr_object(tmp_path, mcu, call):
    """An -Os object of AVR_CALL for mcu calling `call`, the firmware's warnings as errors, its
    float-freeness checked (undefined symbols: what it would pull in); (object, text bytes)."""
    src = tmp_path / "call.c"
    src.write_text(AVR_CALL)
    obj = str(tmp_path / ("%s_%s.o" % (call, mcu)))
    subprocess.run(["avr-gcc", "-mmcu=" + mcu, "-Os", "-DCALL=%d" % CALLS[call]] + CFLAGS +
                   ["-I", FIRMWARE, "-c", "-o", obj, str(src)], check=True)
    syms = subprocess.run(["avr-nm", obj], stdout=subprocess.PIPE, universal_newlines=True,
                          check=True).stdout.split("\n")
    assert not [s for s in syms if s.strip() and FLOAT_RE.search(s.split()[-1])]
    text = int(subprocess.run(["avr-size", obj], stdout=subprocess.PIPE, universal_newlines=True,
                              check=True).stdout.splitlines()[1].split()[0])
    return obj, text


def _linked(obj, mcu, elf):
    """Link obj for mcu: its symbols (float-free checked) and kb_sim.avr_size's sizes."""
    subprocess.run(["avr-gcc", "-mmcu=" + mcu, "-o", elf, obj], check=True)
    syms = subprocess.run(["avr-nm", elf], stdout=subprocess.PIPE, universal_newlines=True,
                          check=True).stdout.split("\n")
    names = [s.split()[-1] for s in syms if s.strip()]
    assert "main" in names
    assert not [s for s in names if FLOAT_RE.search(s)]
    return kb_sim.avr_size(elf)


@pytest.mark.parametrize("mcu", ["attiny2313", "atmega328p"])
def test_avr_build_is_warning_and_float_free(tmp_path, mcu):
    """-Os, the firmware's warnings as errors; prints the header's code size (pytest -s)."""
    _avr_tools()
    obj, text = _avr_object(tmp_path, mcu, "kb_features")
    sizes = _linked(obj, mcu, str(tmp_path / "call.elf"))
    print("%s: kb_features object %d B text, linked with main and libgcc %d B flash"
          % (mcu, text, sizes["flash"]))
    assert 0 < text < sizes["flash"] <= kb_sim.MCU_FLASH[mcu]


@pytest.mark.parametrize("mcu", ["attiny2313", "atmega328p"])
def test_avr_fft_build_is_warning_and_float_free(tmp_path, mcu):
    """kb_fft_bands and kb_features_extract compile warning- and float-free for both chips; on
    the Uno they link (the ATtiny2313's 2 KB of flash and 128 B of RAM hold no FFT: its object
    is checked, not linked). Prints kb_fft's size (pytest -s)."""
    _avr_tools()
    fft_obj, fft_text = _avr_object(tmp_path, mcu, "kb_fft_bands")
    ext_obj, ext_text = _avr_object(tmp_path, mcu, "kb_features_extract")
    base_text = _avr_object(tmp_path, mcu, "kb_features")[1]
    # the table is in flash: nothing of kb_fft's is initialised RAM (.data)
    head = subprocess.run(["avr-size", fft_obj], stdout=subprocess.PIPE,
                          universal_newlines=True, check=True).stdout.splitlines()[1].split()
    assert int(head[1]) <= 5  # main's volatile arguments; W and the reversals would be 146
    print("%s: kb_fft_bands object %d B text; kb_features_extract %d B (kb_features alone %d B)"
          % (mcu, fft_text, ext_text, base_text))
    assert base_text < ext_text
    if mcu == "atmega328p":
        sizes = _linked(ext_obj, mcu, str(tmp_path / "ext.elf"))
        assert ext_text < sizes["flash"] <= kb_sim.MCU_FLASH[mcu]


@pytest.fixture(scope="module")
def uno(tmp_path_factory):
    need(kb_sim.missing())
    d = tmp_path_factory.mktemp("features_uno")
    (d / "feat.c").write_text(AVR_DRIVER)
    elf, _ = kb_sim.avr_build([str(d / "feat.c")], "atmega328p", str(d / "feat.elf"),
                              include_dirs=[FIRMWARE], extra_flags=firmware.WARN)
    return elf


W_MAX = 450  # AVR_DRIVER's window buffer


def _frame(w, A, n, sel=TIME):
    return struct.pack("<BHBBB%dh" % len(w), A, n, sel[0], sel[1], sel[2], *w)


def _uno_run(uno, jobs):
    """jobs: (window, axes, selection) -> the simulator's run (its cycles between markers 1
    and 2, one a job), every job's features checked against the host; a refused window ends
    the run."""
    data = b"".join(_frame(w, A, len(w) // A, sel) for w, A, sel in jobs)
    data += _frame([], 2, 0)  # refused: n 0
    data += b"\x00"
    r = kb_sim.run(uno, "atmega328p", input_bytes=data)
    out, pos = r.output, 0
    for w, A, sel in jobs:
        assert out[pos] == 0
        k = per_axis(sel) * A
        got = list(struct.unpack_from("<%di" % k, out, pos + 1))
        pos += 1 + 4 * k
        host = window_features(np.array(w), A)[0].tolist() if sel == TIME else want(w, A, *sel)
        assert got == host, (A, len(w) // A, sel)
    assert out[pos] != 0 and pos + 1 == len(out)
    assert len(r.between(1, 2)) == len(jobs) + 1
    return r


def test_uno_equals_the_host_and_its_cycles(uno):
    """On the simulated ATmega328P: every window that fits its buffers (450 readings, 3 axes)
    gives the host's features; prints the cycles of a 3-axis 100-sample window (measured, not held
    to a bound)."""
    rs = random.Random(4)
    bench = [rs.randint(-4000, 4000) for _ in range(300)]
    windows = [(bench, 3)] + [(w, A) for w, A in cases() if len(w) <= W_MAX and A <= 3]
    cycles = _uno_run(uno, [(w, A, TIME) for w, A in windows]).between(1, 2)
    print("uno: kb_features of 3 axes x 100 samples: %d cycles (%.0f us at 16 MHz)"
          % (cycles[0], cycles[0] / 16.0))


def test_uno_extract_equals_the_host_and_its_cycles(uno):
    """kb_features_extract on the simulated Uno (P <= 128, B <= 16, 450 readings): the host's
    integers for the selections that fit; prints the cycles of a 128-point FFT's bands (one
    axis of 128 samples, fft128:8, less the same window's time-domain pass, which the bands'
    mean comes from) and of 3 x 100 with time,fft64:8 (measured, not held to a bound)."""
    rs = random.Random(128)
    one = [rs.randint(-4000, 4000) for _ in range(128)]
    three = [rs.randint(-4000, 4000) for _ in range(300)]
    jobs = [(one, 1, (0, 7, 8)), (one, 1, (0x01, 0, 0)), (three, 3, (0x7F, 6, 8)),
            (three, 3, (0x7F, 0, 0))]
    jobs += [(w, A, (mask, p, B)) for w, A, mask, p, B in SELECTIONS[::3]
             if len(w) <= W_MAX and A <= 3 and p <= 7 and B <= 16]
    cycles = _uno_run(uno, jobs).between(1, 2)
    print("uno: bands of a 128-point FFT (fft128:8, one axis): %d cycles (%.1f ms at 16 MHz); "
          "kb_features_extract of 1 x 128 fft128:8 %d; 3 x 100 time,fft64:8 %d, time only %d"
          % (cycles[0] - cycles[1], (cycles[0] - cycles[1]) / 16000.0, cycles[0], cycles[2],
             cycles[3]))
