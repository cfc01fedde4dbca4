"""The simavr harness (firmware_c/sim/kb_sim.c + kilobit.runtimes.avr.kb_sim): UART bridge,
cycle markers, stack tracking, termination and failure reporting, on a simulated ATtiny2313 and
ATmega328P."""
import json
import os
import random
import subprocess
import time

import pytest

from conftest import need
from kilobit.runtimes import REPO
from kilobit.runtimes.avr import kb_sim

MCUS = ["attiny2313", "atmega328p"]
SIM_SRC = os.path.join(REPO, "firmware_c", "sim")
OUT = os.path.join(REPO, "build", "sim", "test")
RAMEND = {"attiny2313": 0xDF, "atmega328p": 0x8FF}

_elves = {}


def firmware(name, mcu):
    """Build firmware_c/sim/<name>.c for mcu once per session; return (elf, sizes)."""
    need(kb_sim.missing())
    key = (name, mcu)
    if key not in _elves:
        _elves[key] = kb_sim.avr_build([os.path.join(SIM_SRC, name + ".c")], mcu,
                                       os.path.join(OUT, mcu, name + ".elf"))
    return _elves[key]


def echo_input(n, seed=1):
    rnd = random.Random(seed)
    return bytes(rnd.randrange(0, 255) for _ in range(n)) + b"\xff"


@pytest.mark.parametrize("mcu", MCUS)
def test_build_sizes(mcu):
    elf, sizes = firmware("test_echo", mcu)
    assert os.path.exists(elf)
    assert sizes["flash"] == sizes["text"] + sizes["data"]
    assert sizes["ram"] == sizes["data"] + sizes["bss"] + sizes["noinit"]
    assert 0 < sizes["flash"] <= kb_sim.MCU_FLASH[mcu]
    assert sizes["bss"] >= 2  # g_sink


@pytest.mark.parametrize("mcu", MCUS)
def test_echo_exact(mcu):
    elf, _ = firmware("test_echo", mcu)
    data = bytes(range(255)) + echo_input(200)
    r = kb_sim.run(elf, mcu, input_bytes=data)
    assert r.output == bytes((b + 1) & 0xFF for b in data[:-1])
    assert r.stop == "done" and r.state == "cpu_Done" and r.ok
    assert r.report["rx_bytes"] == len(data)
    assert r.report["tx_bytes"] == len(data) - 1


@pytest.mark.parametrize("mcu", MCUS)
def test_markers_in_order(mcu):
    elf, _ = firmware("test_echo", mcu)
    data = echo_input(20)
    r = kb_sim.run(elf, mcu, input_bytes=data)
    values = [v for v, _ in r.markers]
    assert values == [1] + [3, 4, 2] * 20 + [5]
    cycles = [c for _, c in r.markers]
    assert all(a < b for a, b in zip(cycles, cycles[1:]))
    assert 0 < cycles[0] and cycles[-1] <= r.cycles
    assert len(r.marker_sp) == len(r.markers)


@pytest.mark.parametrize("mcu", MCUS)
def test_stack_plausible(mcu):
    elf, sizes = firmware("test_echo", mcu)
    r = kb_sim.run(elf, mcu, input_bytes=echo_input(5))
    assert r.ramend == RAMEND[mcu]
    assert r.stack_bytes == r.ramend - r.min_sp
    # main is called (2-byte return address) and calls transform (2 more)
    assert 4 <= r.stack_bytes < kb_sim.MCU_RAM[mcu]
    assert r.static_end == r.ramstart + sizes["ram"]
    assert r.stack_headroom == r.min_sp + 1 - r.static_end > 0
    assert min(r.marker_sp) >= r.min_sp


@pytest.mark.parametrize("mcu", MCUS)
def test_cycles_deterministic(mcu):
    elf, _ = firmware("test_echo", mcu)
    data = echo_input(50, seed=7)
    a = kb_sim.run(elf, mcu, input_bytes=data)
    b = kb_sim.run(elf, mcu, input_bytes=data)
    assert a.markers == b.markers and a.cycles == b.cycles and a.min_sp == b.min_sp
    # transform() is data-independent: the same cycle count for every byte
    work = a.between(3, 4)
    assert len(work) == 50 and len(set(work)) == 1 and work[0] > 100
    # ... and whatever the input bytes are
    c = kb_sim.run(elf, mcu, input_bytes=echo_input(50, seed=8))
    assert c.between(3, 4) == work


