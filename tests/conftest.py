"""Shared test helpers.

A test that needs a toolchain (avr-gcc, node + MicroPython WebAssembly, simavr) skips on a
developer machine without it, but FAILS under CI=true: CI must never go green by skipping.
"""
import os

import pytest

IN_CI = os.environ.get("CI", "").lower() in ("1", "true", "yes")


def need(missing):
    """Call with None (all there) or a text naming what is missing."""
    if missing is None:
        return
    if IN_CI:
        pytest.fail("toolchain missing under CI=true: %s" % missing)
    pytest.skip("toolchain missing: %s" % missing)


def replay_fields(stdout):
    """A replay script's (tools/replay) fields after its first line, which says the path kbit
    ran ("path native" or "path bytecode: why")."""
    head, _, rest = stdout.partition("\n")
    assert head.startswith("path "), stdout
    return rest.split()
