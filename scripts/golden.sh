#!/usr/bin/env bash
# Runs every case of tests/golden/cases.txt plus `ccreplay baseline` and
# writes all their outputs into OUTDIR (default tests/golden/out). The test
# golden_test compares a fresh run against the committed directory byte for
# byte (timelines by SHA-256); rerun this script only when a change is meant to move results, and
# say which in the commit.
# Usage: scripts/golden.sh [CCREPLAY_BINARY] [OUTDIR]
set -euo pipefail
cd "$(dirname "$0")/.."
bin="$(realpath "${1:-build/ccreplay}")"
out="${2:-tests/golden/out}"
mkdir -p "$out"
out="$(realpath "$out")"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
cases="$(realpath tests/golden/cases.txt)"
# Run inside a scratch folder with relative names, so that no output depends
# on where the checkout or the temporary folder is.
ln -s "$(realpath traces)" "$tmp/traces"
cd "$tmp"
while IFS='|' read -r name lower replay; do
  name="$(echo "$name" | xargs)"
  [[ -z "$name" || "$name" == \#* ]] && continue
  # shellcheck disable=SC2086
  "$bin" lower $lower -o "$name.pb" > /dev/null
  # shellcheck disable=SC2086
  "$bin" replay "$name.pb" $replay --json "$name.json" --csv "$name.csv" \
    --timeline "$name.timeline.json" > "$name.stdout"
  mv "$name.json" "$name.csv" "$name.timeline.json" "$name.stdout" "$out/"
done < "$cases"
"$bin" baseline --json baseline.json --csv baseline.csv > baseline.stdout
mv baseline.json baseline.csv baseline.stdout "$out/"
# Timelines are tens of MB: keep their digests, not the files.
(cd "$out" && sha256sum -- *.timeline.json > timelines.sha256 && rm -f -- *.timeline.json)
