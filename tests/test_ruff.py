"""The code is clean under ruff with the project's configuration (pyproject.toml [tool.ruff]:
E, F, W, B and I at 100 columns for Python 3.9), and that configuration is the one in force."""
import importlib.util
import os
import re
import subprocess
import sys

from conftest import need

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# what CI lints: every Python file of the repository that is not a build output
TREE = ["host", "device", "tests", "tools", "scripts", "examples", "setup.py"]


def ruff(*args, cwd=ROOT):
    need(None if importlib.util.find_spec("ruff") else "ruff (pip install ruff)")
    # no cache: the check reads the files as they are, and writes nothing into the checkout
    return subprocess.run([sys.executable, "-m", "ruff", "check", "--no-cache",
                           "--output-format", "concise", *args],
                          cwd=cwd, capture_output=True, text=True, timeout=300)


def test_the_tree_has_no_finding():
    r = ruff(*TREE)
    assert r.returncode == 0, r.stdout + r.stderr


def test_the_projects_rules_are_the_ones_applied(tmp_path):
    """A file with one fault per selected family, checked with the project's configuration:
    each is found, so a clean tree means clean under these rules, not under none."""
    bad = tmp_path / "bad.py"
    at_limit = "    l = 1  # " + "x" * 87      # 100 columns
    past_it = "    return l  # " + "x" * 85   # 101
    assert (len(at_limit), len(past_it)) == (100, 101)
    bad.write_text("import sys\nimport os\n\n\n"
                   "def f(xs):\n"
                   "    for i in xs:\n"
                   "        pass \n"
                   + at_limit + "\n" + past_it + "\n")
    r = ruff("--config", os.path.join(ROOT, "pyproject.toml"), str(bad), cwd=tmp_path)
    assert r.returncode == 1, r.stdout + r.stderr
    found = [(int(m.group(1)), m.group(2))
             for m in re.finditer(r"^bad\.py:(\d+):\d+: (\w+)", r.stdout, re.M)]
    # I001 unsorted, F401 unused import, B007 unused loop variable, W291 trailing whitespace,
    # E741 `l`, and E501 on the 101-column line only (the limit is 100 columns, not ruff's 88)
    assert {"I001", "F401", "B007", "W291", "E741"} <= {code for _, code in found}, r.stdout
    assert [row for row, code in found if code == "E501"] == [9], r.stdout
