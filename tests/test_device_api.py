"""Issue 28: the board's model API in kbit, the same under CPython, MicroPython (WebAssembly)
and the unix port with the x64 native modules and in bytecode.

- kbit.load(path | bytes | stream) returns the model of the file's type; a wrong type names both
  types; a file's trailer (contract 4.1: integer quantizer, labels, float scaler) is read by
  every loader and written back byte for byte by save().
- m.quantize(raw, out=None) is contract 1.1 bit for bit (checked here against a reference of
  our own over random and edge values, b = 1, 8, 16, both roundings, assoc's signed values) and
  allocation-free under micropython.heap_lock when out is given.
- m.predict(codes) answers the user's label for every type; m.learn(codes, label) takes a label.
- A table of REPL misuse (types, lengths, ranges, labels, files) for every model type: each a
  clear exception, the same type and wording on every runtime and path, the model's saved
  bytes unchanged afterwards.
"""
import glob
import io
import json
import os
import random
import struct
import zlib

import pytest

from conftest import need
from kilobit.runtimes.micropython import kbit_unix, natmod
from kilobit.runtimes.micropython.kbit_wasm import missing_wasm, run as wasm_run

HERE = os.path.dirname(os.path.abspath(__file__))
PICKS = ["rkp-laplace-b4-t62-m2-a-6-s1", "ckp-*-seed21-*", "bonsai-*-seed103-*",
         "protonn-*-seed202-*", "assoc-*-seed41-*"]
LABELS = ("walk", "run", "sit", "stand", "jump", "lie", "wave", "clap", "kick", "turn")


# --- contract 1.1 and 4.1, written here from the contract text (not from kbit) ---

