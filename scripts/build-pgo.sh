#!/usr/bin/env bash
# Builds ccreplay with profile-guided optimisation (GCC) in BUILD_DIR
# (default build-pgo): an instrumented build (CCREPLAY_PGO=GENERATE) lowers
# and replays a small training set, then the same directory is rebuilt with
# the profile it wrote (CCREPLAY_PGO=USE). The result gives the same outputs
# as the plain Release build, byte for byte (scripts/test.sh checks it with
# scripts/diffcheck.sh), and runs 8-13% fewer instructions than it
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
# train NAME LOWER_ARGS...: lowers a trace and replays it on the hardware it
# was lowered for (TPS186 unless the arguments start with --hw FILE).
train() {
  local name=$1
  shift
  local hw=()
  [[ "$1" == --hw ]] && hw=(--hw "$2")
  "$c" lower "$@" -o "$train/$name.pb" >/dev/null
  "$c" replay "$train/$name.pb" "${hw[@]}" -q --json "$train/$name.json" >/dev/null
}
# Packet level on TPS186: ring and halving-doubling AllReduce on the ring,
# AllToAll through a switch and over the board fat-tree; the alpha-beta
# machine's ring.
train ring --n 8 --op allreduce --algo ring --bytes 4M
train hd --n 8 --op allreduce --algo hd --bytes 1M
train a2a --n 32 --op alltoall --algo pairwise --bytes 458752 --topology switch
train fattree --n 16 --op alltoall --algo pairwise --bytes 458752 \
  --topology board-fattree
train ab --hw traces/alpha-beta.hw.txtpb --n 128 --op allreduce --algo ring \
  --bytes 16M --no-rendezvous

cmake -S . -B "$dir" "${common[@]}" -DCCREPLAY_PGO=USE >/dev/null
cmake --build "$dir" -j"$jobs" --target ccreplay
echo "build-pgo: $dir/ccreplay, compiled with the profile in $profile"
