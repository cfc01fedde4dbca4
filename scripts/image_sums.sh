#!/usr/bin/env bash
# The bytes a refactor must not change: sha256 of every checked-in golden file, of the models the
# benchmarks train, and of every AVR flash image (objcopy -O binary of .text + .data) built for
# the golden files and for those models, each through the command line.
#
#   bash scripts/image_sums.sh [CHECKOUT [OUT]]   # OUT.golden, OUT.models, OUT.images, OUT.*.log
#
# Run it on two checkouts (git worktree add /tmp/old REV) and compare the files: the image list is
# keyed by the build cache's content hash, so compare the sorted sums, not the paths.
set -euo pipefail
HERE=$(cd "$(dirname "$0")/.." && pwd)
ROOT=$(cd "${1:-$HERE}" && pwd)
OUT=${2:-$ROOT/build/sums/sums}
mkdir -p "$(dirname "$OUT")"
export PYTHONPATH=$ROOT/host:$ROOT/device
PY=$HERE/.venv/bin/python
K="$PY -m kilobit.cli"
cd "$ROOT"
rm -rf build/avr-* build/sums/models
mkdir -p build/sums/models build/data
[ -e build/data/r-cran-mlbench ] || ln -sfn "$HERE/build/data/r-cran-mlbench" build/data/r-cran-mlbench
$K golden check tests/golden/*.json --runtime uno-sim > "$OUT.uno.log" 2>&1 || true
$K golden check tests/golden/rkp-*.json tests/golden/ckp-*.json --runtime attiny2313-sim \
  > "$OUT.tiny.log" 2>&1 || true
M=build/sums/models
for b in "2 112" "4 62" "6 43" "8 32"; do set -- $b
  $K train rkp --data banana --bits "$1" --budget "$2" --width -6 --seed 0 -o $M/rkp$1.kb >/dev/null
  for board in attiny2313 uno; do $K fit $M/rkp$1.kb --board $board >> "$OUT.fit.log" 2>&1 || true; done
done
$K train ckp --data banana --L 560 --A 0.1 --bits 6 -o $M/ckp.kb > /dev/null
for board in attiny2313 uno; do $K fit $M/ckp.kb --board $board >> "$OUT.fit.log" 2>&1 || true; done
$K train bonsai --data digits --depth 3 --proj 10 --budget-bytes 2048 --bits 8 --quiet -o $M/b.kb >/dev/null
$K train protonn --data digits --proj 10 --prototypes 20 --budget-bytes 2048 --bits 8 --quiet \
  -o $M/p.kb >/dev/null
for m in b p; do $K fit $M/$m.kb --board uno >> "$OUT.fit.log" 2>&1 || true; done
(cd $M && sha256sum *.kb) > "$OUT.models"
tmp=$(mktemp)
(cd build && for e in $(find avr-* -name '*.elf' | sort); do
   avr-objcopy -O binary -j .text -j .data "$e" "$tmp"
   echo "$(sha256sum < "$tmp" | cut -c1-64)  $e"; done) > "$OUT.images"
rm -f "$tmp"
sha256sum tests/golden/*.json > "$OUT.golden"
echo "golden files: $(wc -l < "$OUT.golden"), sha256 of the list $(sha256sum < "$OUT.golden" | cut -c1-16)"
echo "trained models: $(wc -l < "$OUT.models"), sha256 of the list $(sha256sum < "$OUT.models" | cut -c1-16)"
echo "flash images: $(wc -l < "$OUT.images"), sha256 of the sorted sums $(cut -c1-64 "$OUT.images" | sort | sha256sum | cut -c1-16)"
echo "golden files agreeing on uno-sim: $(tail -1 "$OUT.uno.log")"