def ref_code(x, lo, hi, b, floor=False, signed=False):
    S = 28 - b
    top = (1 << b) - 1
    span = hi - lo
    if span == 0 or x <= lo:
        c = 0
    elif x >= hi:
        c = top
    else:
        M = ((1 << 28) + span // 2) // span
        R = 0 if floor else 1 << (S - 1)
        c = min(((x - lo) * M + R) >> S, top)
    return c - (1 << (b - 1)) if signed else c


def ref_trailer(lo=None, hi=None, names=None, scaler=None):
    flags, out = 0, b""
    if scaler is not None:
        flags |= 1
        out += scaler
    if lo is not None:
        flags |= 2
        out += struct.pack("<%di" % len(lo), *lo) + struct.pack("<%di" % len(hi), *hi)
    if names is not None:
        flags |= 4
        out += bytes((len(names),)) + b"".join(bytes((len(s),)) + s.encode() for s in names)
    return bytes((flags,)) + out


def container(mtype, payload):
    head = b"KBIT" + struct.pack("<BBHI", 1, mtype, 0, len(payload)) + payload
    return head + struct.pack("<I", zlib.crc32(head) & 0xFFFFFFFF)


def golden_blob(pick):
    path = sorted(glob.glob(os.path.join(HERE, "golden", pick + ".json")))[0]
    with open(path) as f:
        return bytes.fromhex(json.load(f)["model_file"])


def bare(blob):
    """(model type, payload without its trailer, n raw inputs, code bits, floor, signed)."""
    import kbit
    from kbit import kbfile
    m = kbit.load(blob)
    payload = blob[12:-4]
    payload = payload[:len(payload) - len(kbfile.trailer(m))]
    n = m.T if hasattr(m, "T") else m.dims
    bits = m.in_bits if hasattr(m, "in_bits") else m.bits
    return blob[5], payload, n, bits, blob[5] == 2, blob[5] == 5


def with_extras(blob, seed, labels=True):
    """blob with a trailer of an integer quantizer (random bounds, some spans 0) and labels;
    also (lo, hi, bits, floor, signed, raw readings)."""
    mtype, payload, n, bits, floor, signed = bare(blob)
    rs = random.Random(seed)
    lo, hi = [], []
    for j in range(n):
        a = rs.randrange(-40000, 40000)
        lo.append(a)
        hi.append(a if j % 7 == 3 else a + rs.randrange(1, 70000))
    raw = [rs.randrange(lo[j] - 500, hi[j] + 500) for j in range(n)]
    raw[0], raw[-1] = lo[0], hi[-1]
    names = LABELS if labels else None
    out = container(mtype, payload + ref_trailer(lo, hi, names))
    return out, (lo, hi, bits, floor, signed, raw)


# --- the script every runtime runs: one line per result ---
SCRIPT = r"""
import io
import sys
from array import array
import kbit
from kbit import quant
from kbit.kbfile import ModelFileError
try:
    import micropython
except ImportError:
    micropython = None


def saved(m):
    s = io.BytesIO()
    m.save(s)
    return s.getvalue()


def outcome(f):
    try:
        f()
    except Exception as e:
        return "%s: %s" % (type(e).__name__, e)
    return "no error"


def learner(m):
    return hasattr(m, "learn")


def after(m, b):
    # a learner's answer; a predictor's for the input streamed feature by feature without a
    # reset first: a refused call must not have moved the feature index
    if learner(m):
        return m.predict(b)
    try:
        for j in range(len(b)):
            m.update(j, b[j])
        return m.predict()
    except Exception as e:
        m.reset()
        return repr(e)


def cases(m, codes, raw):
    # (name, call): each must raise, and change nothing
    n = len(codes)
    lo = -(1 << (m.bits - 1)) if hasattr(m, "T") else 0
    top = lo + (1 << (m.in_bits if hasattr(m, "in_bits") else m.bits)) - 1
    hi_code = list(codes)
    hi_code[0] = top + 1
    lo_code = list(codes)
    lo_code[n - 1] = lo - 1
    out = [
        ("predict floats", lambda: m.predict([0.5] * n)),
        ("predict float", lambda: m.predict(1.5)),
        ("predict short", lambda: m.predict(codes[:n - 1])),
        ("predict long", lambda: m.predict(codes + [0])),
        ("predict above", lambda: m.predict(hi_code)),
        ("predict below", lambda: m.predict(lo_code)),
        ("predict str list", lambda: m.predict(["a"] * n)),
        ("quantize floats", lambda: m.quantize([0.5] * n)),
        ("quantize short", lambda: m.quantize(raw[:n - 1])),
        ("quantize 2^30", lambda: m.quantize([1 << 30] * n)),
        ("quantize out short", lambda: m.quantize(raw, bytearray(n - 1))),
        ("quantize out h", lambda: m.quantize(raw, array("h", [0] * n))),
        ("quantize out list", lambda: m.quantize(raw, [0] * n)),
    ]
    if learner(m):
        big = 256 if hasattr(m, "T") else 2
        out += [
            ("learn float label", lambda: m.learn(codes, 1.5)),
            ("learn unknown label", lambda: m.learn(codes, "nope")),
            ("learn label range", lambda: m.learn(codes, big)),
            ("learn label None", lambda: m.learn(codes, None)),
            ("learn floats", lambda: m.learn([1.5] * n, 0)),
            ("learn str", lambda: m.learn("a" * n, 0)),
            ("learn short", lambda: m.learn(codes[:n - 1], 0)),
            ("learn above", lambda: m.learn(hi_code, 0)),
        ]
        if hasattr(m, "score"):
            out += [("score str", lambda: m.score("a" * n))]
    else:
        out += [
            ("update float index", lambda: m.update(0.5, 3)),
            ("update float code", lambda: m.update(0, 1.5)),
            ("update_run float start", lambda: m.update_run(0.5, codes)),
            ("update_run floats", lambda: m.update_run(0, [1.5] * n)),
            ("update_run list str", lambda: m.update_run(0, ["z"] * n)),
            ("update_run str", lambda: m.update_run(0, "\x01" * n)),
        ]
    return out


def model_lines(path, plain):
    m = kbit.load(path)
    print("type", type(m).__name__, "native", m.native, "names", m.names is not None)
    raw = RAW[path]
    n = len(raw)
    codes = m.quantize(raw)
    print("codes", list(codes))
    out = bytearray(n) if not hasattr(m, "T") else array("b", bytes(n))
    ri = array("i", raw)
    if micropython:  # allocation-free with out given: under the heap lock
        micropython.heap_lock()
    try:
        got = m.quantize(ri, out)
    finally:
        if micropython:
            micropython.heap_unlock()
    print("locked", list(got) == list(codes), got is out)
    c = list(codes)
    print("predict", m.predict(codes), m.predict(c))
    if hasattr(m, "T"):
        b = array("b", c)
    else:
        b = bytearray(c)
    before = saved(m)
    ref = m.predict(b)
    for name, call in cases(m, c, raw):
        print(name, "|", outcome(call), "|", saved(m) == before, after(m, b) == ref)
    if learner(m):
        print("learn label", m.learn(b, m.names[1] if not hasattr(m, "T") else "run"))
        print("learn id", m.learn(b, 0))
    s = saved(m)
    print("round trip", saved(kbit.load(s)) == s)
    print("plain quantize |", outcome(lambda: kbit.load(plain).quantize(raw)))


def file_lines(paths):
    mods = {}
    for p in paths:
        m = kbit.load(p)
        mods[type(m).__name__] = (type(m), p)
    names = sorted(mods)
    for i, k in enumerate(names):
        cls, p = mods[k]
        other = mods[names[(i + 1) % len(names)]][1]
        print("wrong type", k, "|", outcome(lambda: cls.load(other)))
        print("path", k, type(cls.load(p)).__name__)
        with open(p, "rb") as f:
            data = f.read()
        print("truncated", k, "|", outcome(lambda: kbit.load(data[:len(data) - 5])))
        print("padded", k, "|", outcome(lambda: kbit.load(data + b"\0")))
    print("no file |", outcome(lambda: kbit.load("/no/such.kb")).split(" (")[0])
    print("not bytes |", outcome(lambda: kbit.load(12)))


def huge_lines(blobs):
    # 32-byte files whose payload claims the largest sizes: refused, never allocated
    for data in blobs:
        print("huge", data[5], "|", outcome(lambda: kbit.load(data)))
        print("huge stream", data[5], "|", outcome(lambda: kbit.load(Stream(data))))


class Stream:
    # a stream that does not tell its size: the loaders' own checks must hold
    def __init__(self, b):
        self.b = b
        self.i = 0

    def readinto(self, buf):
        n = min(len(buf), len(self.b) - self.i)
        buf[:n] = self.b[self.i:self.i + n]
        self.i += n
        return n


def main():
    mods = []
    if NATIVE_TOO:
        import kbit.rkp, kbit.ckp, kbit.bonsai, kbit.protonn, kbit.assoc
        mods = [kbit.rkp, kbit.ckp, kbit.bonsai, kbit.protonn, kbit.assoc]
    for on in ((True, False) if NATIVE_TOO else (False,)):
        for mod in mods:
            mod.use_native(on)
        for i in range(len(PATHS)):
            model_lines(PATHS[i], PLAIN[i])
    file_lines(PATHS)
    huge_lines(HUGE)
    for (lo, hi, bits, floor, signed, xs) in EDGES:
        q = quant.Quantizer(lo, hi, bits, floor, signed)
        outs = []
        for x in xs:
            outs.append(list(q.quantize([x] * len(lo))))
        print("edge", bits, floor, signed, outs)


main()
"""


def huge_blobs():
    """For each type, a 32-byte file (16 bytes of payload) whose fields claim the largest
    dims, budget, memory... the contract allows."""
    out = []
    rkp = struct.pack("<BBHHbBHHB", 1, 1, 2047, 65535, 0, 255, 1, 0, 0) + b"\0\0\0"
    out.append(container(1, rkp))
    ckp = struct.pack("<BHHHBHHiB", 1, 2047, 65535, 1000, 255, 1, 0, 0, 0)[:16]
    out.append(container(2, ckp))
    for t in (3, 4):  # wbits in_bits dims d m/depth classes x, then a projection of 65535 B
        out.append(container(t, struct.pack("<BBHBBBBBH", 16, 8, 2047, 64, 6, 255, 1, 1, 65535)
                             + b"\xff\xff\xff\xff\xff"))
    out.append(container(5, bytes((0, 8, 1, 255, 255, 255, 1, 0, 1, 0)) + b"\0" * 6))
    return out


def edges():
    """Quantizers at the contract's edges and the readings that probe them."""
    out = []
    for bits in (1, 8, 16):
        for floor, signed in ((False, False), (True, False), (False, True))[:3 if bits <= 8 else 2]:
            lo = [0, -5, 7, -(1 << 30), (1 << 30) - (1 << 28), -100]
            hi = [0, 5, 7 + (1 << 28) - 1, -(1 << 30) + (1 << 28) - 1, (1 << 30) - 1, 99]
            xs = set()
            for a, b in zip(lo, hi):
                xs |= {a, b, a - 1, b + 1, (a + b) // 2, a + 1, b - 1}
            xs = sorted(x for x in xs if -(1 << 30) <= x <= (1 << 30) - 1)
            rs = random.Random(bits * 7 + floor * 3 + signed)
            xs += [rs.randrange(-(1 << 30), 1 << 30) for _ in range(40)]
            out.append((lo, hi, bits, floor, signed, xs))
    return out


def ref_edges():
    lines = []
    for lo, hi, bits, floor, signed, xs in edges():
        outs = [[ref_code(x, a, b, bits, floor, signed) for a, b in zip(lo, hi)] for x in xs]
        lines.append("edge %d %s %s %s" % (bits, floor, signed, outs))
    return lines


def setup(tmp_path, where="/"):
    """The model files (host path, runtime path), the script's header and the references."""
    files, paths, plain, raws, ref = [], [], [], {}, {}
    for i, pick in enumerate(PICKS):
        blob = golden_blob(pick)
        data, (lo, hi, bits, floor, signed, raw) = with_extras(blob, i)
        for name, b in (("%d.kb" % i, data), ("%d-plain.kb" % i, blob)):
            p = tmp_path / name
            p.write_bytes(b)
            files.append((where + name, str(p)))
        paths.append(where + "%d.kb" % i)
        plain.append(where + "%d-plain.kb" % i)
        raws[where + "%d.kb" % i] = raw
        ref[where + "%d.kb" % i] = [ref_code(x, a, b, bits, floor, signed)
                                    for x, a, b in zip(raw, lo, hi)]
    head = "PATHS = %r\nPLAIN = %r\nRAW = %r\nHUGE = %r\nEDGES = %r\n" % (
        paths, plain, raws, huge_blobs(), edges())
    return files, head, ref


def cpython(tmp_path):
    import contextlib
    files, head, ref = setup(tmp_path, str(tmp_path) + "/")
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(head + "NATIVE_TOO = False\n" + SCRIPT, "device_api", "exec"),
             {"__name__": "device_api"})
    return out.getvalue().splitlines(), ref


def check(lines, ref):
    """Every line of one runtime's run; returns the lines with the native flag taken out."""
    text = "\n".join(lines)
    assert "no error" not in text, [ln for ln in lines if "no error" in ln]
    assert "MemoryError" not in text
    got = [ln for ln in lines if ln.startswith("codes ")]
    assert got == ["codes %s" % c for c in ref.values()] * (len(got) // len(ref)), got
    for ln in lines:
        if " | " in ln and ln.count(" | ") == 2:
            name, exc, tail = ln.split(" | ")
            assert tail == "True True", ln  # the saved model and its answers unchanged
            want = "TypeError" if ("float" in name or "str" in name or "None" in name) else \
                "ValueError"
            assert exc.startswith(want + ": "), ln
        if ln.startswith(("locked", "round trip")):
            assert ln.endswith("True") or ln.endswith("True True"), ln
    for ln in lines:
        if ln.startswith(("huge", "truncated", "padded", "wrong type", "plain quantize")):
            assert "ModelFileError" in ln or "ValueError" in ln, ln
        if ln.startswith("wrong type"):
            assert "model: the file holds a" in ln, ln
    return lines


def test_the_api_under_cpython(tmp_path):
    lines, ref = cpython(tmp_path)
    check(lines, ref)
    # the five types load, each with the user's labels
    types = [ln.split()[1] for ln in lines if ln.startswith("type ")]
    assert types == ["RKP", "CKP", "Bonsai", "ProtoNN", "Assoc"]
    preds = [ln.split()[1:] for ln in lines if ln.startswith("predict ") and " | " not in ln]
    for (a, b), t in zip(preds, types):
        assert a == b and (a in LABELS or t == "Assoc"), (t, a, b)
    assert [ln for ln in lines if ln.startswith("edge")] == ref_edges()
    assert "wrong type Assoc | ModelFileError: not an assoc model: the file holds a bonsai " \
        "model" in lines
    assert "plain quantize | ValueError: this model has no integer quantizer (train it on " \
        "integer readings to get one)" in lines


def test_the_same_lines_in_webassembly_micropython(tmp_path):
    need(missing_wasm())
    here, ref = cpython(tmp_path)
    files, head, _ = setup(tmp_path)
    script = tmp_path / "api.py"
    script.write_text(head + "NATIVE_TOO = False\n" + SCRIPT)
    p = wasm_run([str(script)], files=files, timeout=300)
    assert p.returncode == 0, p.stdout[-3000:] + p.stderr[-3000:]
    lines = check(p.stdout.splitlines(), ref)
    assert same_but_paths(lines, here)


def same_but_paths(a, b):
    assert len(a) == len(b), (len(a), len(b))
    for x, y in zip(a, b):
        assert x == y
    return True


def test_native_and_bytecode_agree_on_the_unix_port(tmp_path):
    """The x64 native modules (first pass) and bytecode (second): the same answers, the same
    refusals with the same words, as CPython's."""
    need(kbit_unix.missing() or natmod.missing("x64"))
    here, ref = cpython(tmp_path)
    files, head, _ = setup(tmp_path, "")  # the port runs in its root folder: relative paths
    script = tmp_path / "api.py"
    script.write_text(head + "NATIVE_TOO = True\n" + SCRIPT)
    p = kbit_unix.run([str(script)], files=natmod.files("x64") + files, timeout=300)
    assert p.returncode == 0, p.stdout[-3000:] + p.stderr[-3000:]
    lines = p.stdout.splitlines()
    k = len([ln for ln in here if not ln.startswith(("wrong", "path", "truncated", "padded",
                                                     "no file", "not bytes", "huge", "edge"))])
    nat, byte, rest = lines[:k], lines[k:2 * k], lines[2 * k:]
    assert all("native True" in ln for ln in nat if ln.startswith("type "))
    check(nat + rest, ref)
    strip = [ln.replace("native True", "native False") for ln in nat]
    assert strip == byte
    assert same_but_paths(byte + rest, here)


def test_trailer_round_trip_and_refusals():
    """Every loader reads 4.1's trailer and save() writes the same bytes back; a bad trailer is
    refused with the host's words."""
    import kbit
    from kbit.kbfile import ModelFileError
    for pick in PICKS:
        blob = golden_blob(pick)
        mtype, payload, n, bits, floor, signed = bare(blob)
        name = ("rkp", "ckp", "bonsai", "protonn", "assoc")[mtype - 1]
        good = [ref_trailer(scaler=b"\x01" * 8 * n),
                ref_trailer([0] * n, [5] * n), ref_trailer(names=("a",)),
                ref_trailer([-(1 << 30)] * n, [-(1 << 30) + (1 << 28) - 1] * n, ("x" * 32,) * 255),
                ref_trailer(scaler=b"\x02" * 8 * n, names=("~", " "))]
        for t in good:
            data = container(mtype, payload + t)
            m = kbit.load(data)
            s = io.BytesIO()
            m.save(s)
            assert s.getvalue() == data
        bad = [b"\x08", b"\x03" + bytes(16 * n), b"\x00\x00", ref_trailer([0] * n, [5] * n)[:-1],
               ref_trailer([1] * n, [0] * n), ref_trailer([0] * n, [1 << 28] * n),
               ref_trailer([-(1 << 30) - 1] * n, [0] * n), ref_trailer([0] * n, [1 << 30] * n),
               b"\x04\x00", b"\x04\x01\x00", b"\x04\x01\x01\x7f", b"\x04\x01\x21" + b"a" * 33,
               ref_trailer(names=("a",)) + b"\0", b"\x04\x02\x01a"]
        for t in bad:
            with pytest.raises(ModelFileError) as e:
                kbit.load(container(mtype, payload + t))
            msg = str(e.value)
            assert ("bad %s trailer" % name in msg or "truncated or padded %s scaler" % name
                    in msg), (t, msg)


def test_quantizer_matches_the_contract_on_random_bounds():
    from kbit.quant import Quantizer
    rs = random.Random(5)
    for _ in range(300):
        bits = rs.choice((1, 2, 4, 7, 8, 12, 16))
        floor, signed = rs.random() < 0.5, rs.random() < 0.3 and bits <= 8
        n = rs.randrange(1, 9)
        span_top = rs.choice((1, 100, 1 << 16, (1 << 28) - 1))
        lo = [rs.randrange(-(1 << 30), (1 << 30) - span_top) for _ in range(n)]
        hi = [a + rs.randrange(0, span_top + 1) for a in lo]
        q = Quantizer(lo, hi, bits, floor, signed)
        for _ in range(20):
            raw = [rs.randrange(max(a - 1000, -(1 << 30)), min(b + 1000, (1 << 30) - 1) + 1)
                   for a, b in zip(lo, hi)]
            want = [ref_code(x, a, b, bits, floor, signed) for x, a, b in zip(raw, lo, hi)]
            assert list(q.quantize(raw)) == want


def test_kbit_load_imports_only_the_models_module():
    import subprocess
    import sys
    code = ("import sys; sys.path.insert(0, %r); import kbit; m = kbit.load(%r); "
            "print(sorted(k for k in sys.modules if k.startswith('kbit.')))"
            % (os.path.join(os.path.dirname(HERE), "device"), golden_blob(PICKS[2])))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout
    mods = eval(out)
    assert "kbit.bonsai" in mods
    assert not {"kbit.rkp", "kbit.ckp", "kbit.assoc", "kbit.protonn"} & set(mods), mods


@pytest.mark.parametrize("path", sorted(glob.glob(os.path.join(HERE, "golden", "raw", "*.json"))))
def test_quantize_gives_the_host_codes_of_the_raw_golden_files(path):
    """The host's integer quantization of each raw row (its golden step's codes) is kbit's,
    and the file's trailer survives save()."""
    import kbit
    with open(path) as f:
        g = json.load(f)
    blob = bytes.fromhex(g["model_file"])
    m = kbit.load(blob)
    assert m.quantizer is not None
    raw = g["raw"]
    assert len(raw) == len(g["steps"]) > 0
    for row, step in zip(raw, g["steps"]):
        want = [int(v) for v in step.split()[-len(row):]]
        assert list(m.quantize(row)) == want
    s = io.BytesIO()
    m.save(s)
    assert s.getvalue() == blob
