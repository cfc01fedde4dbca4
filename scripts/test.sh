#!/usr/bin/env bash
# Set up (idempotent) and run every test: host, kbit under CPython and MicroPython, C on the host,
# AVR builds, and the wheel installed outside the checkout (tests/test_wheel.py runs
# scripts/wheel_check.sh). Under CI=true a missing toolchain fails the run instead of skipping.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
exec .venv/bin/python -m pytest -q "$@"
