"""Every model-file parser on mutated files (hypothesis, derandomized: the same examples every
run): the host's integer references, device/kbit and the C runtime must each either load a file
or refuse it with their model-file error, never anything else, and all three must agree on
which. The mutations start from the golden model files and reach past the container: a
recomputed length and CRC let a changed payload through to each model's own checks
(kilobit.bench.faults: the same strategy, longer, in `kilobit bench faults`)."""
import pytest
from hypothesis import HealthCheck, given, settings

from conftest import need
from kilobit.bench import faults
from kilobit.runtimes.catalog import get

EXAMPLES = 400
mutated = faults.mutated_files


@settings(derandomize=True, max_examples=EXAMPLES, deadline=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(mutated())
def test_host_and_kbit_load_or_refuse_alike(b):
    h, k = faults.host_verdict(b), faults.kbit_verdict(b)
    assert (h == "loaded") == (k == "loaded"), (h, k, b.hex())


@pytest.fixture(scope="module")
def c_host():
    r = get("c-host")
    need(r.missing())
    return r


def test_the_c_runtime_loads_or_refuses_alike(c_host):
    """The same examples through the C loaders (one process each, so fewer of them)."""
    seen = []

    @settings(derandomize=True, max_examples=150, deadline=None,
              suppress_health_check=[HealthCheck.too_slow])
    @given(mutated())
    def check(b):
        h, c = faults.host_verdict(b), faults.c_verdict(c_host, b)
        seen.append(h == "loaded")
        assert (h == "loaded") == (c == "loaded"), (h, c, b.hex())

    check()
    assert any(seen) and not all(seen)  # both verdicts were exercised
