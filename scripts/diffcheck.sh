#!/usr/bin/env bash
# Differential check of two ccreplay binaries that must agree to the byte
# (an optimisation of the engine): lowers ring and halving-doubling
# AllReduce, ring AllGather and pairwise AllToAll with OLD and replays each
# with both binaries on ring, full-mesh, switch and fat-tree topologies, on
# every config in traces/ and on TPS186 variants (XOR, hash and round-robin
# interleaving; round-robin and FIFO arbitration; FIFO switch inputs), and
# compares the JSON reports. Configs of a fixed size (64 chips) run at 256
# KiB, the others at 8 chips with 64 KiB and 1 MiB. Prints each difference
# and a count; exits 1 if any.
# Usage: scripts/diffcheck.sh OLD_BINARY NEW_BINARY
set -uo pipefail
[ $# -eq 2 ] || { echo "usage: $0 OLD_BINARY NEW_BINARY" >&2; exit 2; }
old=$1
new=$2
here=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
configs=("$here"/traces/*.hw.txtpb)
for base in tps186 tps186-switch tps186-board-fattree; do
  f="$here/traces/$base.hw.txtpb"
  sed 's/interleave: INTERLEAVE_XOR/interleave: INTERLEAVE_ROUND_ROBIN/' "$f" \
    > "$tmp/$base-rr.hw.txtpb"
  sed 's/interleave: INTERLEAVE_XOR/interleave: INTERLEAVE_HASH/' "$f" \
    > "$tmp/$base-hash.hw.txtpb"
  sed 's/arbitration: ARBITRATION_ROUND_ROBIN/arbitration: ARBITRATION_FIFO/' \
    "$f" > "$tmp/$base-fifo.hw.txtpb"
  sed 's/arbitration: ARBITRATION_ROUND_ROBIN/& input_queues: INPUT_QUEUES_FIFO/' \
    "$f" > "$tmp/$base-hol.hw.txtpb"
  configs+=("$tmp/$base-rr.hw.txtpb" "$tmp/$base-hash.hw.txtpb"
            "$tmp/$base-fifo.hw.txtpb" "$tmp/$base-hol.hw.txtpb")
done
runs=0
bad=0
for hw in "${configs[@]}"; do
  # A config whose topology fixes the chip count replays at that count.
  n=$(sed -n 's/^ *num_chips: *\([0-9]*\).*/\1/p' "$hw" | head -1)
  if [ -n "$n" ] && [ "$n" -gt 8 ]; then sizes=(256K); else n=8; sizes=(64K 1M); fi
  for oa in allreduce:ring allreduce:hd alltoall:pairwise allgather:ring; do
    for t in ring fullmesh switch board-fattree; do
      for m in "${sizes[@]}"; do
        "$old" lower --hw "$hw" --op "${oa%:*}" --algo "${oa#*:}" --n "$n" \
          --bytes "$m" -o "$tmp/t.pb" >/dev/null 2>&1 || continue
        rm -f "$tmp/old.json" "$tmp/new.json"
        "$old" replay "$tmp/t.pb" --hw "$hw" --topology "$t" -q \
          --json "$tmp/old.json" >/dev/null 2>&1
        r1=$?
        "$new" replay "$tmp/t.pb" --hw "$hw" --topology "$t" -q \
          --json "$tmp/new.json" >/dev/null 2>&1
        r2=$?
        [ -f "$tmp/old.json" ] && runs=$((runs + 1))
        if [ $r1 != $r2 ] ||
           { [ -f "$tmp/old.json" ] && ! cmp -s "$tmp/old.json" "$tmp/new.json"; }; then
          bad=$((bad + 1))
          echo "DIFF $(basename "$hw") $oa $t $m (exit $r1 / $r2)"
        fi
      done
    done
  done
done
echo "$runs replays compared, $bad differing"
[ $bad -eq 0 ]
