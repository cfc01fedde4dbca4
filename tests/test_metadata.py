"""The project's metadata (issue 31, items 3 and 4).

What is proven here:
- one version: kilobit.__version__ is what pyproject builds with (dynamic, read from it), and
  kbit's, the mip package.json's and the Arduino library's (library.properties, library.json,
  kilobit.h) are equal to it; `kilobit --version` prints it.
- one licence (kilobit.core.about.LICENSE, MIT): LICENSE at the root, pyproject's PEP 639 field
  and license-files, package.json, library.properties, library.json; the exported Arduino
  library carries LICENSE and a README; NOTICE names every third-party data file kilobit ships.
- the same home page and authors in pyproject and in the Arduino library; runtime dependencies
  with lower bounds only.
- the sdist and the wheel (`python -m build`) pass `twine check --strict`, the wheel carries
  LICENSE and NOTICE, and pyroma rates the sdist at least MIN_PYROMA (skipped without build,
  twine and pyroma, the dev extra; failed under CI=true).
"""
import importlib.util
import json
import os
import re
import subprocess
import sys
import zipfile

import pytest
import tomllib

import kilobit
from conftest import need
from kilobit import arduino
from kilobit.core import about
from kilobit.core.errors import KilobitError
from kilobit.core.paths import REPO
from kilobit.runtimes import boards

MIN_PYROMA = 9


def _pyproject():
    with open(os.path.join(REPO, "pyproject.toml"), "rb") as f:
        return tomllib.load(f)


def _properties(text):
    """library.properties as a dict, and its comment lines (the Arduino tools skip them)."""
    lines = text.splitlines()
    comments = [line for line in lines if line.startswith("#")]
    return dict(line.split("=", 1) for line in lines if line and line not in comments), comments


@pytest.fixture
def library(tmp_path, monkeypatch):
    """The Arduino library `kilobit export --arduino-library` writes, without its examples
    (their models take minutes to train; tests/test_export.py builds them)."""
    monkeypatch.setattr(arduino, "EXAMPLES", ())
    path = str(tmp_path / "kilobit")
    arduino.make_library(path)

    def read(rel):
        with open(os.path.join(path, rel)) as f:
            return f.read()
    return read


def _root(name):
    with open(os.path.join(REPO, name)) as f:
        return f.read()


def test_one_version_everywhere(library):
    v = kilobit.__version__
    # Arduino's library manager takes only MAJOR.MINOR.PATCH (semver), a subset of PEP 440
    assert re.fullmatch(r"\d+\.\d+\.\d+", v), v
    pyproject = _pyproject()
    assert "version" not in pyproject["project"] and "version" in pyproject["project"]["dynamic"]
    assert pyproject["tool"]["setuptools"]["dynamic"]["version"] == {"attr": "kilobit.__version__"}

    spec = importlib.util.spec_from_file_location("kbit_alone", os.path.join(
        REPO, "device", "kbit", "__init__.py"))
    kbit = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(kbit)  # the file the boards get, not whichever kbit is installed
    assert kbit.__version__ == v
    assert boards.package_version() == v
    with open(os.path.join(REPO, "device", "kbit", "package.json")) as f:
        assert json.load(f)["version"] == v

    assert _properties(library("library.properties"))[0]["version"] == v
    assert json.loads(library("library.json"))["version"] == v
    assert '#define KILOBIT_VERSION "%s"' % v in library(os.path.join("src", "kilobit.h"))
    assert library("README.md").startswith("# kilobit %s " % v)


def test_version_option():
    p = subprocess.run([sys.executable, "-m", "kilobit", "--version"], capture_output=True,
                       text=True, timeout=120)
    assert (p.returncode, p.stdout, p.stderr) == (0, "kilobit %s\n" % kilobit.__version__, "")
    # the version action takes no value: a user error, not a traceback
    p = subprocess.run([sys.executable, "-m", "kilobit", "--version=2"], capture_output=True,
                       text=True, timeout=120)
    assert p.returncode == 2 and p.stdout == "", p
    assert p.stderr.startswith("kilobit: error: ") and "Traceback" not in p.stderr, p.stderr


