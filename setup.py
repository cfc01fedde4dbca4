"""The wheel's build step (issue 31): pyproject.toml holds the metadata; this adds what a
declarative configuration cannot say.

- The commands need the checkout's boards/, firmware_c/, tools/ (replay scripts, node runners,
  the Pico's sources), kbit's mip manifest, a few golden files and the native modules built
  here: they are copied into the package as kilobit/share/..., which kilobit.core.paths reads
  once installed. The repository keeps its layout; nothing is copied in a checkout or in an
  editable install (paths reads the checkout's own files there).
- device/kbit's tests (kbit/test_*.py) are modules of the kbit package to setuptools; a board
  never gets them (kilobit.runtimes.boards.package_modules), nor does the wheel.
"""
import glob
import importlib.util
import os
import shutil

from setuptools import setup
from setuptools.command.build_py import build_py

HERE = os.path.dirname(os.path.abspath(__file__))
#: checkout folders copied whole under kilobit/share/ (same names, so that tools/pico/floor's
#: Makefile finds ../../../firmware_c there as it does in the checkout)
SHARED_TREES = ("boards", "firmware_c", "tools")
#: what a checkout makes or installs inside those trees, never shipped
SKIPPED_DIRS = {"node_modules", "__pycache__", "build", ".pytest_cache"}
SKIPPED_SUFFIXES = (".pyc", ".o", ".elf", ".bin", ".map", ".a", ".so")


def _paths_module():
    # the list of shipped golden files lives in kilobit.core.paths, which
    # imports nothing of kilobit: load it from its file (the package is not importable yet)
    spec = importlib.util.spec_from_file_location(
        "_kilobit_paths", os.path.join(HERE, "host", "kilobit", "core", "paths.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _copy_tree(src, dst):
    for root, dirs, files in os.walk(src):
        dirs[:] = sorted(d for d in dirs if d not in SKIPPED_DIRS)
        for name in sorted(files):
            if name.endswith(SKIPPED_SUFFIXES):
                continue
            rel = os.path.relpath(os.path.join(root, name), src)
            os.makedirs(os.path.dirname(os.path.join(dst, rel)), exist_ok=True)
            shutil.copy2(os.path.join(root, name), os.path.join(dst, rel))


def _fresh_natmods(arch_dir, sources):
    """The arch's sealed modules when every one is newer than every source it is made from
    (a stale module would disagree with the headers shipped beside it): else none."""
    mods = sorted(glob.glob(os.path.join(arch_dir, "_kb_*.mpy")))
    newest = max((os.path.getmtime(p) for p in sources), default=0)
    if not mods or any(os.path.getmtime(m) < newest for m in mods):
        return []
    return mods


class BuildPy(build_py):
    def find_package_modules(self, package, package_dir):
        mods = super().find_package_modules(package, package_dir)
        if package != "kbit":
            return mods
        return [m for m in mods if not m[1].startswith("test_")]

    def run(self):
        super().run()
        if getattr(self, "editable_mode", False):
            return
        share = os.path.join(self.build_lib, "kilobit", "share")
        shutil.rmtree(share, ignore_errors=True)  # a previous build's leftovers
        for tree in SHARED_TREES:
            _copy_tree(os.path.join(HERE, tree), os.path.join(share, tree))
        for name in _paths_module().GOLDEN_SHIPPED:
            dst = os.path.join(share, "golden", name)
            os.makedirs(os.path.dirname(dst), exist_ok=True)
            shutil.copy2(os.path.join(HERE, "tests", "golden", name), dst)
        sources = (glob.glob(os.path.join(HERE, "firmware_c", "*.h"))
                   + glob.glob(os.path.join(HERE, "firmware_c", "natmod", "*")))
        for arch_dir in sorted(glob.glob(os.path.join(HERE, "build", "natmod", "*"))):
            for mod in _fresh_natmods(arch_dir, sources):
                dst = os.path.join(share, "natmod", os.path.basename(arch_dir))
                os.makedirs(dst, exist_ok=True)
                shutil.copy2(mod, dst)


setup(cmdclass={"build_py": BuildPy})
