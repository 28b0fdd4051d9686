#!/usr/bin/env bash
# The README's scaling table: lowers and replays ring AllReduce (64 MiB, no
# rendezvous) and pairwise AllToAll (1.75 MB per chip, through one switch) on
# the pure alpha-beta machine (traces/alpha-beta.hw.txtpb) for N = 8 ... 2048
# and prints events, CPU seconds, peak RSS and CPU ns per event of each
# replay, measured by /usr/bin/time (user + sys). One run: the machine is
# shared, so compare figures within one table only.
# Usage: scripts/scaling.sh [build/ccreplay] [N ...]
set -euo pipefail
bin=${1:-build/ccreplay}
shift || true
sizes=("$@")
[ ${#sizes[@]} -gt 0 ] || sizes=(8 64 256 1024 2048)
here=$(cd "$(dirname "$0")/.." && pwd)
hw="$here/traces/alpha-beta.hw.txtpb"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
echo "| workload | N | instructions | events | CPU s | peak RSS MB | ns/event |"
echo "|---|---|---|---|---|---|---|"
run() {  # name n lower-args...
  local name=$1 n=$2
  shift 2
  "$bin" lower --hw "$hw" --n "$n" -o "$tmp/t.pb" "$@" > "$tmp/lower.txt"
  local instrs
  instrs=$(sed -n 's/.*bytes, \([0-9]*\) instructions.*/\1/p' "$tmp/lower.txt")
  /usr/bin/time -f "%U %S %M" -o "$tmp/time.txt" \
    "$bin" replay "$tmp/t.pb" --hw "$hw" > "$tmp/replay.txt"
  local events
  events=$(sed -n 's/.* \([0-9]*\) events,.*/\1/p' "$tmp/replay.txt")
  read -r user sys kb < "$tmp/time.txt"
  awk -v name="$name" -v n="$n" -v i="$instrs" -v e="$events" -v u="$user" \
      -v s="$sys" -v kb="$kb" 'BEGIN {
    cpu = u + s
    # /usr/bin/time counts in 10 ms ticks: below one, no per-event figure.
    if (cpu < 0.01) {
      printf "| %s | %d | %d | %d | < 0.01 | %.0f | - |\n",
             name, n, i, e, kb / 1024
    } else {
      printf "| %s | %d | %d | %d | %.2f | %.0f | %.0f |\n",
             name, n, i, e, cpu, kb / 1024, cpu * 1e9 / e
    }
  }'
}
for n in "${sizes[@]}"; do
  run "ring AllReduce 64 MiB" "$n" --op allreduce --algo ring --bytes 64M \
    --no-rendezvous
done
for n in "${sizes[@]}"; do
  run "AllToAll 1.75 MB/chip, switch" "$n" --op alltoall --algo pairwise \
    --bytes 1835008 --topology switch
done
