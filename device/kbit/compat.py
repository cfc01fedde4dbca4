"""What kbit needs from `micropython`, with stand-ins where it is missing.

`const`: MicroPython's compiler folds `X = const(1)` by the name alone, so importing it from here
keeps the folding; CPython gets the identity function. `lock`/`unlock`: `micropython.heap_lock`
and `heap_unlock` where the port has them (not CPython, not CircuitPython), else no-ops. The hot
paths of every model lock the heap around themselves: see docs/toolchain-notes.md for why.

`native(name)`: kbit's native kernels, firmware_c's C code as MicroPython native modules
(issue 20). Each model module (kbit.rkp, kbit.ckp, kbit.bonsai, kbit.protonn, kbit.assoc) runs
its hot path -- learn/score/predict, update -- in the native module `_kb_<name>.mpy` when one
for this port's architecture is installed beside kbit's modules, and in its own bytecode
otherwise: the same API, the same model files, the same bits (every golden file is replayed
both ways). On the native path the model class's hot methods are the native module's own
functions, and each model carries a context `_ctx` made once from its attributes and bound again
whenever Python changes them (firmware_c/natmod/kbn_mp.h).

    /lib/kbit/_kb_rkp.mpy  _kb_ckp.mpy  _kb_bonsai.mpy  _kb_protonn.mpy  _kb_assoc.mpy

built by firmware_c/natmod (`make -C firmware_c/natmod`, output build/natmod/<arch>/) for the
board's architecture (armv6m: RP2040; x64: the unix port); deploy copies the matching ones.

Which path runs, and why:
    m.native                    True when this model's class runs the native kernel
    kbit.rkp.NATIVE_WHY         None when native, else the reason (one line)
    kbit.compat.NATIVE_STATUS   {"rkp": None or the reason, ...}, every model module imported
    kbit.rkp.use_native(False)  switch a model type to bytecode (True: back to native when the
                                module is there); returns whether it is native now
    kbit.compat.NATIVE = False  before importing the model modules: bytecode everywhere (tests)

A module that is there but unusable -- built for another architecture, another .mpy version, a
truncated copy, a build for another kbit -- is refused with one printed line and the bytecode
runs. It is checked before MicroPython sees it: MicroPython's loader hangs or crashes on a
truncated native module, so every module carries a trailer (b"KBNT", its length, its CRC-32;
firmware_c/natmod/seal.py), and each import compares the length, the .mpy version and the
architecture (header and trailer only). The CRC-32 over the whole module -- a copy corrupt in
the middle -- costs 160-250 ms on a Pico without binascii: `verify_native(name)` checks it,
once after installing (`kilobit deploy`'s verification runs it for every module it installs).

    kbit.compat.verify_native("rkp")   None when /lib/kbit/_kb_rkp.mpy is intact, else why
"""
from array import array as _array

try:
    from micropython import const
except ImportError:  # CPython

    def const(x):
        return x


try:
    from micropython import heap_lock as lock, heap_unlock as unlock
except ImportError:  # CPython, CircuitPython

    def lock():
        pass

    unlock = lock


# `ticks()` and `elapsed(t0)`: a clock for timing a step, allocation-free (small ints). On the
# emulated Pico (tools/pico) the core's cycle counter (kbemu.cycles(), 30 bits); elsewhere
# microseconds. TICKS names the unit.
try:
    from kbemu import cycles as ticks

    TICKS = "cycles"

    def elapsed(t0):
        return (ticks() - t0) & 0x3FFFFFFF

except ImportError:
    try:
        from time import ticks_diff, ticks_us as ticks

        TICKS = "us"

        def elapsed(t0):
            return ticks_diff(ticks(), t0)

    except ImportError:  # CPython
        from time import perf_counter_ns

        TICKS = "us"

        def ticks():
            return perf_counter_ns() // 1000

        def elapsed(t0):
            return ticks() - t0


def overhead():
    """What `elapsed(ticks())` reads with nothing between: subtract it from a timed step."""
    best = 1 << 29
    for _ in range(8):
        t0 = ticks()
        dt = elapsed(t0)
        if dt < best:
            best = dt
    return best


# --- the checks every model makes of its arguments, so that the same misuse gets the same
# exception and wording in every model, before anything changes or the heap is locked ---
def ints(u, what="codes"):
    """TypeError unless u is a sequence of ints: a bytes-like or an array (one item tells: an
    array is of one type), or a list or tuple of ints. A str is refused, as floats are."""
    t = type(u)
    if t is bytearray or t is bytes:
        return
    if t is _array or t is memoryview:
        if len(u) and type(u[0]) is not int:
            raise TypeError("%s must be ints, not %s" % (what, type(u[0]).__name__))
        return
    if t is not list and t is not tuple:
        raise TypeError("%s must be a bytearray, an array or a list of ints, not %s"
                        % (what, t.__name__))
    for v in u:
        if type(v) is not int:  # a bool too: CPython's bool is an int, MicroPython's is not
            raise TypeError("%s must be ints, not %s" % (what, type(v).__name__))


