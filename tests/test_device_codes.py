"""Issue 23 item 3: kbit refuses what the contract does not define, before changing anything.

- score/predict/learn of RKP and CKP refuse a code outside 0 .. 2^B-1, Assoc's predict/learn a
  value outside -2^(B-1) .. 2^(B-1)-1, Bonsai's and ProtoNN's update/update_run a code outside
  0 .. 2^B-1: ValueError, and the model goes on exactly as a twin that never saw the call (the
  same scores, the same saved file). Under CPython, and on MicroPython's unix port natively
  (the x64 native modules: their glue checks in C, then kbit's bytecode raises the error) and
  in bytecode, with the same messages everywhere.
- every loader raises ModelFileError for a source that is neither bytes nor a stream.
- Checkpoint.load() of a missing name raises OSError(ENOENT) naming NAME (not NAME.new);
  `every` must be an int >= 0.
"""
import glob
import os

import pytest

from conftest import need
from kilobit.runtimes.micropython import kbit_unix, natmod
from test_natmod import REFUSED_PY

HERE = os.path.dirname(os.path.abspath(__file__))
PICKS = ["rkp-laplace-b4-t62-m2-a-6-s1", "rkp-laplace-b8-t24-m64-a2-s9", "ckp-*-seed21-*",
         "ckp-*-seed24-*", "assoc-*-seed41-*", "assoc-*-seed49-*", "assoc-*-seed48-*",
         "bonsai-*-seed103-*", "protonn-*-seed202-*"]

SCRIPT = REFUSED_PY + r"""
import sys
from array import array
import kbit.rkp, kbit.ckp, kbit.assoc, kbit.bonsai, kbit.protonn
from kbit.checkpoint import Checkpoint
from kbit.kbfile import ModelFileError

MODS = {1: (kbit.rkp, "RKP"), 2: (kbit.ckp, "CKP"), 3: (kbit.bonsai, "Bonsai"),
        4: (kbit.protonn, "ProtoNN"), 5: (kbit.assoc, "Assoc")}


class Sink:
    def __init__(self):
        self.b = bytearray()

    def write(self, x):
        self.b += x


def saved(m):
    s = Sink()
    m.save(s)
    return bytes(s.b)


def bad_inputs(vals, k, lo, hi, signed):
    # vals with value k out of range, as a list and, where it fits, as the buffer kbit takes
    out = []
    for v in (hi + 1, lo - 1):
        w = list(vals)
        w[k] = v
        out.append(w)
        if signed and -128 <= v <= 127:
            out.append(array("b", w))
        if not signed and 0 <= v <= 255:
            out.append(bytearray(w))
    return out


def learner(cls, data, assoc):
    A = cls.load(data)
    B = cls.load(data)
    n = A.T if assoc else A.dims
    lo = -(1 << (A.bits - 1)) if assoc else 0
    hi = (1 << (A.bits - 1)) - 1 if assoc else (1 << A.bits) - 1
    msgs = []
    same = True
    for i in range(12):
        vals = [lo + (i * 7 + j * 3) % (hi - lo + 1) for j in range(n)]
        u = array("b", vals) if assoc else bytearray(vals)
        if assoc:
            y = A.labels[i % A.nc] if A.nc else i % A.cap
        else:
            y = i % 2
        for w in bad_inputs(vals, i % n, lo, hi, assoc):
            msgs += [refused(A.predict, w), refused(A.learn, w, y)]
            if not assoc:
                msgs.append(refused(A.score, w))
        same = same and A.learn(u, y) == B.learn(u, y) and A.predict(u) == B.predict(u)
    return msgs, same and saved(A) == saved(B)


def fields(m):
    return [m.predict()] + [list(getattr(m, a)) for a in ("P", "scores")]


def predictor(cls, data):
    A = cls.load(data)
    B = cls.load(data)
    top = A.proj.top
    msgs = []
    same = True
    for i in range(4):
        u = bytearray((i * 7 + j * 3) % (top + 1) for j in range(A.dims))
        for w in bad_inputs(u, i % A.dims, 0, top, False):
            msgs += [refused(A.update, i % A.dims, w[i % A.dims]), refused(A.update_run, 0, w)]
        A.update_run(0, u)
        B.update_run(0, u)
        same = same and fields(A) == fields(B)
    return msgs, same


class NoFiles:
    def open(self, path, mode):
        raise OSError(2, "no such file")


def checkpoints():
    out = []
    try:
        Checkpoint(kbit.rkp.RKP, "/none.kb", fs=NoFiles()).load()
    except OSError as e:
        out.append("%s %s" % (e.args[0], e.args[1]))
    for every in (-1, "2", None):
        out.append(refused(Checkpoint, kbit.rkp.RKP, "/m.kb", every, NoFiles()))
    return out


def main(paths):
    for on in (True, False):
        for mod, _ in MODS.values():
            mod.use_native(on)
        for path in paths:
            with open(path, "rb") as f:
                data = f.read()
            mod, name = MODS[data[5]]
            cls = getattr(mod, name)
            if data[5] in (3, 4):
                msgs, same = predictor(cls, data)
            else:
                msgs, same = learner(cls, data, data[5] == 5)
            print(name, cls.native, len(msgs), "accepted" not in msgs, same, "|".join(msgs))
        for mod, name in MODS.values():
            for src in (None, "str", 12, [1, 2]):
                try:
                    getattr(mod, name).load(src)
                    print("loaded", name, repr(src))
                except ModelFileError:
                    pass
                except Exception as e:
                    print("load", name, repr(src), type(e).__name__, e)
        print("checkpoint", " | ".join(checkpoints()))


main(sys.argv[1:])
"""


