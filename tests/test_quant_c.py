"""The integer quantizer and the extras trailer in C (issue 28; docs/contract.md 1.1 and 4.1):
kb_quant.h against a Python transcription of contract 1.1 on edge and random bounds and
readings, every C loader accepting and refusing the same trailers (kb_file_trailer), and the
host replay tools' raw mode (-r) against the same tools fed the reference's codes."""
import json
import os
import shutil
import struct
import subprocess
import zlib

import numpy as np
import pytest

from conftest import need
from kilobit.core.paths import REPO
from kilobit.models import registry
from kilobit.runtimes import export
from kilobit.runtimes.avr import firmware
from kilobit.runtimes.c.c_host import CHostRuntime, build
from kilobit.runtimes.host import HostRuntime

GOLDEN = os.path.join(REPO, "tests", "golden")
#: one golden model of each type: (file, tool, n raw inputs of the model)
MODELS = {
    "rkp": "rkp-laplace-b4-t62-m2-a-6-s1.json",
    "ckp": "ckp-L200-bits7-dims4-norm-5000-seed30-steps150-width300.json",
    "bonsai": "bonsai-classes10-depth2-dims16-in_bits4-proj8-seed103-steps50-tenc0-wbits16-"
              "zenc1.json",
    "protonn": "protonn-classes10-d8-dims16-in_bits4-m30-nt40-penc1-seed202-steps50-"
               "wbits16.json",
    "assoc": "assoc-P4-R1-approachI-I-bits4-cap5-d3-kt1-seed43-steps100.json",
}
TOOL = {"rkp": "kb_replay", "ckp": "kb_replay", "bonsai": "kb_predict",
        "protonn": "kb_predict", "assoc": "kb_assoc_replay"}


