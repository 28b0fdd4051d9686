#!/usr/bin/env bash
# Fuzzes the trace reader, validator, check rules and a bounded replay with
# libFuzzer (clang-14, ASan + UBSan) for SECONDS (default 600).
# Usage: scripts/fuzz.sh [SECONDS] [extra libFuzzer flags...]
# Build in build-fuzz/, corpus in build-fuzz/corpus (kept between runs),
# crashes in build-fuzz/artifacts/.
set -euo pipefail
cd "$(dirname "$0")/.."
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
cmake --build build-fuzz -j"$(nproc)" --target trace_fuzzer ccreplay
# Seeds: small lowered traces in both formats and the bad-input corpus.
seeds=build-fuzz/seeds
mkdir -p "$seeds" build-fuzz/corpus build-fuzz/artifacts
for spec in "allreduce ring 2 1K" "allreduce ring 3 100" "allgather ring 4 64" \
            "reducescatter ring 5 1000" "alltoall pairwise 3 96"; do
  read -r op algo n bytes <<<"$spec"
  for ext in txtpb pb; do
    ./build-fuzz/ccreplay lower --op "$op" --algo "$algo" --n "$n" \
      --bytes "$bytes" --cdma 2 -o "$seeds/${op}_$n.$ext" >/dev/null
  done
done
cp tests/data/corpus/*.txtpb tests/data/corpus/*.pb "$seeds/" 2>/dev/null || true
ASAN_OPTIONS=detect_leaks=1 ./build-fuzz/tests/fuzz/trace_fuzzer \
  build-fuzz/corpus "$seeds" -dict=tests/fuzz/trace.dict \
  -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len=65536 \
  -artifact_prefix=build-fuzz/artifacts/ -print_final_stats=1 "${extra[@]}"
