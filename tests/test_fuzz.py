"""The C runtime's model-file loaders and decoders under libFuzzer with AddressSanitizer and
UndefinedBehaviorSanitizer (firmware_c/fuzz/kb_fuzz_file.c): a short run seeded with every golden
model file, every kept regression input (tests/fuzz/kb_file) replayed, and a planted
out-of-bounds read that the fuzzer must find (so a run that finds nothing means something). The
long runs are a benchmark."""
import glob
import json
import os
import re
import shutil
import subprocess

from conftest import need

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
BUILD = os.path.join(REPO, "build", "firmware_c")
REGRESSION = os.path.join(HERE, "fuzz", "kb_file")
SECONDS = 20


def build(extra=None):
    need(None if shutil.which("clang") else "clang (apt-get install clang)")
    if extra is None:
        r = subprocess.run(["make", "-s", "-C", os.path.join(REPO, "firmware_c"),
                            "BUILD=" + BUILD, "fuzz"], capture_output=True, text=True)
        assert r.returncode == 0, r.stdout + r.stderr
        return os.path.join(BUILD, "fuzz", "kb_fuzz_file")
    out = os.path.join(BUILD, "fuzz", "kb_fuzz_planted")
    r = subprocess.run(["clang", "-std=c99", "-g", "-O1", "-fsanitize=fuzzer,address,undefined",
                        extra, "-o", out,
                        os.path.join(REPO, "firmware_c", "fuzz", "kb_fuzz_file.c")],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    return out


def seeds(directory):
    """Every golden model file, as the harness takes it: the fix-up byte, then the file."""
    for path in sorted(glob.glob(os.path.join(HERE, "golden", "*.json"))):
        model = bytes.fromhex(json.load(open(path))["model_file"])
        name = os.path.basename(path)[:-5]
        for mode in (0, 2):
            with open(os.path.join(directory, "%s-%d" % (name, mode)), "wb") as f:
                f.write(bytes([mode]) + model)


def test_a_short_fuzz_run_finds_nothing(tmp_path):
    exe = build()
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    seeds(str(corpus))
    # the kept regression inputs go in as a second corpus: each runs before any mutation
    r = subprocess.run([exe, "-max_total_time=%d" % SECONDS, "-seed=1", "-timeout=10",
                        "-print_final_stats=1", str(corpus), REGRESSION], capture_output=True,
                       text=True, timeout=SECONDS + 60)
    assert r.returncode == 0, r.stderr[-3000:]
    runs = int(re.search(r"stat::number_of_executed_units: (\d+)", r.stderr).group(1))
    assert runs > 10000, r.stderr[-2000:]
    assert "ERROR: AddressSanitizer" not in r.stderr and "runtime error" not in r.stderr


def test_the_fuzzer_finds_a_planted_out_of_bounds_read(tmp_path):
    exe = build("-DKB_FUZZ_PLANTED_BUG")
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    seeds(str(corpus))
    # libFuzzer stops at the first finding: here 2-10 s typically, 32 s the slowest of 8 runs
    # (its runs are not reproducible even with -seed). The cap is for a slow machine, not a
    # budget: a 60 s cap once ran out on CI (379,328 runs) when only RKP files reached the bug.
    r = subprocess.run([exe, "-max_total_time=240", "-seed=1", "-timeout=10",
                        "-artifact_prefix=%s/" % tmp_path, str(corpus)], capture_output=True,
                       text=True, timeout=300)
    assert r.returncode != 0
    assert "ERROR: AddressSanitizer: global-buffer-overflow" in r.stderr, r.stderr[-2000:]
    assert glob.glob(str(tmp_path / "crash-*"))  # the input is kept, as a real finding would be
