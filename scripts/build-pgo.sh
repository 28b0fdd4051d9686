#!/usr/bin/env bash
# Builds ccreplay with profile-guided optimisation (GCC) in BUILD_DIR
# (default build-pgo): an instrumented build (CCREPLAY_PGO=GENERATE) lowers
# and replays a small training set, then the same directory is rebuilt with
# the profile it wrote (CCREPLAY_PGO=USE). The result gives the same outputs
# as the plain Release build, byte for byte (scripts/test.sh checks it with
# scripts/diffcheck.sh), and runs about a tenth faster
# (docs/performance.md, "Session 26"). The training set is kept apart from
# the workloads that figure is measured on: other sizes and chip counts.
# Usage: scripts/build-pgo.sh [BUILD_DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
dir="${1:-build-pgo}"
jobs="$(nproc)"
profile="$(realpath -m "$dir")/pgo-profile"
common=(-DCMAKE_BUILD_TYPE=Release -DCCREPLAY_BUILD_TESTS=OFF
        "-DCCREPLAY_PGO_DIR=$profile")

# A profile of an older build would not match the sources.
rm -rf "$profile"
cmake -S . -B "$dir" "${common[@]}" -DCCREPLAY_PGO=GENERATE >/dev/null
cmake --build "$dir" -j"$jobs" --target ccreplay

train="$(mktemp -d)"
trap 'rm -rf "$train"' EXIT
c="$dir/ccreplay"
ab=traces/alpha-beta.hw.txtpb
# Packet level on TPS186: a ring AllReduce on the ring, AllToAll through a
# switch and over the board fat-tree; the alpha-beta machine's ring.
"$c" lower --n 8 --op allreduce --algo ring --bytes 4M -o "$train/ring.pb" >/dev/null
"$c" lower --n 8 --op allreduce --algo hd --bytes 1M -o "$train/hd.pb" >/dev/null
"$c" lower --n 32 --op alltoall --algo pairwise --bytes 458752 \
  --topology switch -o "$train/a2a.pb" >/dev/null
"$c" lower --n 16 --op alltoall --algo pairwise --bytes 458752 \
  --topology board-fattree -o "$train/fattree.pb" >/dev/null
"$c" lower --hw "$ab" --n 128 --op allreduce --algo ring --bytes 16M \
  --no-rendezvous -o "$train/ab.pb" >/dev/null
for t in ring hd a2a fattree; do
  "$c" replay "$train/$t.pb" -q --json "$train/$t.json" >/dev/null
done
"$c" replay "$train/ab.pb" --hw "$ab" -q --json "$train/ab.json" >/dev/null

cmake -S . -B "$dir" "${common[@]}" -DCCREPLAY_PGO=USE >/dev/null
cmake --build "$dir" -j"$jobs" --target ccreplay
echo "build-pgo: $dir/ccreplay, compiled with the profile in $profile"