def test_licence_named_in_every_manifest(library):
    lic = about.LICENSE
    text = _root("LICENSE")
    assert text.splitlines()[0] == "%s License" % lic and "Permission is hereby granted" in text
    project = _pyproject()["project"]
    assert project["license"] == lic
    assert set(project["license-files"]) == {"LICENSE", "NOTICE"}
    for name in project["license-files"]:
        assert os.path.isfile(os.path.join(REPO, name)), name

    with open(os.path.join(REPO, "device", "kbit", "package.json")) as f:
        assert json.load(f)["license"] == lic
    assert boards.manifest()["license"] == lic

    props, comments = _properties(library("library.properties"))
    assert comments == ["# SPDX-License-Identifier: %s" % lic]
    lib_json = json.loads(library("library.json"))
    assert lib_json["license"] == lic
    assert library("LICENSE") == text
    assert "Licence: %s (see LICENSE)" % lic in library("README.md")

    # arduino-lint's error without url; the same home page and authors as the wheel's
    assert props["url"] == lib_json["homepage"] == about.HOMEPAGE
    assert project["urls"]["Homepage"] == about.HOMEPAGE
    assert project["authors"] == [{"name": about.AUTHOR, "email": about.AUTHOR_EMAIL}]
    assert props["author"] == about.AUTHOR
    assert lib_json["authors"] == [{"name": about.AUTHOR, "email": about.AUTHOR_EMAIL}]


def test_a_stale_package_json_licence_is_reported(tmp_path, monkeypatch):
    stale = dict(boards.manifest())
    stale.pop("license")
    (tmp_path / "package.json").write_text(json.dumps(stale))
    # the package itself as it is: only its package.json is the stale one
    monkeypatch.setattr(boards, "manifest", lambda: dict(stale, license=about.LICENSE))
    monkeypatch.setattr(boards, "KBIT_DIR", str(tmp_path))
    assert boards.manifest_problem() == "package.json license None, kilobit's %r" % about.LICENSE


def test_notice_names_every_third_party_file_shipped():
    notice = _root("NOTICE")
    shipped = [os.path.join("host", "kilobit", "data", "datasets", f)
               for f in os.listdir(os.path.join(REPO, "host", "kilobit", "data", "datasets"))
               if f != "README.md"]
    shipped += [os.path.join("examples", "data", f)
                for f in os.listdir(os.path.join(REPO, "examples", "data"))
                if not f.endswith((".md", ".py"))]
    assert shipped
    for rel in shipped:
        assert rel.replace(os.sep, "/") in notice, rel


def test_installed_licence_text_comes_from_the_wheels_metadata(monkeypatch):
    """Outside a checkout the exported library's LICENSE is the one the wheel installed."""
    from importlib import metadata

    class Dist:
        def __init__(self, files):
            self.files = files

        def read_text(self, name):
            return self.files.get(name)

    monkeypatch.setattr(about, "CHECKOUT", False)
    monkeypatch.setattr(metadata, "distribution",
                        lambda name: Dist({"licenses/LICENSE": "the text"}) if name == "kilobit"
                        else None)
    assert about.license_text() == "the text"
    monkeypatch.setattr(metadata, "distribution", lambda name: Dist({}))
    with pytest.raises(KilobitError, match="LICENSE"):
        about.license_text()


def test_runtime_dependencies_have_lower_bounds_only():
    deps = _pyproject()["project"]["dependencies"]
    assert deps
    for d in deps:
        assert re.fullmatch(r"[A-Za-z0-9_.-]+>=[0-9][0-9.]*", d), d


def _tools_missing():
    missing = [m for m in ("build", "twine", "pyroma") if importlib.util.find_spec(m) is None]
    return ", ".join(missing) + " (pip install -e '.[dev]')" if missing else None


def _run(*args, timeout=600):
    return subprocess.run([sys.executable, "-m", *args], capture_output=True, text=True,
                          timeout=timeout, cwd=REPO)


def test_distributions_pass_twine_and_pyroma(tmp_path):
    need(_tools_missing())
    out = str(tmp_path / "dist")
    # the default builds the sdist, then the wheel from the unpacked sdist: both must build
    p = _run("build", "--outdir", out, REPO)
    assert p.returncode == 0, p.stdout[-3000:] + p.stderr[-3000:]
    v = kilobit.__version__
    sdist = os.path.join(out, "kilobit-%s.tar.gz" % v)
    wheel = os.path.join(out, "kilobit-%s-py3-none-any.whl" % v)
    assert sorted(os.listdir(out)) == sorted(map(os.path.basename, (sdist, wheel)))

    p = _run("twine", "check", "--strict", sdist, wheel)
    assert p.returncode == 0 and p.stdout.count("PASSED") == 2, p.stdout + p.stderr

    with zipfile.ZipFile(wheel) as z:
        info = "kilobit-%s.dist-info/" % v
        meta = z.read(info + "METADATA").decode()
        for name in ("LICENSE", "NOTICE"):
            assert z.read(info + "licenses/" + name).decode() == _root(name)
            assert "License-File: %s\n" % name in meta
    assert "License-Expression: %s\n" % about.LICENSE in meta
    assert "Version: %s\n" % v in meta
    assert "Description-Content-Type: text/markdown\n" in meta

    p = _run("pyroma", "--file", sdist)
    m = re.search(r"Final rating: (\d+)/10", p.stdout)
    assert m, p.stdout + p.stderr
    assert int(m.group(1)) >= MIN_PYROMA, p.stdout