@pytest.mark.parametrize("mcu", MCUS)
def test_cycle_count_exact(mcu, tmp_path):
    """Between two marker writes sit 10 nops and 2 two-cycle rjmps: the first `out` (1 cycle)
    starts at marker A's cycle, the second one at marker B's, so B - A is exactly 1 + 10 + 4."""
    need(kb_sim.missing())
    src = tmp_path / "nops.c"
    src.write_text("#include <avr/io.h>\n"
                   "#include <avr/interrupt.h>\n"
                   "#include <avr/sleep.h>\n"
                   "int main(void) {\n"
                   "    __asm__ volatile(\"out %0, %1\\n\\t\" \"nop\\n\\t\" \"nop\\n\\t\"\n"
                   "        \"rjmp .+0\\n\\t\" \"nop\\n\\t\" \"nop\\n\\t\" \"nop\\n\\t\"\n"
                   "        \"nop\\n\\t\" \"rjmp .+0\\n\\t\" \"nop\\n\\t\" \"nop\\n\\t\"\n"
                   "        \"nop\\n\\t\" \"nop\\n\\t\" \"out %0, %2\\n\\t\"\n"
                   "        :: \"I\"(_SFR_IO_ADDR(GPIOR1)), \"r\"((unsigned char)0xA), "
                   "\"r\"((unsigned char)0xB));\n"
                   "    cli(); sleep_enable(); sleep_cpu();\n"
                   "    for (;;) ;\n"
                   "}\n")
    elf, _ = kb_sim.avr_build([str(src)], mcu, str(tmp_path / "nops.elf"))
    r = kb_sim.run(elf, mcu)
    assert [v for v, _ in r.markers] == [0xA, 0xB]
    assert r.between(0xA, 0xB) == [15]
    assert r.stop == "done"