def ref_code(lo, hi, x, b, floor):
    """Contract 1.1, transcribed (the executable spec the C is held to)."""
    top, span = (1 << b) - 1, hi - lo
    if span == 0 or x <= lo:
        return 0
    if x >= hi:
        return top
    S = 28 - b
    M = ((1 << 28) + span // 2) // span
    R = 0 if floor else 1 << (S - 1)
    return min(((x - lo) * M + R) >> S, top)


@pytest.fixture(scope="module")
def bindir():
    need(CHostRuntime().missing())
    return build()


# ---- kb_quant.h, one feature at a time ----

def _cases(rng):
    """(lo, hi, x): every edge of contract 1.1's ranges and random ones."""
    lim, span_max = 1 << 30, (1 << 28) - 1
    bounds = [(0, 0), (5, 5), (-lim, -lim), (lim - 1, lim - 1), (0, 1), (-1, 0), (0, 2),
              (0, 3), (0, 255), (-lim, -lim + span_max), (lim - 1 - span_max, lim - 1),
              (-32768, 32767), (0, 4095), (-7, 1000), (123456, 123456 + span_max)]
    for _ in range(300):
        lo = int(rng.integers(-lim, lim))
        span = int(rng.choice([rng.integers(0, 8), rng.integers(0, 1 << 16),
                               rng.integers(0, span_max + 1)]))
        if lo + span <= lim - 1:
            bounds.append((lo, lo + span))
    for lo, hi in bounds:
        xs = {lo - 1, lo, lo + 1, hi - 1, hi, hi + 1, (lo + hi) // 2, -(1 << 31), (1 << 31) - 1}
        xs |= {int(v) for v in rng.integers(lo, hi + 1, size=12)}
        for x in sorted(xs):
            if -(1 << 31) <= x < 1 << 31:
                yield lo, hi, x


@pytest.mark.parametrize("mtype,floor", [(1, False), (2, True), (5, False)])
def test_kb_quant_equals_the_contract(bindir, mtype, floor):
    """Round half up (rkp, bonsai, protonn, assoc) and ckp's floor, every code width."""
    cases = list(_cases(np.random.default_rng(28 + mtype)))
    text = "".join("%d %d %d\n" % c for c in cases)
    for b in range(1, 9):
        r = subprocess.run([os.path.join(bindir, "kb_selftest"), "quant", str(mtype), str(b)],
                           input=text, stdout=subprocess.PIPE, universal_newlines=True,
                           check=True)
        got = [int(v) for v in r.stdout.split()]
        want = [ref_code(lo, hi, x, b, floor) for lo, hi, x in cases]
        assert len(got) == len(cases)
        bad = [(c, g, w) for c, g, w in zip(cases, got, want) if g != w]
        assert not bad, "b=%d: (lo, hi, x), C, contract: %s" % (b, bad[:5])
        assert set(want) == set(range(1 << b))  # every code, not only the clamps


def test_kb_quant_equals_the_hosts_int_quantizer(bindir):
    """The host's IntQuantizer (kilobit.core.quant) and the C give the same codes."""
    quant = pytest.importorskip("kilobit.core.quant")
    if not hasattr(quant, "IntQuantizer"):
        pytest.skip("the host's IntQuantizer is not there yet")
    rng = np.random.default_rng(7)
    X = rng.integers(-3000, 3000, size=(200, 6))
    X[:, 2] = 17  # a constant feature
    for b, floor, mtype in ((4, False, 1), (3, True, 2), (8, False, 5)):
        q = quant.IntQuantizer(b, floor=floor).fit(X[:100])
        want = q.codes(X)
        lines = ["%d %d %d\n" % (q.lo_[j], q.hi_[j], X[i, j])
                 for i in range(len(X)) for j in range(X.shape[1])]
        r = subprocess.run([os.path.join(bindir, "kb_selftest"), "quant", str(mtype), str(b)],
                           input="".join(lines), stdout=subprocess.PIPE,
                           universal_newlines=True, check=True)
        got = np.array([int(v) for v in r.stdout.split()]).reshape(X.shape)
        assert (got == want).all()


# ---- model files with extras ----

def base_payload(name):
    """A golden model's payload without its trailer (the model's bytes only)."""
    with open(os.path.join(GOLDEN, MODELS[name])) as f:
        model = bytes.fromhex(json.load(f)["model_file"])
    _, m, _ = registry.load(model)
    data = m.to_bytes()
    payload = data[12:-4]
    assert payload[-1] == 0  # no extras: the trailer is the single byte
    return data[5], m, payload[:-1]


def frame(mtype, payload):
    body = struct.pack("<4sBBHI", b"KBIT", 1, mtype, 0, len(payload)) + payload
    return body + struct.pack("<I", zlib.crc32(body))


def quant_section(lo, hi):
    return struct.pack("<%di" % len(lo), *lo) + struct.pack("<%di" % len(hi), *hi)


def labels_section(labels):
    return bytes([len(labels)]) + b"".join(bytes([len(v)]) + v for v in labels)


def n_inputs(m):
    return m.T if hasattr(m, "T") else m.dims


def code_bits(m):
    return getattr(m, "bits", None) or m.in_bits


def run_tool(bindir, name, model, steps="", raw=False, tmp=None):
    """(exit status, stdout, stderr, memory output or None) of the model type's replay tool."""
    path = os.path.join(tmp, "m.kb")
    with open(path, "wb") as f:
        f.write(model)
    args = [os.path.join(bindir, TOOL[name])] + (["-r"] if raw else []) + [path]
    memout = os.path.join(tmp, "mem.bin")
    if name == "assoc":
        args.append(memout)
    r = subprocess.run(args, input=steps, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       universal_newlines=True)
    mem = None
    if name == "assoc" and os.path.exists(memout):
        with open(memout, "rb") as f:
            mem = f.read()
        os.unlink(memout)
    return r.returncode, r.stdout, r.stderr, mem


def _trailers(n):
    """(what, trailer bytes, accepted) for a model of n raw inputs (contract 4.1)."""
    lim, span = 1 << 30, 1 << 28
    lo, hi = [-5] * n, [100] * n
    good_labels = labels_section([b"walk", b"run", b"~ x ~"])
    yield "none", b"\x00", True
    yield "scaler", b"\x01" + bytes(8 * n), True
    yield "quant", b"\x02" + quant_section(lo, hi), True
    yield "quant edges", b"\x02" + quant_section([-lim] + [7] * (n - 1),
                                                 [-lim + span - 1] + [7] * (n - 1)), True
    yield "quant top", b"\x02" + quant_section([lim - span] * n, [lim - 1] * n), True
    yield "labels", b"\x04" + good_labels, True
    yield "scaler labels", b"\x05" + bytes(8 * n) + good_labels, True
    yield "quant labels", b"\x06" + quant_section(lo, hi) + labels_section([b"a" * 32] * 255), True
    yield "both scalers", b"\x03" + bytes(16 * n), False
    yield "bit 3", b"\x08", False
    yield "bit 7", b"\x80", False
    yield "bytes after", b"\x00\x00", False
    yield "scaler short", b"\x01" + bytes(8 * n - 1), False
    yield "scaler long", b"\x01" + bytes(8 * n + 1), False
    yield "quant short", b"\x02" + quant_section(lo, hi)[:-1], False
    yield "quant lo > hi", b"\x02" + quant_section([5] + lo[1:], [4] + hi[1:]), False
    yield "quant lo < -2^30", b"\x02" + quant_section([-lim - 1] + lo[1:], hi), False
    yield "quant hi = 2^30", b"\x02" + quant_section(lo, hi[:-1] + [lim]), False
    yield "quant span 2^28", b"\x02" + quant_section(lo, [lo[0] + span] + hi[1:]), False
    yield "labels K 0", b"\x04\x00", False
    yield "labels missing", b"\x04", False
    yield "label empty", b"\x04" + labels_section([b"a", b""]), False
    yield "label 33", b"\x04" + labels_section([b"a" * 33]), False
    yield "label unprintable", b"\x04" + labels_section([b"a\x7f"]), False
    yield "label control", b"\x04" + labels_section([b"\tab"]), False
    yield "label cut", b"\x04" + labels_section([b"abc", b"def"])[:-1], False
    yield "labels fewer than K", b"\x04\x03" + b"\x01a\x01b", False
    yield "labels then bytes", b"\x04" + good_labels + b"\x00", False


@pytest.mark.parametrize("name", sorted(MODELS))
def test_every_loader_checks_the_trailer_as_the_contract_says(bindir, tmp_path, name):
    mtype, m, payload = base_payload(name)
    for what, trailer, ok in _trailers(n_inputs(m)):
        code, _, err, _ = run_tool(bindir, name, frame(mtype, payload + trailer), tmp=tmp_path)
        if ok:
            assert code == 0, "%s: %s refused: %s" % (name, what, err)
        else:
            assert code == 2 and err.strip() == "error: bad %s trailer" % name, (
                "%s: %s: %s" % (name, what, err))
    # without even the extras byte the payload is short, as before
    code, _, err, _ = run_tool(bindir, name, frame(mtype, payload), tmp=tmp_path)
    assert code == 2 and "truncated" in err


# ---- raw steps (-r) ----

def _bounds(rng, n):
    lo = rng.integers(-40000, 40000, size=n)
    span = rng.integers(0, 70000, size=n)
    span[0] = 0  # a constant feature
    return [int(v) for v in lo], [int(a + s) for a, s in zip(lo, span)]


def _raw_steps(name, m, lo, hi, rng, nsteps=60):
    """(raw step text, code step text): the same steps, raw and quantized by the reference."""
    n, b = n_inputs(m), code_bits(m)
    floor = name == "ckp"
    raw_lines, code_lines = [], []
    for i in range(nsteps):
        x = [int(rng.integers(lo[j] - 500, hi[j] + 500)) for j in range(n)]
        if i % 7 == 0:
            x = [lo[j] if j % 2 else hi[j] for j in range(n)]
        codes = [ref_code(lo[j], hi[j], x[j], b, floor) for j in range(n)]
        if name == "assoc":
            codes = [c - (1 << (b - 1)) for c in codes]
        if name in ("bonsai", "protonn"):
            head = "P"
        elif i % 3 == 2:
            head = "Q"
        else:
            y = int(rng.integers(0, 3 if name == "assoc" else 2))
            head = "L %d" % y
        raw_lines.append(" ".join([head] + [str(v) for v in x]) + "\n")
        code_lines.append(" ".join([head] + [str(v) for v in codes]) + "\n")
    return "".join(raw_lines), "".join(code_lines)


@pytest.mark.parametrize("name", sorted(MODELS))
def test_raw_steps_replay_as_their_codes(bindir, tmp_path, name):
    """`TOOL -r` on raw readings answers exactly what TOOL answers on the reference's codes."""
    mtype, m, payload = base_payload(name)
    rng = np.random.default_rng(100 + sorted(MODELS).index(name))
    lo, hi = _bounds(rng, n_inputs(m))
    model = frame(mtype, payload + b"\x06" + quant_section(lo, hi) + labels_section([b"x"]))
    raw, coded = _raw_steps(name, m, lo, hi, rng)
    got = run_tool(bindir, name, model, raw, raw=True, tmp=tmp_path)
    want = run_tool(bindir, name, model, coded, tmp=tmp_path)
    assert got[0] == 0 and want[0] == 0, (got[2], want[2])
    assert got[1] == want[1] and got[3] == want[3]
    assert len(set(got[1].splitlines())) > 3  # the steps are not all alike


@pytest.mark.parametrize("name", sorted(MODELS))
def test_raw_steps_are_refused_without_a_quantizer_or_malformed(bindir, tmp_path, name):
    mtype, m, payload = base_payload(name)
    n = n_inputs(m)
    code, _, err, _ = run_tool(bindir, name, frame(mtype, payload + b"\x00"), "", raw=True,
                               tmp=tmp_path)
    assert code == 2 and "integer quantizer" in err
    model = frame(mtype, payload + b"\x02" + quant_section([0] * n, [9] * n))
    head = "P" if name in ("bonsai", "protonn") else "Q"
    for steps, why in ((" ".join([head] + ["1"] * (n - 1)), "fewer raw values"),
                       (" ".join([head] + ["1"] * (n + 1)), "more raw values"),
                       (" ".join([head] + ["2147483648"] + ["1"] * (n - 1)), "32-bit"),
                       (" ".join([head] + ["1.5"] + ["1"] * (n - 1)), "32-bit")):
        code, _, err, _ = run_tool(bindir, name, model, steps + "\n", raw=True, tmp=tmp_path)
        assert code == 3 and why in err, (steps[:40], err)
    extreme = " ".join([head] + ["-2147483648"] + ["2147483647"] * (n - 1))
    code, _, err, _ = run_tool(bindir, name, model, extreme + "\n", raw=True, tmp=tmp_path)
    assert code == 0, err


def _steps(text):
    """Step lines -> the runtimes' step tuples."""
    out = []
    for line in text.splitlines():
        f = line.split()
        if f[0] == "L":
            out.append(("L", int(f[1]), [int(v) for v in f[2:]]))
        else:
            out.append((f[0], None, [int(v) for v in f[1:]]))
    return out


@pytest.mark.parametrize("name", sorted(MODELS))
def test_c_host_runtime_replays_raw_steps_as_the_reference_their_codes(bindir, name):
    """What `golden check --runtime c-host` runs for a raw case: CHostRuntime.replay(..., raw=True)
    on raw readings gives the rows the host reference gives on the contract's codes."""
    mtype, m, payload = base_payload(name)
    rng = np.random.default_rng(200 + sorted(MODELS).index(name))
    lo, hi = _bounds(rng, n_inputs(m))
    model = frame(mtype, payload + b"\x02" + quant_section(lo, hi))
    raw, coded = _raw_steps(name, m, lo, hi, rng, nsteps=30)
    got = CHostRuntime().replay(model, _steps(raw), raw=True)
    want = HostRuntime().replay(model, _steps(coded))
    assert [r[:-1] for r in got] == [r[:-1] for r in want]
    # a memory a runtime reports (None: unchanged, not reported) is the reference's
    assert all(g[-1] == w[-1] for g, w in zip(got, want) if g[-1] is not None)
    assert got[-1][-1] is not None and len(set(r[:-1] for r in got)) > 3


# ---- the exported header's NAME_quantize ----

USE_QUANTIZE = r"""
#include <stdio.h>
#include "model.h"
#ifdef Q_KIND_CLASSES
typedef int8_t out_t;
#else
typedef uint8_t out_t;
#endif

int main(void)
{
    static int32_t r32[Q_DIMS];
    static int16_t r16[Q_DIMS];
    static out_t out[Q_DIMS];
    long v;
    int j, narrow;
    for (;;) {
        narrow = 1;
        for (j = 0; j < Q_DIMS; j++) {
            if (scanf("%ld", &v) != 1)
                return 0;
            r32[j] = (int32_t)v;
            r16[j] = (int16_t)v;
            narrow = narrow && v >= -32768 && v <= 32767;
        }
        q_quantize32(r32, out);
        for (j = 0; j < Q_DIMS; j++)
            printf("%d ", out[j]);
        if (narrow) {
            q_quantize(r16, out);
            printf("|");
            for (j = 0; j < Q_DIMS; j++)
                printf(" %d", out[j]);
        }
        printf("\n");
    }
}
"""


@pytest.mark.parametrize("name", sorted(MODELS))
def test_exported_quantize_equals_the_contract(bindir, tmp_path, name):
    """`kilobit export` of a model with an integer quantizer: q_quantize and q_quantize32,
    compiled on the host, give the contract's codes (assoc: its int8 values); the header
    compiles warning-free for the AVR (constants in flash) and the Cortex-M0+ too."""
    mtype, m, payload = base_payload(name)
    n, b = n_inputs(m), code_bits(m)
    rng = np.random.default_rng(300 + sorted(MODELS).index(name))
    lo, hi = _bounds(rng, n)
    lo[-1], hi[-1] = -(1 << 30), -(1 << 30) + (1 << 28) - 1  # the widest span, lowest bounds
    model = frame(mtype, payload + b"\x02" + quant_section(lo, hi))
    text, _ = export.header(model, name="q", target="host")
    assert "q_quantize(" in text and "kilobit.core.quant.quantize" not in text
    (tmp_path / "model.h").write_text(text)
    (tmp_path / "use.c").write_text(USE_QUANTIZE)
    exe = str(tmp_path / "use")
    subprocess.run(["gcc", "-std=c99", "-O2", "-Wall", "-Wextra", "-Werror"] + list(firmware.WARN)
                   + ["-o", exe, str(tmp_path / "use.c")], check=True, cwd=str(tmp_path))
    rows = [[int(rng.integers(lo[j] - 300, hi[j] + 300)) for j in range(n)] for _ in range(60)]
    rows += [lo, hi, [v + 1 for v in lo], [v - 1 for v in hi],
             [-(1 << 31)] * n, [(1 << 31) - 1] * n, [-32768] * n, [32767] * n]
    rows += [[min(max(v, -32768), 32767) for v in row] for row in rows[:20]]  # int16 readings
    r = subprocess.run([exe], input="".join(" ".join(map(str, row)) + "\n" for row in rows),
                       stdout=subprocess.PIPE, universal_newlines=True, check=True)
    lines = r.stdout.splitlines()
    assert len(lines) == len(rows)
    shift = 1 << (b - 1) if name == "assoc" else 0
    for row, line in zip(rows, lines):
        want = [ref_code(lo[j], hi[j], row[j], b, name == "ckp") - shift for j in range(n)]
        wide, _, narrow = line.partition("|")
        assert [int(v) for v in wide.split()] == want, row
        if all(-32768 <= v <= 32767 for v in row):
            assert [int(v) for v in narrow.split()] == want, row
    assert sum(1 for line in lines if "|" in line) > 10
    for cc, flags in (("avr-gcc", ["-mmcu=atmega328p", "-Os"]),
                      ("arm-none-eabi-gcc", ["-mcpu=cortex-m0plus", "-mthumb", "-Os"])):
        need(None if shutil.which(cc) else "%s not found" % cc)
        subprocess.run([cc] + flags + ["-std=c99", "-Wall", "-Wextra", "-Werror"]
                       + list(firmware.WARN) + ["-c", "-o", str(tmp_path / "use.o"),
                                                str(tmp_path / "use.c")],
                       check=True, cwd=str(tmp_path))


def test_exported_header_says_how_a_float_scaled_model_quantizes(bindir):
    """Without an integer quantizer, the header names the host's scaler and the model's own
    rounding: ckp floors (no longer the rounding kilobit.core.quant.quantize)."""
    for name, says in (("ckp", ("floored to B bits", "kilobit.models.ckp.model.quantize",
                                "not kilobit.core.quant.quantize, which rounds half up")),
                       ("rkp", ("rounded half up to B bits (kilobit.core.quant.quantize)",)),
                       ("assoc", ("kilobit.models.assoc.model.to_int8",))):
        mtype, m, payload = base_payload(name)
        n = n_inputs(m)
        text, _ = export.header(frame(mtype, payload + b"\x01" + bytes(8 * n)), name="f",
                                target="host")
        flat = " ".join(line.strip(" */") for line in text.splitlines())
        assert "float scaler" in flat and "f_quantize" not in text
        for phrase in says:
            assert phrase in flat, (name, phrase)
