#!/usr/bin/env bash
# ctest `golden`: replays every case of tests/golden/cases.txt and the
# baseline in a fresh process and compares every output with the committed
# tests/golden/out byte for byte (timelines by SHA-256). A second run under
# another locale and from another working directory must give the same bytes
# again: determinism across processes, not only within one.
# Usage: tests/golden/check.sh CCREPLAY_BINARY SCRATCH_DIR
set -euo pipefail
src="$(cd "$(dirname "$0")/../.." && pwd)"
bin="$1"
scratch="$2"
rm -rf "$scratch"
mkdir -p "$scratch"
"$src/scripts/golden.sh" "$bin" "$scratch/a"
if ! diff -r "$src/tests/golden/out" "$scratch/a" > "$scratch/diff.txt"; then
  head -c 4000 "$scratch/diff.txt"
  echo "golden: outputs differ from tests/golden/out (full diff: $scratch/diff.txt)"
  exit 1
fi
(cd / && LC_ALL=C.UTF-8 LANG=de_DE.UTF-8 LC_NUMERIC=de_DE.UTF-8 \
   "$src/scripts/golden.sh" "$bin" "$scratch/b")
if ! diff -r "$scratch/a" "$scratch/b" > "$scratch/diff-locale.txt"; then
  head -c 4000 "$scratch/diff-locale.txt"
  echo "golden: a second process under another locale wrote different bytes"
  exit 1
fi
echo "golden: $(ls "$scratch/a" | wc -l) outputs identical to tests/golden/out, twice"
