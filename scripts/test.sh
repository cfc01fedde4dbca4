#!/usr/bin/env bash
# Set up (idempotent) and run every test: host, kbit under CPython and MicroPython, C on the host,
# AVR builds, and the wheel installed outside the checkout (tests/test_wheel.py runs
# scripts/wheel_check.sh). Under CI=true a missing toolchain fails the run instead of skipping.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
# two workers, one a core (CI has two): the builds the tests share are made in private folders
# renamed into place or under a lock (kilobit.runtimes.buildcache), so they may run at once;
# a clean clone ran 2,977 tests in 11.3 min this way against 19.7 min in one process
exec .venv/bin/python -m pytest -q -n 2 "$@"