def check_codes(u, n, lo, hi):
    """TypeError unless u holds ints (ints), ValueError unless n of them, each in lo..hi."""
    ints(u)
    if len(u) != n or (n and (min(u) < lo or max(u) > hi)):
        raise ValueError("expected %d codes in %d..%d" % (n, lo, hi))


def label_id(y, names, k):
    """The class id of label y: an int id in 0..k-1, or one of the model's names (its labels).
    TypeError for anything else that is not an int, ValueError for an unknown label."""
    if y is True or y is False:  # the two Pythons disagree on bool being an int
        return int(y)
    if isinstance(y, str):
        if names is not None:
            for i in range(len(names)):
                if names[i] == y:
                    return i
        raise ValueError("unknown label %r" % (y,))
    if type(y) is not int:
        raise TypeError("a label is an int or one of the model's labels, not %s"
                        % type(y).__name__)
    if not 0 <= y < k:
        raise ValueError("label %d not in 0..%d" % (y, k - 1))
    return y


def label_names(names, k):
    """The user's labels of class ids 0..k-1 as a model stores them (contract 4.1): None, or
    a tuple of k str of 1..32 printable ASCII characters; ValueError otherwise."""
    if names is None:
        return None
    names = tuple(names)
    if len(names) != k:
        raise ValueError("expected %d labels, one a class, got %d" % (k, len(names)))
    for s in names:
        if type(s) is not str or not 1 <= len(s) <= 32 or \
                min(ord(c) for c in s) < 0x20 or max(ord(c) for c in s) > 0x7E:
            raise ValueError("label %r: labels are 1..32 printable ASCII characters" % (s,))
    return names


def bounds(lo, hi, n):
    """None when neither lo nor hi is given, else the quantizer's bounds of n raw inputs
    (kbit.quant.bounds: imported only then); ValueError when only one is given."""
    if lo is None and hi is None:
        return None
    if lo is None or hi is None:
        raise ValueError("give both lo and hi, the raw readings' range")
    from .quant import bounds
    return bounds(lo, hi, n)


def label_of(i, names):
    """What a model answers for class id i: names[i] when the file named it, else i."""
    if names is not None and 0 <= i < len(names):
        return names[i]
    return i


NATIVE = True  # False before importing the model modules: bytecode only
NATIVE_ABI = 4  # the interface of the native modules (firmware_c/natmod/kbn.h, KBN_ABI)
NATIVE_STATUS = {}

# sys.implementation._mpy >> 10: the native architecture of a port (py/persistentcode.h)
_ARCHS = (None, "x86", "x64", "armv6", "armv6m", "armv7m", "armv7em", "armv7emsp", "armv7emdp",
          "xtensa", "xtensawin", "rv32imc", "rv64imc")


def _arch(code):
    return _ARCHS[code] if code < len(_ARCHS) else "native arch %d" % code


def _sealed(head, tail, size):
    """None when a file of `size` bytes that starts with `head` (4 bytes) and ends with `tail`
    (12 bytes) is a .mpy file sealed by firmware_c/natmod/seal.py (its trailer: b"KBNT", then
    the length before it), else why not. The CRC-32 in the trailer is verify_native's."""
    if size < 16 or head[0] != 0x4D:  # b"M"
        return "not a .mpy file"
    n = size - 12  # what the trailer must say, compared in 16-bit halves (small ints)
    if tail[:4] != b"KBNT" or (tail[4] | tail[5] << 8) != n & 0xFFFF or \
            (tail[6] | tail[7] << 8) != n >> 16:
        return "truncated or not sealed by firmware_c/natmod (%d bytes)" % size
    return None


def _check(path):
    """None when the file at path is a sealed native module this port can load, else why not.
    OSError when it cannot be read. The cheap checks, at every import: the header and the
    trailer are read (not the whole file), the length, .mpy version and architecture compared;
    the CRC-32 over the whole file is verify_native's, run once after installing."""
    with open(path, "rb") as f:
        head = f.read(4)
        size = f.seek(0, 2)
        if size >= 16:
            f.seek(size - 12)
        tail = f.read(12)
    why = _sealed(head, tail, size)
    if why:
        return why
    try:
        import sys
        mpy = sys.implementation._mpy
    except AttributeError:  # a port that does not say: its import decides
        return None
    arch = head[2] >> 2  # 0: bytecode, which every port loads (its sub-version is 0)
    if head[1] != mpy & 0xFF or (arch and head[2] & 3 != (mpy >> 8) & 3):
        return ".mpy version %d.%d, this port loads %d.%d" % (
            head[1], head[2] & 3, mpy & 0xFF, (mpy >> 8) & 3)
    if arch and arch != mpy >> 10:
        if not mpy >> 10:
            return "built for %s; this port runs no native code" % _arch(arch)
        return "built for %s, this port is %s" % (_arch(arch), _arch(mpy >> 10))
    return None


