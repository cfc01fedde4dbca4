"""Every model-file parser on mutated files (hypothesis, derandomized: the same examples every
run): the host's integer references, device/kbit and the C runtime must each either load a file
or refuse it with their model-file error, never anything else, and all three must agree on
which. The mutations start from the golden model files and reach past the container: a
recomputed length and CRC let a changed payload through to each model's own checks."""
import glob
import json
import os
import struct
import zlib

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import need
from kilobit.core.errors import KilobitError
from kilobit.models import registry
from kilobit.runtimes.base import RuntimeFailure
from kilobit.runtimes.catalog import get

HERE = os.path.dirname(os.path.abspath(__file__))
MODELS = [bytes.fromhex(json.load(open(p))["model_file"])
          for p in sorted(glob.glob(os.path.join(HERE, "golden", "*.json")))]
EXAMPLES = 400


def fix_container(b):
    """The file with its payload length and CRC recomputed (the container then passes)."""
    b = bytearray(b)
    if len(b) >= 16:
        struct.pack_into("<I", b, 8, len(b) - 16)
        struct.pack_into("<I", b, len(b) - 4, zlib.crc32(bytes(b[:-4])) & 0xFFFFFFFF)
    return bytes(b)


@st.composite
def mutated(draw):
    base = bytearray(draw(st.sampled_from(MODELS)))
    kind = draw(st.sampled_from(["truncate", "flip", "payload", "payload", "type", "grow"]))
    if kind == "truncate":
        return bytes(base[:draw(st.integers(0, len(base) - 1))])
    if kind == "type":  # another model's type byte on this payload
        base[5] = draw(st.integers(0, 7))
        return fix_container(base)
    if kind == "grow":
        base[-4:-4] = draw(st.binary(min_size=1, max_size=64))
        return fix_container(base)
    n = draw(st.integers(1, 8))
    for _ in range(n):
        lo = 12 if kind == "payload" else 0
        i = draw(st.integers(lo, len(base) - 5 if kind == "payload" else len(base) - 1))
        base[i] = draw(st.integers(0, 255))
    return fix_container(base) if kind == "payload" else bytes(base)


def host_verdict(b):
    try:
        spec = registry.of_file(b)
        spec.load(b)
    except KilobitError as e:  # ModelFileError, or a model type it does not know
        return "refused: %s" % e
    return "loaded"


def kbit_verdict(b):
    from kbit.kbfile import ModelFileError
    spec = registry.peek(b) or registry.get("rkp")  # kbit dispatches on the header as well
    try:
        spec.kbit_class().load(bytes(b))
    except ModelFileError as e:
        return "refused: %s" % e
    return "loaded"


@settings(derandomize=True, max_examples=EXAMPLES, deadline=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(mutated())
def test_host_and_kbit_load_or_refuse_alike(b):
    h, k = host_verdict(b), kbit_verdict(b)
    assert (h == "loaded") == (k == "loaded"), (h, k, b.hex())


@pytest.fixture(scope="module")
def c_host():
    r = get("c-host")
    need(r.missing())
    return r


def c_verdict(r, b):
    try:
        r.replay(b, [])
    except RuntimeFailure as e:
        return "refused: %s" % e
    return "loaded"


def test_the_c_runtime_loads_or_refuses_alike(c_host):
    """The same examples through the C loaders (one process each, so fewer of them)."""
    seen = []

    @settings(derandomize=True, max_examples=150, deadline=None,
              suppress_health_check=[HealthCheck.too_slow])
    @given(mutated())
    def check(b):
        h, c = host_verdict(b), c_verdict(c_host, b)
        seen.append(h == "loaded")
        assert (h == "loaded") == (c == "loaded"), (h, c, b.hex())

    check()
    assert any(seen) and not all(seen)  # both verdicts were exercised
