#!/usr/bin/env bash
# issue 31 item 5: kilobit as a user installs it. Builds the sdist, builds the wheel from the
# unpacked sdist (plus the native modules built here, as a release would carry them), installs
# the wheel into a fresh venv outside the checkout and, from a folder that is not the checkout,
# runs what a user runs first: --version, train, export (the header compiled and run with gcc
# -Werror), golden check on a golden file the wheel carries, and scikit-learn's checks on the
# public estimators. Fails on the first problem, naming it; tests/test_wheel.py runs it in CI.
#
#   bash scripts/wheel_check.sh [WORKDIR]     (default: a temporary folder, removed at the end)
#
# pip finds packages the way set-up's does (pip's own configuration: the machine's mirror).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
PY=${PYTHON:-$ROOT/.venv/bin/python}

fail() { echo "wheel_check: FAILED: $*" >&2; exit 1; }
step() { echo "wheel_check: $*"; }

for tool in gcc tar; do
  command -v "$tool" >/dev/null || fail "$tool not found (apt-get install $tool)"
done
# from / so that the checkout's build/ folder cannot pass for PyPI's build package
(cd / && "$PY" -c "import build") 2>/dev/null || fail "PyPI's build is not installed in $PY (pip install build)"
"$PY" -m venv --help >/dev/null 2>&1 || fail "$PY has no venv module"

