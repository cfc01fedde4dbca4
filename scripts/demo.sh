#!/usr/bin/env bash
# Set up (idempotent) and run the main job: train and quantize on the host, then run and keep
# learning on every device runtime (MicroPython 1.27 WebAssembly and the C runtime stand in
# when no board is attached).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
exec .venv/bin/kilobit demo "$@"
