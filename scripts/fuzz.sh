#!/usr/bin/env bash
# Fuzzes one target with libFuzzer (clang-14, ASan + UBSan) for SECONDS
# (default 600):
#   trace  the trace reader, validator, check rules and a bounded replay
#   hw     the hardware-config reader, validation, topology size checks and
#          replay budget
#   argv   the whole command line, argument vectors run in process
# Usage: scripts/fuzz.sh [TARGET] [SECONDS] [extra libFuzzer flags...]
# (TARGET defaults to trace). Build in build-fuzz/, corpus in
# build-fuzz/corpus-TARGET (kept between runs), crashes in
# build-fuzz/artifacts/.
set -euo pipefail
cd "$(dirname "$0")/.."
target=trace
if [[ $# -gt 0 && ! "$1" =~ ^[0-9]+$ ]]; then
  target="$1"
  shift
fi
seconds="${1:-600}"
shift || true
extra=("$@")
if ! command -v clang++-14 >/dev/null || \
   ! ls /usr/lib/llvm-14/lib/clang/*/lib/linux/libclang_rt.fuzzer-x86_64.a >/dev/null 2>&1; then
  apt-get install -y --no-install-recommends clang-14 libclang-rt-14-dev
fi
cmake -S . -B build-fuzz -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_CXX_COMPILER=clang++-14 -DCCREPLAY_FUZZ=ON -DCCREPLAY_SANITIZE=ON \
  -DCMAKE_CXX_FLAGS="-fsanitize=fuzzer-no-link" \
  -DCCREPLAY_BUILD_TESTS=OFF -DCCREPLAY_BUILD_BENCH=OFF >/dev/null
cmake --build build-fuzz -j"$(nproc)" --target "${target}_fuzzer" ccreplay
seeds=build-fuzz/seeds-$target
mkdir -p "$seeds" "build-fuzz/corpus-$target" build-fuzz/artifacts
case "$target" in
  trace)
    # Small lowered traces in both formats and the bad-input corpus.
    for spec in "allreduce ring 2 1K" "allreduce ring 3 100" "allgather ring 4 64" \
                "reducescatter ring 5 1000" "alltoall pairwise 3 96"; do
      read -r op algo n bytes <<<"$spec"
      for ext in txtpb pb; do
        ./build-fuzz/ccreplay lower --op "$op" --algo "$algo" --n "$n" \
          --bytes "$bytes" --cdma 2 -o "$seeds/${op}_$n.$ext" >/dev/null
      done
    done
    cp tests/data/corpus/*.txtpb tests/data/corpus/*.pb "$seeds/" 2>/dev/null || true
    dict=(-dict="$PWD/tests/fuzz/trace.dict")
    ;;
  hw)
    # Every shipped config and the corpus's configs (text and binary).
    cp traces/*.hw.txtpb "$seeds/"
    cp tests/data/corpus/hw_* "$seeds/" 2>/dev/null || true
    dict=(-dict="$PWD/tests/fuzz/trace.dict")
    ;;
  argv)
    # Argument vectors (NUL-separated) of every command's common forms.
    i=0
    while IFS= read -r line; do
      [[ -z "$line" || "$line" == \#* ]] && continue
      printf '%s' "$line" | tr ' ' '\0' >"$seeds/argv_$i"
      i=$((i + 1))
    done <tests/fuzz/argv_seeds.txt
    dict=(-dict="$PWD/tests/fuzz/argv.dict")
    ;;
  *)
    echo "unknown target '$target' (trace, hw or argv)" >&2
    exit 2
    ;;
esac
# Absolute paths: argv_fuzzer works in a scratch directory of its own.
top="$PWD"
ASAN_OPTIONS=detect_leaks=1 "$top/build-fuzz/tests/fuzz/${target}_fuzzer" \
  "$top/build-fuzz/corpus-$target" "$top/$seeds" "${dict[@]}" \
  -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len=65536 \
  -close_fd_mask=3 -artifact_prefix="$top/build-fuzz/artifacts/" \
  -print_final_stats=1 "${extra[@]}"
