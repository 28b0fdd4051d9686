#!/usr/bin/env bash
# Quick start, step 2: build everything (Release) and run every test; then the
# same suite again in a Debug build with AddressSanitizer and
# UndefinedBehaviorSanitizer (build-asan/). Set CCREPLAY_SKIP_ASAN=1 to skip
# the second pass locally; CCREPLAY_BUILD_DIR / CCREPLAY_ASAN_DIR choose other
# build directories.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/deps.sh
jobs="$(nproc)"
rel="${CCREPLAY_BUILD_DIR:-build}"
asan="${CCREPLAY_ASAN_DIR:-build-asan}"
cmake -S . -B "$rel" -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$rel" -j"$jobs"
ctest --test-dir "$rel" --output-on-failure -j"$jobs"
if [[ "${CCREPLAY_SKIP_ASAN:-0}" != 1 ]]; then
  # Benchmarks are not tests; leaks are errors; the first UB report fails.
  # The golden outputs and the slow sweeps run in the Release pass only
  # (same code).
  cmake -S . -B "$asan" -DCMAKE_BUILD_TYPE=Debug -DCCREPLAY_SANITIZE=ON \
    -DCCREPLAY_BUILD_BENCH=OFF >/dev/null
  cmake --build "$asan" -j"$jobs"
  ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:strict_string_checks=1 \
  UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    ctest --test-dir "$asan" --output-on-failure -j"$jobs" -LE 'golden|slow'
fi
