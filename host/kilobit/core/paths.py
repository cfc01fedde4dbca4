"""Where kilobit's files are, in a checkout and once installed from a wheel (issue 31).

A checkout keeps the repository's layout (boards/, firmware_c/, device/kbit, tools/,
tests/golden, build/); a wheel has no repository around it, so its build step (setup.py) copies
what the commands need at run time into the package, under kilobit/share/, and writes its
builds and caches under the user's cache folder. Every path to one of those goes through one
function here, so a call site reads the same in both cases:

    boards()         boards/*.json                       share/boards
    firmware_c(...)  the C runtime, its tools, firmwares  share/firmware_c
    kbit(...)        device/kbit (the board's package)   the installed kbit package
    tools(...)       replay scripts, mpwasm, pico         share/tools
    golden(...)      tests/golden                         share/golden (GOLDEN_SHIPPED only)
    natmods(...)     build/natmod (made by make)          share/natmod if packed, else cache(...)
    cache(...)       build/                               $KILOBIT_CACHE, else the user cache
    fetched(...)     build/ (what scripts/setup.sh downloads)   cache(...)

KILOBIT_CACHE, when set, is where every build and cache goes, checkout or not.
"""
import os

#: the checkout's root when running from one (found from this file's place,
#: host/kilobit/core/paths.py); elsewhere the folder above the installed package, unused
REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
#: True when running from a checkout (tests, developers): the repository's own folders are used
CHECKOUT = (os.path.isfile(os.path.join(REPO, "pyproject.toml"))
            and os.path.isfile(os.path.join(REPO, "host", "kilobit", "core", "paths.py")))

#: the golden files a wheel carries (kilobit/share/golden): each model type's default for
#: deploy's verification (kilobit.runtimes.boards.deploy.DEFAULT_GOLDEN) and one features file,
#: so that `golden check` has something to replay and `deploy` can verify without a checkout
GOLDEN_SHIPPED = (
    "rkp-laplace-b4-t62-m2-a-6-s1.json",
    "ckp-L30-bits4-dims2-seed32-steps150-width2000.json",
    "bonsai-classes10-depth2-dims16-in_bits4-proj8-seed103-steps50-tenc0-wbits16-zenc1.json",
    "protonn-classes10-d8-dims16-in_bits4-m30-nt40-penc1-seed202-steps50-wbits16.json",
    "assoc-P3-R1-approachI-I-bits4-cap6-d2-kt3-seed54-steps40.json",
    "features/features-n16-a12-min+max+diff+cross-s3.json",
)


def _share(*parts):
    # a wheel is installed as plain files (pip unpacks it), so the resource is a real path that
    # compilers, node and make can be given
    from importlib.resources import files
    return os.path.join(str(files("kilobit")), "share", *parts)


def _resource(checkout, shared, parts):
    if CHECKOUT:
        return os.path.join(REPO, *checkout, *parts)
    return _share(shared, *parts)


def boards(*parts):
    """The board files (boards/*.json)."""
    return _resource(("boards",), "boards", parts)


def firmware_c(*parts):
    """The C runtime's sources: headers, host tools, AVR firmwares, the simulator, natmods."""
    return _resource(("firmware_c",), "firmware_c", parts)


def tools(*parts):
    """The replay scripts and the node runners (tools/replay, tools/mpwasm, tools/pico, ...)."""
    return _resource(("tools",), "tools", parts)


def golden(*parts):
    """The golden set: all of tests/golden in a checkout, GOLDEN_SHIPPED once installed."""
    return _resource(("tests", "golden"), "golden", parts)


def kbit(*parts):
    """device/kbit, the package a board gets, with its mip manifest (package.json)."""
    if CHECKOUT:
        return os.path.join(REPO, "device", "kbit", *parts)
    from importlib.resources import files
    return os.path.join(str(files("kbit")), *parts)


def cache(*parts):
    """Where builds and caches go: $KILOBIT_CACHE, else build/ in a checkout (as always), else
    the user's cache folder (never beside the interpreter: it may be read-only or shared)."""
    root = os.environ.get("KILOBIT_CACHE")
    if not root:
        if CHECKOUT:
            root = os.path.join(REPO, "build")
        else:
            from platformdirs import user_cache_dir
            root = user_cache_dir("kilobit")
    return os.path.join(root, *parts)


def natmods(*parts):
    """A native module (natmods(arch, "_kb_rkp.mpy")): the one the wheel was packed with when it
    has it, else where make writes them (cache("natmod"): build/natmod in a checkout)."""
    if not CHECKOUT:
        shipped = _share("natmod", *parts)
        if os.path.exists(shipped):
            return shipped
    return cache("natmod", *parts)


def fetched(*parts):
    """What scripts/setup.sh downloads under build/ (MicroPython 1.23's core, emlearn's headers,
    the mlbench data): the checkout's build/ (not moved by KILOBIT_CACHE, where setup.sh put
    it), else the cache folder."""
    if CHECKOUT:
        return os.path.join(REPO, "build", *parts)
    return cache(*parts)


def npm_how(folder):
    """How to install the npm packages of a node runner's folder (tools/mpwasm, tools/pico)."""
    if CHECKOUT:
        return "bash scripts/setup.sh, or: cd %s && npm ci" % shown(folder)
    return "cd %s && npm ci" % folder


def child_env():
    """The environment of the node runners kilobit starts (tools/mpwasm, tools/pico): they find
    their builds (KILOBIT_BUILD) and the kbit package (KILOBIT_KBIT) where this module does, not
    beside themselves, which an installed wheel or KILOBIT_CACHE would put elsewhere."""
    return dict(os.environ, KILOBIT_BUILD=cache(), KILOBIT_KBIT=kbit())


def shown(path):
    """A path as a message names it: relative to the checkout when inside it, else whole."""
    if CHECKOUT and os.path.abspath(path).startswith(REPO + os.sep):
        return os.path.relpath(path, REPO)
    return path
