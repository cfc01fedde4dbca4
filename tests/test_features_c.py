"""The window features of contract 12 in C (firmware_c/kb_features.h, issue 29): a driver built
with gcc against the host reference (kilobit.core.features.window_features) on the edge and random
windows of tests/test_features.py, the refusals of bad n or axes (out untouched), and the header
built for the ATtiny2313 and the ATmega328P: warning-free, float-free, its size, and on the
simulated Uno the same features and the cycles of one 3-axis 100-sample window."""
import os
import random
import re
import shutil
import struct
import subprocess

import numpy as np
import pytest
from conftest import need
from test_features import edge_windows, random_windows

from kilobit.core.features import window_features
from kilobit.core.paths import REPO
from kilobit.runtimes.avr import firmware, kb_sim

FIRMWARE = os.path.join(REPO, "firmware_c")
CFLAGS = ["-std=c99", "-Wall", "-Wextra", "-Werror"] + list(firmware.WARN)
#: soft-float routines of libgcc/avr-libc, as firmware_c/Makefile's FLOAT_RE
FLOAT_RE = re.compile(r"(sf|df)[0-9]$|(sf|df)(si|di)$|(si|di)(sf|df)$|^__fp_")
SENTINEL = 0x5A5A5A5A

# Reads "axes n count" then count readings, per window; prints the error code, then the
# features (err 0) or how many out words changed (a refusal must write nothing).
DRIVER = r"""
#include <stdio.h>
#include "kb_features.h"

static int16_t w[255 * 257];
static int32_t out[KB_FEATURES_F * 255];

int main(void)
{
    long axes, n, count, v, i, changed;
    kb_err_t err;
    while (scanf("%ld %ld %ld", &axes, &n, &count) == 3) {
        for (i = 0; i < count; i++) {
            if (scanf("%ld", &v) != 1)
                return 1;
            w[i] = (int16_t)v;
        }
        for (i = 0; i < KB_FEATURES_F * 255; i++)
            out[i] = 0x5A5A5A5A;
        err = kb_features(w, (uint16_t)n, (uint8_t)axes, out);
        printf("%d", (int)err);
        changed = 0;
        for (i = 0; i < KB_FEATURES_F * 255; i++) {
            if (err == KB_OK && i < KB_FEATURES_F * axes)
                printf(" %ld", (long)out[i]);
            else
                changed += out[i] != 0x5A5A5A5A;
        }
        printf(" | %ld\n", changed);
    }
    return 0;
}
"""

# The same on the chip: a window comes in on the UART (axes, n as uint16 LE, readings int16 LE),
# its features go out as int32 LE; axes 0 ends the run. Markers 1 -> 2 bracket kb_features.
AVR_DRIVER = r"""
#include <avr/interrupt.h>
#include <avr/io.h>
#include <avr/sleep.h>
#include "kb_features.h"

#define BAUD 250000UL
#include <util/setbaud.h>

#define W_MAX 600

static int16_t w[W_MAX];
static int32_t out[KB_FEATURES_F * 3];

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
    uint8_t axes, k;
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
        for (i = 0; i < (uint16_t)(axes * n) && i < W_MAX; i++) {
            w[i] = (int16_t)getc_();
            w[i] = (int16_t)((uint16_t)w[i] | (uint16_t)getc_() << 8);
        }
        GPIOR1 = 1;
        err = kb_features(w, n, axes, out);
        GPIOR1 = 2;
        putc_((uint8_t)err);
        for (i = 0; err == KB_OK && i < (uint16_t)(KB_FEATURES_F * axes); i++)
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

# What the float-freeness and size checks link: one call the compiler cannot fold.
AVR_CALL = r"""
#include "kb_features.h"

static int16_t w[16];
static int32_t out[KB_FEATURES_F * 2];
volatile uint16_t g_n = 8;
volatile uint8_t g_axes = 2;

