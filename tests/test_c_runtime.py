"""The C runtime (firmware_c) against the host integer reference, bit for bit.

kb_selftest exposes the generator and the weight function, kb_replay the whole learner
(kilobit.runtimes.c.c_host drives it), kb_replay_const the compile-time-parameter code path the
ATtiny2313 runs; `make avr-check` builds that path for AVR.
"""
import os
import re
import shutil
import struct
import subprocess
import zlib

import numpy as np
import pytest

from conftest import need
from kilobit.core import kbfile
from kilobit.core.rng import Rng, seed_state
from kilobit.models.rkp.model import RKPInt, mem_bytes, power_table, weight
from kilobit.runtimes import REPO, RuntimeFailure
from kilobit.runtimes.c.c_host import CHostConstRuntime, CHostRuntime, build, format_steps
from kilobit.runtimes.host import HostRuntime

FIRMWARE = os.path.join(REPO, "firmware_c")
FIELDS = ("score", "pred", "mistake", "count", "memory")


@pytest.fixture(scope="module")
def bindir():
    need(CHostRuntime().missing())
    return build()


def selftest(bindir, *args, stdin=""):
    r = subprocess.run([os.path.join(bindir, "kb_selftest")] + [str(a) for a in args],
                       input=stdin, stdout=subprocess.PIPE, universal_newlines=True, check=True)
    return [int(x) for x in r.stdout.split()]


# ---- generator ----

def test_rng_first_outputs_are_the_contracts(bindir):
    assert selftest(bindir, "rng", 1, 5) == [0x8181, 0x6021, 0xE999, 0x2E0B, 0xB59E]


def test_rng_full_period_matches_reference(bindir):
    rng = Rng(1)
    want = [rng.next() for _ in range(65535)]
    got = selftest(bindir, "rng", 1, 65535)
    assert got == want
    assert sorted(got) == list(range(1, 65536))  # every nonzero state once: period 65535


@pytest.mark.parametrize("seed", [0, 1, 65534, 65535, 65536, 123456789, 2 ** 32 - 1])
def test_rng_seeding_matches_reference(bindir, seed):
    assert selftest(bindir, "seed", seed) == [seed_state(seed)]


@pytest.mark.parametrize("state,bound", [(1, 1), (1, 62), (777, 200), (65535, 65535),
                                         (4242, 3), (9, 1000)])
def test_rng_below_matches_reference(bindir, state, bound):
    rng = Rng(state)
    assert selftest(bindir, "below", state, 3000, bound) == [rng.below(bound)
                                                             for _ in range(3000)]


# ---- weights ----

def _weight_cases():
    for kernel in ("laplace", "rbf"):
        for bits in range(1, 9):
            for width in range(-8, 5):
                yield kernel, bits, width, 255
    # other scales: rounding (C // 2) and the P[j] <= C bound behave differently
    for C in (1, 2, 7, 100, 254):
        yield "laplace", 6, 2, C
        yield "rbf", 3, 0, C
    yield "rbf", 8, 16, 255  # a full 32-entry table


@pytest.mark.parametrize("kernel,bits,width,C", list(_weight_cases()))
def test_weight_matches_reference(bindir, kernel, bits, width, C):
    """Every k below min(2^J, 65536) and just past 2^J, plus random k up to the max distance."""
    table = power_table(kernel, bits, width, C)
    top = (1 << bits) - 1
    dmax = 64 * (top if kernel == "laplace" else top * top)  # M = 64
    J = len(table)
    ks = set(range(min(1 << J, 1 << 16) + 3))
    gen = np.random.default_rng(bits * 100 + width + C)
    ks.update(int(k) for k in gen.integers(0, min(dmax, (1 << 30) - 1) + 1, 1500))
    ks.update((1 << j) + d for j in range(min(J + 2, 30)) for d in (-1, 0, 1))
    ks.update(k for k in ((1 << j) - 1 for j in range(1, 31)))  # all bits set: most roundings
    ks = sorted(ks)
    got = selftest(bindir, "weight", C, *table, stdin="\n".join(map(str, ks)))
    want = [weight(k, table, C) for k in ks]
    bad = [(k, g, w) for k, g, w in zip(ks, got, want) if g != w]
    assert not bad, "w(k) differs (k, C runtime, reference): %s" % bad[:5]