def test_cycles_independent_of_host_pacing():
    """Input written slowly, in odd chunks, gives the same cycle-exact run as input that was all
    there at once: the bridge only hands bytes over when the chip's receiver asks."""
    mcu = "attiny2313"
    elf, _ = firmware("test_echo", mcu)
    data = echo_input(40, seed=3)
    ref = kb_sim.run(elf, mcu, input_bytes=data)
    report = os.path.join(OUT, "pacing.json")
    p = subprocess.Popen([kb_sim.build_sim(), "--mcu", mcu, "--freq", "4000000",
                          "--report", report, elf],
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    pos = 0
    for size in (1, 3, 7, 2, 11, 5):
        p.stdin.write(data[pos:pos + size])
        p.stdin.flush()
        pos += size
        time.sleep(0.02)
    p.stdin.write(data[pos:])
    p.stdin.close()
    out = p.stdout.read()
    assert p.wait(timeout=60) == 0
    with open(report) as f:
        rep = json.load(f)
    assert out == ref.output
    assert [tuple(m[:2]) for m in rep["markers"]] == ref.markers
    assert rep["cycles"] == ref.cycles


@pytest.mark.parametrize("mcu", MCUS)
def test_rx_byte_mode(mcu):
    elf, _ = firmware("test_echo", mcu)
    data = echo_input(30)
    r = kb_sim.run(elf, mcu, input_bytes=data, rx_mode="byte")
    assert r.output == bytes((b + 1) & 0xFF for b in data[:-1])
    assert r.stop == "done"


def test_idle_stop_without_done():
    """No 0xFF: the firmware waits for input forever; the run ends once all input was read and
    the chip stayed idle, and that is not an error."""
    mcu = "attiny2313"
    elf, _ = firmware("test_echo", mcu)
    r = kb_sim.run(elf, mcu, input_bytes=b"\x10\x20\x30", idle_cycles=200000)
    assert r.output == b"\x11\x21\x31"
    assert r.stop == "idle" and r.ok
    assert r.report["rx_drained"] and r.report["rx_eof"]
    last = r.markers[-1][1]
    assert 200000 <= r.cycles - last < 200000 + 100


def test_done_marker():
    mcu = "atmega328p"
    elf, _ = firmware("test_echo", mcu)
    r = kb_sim.run(elf, mcu, input_bytes=b"\x01\x02\x03", done_marker=2)
    assert r.stop == "done-marker" and r.ok
    assert [v for v, _ in r.markers] == [1, 3, 4, 2]
    assert r.output == b"\x02"


def test_max_cycles_is_failure():
    mcu = "attiny2313"
    elf, _ = firmware("test_echo", mcu)
    with pytest.raises(kb_sim.SimError) as e:
        kb_sim.run(elf, mcu, input_bytes=echo_input(100), max_cycles=2000)
    assert e.value.result.stop == "max-cycles"
    assert e.value.result.returncode == kb_sim.EXIT_MAXCYCLES


@pytest.mark.parametrize("mcu", MCUS)
def test_stack_grows_with_depth(mcu):
    elf, _ = firmware("test_stackhog", mcu)
    depth = {}
    for n in (1, 2, 6):
        r = kb_sim.run(elf, mcu, input_bytes=bytes([n]))
        assert r.stop == "done"
        depth[n] = r.stack_bytes
    frame = depth[2] - depth[1]
    assert frame >= 8  # return address + 6 locals at least
    assert depth[6] - depth[2] == 4 * frame


@pytest.mark.parametrize("mcu", MCUS)
def test_stack_overflow_is_failure(mcu):
    elf, _ = firmware("test_stackhog", mcu)
    with pytest.raises(kb_sim.SimError) as e:
        kb_sim.run(elf, mcu, input_bytes=b"\xff")
    r = e.value.result
    assert r.stop == "stack-collision" and not r.ok
    assert r.returncode == kb_sim.EXIT_FAIL
    assert r.min_sp < r.static_end - 1
    assert "stack collision" in r.message
    r2 = kb_sim.run(elf, mcu, input_bytes=b"\xff", check=False)
    assert r2.stop == "stack-collision" and r2.markers == r.markers


def test_crash_is_failure(tmp_path):
    need(kb_sim.missing())
    src = tmp_path / "jump_off_flash.c"
    src.write_text("#include <avr/io.h>\n"
                   "int main(void) {\n"
                   "    void (*f)(void) = (void (*)(void))0x3000;\n"
                   "    GPIOR1 = 1;\n"
                   "    f();\n"
                   "    for (;;) ;\n"
                   "}\n")
    elf, _ = kb_sim.avr_build([str(src)], "attiny2313", str(tmp_path / "crash.elf"))
    with pytest.raises(kb_sim.SimError) as e:
        kb_sim.run(elf, "attiny2313")
    assert e.value.result.stop == "crashed"
    assert e.value.result.state == "cpu_Crashed"


def test_bad_invocation():
    mcu = "attiny2313"
    elf, _ = firmware("test_echo", mcu)
    with pytest.raises(kb_sim.SimError):
        kb_sim.run(elf, "atnonesuch", freq=1000000)
    with pytest.raises(kb_sim.SimError):
        kb_sim.run(os.path.join(OUT, "no_such.elf"), mcu)


def test_long_stream_is_fast():
    """5,000 frames of 5 bytes through a simulated ATtiny2313 at 4 MHz take seconds at most."""
    mcu = "attiny2313"
    elf, _ = firmware("test_echo", mcu)
    rnd = random.Random(5)
    data = bytes(rnd.randrange(0, 255) for _ in range(5000 * 5)) + b"\xff"
    t0 = time.time()
    r = kb_sim.run(elf, mcu, input_bytes=data)
    elapsed = time.time() - t0
    assert r.output == bytes((b + 1) & 0xFF for b in data[:-1])
    assert len(r.markers) == 3 * 25000 + 2
    assert elapsed < 20, elapsed
