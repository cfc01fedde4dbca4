"""Golden files of models trained on raw integer readings (tests/golden/raw, `kilobit golden
make-set --raw`): every runtime quantizes each step's raw readings with the model file's own
integer quantizer (contract 1.1) and must reach the step's inputs and its results, bit for bit."""
import glob
import json
import os

import pytest

from conftest import need
from kilobit import golden
from kilobit.models import registry
from kilobit.runtimes import catalog as rt

HERE = os.path.dirname(os.path.abspath(__file__))
FILES = sorted(glob.glob(os.path.join(HERE, "golden", "raw", "*.json")))
#: the runtimes that quantize raw readings themselves: kbit (m.quantize) under CPython, the unix
#: port (native and bytecode) and the C tools (kb_quant.h)
RUNTIMES = ["host", "kbit-cpython", "kbit-unix", "kbit-unix-bytecode", "c-host"]


def test_every_model_type_has_a_raw_golden_file():
    assert sorted(golden.load(f)["model"] for f in FILES) == sorted(registry.NAMES)
    for f in FILES:
        assert golden.load(f)["raw"], f


@pytest.mark.parametrize("runtime", RUNTIMES)
@pytest.mark.parametrize("path", FILES, ids=os.path.basename)
def test_raw_golden_file_agrees(path, runtime):
    r = rt.get(runtime)
    need(r.missing())
    assert r.quantize_rows is not None or r.replays_raw, runtime
    log = []
    assert golden.check(path, [runtime], log=log.append) == [], log
    assert "quantized from raw" in log[-1], log


@pytest.mark.parametrize("runtime", ["kbit-cpython", "c-host"])
def test_a_raw_row_that_quantizes_elsewhere_is_caught(tmp_path, runtime):
    """A runtime whose quantizer differed would be caught: here the file's own raw row is moved
    across a code boundary, so the host refuses the file and a runtime quantizing from raw
    disagrees with the steps."""
    need(rt.get(runtime).missing())
    doc = golden.load(FILES[0])
    row = doc["raw"][0]
    row[0] += 60  # pen coordinates are 0..100: 60 moves any code of the first feature
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(doc))
    with pytest.raises(Exception, match="raw row 0 does not quantize"):
        golden.read(str(bad))
    steps = registry.get(doc["model"]).golden.doc_steps(doc)
    r = rt.get(runtime)
    if r.replays_raw:
        rows = golden.replay_doc(doc, r, from_raw=True)
        assert golden.compare(doc, runtime, rows) is not None
    else:
        assert golden.raw_mismatch(doc, steps, r) == 0