int main(void)
{
    return (int)kb_features(w, g_n, g_axes, out);
}
"""


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


def run_driver(exe, jobs):
    """jobs: (axes, n, readings) -> [(err, values, changed)] from the C driver."""
    text = "".join("%d %d %d %s\n" % (a, n, len(w), " ".join(map(str, w))) for a, n, w in jobs)
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


def test_c_refuses_bad_n_or_axes_and_writes_nothing(driver):
    ok = [(1, 1, [5]), (1, 256, [0] * 256), (255, 1, [1] * 255)]
    bad = [(1, 0, []), (1, 257, [0] * 257), (3, 65535, [0] * 3), (0, 10, [0] * 10),
           (0, 0, [])]
    rows = run_driver(driver, ok + bad)
    assert [r[0] for r in rows[:len(ok)]] == [0] * len(ok)
    for job, (err, got, changed) in zip(bad, rows[len(ok):]):
        assert err != 0 and got == [] and changed == 0, job
    # the error is kb_file.h's KB_ERR_PARAM, as the other headers report bad parameters
    with open(os.path.join(FIRMWARE, "kb_file.h")) as f:
        names = re.findall(r"^\s+(KB_\w+)", f.read().split("kb_err_t;")[0], re.M)
    assert {r[0] for r in rows[len(ok):]} == {names.index("KB_ERR_PARAM")}


def _avr_tools():
    missing = [t for t in ("avr-gcc", "avr-size", "avr-nm") if shutil.which(t) is None]
    need(" and ".join(missing) + " not found" if missing else None)


@pytest.mark.parametrize("mcu", ["attiny2313", "atmega328p"])
def test_avr_build_is_warning_and_float_free(tmp_path, mcu):
    """-Os, the firmware's warnings as errors; prints the header's code size (pytest -s)."""
    _avr_tools()
    src = tmp_path / "call.c"
    src.write_text(AVR_CALL)
    obj, elf = str(tmp_path / "call.o"), str(tmp_path / "call.elf")
    base = ["avr-gcc", "-mmcu=" + mcu, "-Os"] + CFLAGS + ["-I", FIRMWARE]
    subprocess.run(base + ["-c", "-o", obj, str(src)], check=True)
    subprocess.run(base + ["-o", elf, obj], check=True)
    syms = subprocess.run(["avr-nm", elf], stdout=subprocess.PIPE, universal_newlines=True,
                          check=True).stdout.split("\n")
    names = [s.split()[-1] for s in syms if s.strip()]
    assert "main" in names
    assert not [s for s in names if FLOAT_RE.search(s)]
    text = int(subprocess.run(["avr-size", obj], stdout=subprocess.PIPE, universal_newlines=True,
                              check=True).stdout.splitlines()[1].split()[0])
    sizes = kb_sim.avr_size(elf)
    print("%s: kb_features object %d B text, linked with main and libgcc %d B flash"
          % (mcu, text, sizes["flash"]))
    assert 0 < text < sizes["flash"] <= kb_sim.MCU_FLASH[mcu]


@pytest.fixture(scope="module")
def uno(tmp_path_factory):
    need(kb_sim.missing())
    d = tmp_path_factory.mktemp("features_uno")
    (d / "feat.c").write_text(AVR_DRIVER)
    elf, _ = kb_sim.avr_build([str(d / "feat.c")], "atmega328p", str(d / "feat.elf"),
                              include_dirs=[FIRMWARE], extra_flags=firmware.WARN)
    return elf


def _frame(w, A, n):
    return struct.pack("<BH%dh" % len(w), A, n, *w)


def test_uno_equals_the_host_and_its_cycles(uno):
    """On the simulated ATmega328P: every window that fits its buffers (600 readings, 3 axes) gives the
    host's features; prints the cycles of a 3-axis 100-sample window (measured, not held to a
    bound)."""
    rs = random.Random(4)
    bench = [rs.randint(-4000, 4000) for _ in range(300)]
    windows = [(bench, 3)] + [(w, A) for w, A in cases() if len(w) <= 600 and A <= 3]
    data = b"".join(_frame(w, A, len(w) // A) for w, A in windows)
    data += _frame([], 2, 0)  # refused: n 0
    data += b"\x00"
    r = kb_sim.run(uno, "atmega328p", input_bytes=data)
    out, pos = r.output, 0
    for w, A in windows:
        assert out[pos] == 0
        k = 7 * A
        got = list(struct.unpack_from("<%di" % k, out, pos + 1))
        pos += 1 + 4 * k
        assert got == window_features(np.array(w), A)[0].tolist(), (A, len(w) // A)
    assert out[pos] != 0 and pos + 1 == len(out)
    cycles = r.between(1, 2)
    assert len(cycles) == len(windows) + 1
    print("uno: kb_features of 3 axes x 100 samples: %d cycles (%.0f us at 16 MHz)"
          % (cycles[0], cycles[0] / 16.0))