def test_division_by_multiply_is_exact_for_every_dividend(bindir):
    """The 32-bit path (kb_kernel.h, KB_FAST32) divides the log method's w*P + C//2 by C as a
    multiply by ceil(2^24 / C): exact, and without wrapping, for every C in 1..255 and every
    dividend up to C*C + C//2 (w <= C, P <= C). kb_selftest checks them all."""
    n = sum(C * C + C // 2 + 1 for C in range(1, 256))
    r = subprocess.run([os.path.join(bindir, "kb_selftest"), "recip"], stdout=subprocess.PIPE,
                       universal_newlines=True)
    assert (r.returncode, r.stdout.strip()) == (0, "ok %d" % n)


# ---- learning: replay on kb_replay vs the host reference ----

def make_steps(bits, dims, n, seed, query=0.15):
    """Codes from a noisy linear rule (so scores are not all noise), with repeated points of
    the opposite label (nearest-SV ties, zero scores), all-zero and all-max codes mixed in."""
    gen = np.random.default_rng(seed)
    top = (1 << bits) - 1
    w = gen.normal(size=dims)
    steps, seen = [], []
    for _ in range(n):
        r = gen.random()
        if seen and r < 0.1:
            y, codes = seen[int(gen.integers(len(seen)))]
            y = 1 - y
        elif r < 0.14:
            codes = [top * int(gen.integers(2))] * dims
            y = int(gen.integers(2))
        else:
            codes = [int(c) for c in gen.integers(0, top + 1, dims)]
            y = int((np.dot(w, np.array(codes) / max(top, 1) - 0.5) > 0) ^ (gen.random() < 0.1))
        if gen.random() < query:
            steps.append(("Q", None, codes))
        else:
            steps.append(("L", y, codes))
            seen.append((y, codes))
    return steps


def assert_same(got, want):
    assert len(got) == len(want), "%d results for %d steps" % (len(got), len(want))
    for i, (g, w) in enumerate(zip(got, want)):
        for name, a, b in zip(FIELDS, g, w):
            assert a == b, "step %d, %s: C %r, reference %r" % (i, name, a, b)


CONFIGS = [
    # kernel, bits, dims, budget, width, C, steps
    ("laplace", 4, 2, 62, -6, 255, 800),    # the paper's ATtiny2313 Banana setting
    ("laplace", 4, 2, 62, 0, 255, 800),     # same memory, a 7-entry table: real roundings
    ("laplace", 8, 2, 32, -6, 255, 600),
    ("rbf", 8, 3, 40, -2, 255, 600),
    ("rbf", 4, 2, 62, -6, 255, 600),
    ("laplace", 1, 64, 30, 0, 255, 400),    # bits 1, M = 64
    ("rbf", 1, 64, 20, 2, 255, 400),
    ("laplace", 8, 1, 200, -6, 255, 1200),  # M = 1, budget 200
    ("rbf", 8, 1, 200, 0, 255, 1200),
    ("laplace", 3, 5, 1, 0, 255, 300),      # budget 1: every mistake replaces the only SV
    ("rbf", 8, 64, 12, 4, 255, 300),        # rbf up to 4.16M, a 23-entry table
    ("laplace", 8, 255, 8, 4, 255, 200),    # M = 255 at the laplace 16-bit limit
    ("laplace", 2, 7, 300, -2, 255, 1500),  # budget > 255 (16-bit slot index)
    ("laplace", 6, 4, 50, 2, 7, 600),       # small C: rounding dominates
    ("rbf", 5, 3, 40, -1, 100, 600),
    ("laplace", 2, 2, 20, -8, 255, 300),    # empty table: only exact nearest neighbours
    ("rbf", 1, 10, 40, -2, 255, 600),
]
with open(os.path.join(FIRMWARE, "kb_rkp.h")) as _f:  # tables up to this length: one pass
    ACC_LOG2 = int(re.search(r"#define KB_RKP_ACC_LOG2 (\d+)", _f.read()).group(1))


def test_configs_cover_both_score_algorithms():
    J = [len(power_table(k, b, a, C)) for k, b, _, _, a, C, _ in CONFIGS]
    assert {j for j in J if j <= ACC_LOG2} >= {0, 1, 3, 4}, J
    assert sum(j > ACC_LOG2 for j in J) >= 8, J


@pytest.mark.parametrize("kernel,bits,dims,budget,width,C,n", CONFIGS,
                         ids=["%s-b%d-m%d-t%d-a%d-c%d" % c[:6] for c in CONFIGS])
def test_replay_matches_reference(bindir, kernel, bits, dims, budget, width, C, n):
    model = RKPInt(kernel, bits, dims, budget, width, C, seed=budget + bits).to_bytes()
    steps = make_steps(bits, dims, n, seed=n + dims)
    want = HostRuntime().replay(model, steps)
    assert_same(CHostRuntime().replay(model, steps), want)
    if budget < n // 4:  # the budget filled and random removal ran
        assert want[-1][3] == budget
        assert any(r[2] and prev[3] == budget for prev, r in zip(want, want[1:]))


def test_replay_continues_a_host_trained_snapshot(bindir):
    """A model trained on the host, saved with its scaler and advanced generator, keeps
    learning on the C runtime exactly as it would on the host."""
    m = RKPInt("laplace", 5, 3, 25, -2, 255, seed=3)
    for _, y, codes in make_steps(5, 3, 300, seed=1, query=0):
        m.learn(codes, y)
    assert m.count == 25 and m.rng.state != 3 % 0xFFFF + 1
    lo, hi = np.zeros(3, np.float32), np.array([1.5, 2.0, 9.0], np.float32)
    model = m.to_bytes(scaler=(lo, hi))
    steps = make_steps(5, 3, 300, seed=2)
    assert_same(CHostRuntime().replay(model, steps), HostRuntime().replay(model, steps))


def test_replay_of_no_steps_reports_nothing(bindir):
    model = RKPInt("rbf", 2, 3, 4, 0).to_bytes()
    assert CHostRuntime().replay(model, []) == []


def test_const_build_matches_reference(bindir):
    """The compile-time-parameter path (uint8 slots, uint16 distances and bit positions, int16
    score, as on the ATtiny2313) on the configuration of firmware_c/avr/rkp_check_config.h."""
    for seed, n in ((0, 1000), (5, 600)):
        model = RKPInt("laplace", 4, 2, 62, -6, 255, seed=seed).to_bytes()
        steps = make_steps(4, 2, n, seed=seed + 10)
        want = HostRuntime().replay(model, steps)
        assert want[-1][3] == 62
        assert_same(CHostConstRuntime().replay(model, steps), want)


CONST_CONFIGS = [
    # kernel, bits, dims, budget, width, C, steps: each narrows kb_rkp.h's types differently
    ("rbf", 8, 3, 40, -2, 255, 500),       # two passes, uint32 distance, int16 score
    ("laplace", 2, 7, 300, -2, 255, 1500), # one pass, uint8 distance, uint16 slots, int32 score
    ("laplace", 8, 255, 8, 4, 255, 200),   # uint16 distance at its limit, M = 255
    ("rbf", 1, 64, 20, 2, 255, 400),       # rbf in a uint8 distance
    ("laplace", 2, 2, 20, -8, 255, 300),   # empty table (a one-byte placeholder array)
    ("laplace", 3, 300, 20, -2, 9, 300),   # M > 255 (uint16 dims), uint32 bit positions
]


@pytest.mark.parametrize("kernel,bits,dims,budget,width,C,n", CONST_CONFIGS,
                         ids=["%s-b%d-m%d-t%d-a%d-c%d" % c[:6] for c in CONST_CONFIGS])
def test_other_const_builds_match_reference(bindir, kernel, bits, dims, budget, width, C, n):
    """What a host-generated header compiles to, for configurations beyond the ATtiny's."""
    table = power_table(kernel, bits, width, C)
    name = "%s-b%d-m%d-t%d-a%d-c%d" % (kernel, bits, dims, budget, width, C)
    defs = ["-DKB_RKP_CONST", "-DKB_RKP_CONST_KERNEL=%d" % ("laplace", "rbf").index(kernel),
            "-DKB_RKP_CONST_BITS=%d" % bits, "-DKB_RKP_CONST_DIMS=%d" % dims,
            "-DKB_RKP_CONST_BUDGET=%d" % budget, "-DKB_RKP_CONST_C=%d" % C,
            "-DKB_RKP_CONST_NTAB=%d" % len(table),
            "-DKB_RKP_CONST_TABLE_INIT={%s}" % (",".join(map(str, table)) or "0")]
    r = subprocess.run(["make", "-s", "-C", FIRMWARE, "BUILD=" + os.path.dirname(bindir),
                        "replay-const", "NAME=" + name, "DEFS=" + " ".join(defs)],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True)
    assert r.returncode == 0, r.stdout
    runtime = CHostRuntime()
    runtime.program = "kb_replay_" + name
    model = RKPInt(kernel, bits, dims, budget, width, C, seed=7).to_bytes()
    steps = make_steps(bits, dims, n, seed=dims + budget)
    assert_same(runtime.replay(model, steps), HostRuntime().replay(model, steps))


@pytest.mark.parametrize("name,defs", [("bytewise", "-DKB_NO_FAST32"),
                                       ("ckp_cache1", "-DKB_CKP_CACHE=1")])
def test_other_code_paths_replay_every_learner_golden_file(bindir, name, defs):
    """kb_replay on the host with the byte-wise code the AVR firmwares compile (-DKB_NO_FAST32:
    the 32-bit path of kb_kernel.h off), and with the 32-bit CKP step keeping one slot's
    distance (every other slot decoded again, as past KB_CKP_CACHE support vectors), replays
    every RKP and CKP golden file bit for bit."""
    import glob
    import json

    from kilobit.golden import compare, replay_doc
    r = subprocess.run(["make", "-s", "-C", FIRMWARE, "BUILD=" + os.path.dirname(bindir),
                        "replay-const", "NAME=" + name, "DEFS=" + defs],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True)
    assert r.returncode == 0, r.stdout
    runtime = CHostRuntime()
    runtime.program = "kb_replay_" + name
    paths = sorted(glob.glob(os.path.join(REPO, "tests", "golden", "rkp-*.json")) +
                   glob.glob(os.path.join(REPO, "tests", "golden", "ckp-*.json")))
    assert len(paths) >= 20
    for path in paths:
        with open(path) as f:
            doc = json.load(f)
        assert compare(doc, runtime.name, replay_doc(doc, runtime)) is None, path


@pytest.mark.parametrize("params", [("laplace", 4, 2, 61, -6), ("laplace", 4, 3, 62, -6),
                                    ("rbf", 4, 2, 62, -6), ("laplace", 4, 2, 62, 0)])
def test_const_build_refuses_other_parameters(bindir, params):
    model = RKPInt(*params).to_bytes()
    with pytest.raises(RuntimeFailure, match=MSG["mismatch"]):
        CHostConstRuntime().replay(model, [])


# ---- refusals ----

GOOD = RKPInt("laplace", 4, 2, 6, -2, 255, seed=1)
for _op, _y, _codes in make_steps(4, 2, 40, seed=3, query=0):
    GOOD.learn(_codes, _y)
PARAMS = struct.Struct("<BBHHbBHHB")
MSG = {
    "magic": "not a kilobit model file (bad magic)",
    "version": "unsupported model file version",
    "type": "unknown model type",
    "truncated": "truncated or padded model file",
    "crc": "corrupt model file (CRC mismatch)",
    "param": "bad rkp parameters",
    "table": "bad rkp weight table",
    "trailer": "bad rkp trailer",
    "limit": "model too large for this build",
    "mismatch": "model parameters differ from the compiled-in ones",
}


def payload(**change):
    """GOOD's payload with header fields, table, memory or trailer replaced."""
    p = kbfile.unpack(GOOD.to_bytes())[1]
    f = dict(zip(("kernel", "bits", "dims", "budget", "width", "C", "rng", "count", "ntab"),
                 PARAMS.unpack_from(p)))
    table = change.pop("table", GOOD.table)
    mem = change.pop("mem", GOOD.memory())
    trailer = change.pop("trailer", b"\x00")
    f["ntab"] = len(table)
    f.update(change)
    return PARAMS.pack(*f.values()) + bytes(table) + mem + trailer


def container(p, magic=b"KBIT", version=1, mtype=1, length=None):
    """A container around payload p with a correct CRC (so that only the planted fault shows)."""
    body = struct.pack("<4sBBHI", magic, version, mtype, 0, len(p) if length is None else length)
    body += p
    return body + struct.pack("<I", zlib.crc32(body))


def _bad_files():
    good = container(payload())
    yield "magic", b"KBIX" + good[4:]
    yield "magic", b"KB"
    yield "magic", b"\x00" * 40
    yield "version", container(payload(), version=2)
    yield "version", container(payload(), version=0)
    yield "type", container(payload(), mtype=6)  # 2 is ckp (issue 4), 4 protonn (issue 6)
    yield "type", container(payload(), mtype=0)
    yield "truncated", good[:-1]
    yield "truncated", good + b"\x00"
    yield "truncated", good[:10]
    yield "truncated", container(payload()[:12])  # not even the parameters
    yield "truncated", container(payload(), length=len(payload()) + 1)
    yield "crc", good[:20] + bytes([good[20] ^ 1]) + good[21:]
    yield "crc", good[:-1] + bytes([good[-1] ^ 0x80])
    for change in (dict(bits=9), dict(bits=0), dict(dims=0), dict(budget=0), dict(width=17),
                   dict(width=-17), dict(C=0), dict(kernel=2), dict(rng=0),
                   dict(count=7), dict(ntab=33),
                   dict(dims=258, bits=8, mem=b"\x00" * mem_bytes(6, 258, 8)),  # laplace > 16 bits
                   dict(kernel=1, dims=16513, bits=8)):  # rbf > 30 bits
        yield "param", container(payload(**change))
    yield "truncated", container(payload(mem=GOOD.memory()[:-1], trailer=b""))
    yield "truncated", container(payload(table=GOOD.table + [5] * 4)[:-6])  # table overruns
    yield "table", container(payload(table=[94, 155, 35]))  # increasing
    yield "table", container(payload(table=[155, 0]))
    yield "table", container(payload(C=150, table=[155, 94]))  # P > C
    yield "trailer", container(payload(trailer=b"\x02"))
    yield "trailer", container(payload(trailer=b"\x00\x00"))
    yield "trailer", container(payload(trailer=b"\x01" + b"\x00" * 15))  # scaler of 2 dims: 16 B


BAD = list(_bad_files())


@pytest.mark.parametrize("kind,data", BAD, ids=["%s-%d" % (k, i) for i, (k, _) in enumerate(BAD)])
def test_refuses_bad_model_with_its_own_error(bindir, kind, data):
    with pytest.raises(RuntimeFailure) as ref:
        HostRuntime().replay(data, [])  # the reference refuses it too
    with pytest.raises(RuntimeFailure) as c:
        CHostRuntime().replay(data, [])
    assert str(c.value) == MSG[kind], "reference said: %s" % ref.value


def test_error_texts_are_distinct(bindir):
    r = subprocess.run([os.path.join(bindir, "kb_selftest"), "errors"], stdout=subprocess.PIPE,
                       universal_newlines=True, check=True)
    texts = [line.split(" ", 1)[1] for line in r.stdout.splitlines()]
    assert texts[0] == "ok" and len(set(texts)) == len(texts) == len(MSG) + 1
    assert set(MSG.values()) == set(texts[1:])


def test_accepts_every_legal_trailer(bindir):
    for scaler in (None, (np.zeros(2, np.float32), np.ones(2, np.float32))):
        model = GOOD.to_bytes(scaler)
        assert CHostRuntime().replay(model, [("Q", None, [1, 2])])[0][3] == GOOD.count


def test_refuses_model_beyond_the_host_buffers(bindir):
    """Valid by the contract (the reference accepts it), but its 520 KB memory exceeds what
    kb_replay provides: a clear refusal, not an overflow."""
    p = PARAMS.pack(0, 8, 8, 65535, 0, 255, 1, 0, 0) + bytes(mem_bytes(65535, 8, 8)) + b"\x00"
    with pytest.raises(RuntimeFailure, match=MSG["limit"]):
        CHostRuntime().replay(kbfile.pack("rkp", p), [])


@pytest.mark.parametrize("line", ["X 1 2", "L 2 1 1", "L 1 1", "L 1 1 1 1", "Q 1 16",
                                  "Q -1 1", "Q 1 +1", "L1 1 1", "Q 1 0x1", "L"])
def test_malformed_step_exits_3(bindir, tmp_path, line):
    model = tmp_path / "m.kb"
    model.write_bytes(RKPInt("laplace", 4, 2, 5, -2).to_bytes())
    r = subprocess.run([os.path.join(bindir, "kb_replay"), str(model)],
                       input="Q 1 1\n" + line + "\n", stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, universal_newlines=True)
    assert r.returncode == 3
    assert r.stderr.startswith("error: step 2: ")
    assert r.stdout == "0 0 0 0\n"


def test_step_format_round_trips():
    assert format_steps([("L", 1, [3, 4]), ("Q", None, [0, 15])]) == "L 1 3 4\nQ 0 15\n"


# ---- AVR ----

def test_no_floating_point_in_the_sources():
    for root, _, files in os.walk(FIRMWARE):
        for name in files:
            if name.endswith((".c", ".h")):
                with open(os.path.join(root, name)) as f:
                    code = re.sub(r"/\*.*?\*/|//[^\n]*", "", f.read(), flags=re.S)
                assert not re.search(r"\b(float|double)\b|<math\.h>", code), name


def test_avr_check_builds_small_and_float_free():
    missing = [t for t in ("make", "avr-gcc", "avr-size", "avr-nm") if shutil.which(t) is None]
    need(" and ".join(missing) + " not found" if missing else None)
    r = subprocess.run(["make", "-s", "-C", FIRMWARE, "BUILD=" + os.path.join(REPO, "build",
                                                                              "firmware_c"),
                        "avr-check"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       universal_newlines=True)
    assert r.returncode == 0, r.stdout
    for mcu in ("attiny2313", "atmega328p"):
        assert "%s: no floating-point symbols" % mcu in r.stdout, r.stdout
    sizes = dict(re.findall(r"Device: (\w+)\s+Program:\s+(\d+) bytes", r.stdout))
    # The whole ATtiny2313 firmware must fit 1700 B; the learner alone leaves room for the rest.
    assert int(sizes["attiny2313"]) <= 1200, r.stdout
    ram = dict(re.findall(r"Device: (\w+)\s+Program:.*?\nData:\s+(\d+) bytes", r.stdout, re.S))
    assert int(ram["attiny2313"]) <= 96, r.stdout  # 70 B memory + model state, of 128 B
