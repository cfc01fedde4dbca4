"""Every CKP kernel weight w(k), k = 0..65535, on the chips and in C against the host's.

The weight (docs/contract.md 3.2: the log method with rounded division) has three implementations:
kilobit.core.kernel (the host reference CKPInt scores and learns with), kb_kernel.h's C (host, Uno,
ATtinys when the assembly step is not selected) and the `logw` routine of
firmware_c/avr/kb_ckp_step.S (the ATtiny step). A wrong rounding constant there changes only a
few keys (one of the 65536 for the Banana table), which no learning stream is sure to reach, so
each table here is checked at every key a 16-bit distance can take, the range the assembly
runs on. firmware_c/sim/test_ckp_logw.c writes the chip's 65536 weights to the UART.
"""
import functools
import os
import subprocess

import numpy as np
import pytest

from conftest import need
from kilobit.core.kernel import weight, weights
from kilobit.models.ckp import firmware as ckp_fw, model as ckp
from kilobit.models.ckp.model import CKPInt
from kilobit.runtimes.avr import firmware, kb_sim

HARNESS = os.path.join(kb_sim.SIM_DIR, "test_ckp_logw.c")
KEYS = 1 << 16

#: (A, P, C) of each model; M = 2 and L = 560 keep every distance in 16 bits and the step in
#: assembly on the ATtinys (kb_ckp.h's KB_CKP_ASM)
CASES = {
    # tests/test_ckp.py::test_banana_70_byte_build_fits_attiny2313: J = 10
    "banana": (0.1, 6, 255),
    # C // 2 = 3: a rounding off by one changes 144 keys
    "small-C": (0.1, 6, 7),
    # J = 17: every j of a 16-bit key has a table entry, those from j = 6 on below C
    "wide": (1.0, 6, 255),
    # even C: the rounding constant is exactly half the divisor
    "wide-even-C": (1.0, 6, 100),
}


def model(case):
    A, bits, C = CASES[case]
    return CKPInt(bits, 2, 560, ckp.width_milli(A), C, seed=0)


@functools.lru_cache(maxsize=None)
def host_weights(case):
    """w(0 .. 65535) of the model's table and C by kilobit.core.kernel: `weights` (CKPInt's scores
    and margins) and `weight` (its norm update) must agree key for key."""
    m = model(case)
    want = weights(np.arange(KEYS), m.table, m.C)
    scalar = [weight(k, m.table, m.C) for k in range(KEYS)]
    assert want.tolist() == scalar
    return want


def assert_same_weights(got, want, what):
    assert len(got) == KEYS, "%s sent %d bytes, not %d" % (what, len(got), KEYS)
    got = np.frombuffer(bytes(got), dtype=np.uint8).astype(np.int64)
    bad = np.flatnonzero(got != want)
    assert not bad.size, "%s: w(k) differs at %d keys (k, %s, host): %s" % (
        what, bad.size, what, [(int(k), int(got[k]), int(want[k])) for k in bad[:8]])


@pytest.fixture(scope="module")
def build_dir(tmp_path_factory):
    need(kb_sim.missing())
    kb_sim.build_sim()
    return tmp_path_factory.mktemp("ckp_logw")


def run_harness(build_dir, case, mcu, defines=()):
    """Build test_ckp_logw.c for `mcu` with the model's header, run it, return (bytes sent,
    symbols of the ELF). The line runs at F_CPU / 8 baud (UBRR 0 with U2X, exact) so that the
    Uno, at 16 MHz, is not held up by its UART."""
    name = "%s-%s%s" % (case, mcu, "".join("-" + d for d in defines))
    header = build_dir / (name + ".h")
    header.write_text(ckp_fw.header(model(case).to_bytes()))
    f_cpu = kb_sim.DEFAULT_FREQ[mcu]
    elf, _ = kb_sim.avr_build(
        [HARNESS, os.path.join(firmware.FIRMWARE_C, ckp_fw.EXTRA_SOURCES[0])], mcu,
        str(build_dir / (name + ".elf")),
        defines=["KB_CKP_LOGW_ENTRY", "BAUD=%dUL" % (f_cpu // 8)] + list(defines),
        f_cpu=f_cpu, extra_flags=list(firmware.WARN) + ["-include", str(header)])
    r = kb_sim.run(elf, mcu, f_cpu)
    assert r.stop == "done", r
    syms = subprocess.run(["avr-nm", elf], capture_output=True, text=True,
                          check=True).stdout.split()
    return r.output, syms


@pytest.mark.parametrize("case", sorted(CASES))
def test_asm_logw_matches_host_for_every_key(build_dir, case):
    """kb_ckp_step.S's logw on a simulated ATtiny4313 (no multiplier, the ATtiny2313's core
    with room for the harness)."""
    got, syms = run_harness(build_dir, case, "attiny4313")
    # --gc-sections keeps the assembly only when the harness calls it: the C did not stand in
    assert "kb_ckp_logw" in syms
    assert_same_weights(got, host_weights(case), "kb_ckp_step.S logw")


@pytest.mark.parametrize("case", ["banana", "small-C", "wide"])
def test_uno_c_weight_matches_host_for_every_key(build_dir, case):
    """kb_ckp.h's kb_ckp_log_weight as the Uno's firmware builds it (hardware multiply, the
    16-bit key of a compile-time model). The even C is left to the host build below: the
    simulated Uno takes 2 s per wide table."""
    got, syms = run_harness(build_dir, case, "atmega328p")
    assert "kb_ckp_logw" not in syms
    assert_same_weights(got, host_weights(case), "kb_ckp_log_weight (atmega328p)")


def test_attiny_c_weight_matches_host_for_every_key(build_dir):
    """The C weight on a core without a multiplier (kb_mul8's shift-add; the ATtiny build when
    the assembly step is not selected), on the table that uses every j."""
    got, syms = run_harness(build_dir, "wide", "attiny4313", ["KB_CKP_NO_ASM"])
    assert "kb_ckp_logw" not in syms
    assert_same_weights(got, host_weights("wide"), "kb_ckp_log_weight (attiny4313)")


@pytest.mark.parametrize("case", sorted(CASES))
def test_host_c_weight_matches_host_for_every_key(case):
    """kb_kernel.h's log method compiled for the host (kb_selftest, the c-host runtime's
    build, 32-bit keys) on the same tables."""
    from kilobit.runtimes.c.c_host import CHostRuntime, build
    need(CHostRuntime().missing())
    m = model(case)
    r = subprocess.run([os.path.join(build(), "kb_selftest"), "weight", str(m.C)]
                       + [str(p) for p in m.table],
                       input="\n".join(map(str, range(KEYS))), stdout=subprocess.PIPE,
                       universal_newlines=True, check=True)
    got = bytes(int(x) for x in r.stdout.split())
    assert_same_weights(got, host_weights(case), "kb_selftest weight")


def test_shipped_firmware_does_not_export_logw():
    """The entry point exists for the harness only: the Banana ATtiny2313 firmware is built
    without it (and runs the assembly step)."""
    need(kb_sim.missing())
    elf, _ = firmware.build(model("banana").to_bytes(), "attiny2313")
    syms = subprocess.run(["avr-nm", elf], capture_output=True, text=True,
                          check=True).stdout.split()
    assert "kb_ckp_step_avr" in syms and "kb_ckp_logw" not in syms