def verify_native(name):
    """None when kbit's native module of model `name` (kbit/_kb_<name>.mpy, see native) is
    intact -- sealed, with the length and CRC-32 firmware_c/natmod/seal.py wrote -- else why
    not (a missing module included). Run it once after installing (`kilobit deploy`'s verify.py
    does), not at every import: it reads the file whole and, on a port without binascii (the
    Pico's), computes the CRC-32 in Python, 160-250 ms at 125 MHz. Whether this port can load
    the module is native()'s business (NATIVE_STATUS)."""
    path = _path(name)
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError:
        return "no native module %s" % path
    size = len(data)
    tail = data[size - 12:]
    why = _sealed(data[:4], tail, size)
    if why:
        return why
    body = memoryview(data)[:size - 12]
    try:
        from binascii import crc32
        v = crc32(body)  # compared in 16-bit halves: no long int needed
        ok = ((v & 0xFFFF) == (tail[8] | tail[9] << 8)
              and (v >> 16 & 0xFFFF) == (tail[10] | tail[11] << 8))
    except (ImportError, OverflowError):  # no binascii.crc32, or no long ints: kbit's own CRC
        from .kbfile import Crc32
        c = Crc32()
        c.update(body)
        ok = c.matches(tail[8:])
    return None if ok else "corrupt (CRC mismatch)"


def _dir():
    """kbit's folder, where its native modules are installed ("" when unknown: frozen)."""
    try:
        f = __file__
    except NameError:
        return ""
    i = f.rfind("/")
    return f[:i + 1] if i >= 0 else ""


def _path(name):
    """Where the native module of model `name` is installed: beside kbit's own files."""
    return "%s_kb_%s.mpy" % (_dir(), name)


def native(name):
    """The native module of model `name` (kbit._kb_<name>) when it is usable here, else None;
    the reason in NATIVE_STATUS[name] (None when native)."""
    import sys
    mod = why = None
    quiet = True  # no module at all is the normal case: no message
    if not NATIVE:
        why = "native modules switched off (kbit.compat.NATIVE = False)"
    elif sys.implementation.name != "micropython":
        why = "%s runs no native modules" % sys.implementation.name
    else:
        path = _path(name)
        try:
            why = _check(path)
            quiet = False
        except OSError:
            why = "no native module %s" % path
        if why is None:
            pkg = __name__[:__name__.rfind(".")] if "." in __name__ else "kbit"
            try:
                mod = __import__("%s._kb_%s" % (pkg, name), None, None, ("ABI",))
            except (ImportError, ValueError) as e:  # ValueError: incompatible .mpy arch/file
                why = "refused by MicroPython (%s: %s)" % (type(e).__name__, e)
            else:
                if getattr(mod, "ABI", None) != NATIVE_ABI:
                    why = "a build for another kbit (ABI %r, this kbit's %d)" % (
                        getattr(mod, "ABI", None), NATIVE_ABI)
                    mod = None
        if why is not None and not quiet:
            why = "%s: %s" % (path, why)
            print("kbit.%s: native module refused, running bytecode: %s" % (name, why))
    NATIVE_STATUS[name] = why
    return mod



def native_methods(cls, name, methods, **hooks):
    """Put model `name`'s native module (native(name)) under class cls: (module or None,
    use_native, why). On the native path the class's `methods` are the module's own functions
    (no Python frame between the caller and the kernel); the module runs the bytecode ones,
    given to it as <method>_py, for what its kernel does not take, and `hooks` (name=function)
    are given to it as they are. use_native(on=True) switches the class between the two (True:
    native when the module loaded) and returns whether it is native now; between inputs, for a
    streamed predictor. It is called once here."""
    nat = native(name)
    # an entry is a name, or (the class's name, the module's) where a Python method of the
    # class checks the arguments before the kernel's function under another name
    attrs = tuple(m if type(m) is str else m[0] for m in methods)
    funs = tuple(m if type(m) is str else m[1] for m in methods)
    py = tuple(getattr(cls, a) for a in attrs)
    if nat:
        for m, f in zip(funs, py):
            setattr(nat, m + "_py", f)
        for k in hooks:
            setattr(nat, k, hooks[k])

    def use_native(on=True):
        """Run the model's hot methods in its native module (when it loaded) or in bytecode;
        returns whether they are native now."""
        on = bool(on and nat)
        cls.native = on
        for a, m, f in zip(attrs, funs, py):
            setattr(cls, a, getattr(nat, m) if on else f)
        return on

    use_native()
    return nat, use_native, NATIVE_STATUS[name]

def path(m, name):
    """Which path model `m` (of type `name`) runs: "native", or "bytecode: why"."""
    if getattr(m, "native", False):
        return "native"
    return "bytecode: %s" % (NATIVE_STATUS.get(name) or "this model is beyond the native kernel")