if [ $# -ge 1 ]; then
  WORK=$1; rm -rf "$WORK"; mkdir -p "$WORK"
else
  WORK=$(mktemp -d "${TMPDIR:-/tmp}/kilobit-wheel.XXXXXX")
  trap 'rm -rf "$WORK"' EXIT
fi
case "$WORK/" in "$ROOT"/*) fail "the work folder $WORK is inside the checkout";; esac

step "building the sdist"
"$PY" -m build --sdist --outdir "$WORK/dist" . >"$WORK/sdist.log" 2>&1 ||
  fail "python -m build --sdist (log: $WORK/sdist.log)"
SDIST=$(ls "$WORK"/dist/kilobit-*.tar.gz)
mkdir "$WORK/src"
tar -xzf "$SDIST" -C "$WORK/src" --strip-components=1

# the sdist must carry every tracked file (the tests and their data included): it builds and
# tests on its own
if git rev-parse --git-dir >/dev/null 2>&1; then  # not when run from an unpacked sdist
  missing=$(git ls-files | grep -v -x -e .gitignore | while read -r f; do
    [ -e "$WORK/src/$f" ] || echo "$f"; done | head -5)
  [ -z "$missing" ] || fail "the sdist lacks tracked files, e.g.: $(echo $missing)"
fi
for f in setup.py MANIFEST.in scripts/setup.sh tests/conftest.py; do
  [ -f "$WORK/src/$f" ] || fail "the sdist lacks $f"
done
! find "$WORK/src" -name node_modules -o -name '*.pyc' | grep -q . ||
  fail "the sdist carries node_modules or .pyc files"

# the native modules built here (make -C firmware_c/natmod), kept with their times so that
# setup.py's freshness test sees them as the checkout has them
natmods=""
if ls build/natmod/*/_kb_*.mpy >/dev/null 2>&1; then
  for d in build/natmod/*/; do
    mkdir -p "$WORK/src/$d" && cp -p "$d"/_kb_*.mpy "$WORK/src/$d"
    natmods="$natmods $(basename "$d")"
  done
fi

step "building the wheel from the sdist (native modules:${natmods:- none built here})"
"$PY" -m build --wheel --outdir "$WORK/dist" "$WORK/src" >"$WORK/wheel.log" 2>&1 ||
  fail "python -m build --wheel from the sdist (log: $WORK/wheel.log)"
WHEEL=$(ls "$WORK"/dist/kilobit-*.whl)
"$PY" - "$WHEEL" "$natmods" <<'EOF' || fail "the wheel's contents (above)"
import sys
import zipfile

names = set(zipfile.ZipFile(sys.argv[1]).namelist())
want = ["kilobit/share/boards/uno.json", "kilobit/share/firmware_c/kb_rkp.h",
        "kilobit/share/firmware_c/avr/predict_stream.c", "kilobit/share/tools/replay/replay.py",
        "kilobit/share/tools/mpwasm/run.mjs", "kbit/package.json", "kbit/rkp.py",
        "kilobit/share/golden/rkp-laplace-b4-t62-m2-a-6-s1.json"]
want += ["kilobit/share/natmod/%s/_kb_rkp.mpy" % a for a in sys.argv[2].split()]
bad = ["missing " + n for n in want if n not in names]
bad += ["shipped " + n for n in sorted(names) if n.startswith("kbit/test_")
        or "node_modules" in n or n.endswith(".pyc")]
for b in bad:
    print("wheel_check:", b, file=sys.stderr)
sys.exit(1 if bad else 0)
EOF

step "installing it into a fresh venv"
"$PY" -c "import sys; print(sys._base_executable)" >"$WORK/base" 2>/dev/null ||
  echo python3 >"$WORK/base"
"$(cat "$WORK/base")" -m venv "$WORK/venv" || fail "python -m venv"
V=$WORK/venv/bin
"$V/python" -m pip install -q --disable-pip-version-check "$WHEEL" "scikit-learn>=1.6" \
  >"$WORK/pip.log" 2>&1 || fail "pip install the wheel (log: $WORK/pip.log)"
touch "$WORK/installed"

# a user's folder and cache: nothing of the checkout on the way, and the default cache
# (platformdirs) moved into the work folder by XDG_CACHE_HOME
mkdir "$WORK/user"
cd "$WORK/user"
run() {
  step "kilobit $*"
  env -u KILOBIT_CACHE -u PYTHONPATH XDG_CACHE_HOME="$WORK/xdg" PATH="$V:$PATH" \
    "$V/kilobit" "$@" >"$WORK/out" 2>&1 || { cat "$WORK/out" >&2; fail "kilobit $*"; }
  ! grep -q Traceback "$WORK/out" || { cat "$WORK/out" >&2; fail "kilobit $* printed a traceback"; }
}
run --version
grep -q "^kilobit [0-9]" "$WORK/out" || fail "kilobit --version printed: $(cat "$WORK/out")"
run train rkp --data banana -o m.kb
run export m.kb -o m.h --target host
cat >main.c <<'EOF'
#include <stdio.h>
#include "m.h"

int main(void)
{
    uint8_t codes[RKP_DIMS] = {0};
    rkp_init();
    printf("%u\n", (unsigned)rkp_predict(codes));
    return 0;
}
EOF
gcc -std=c99 -Wall -Wextra -Werror -o main main.c >"$WORK/gcc.log" 2>&1 ||
  { cat "$WORK/gcc.log" >&2; fail "gcc -Werror on the exported header"; }
./main | grep -q -x -e 0 -e 1 || fail "the exported model's program did not print a class"
GOLDEN=$("$V/python" -c "from kilobit.core import paths; print(paths.golden())")
case "$GOLDEN" in "$WORK/venv"/*) ;; *) fail "the golden files are read from $GOLDEN";; esac
run golden check "$GOLDEN/rkp-laplace-b4-t62-m2-a-6-s1.json" --runtime host --runtime kbit-cpython
grep -q "1 of 1 golden files agree" "$WORK/out" || { cat "$WORK/out" >&2; fail "golden check"; }
run deploy --help
run board list
grep -q "^uno " "$WORK/out" || fail "board list has no uno: $(cat "$WORK/out")"

# where the commands wrote: the user cache, never the interpreter's folders
[ -d "$WORK/xdg/kilobit/export" ] || fail "export's cache is not under the user cache folder"
wrote=$(find "$WORK/venv" -newer "$WORK/installed" -type f ! -name '*.pyc' | head -5)
[ -z "$wrote" ] || fail "the commands wrote into the venv: $wrote"

# scikit-learn's checks: the hook for the public API (issue 31 item 2); each estimator may fail
# only the checks it declares (expected_failed_checks)
step "scikit-learn's check_estimator on the public estimators"
"$V/python" - >"$WORK/sklearn.log" 2>&1 <<'EOF' || { cat "$WORK/sklearn.log" >&2; fail "scikit-learn's checks"; }
import warnings

import kilobit
from sklearn.utils.estimator_checks import check_estimator

warnings.simplefilter("ignore")
bad = 0
for name in ("RKP", "CKP", "Bonsai", "ProtoNN", "Assoc"):
    est = getattr(kilobit, name)()
    expected = est.expected_failed_checks()
    recs = check_estimator(est, expected_failed_checks=expected, on_fail=None)
    failed = [r["check_name"] for r in recs if r["status"] == "failed"]
    print("%-8s %d checks, %d expected to fail, failed: %s"
          % (name, len(recs), len(expected), ", ".join(failed) or "none"))
    bad += len(failed)
raise SystemExit(1 if bad else 0)
EOF
cat "$WORK/sklearn.log"
step "ok"
