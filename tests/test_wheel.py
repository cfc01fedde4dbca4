"""kilobit as a user installs it (issue 31 items 1 and 5): the wheel, built from the sdist, in a
fresh venv outside the checkout (scripts/wheel_check.sh, run once here so that CI's test
command runs it), and where kilobit.core.paths puts files in a checkout."""
import os
import shutil
import subprocess
import sys

from conftest import need
from kilobit.core import paths
from kilobit.runtimes.boards import deploy


def test_the_installed_wheel_trains_exports_replays_and_passes_scikit_learns_checks(tmp_path):
    need(None if shutil.which("gcc") else "gcc, to compile the exported header")
    # from / so that the checkout's build/ folder cannot pass for PyPI's build package
    r = subprocess.run([sys.executable, "-c", "import build.__main__"], cwd="/",
                       capture_output=True)
    need(None if r.returncode == 0 else "PyPI's build (pip install build)")
    work = tmp_path / "wheel"
    r = subprocess.run(["bash", os.path.join(paths.REPO, "scripts", "wheel_check.sh"), str(work)],
                       capture_output=True, text=True, timeout=900,
                       env=dict(os.environ, PYTHON=sys.executable))
    assert r.returncode == 0, (r.stdout + r.stderr)[-4000:]
    assert "wheel_check: ok" in r.stdout
    # the five estimators each ran scikit-learn's checks (the script fails on any unexpected one)
    assert r.stdout.count(" checks, ") == 5, r.stdout


def test_a_checkout_reads_its_own_folders_and_builds_under_build_or_KILOBIT_CACHE(monkeypatch,
                                                                                  tmp_path):
    assert paths.CHECKOUT
    assert paths.boards("uno.json") == os.path.join(paths.REPO, "boards", "uno.json")
    assert os.path.isfile(paths.firmware_c("kb_rkp.h"))
    assert os.path.isfile(paths.kbit("package.json"))
    assert os.path.isfile(paths.tools("replay", "replay.py"))
    monkeypatch.delenv("KILOBIT_CACHE", raising=False)
    assert paths.cache("export") == os.path.join(paths.REPO, "build", "export")
    monkeypatch.setenv("KILOBIT_CACHE", str(tmp_path))
    assert paths.cache("export") == os.path.join(str(tmp_path), "export")
    assert paths.natmods("x64") == os.path.join(str(tmp_path), "natmod", "x64")
    # set-up's downloads stay where scripts/setup.sh put them
    assert paths.fetched("micropython-1.23") == os.path.join(paths.REPO, "build",
                                                             "micropython-1.23")


def test_the_wheel_carries_the_golden_file_deploy_verifies_each_model_type_with():
    shipped = set(paths.GOLDEN_SHIPPED)
    assert set(deploy.DEFAULT_GOLDEN.values()) <= shipped
    for name in shipped:
        assert os.path.isfile(paths.golden(name)), name