def paths():
    out = []
    for pick in PICKS:
        out += sorted(glob.glob(os.path.join(HERE, "golden", pick + ".json")))[:1]
    assert len(out) == len(PICKS)
    return out


def model_files(tmp_path):
    import json
    files = []
    for i, path in enumerate(paths()):
        p = tmp_path / ("%d.kb" % i)
        with open(path) as f:
            p.write_bytes(bytes.fromhex(json.load(f)["model_file"]))
        files.append(("/%d.kb" % i, str(p)))
    return files


def cpython(tmp_path):
    """The script under CPython (kbit from device/), its output lines."""
    import contextlib
    import io
    files = model_files(tmp_path)
    out = io.StringIO()
    code = SCRIPT.replace("main(sys.argv[1:])", "main(PATHS)")
    with contextlib.redirect_stdout(out):
        exec(compile(code, "device_codes", "exec"), {"__name__": "device_codes",
                                                     "PATHS": [h for _, h in files]})
    return out.getvalue().splitlines()


def check(lines, native):
    n = len(PICKS)
    assert len(lines) == 2 * (n + 1), lines
    for half, on in ((lines[:n + 1], native), (lines[n + 1:], False)):
        for ln in half[:n]:
            name, nat, count, refused, same = ln.split(" ", 5)[:5]
            assert nat == str(on) and int(count) >= 4 and refused == "True" and same == "True", ln
        assert half[n] == ("checkpoint 2 nothing saved yet: no checkpoint /none.kb | "
                           + " | ".join(
            ["every must be an int >= 0 (0: save on demand only), not %s" % r
             for r in ("-1", "'2'", "None")])), half[n]
    # the same refusals, with the same messages, natively and in bytecode
    assert [ln.split(" ", 2)[2] for ln in lines[:n + 1]] == \
        [ln.split(" ", 2)[2] for ln in lines[n + 1:]]


def test_codes_outside_the_contract_are_refused_under_cpython(tmp_path):
    check(cpython(tmp_path), False)


def test_codes_outside_the_contract_are_refused_natively_and_in_bytecode(tmp_path):
    """On the unix port with the x64 native modules (the first half of the lines) and with
    kbit.<model>.use_native(False) (the second): the same refusals, the same messages, and the
    same messages as under CPython."""
    need(kbit_unix.missing() or natmod.missing("x64"))
    files = model_files(tmp_path)
    script = tmp_path / "codes.py"
    script.write_text(SCRIPT)
    p = kbit_unix.run([str(script)] + [fs for fs, _ in files], files=natmod.files("x64") + files,
                      timeout=300)
    assert p.returncode == 0, p.stdout[-2000:] + p.stderr[-2000:]
    lines = p.stdout.splitlines()
    check(lines, True)
    here = cpython(tmp_path)
    assert [ln.split(" ", 2)[2] for ln in lines] == [ln.split(" ", 2)[2] for ln in here]


@pytest.mark.parametrize("src", [None, "str", 12, [1, 2], 1.5, object()])
def test_every_loader_refuses_a_source_that_is_not_bytes(src):
    from kbit import assoc, bonsai, ckp, protonn, rkp
    from kbit.kbfile import ModelFileError
    for load in (rkp.load, ckp.load, bonsai.load, protonn.load, assoc.load):
        with pytest.raises(ModelFileError):
            load(src)


# --- the C runtime's host tools refuse them too (the UART firmwares: tests/test_frame_fuzz.py,
# ERR_CODE) ---------------------------------------------------------------------------------

@pytest.mark.parametrize("pick,tool,good,bad", [
    # kb_replay (RKP, CKP): tests/test_c_runtime.py's test_malformed_step_exits_3 ("Q 1 16")
    ("bonsai-*-seed103-*", "kb_predict", "P" + " 15" * 16, "P" + " 15" * 15 + " 16"),
    ("protonn-*-seed202-*", "kb_predict", "P" + " 0" * 16, "P -1" + " 0" * 15),
    ("assoc-*-seed49-*", "kb_assoc_replay", "Q" + " -16" * 80, "Q" + " 15" * 79 + " 16"),
    ("assoc-*-seed49-*", "kb_assoc_replay", "L 1" + " 15" * 80, "L 1 -17" + " 0" * 79),
])
def test_the_c_host_tools_refuse_a_code_outside_the_model(tmp_path, pick, tool, good, bad):
    """A step with one code (value) outside the model's range: exit 3, "error: step 2: ...",
    after the good step's row (nothing of the bad step printed)."""
    import json
    import subprocess

    from kilobit.runtimes.c.build import build
    from kilobit.runtimes.c.c_host import CHostRuntime
    need(CHostRuntime().missing())
    exe = os.path.join(build(), tool)
    path = sorted(glob.glob(os.path.join(HERE, "golden", pick + ".json")))[0]
    with open(path) as f:
        (tmp_path / "m.kb").write_bytes(bytes.fromhex(json.load(f)["model_file"]))
    args = [exe, str(tmp_path / "m.kb")] + ([str(tmp_path / "mem.bin")]
                                            if tool == "kb_assoc_replay" else [])
    r = subprocess.run(args, input=good + "\n" + bad + "\n", capture_output=True, text=True)
    assert r.returncode == 3 and r.stderr.startswith("error: step 2: "), (r.returncode, r.stderr)
    assert len(r.stdout.splitlines()) == 1, r.stdout
