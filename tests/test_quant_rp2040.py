"""The measurement behind issue 28's speed figure (m.quantize of 48 raw int16 readings natively
on the emulated Pico; the 20 us target is the benchmark page's verdict, `kilobit bench rp2040
--quantize`, not a test's: kilobit.bench.quant_rp2040, tools/replay/time_quant.py), and the
benchmark page's m.quantize section (kilobit.bench.rp2040), which `kilobit bench rp2040
--quantize` measures alone and splices into the existing page.

The emulator counts cycles deterministically, so the figure is the same at every run; the
script itself stops when the native and bytecode codes differ (tests/test_natmod_quant.py holds
both to the host's contract on the Pico too)."""
import pytest

from conftest import need
from kilobit.bench import quant_rp2040, rp2040
from kilobit.core.errors import KilobitError
from kilobit.runtimes.micropython import natmod, rp2040_sim

BUDGET = rp2040.QUANT_TARGET_US * rp2040.PICO_HZ // 1_000_000  # cycles


@pytest.fixture(scope="module")
def figures():
    need(rp2040_sim.missing() or natmod.missing("armv6m"))
    return quant_rp2040.figures(quant_rp2040.measure(rp2040.QUANT_N))


def test_m_quantize_runs_the_native_module_on_the_pico(figures):
    assert "why" not in figures, figures.get("why")
    nat, byte = figures["native"], figures["bytecode"]
    for call in quant_rp2040.CALLS:  # every way of calling it reaches the native loop
        assert byte[call][1] > 50 * nat[call][1], (call, byte[call], nat[call])
    # the model's own m.quantize (quant.c's attach) is no slower than its quantizer's method:
    # MicroPython does not search the model's classes for it
    assert nat["m.quantize"][1] <= nat["q.quantize"][1] + 200


def test_the_page_section_says_pass_from_the_median(figures):
    lines = rp2040.quantize_section(figures)
    assert lines[0] == rp2040.QUANT_HEAD
    us = 1e6 * figures["native"]["m.quantize"][1] / rp2040.PICO_HZ
    assert "| %.1f us | PASS |" % us in lines[-2]
    slow = dict(figures, native=dict(figures["native"], **{"m.quantize": (0, BUDGET + 1, 0)}))
    assert rp2040.quantize_section(slow)[-2].endswith("| MISS |")
    assert rp2040.quantize_section({"error": "no node"})[-2].endswith("| no node | MISS |")


PAGE = """# page

## Import, heap and flash on the Pico

a table

## Targets (issue 20)

| row |
"""


def test_splice_inserts_then_replaces_only_its_section():
    first = rp2040.splice_quantize(PAGE, [rp2040.QUANT_HEAD, "", "old figures", ""])
    assert first == PAGE.replace("## Targets", rp2040.QUANT_HEAD + "\n\nold figures\n\n## Targets")
    again = rp2040.splice_quantize(first, [rp2040.QUANT_HEAD, "", "new figures", ""])
    assert again == first.replace("old figures", "new figures")
    last = first.replace("## Targets (issue 20)\n\n| row |\n", "")  # the section ends the page
    assert rp2040.splice_quantize(last, [rp2040.QUANT_HEAD, "", "x", ""]).endswith("\n\nx\n")
    with pytest.raises(KilobitError, match="whole page first"):
        rp2040.splice_quantize("# page\n", [rp2040.QUANT_HEAD])
