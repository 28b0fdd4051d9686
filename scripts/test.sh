#!/usr/bin/env bash
# Quick start, step 2: build everything (Release) and run every test; then the
# same suite again in a Debug build with AddressSanitizer and
# UndefinedBehaviorSanitizer (build-asan/); then the optional MPI build of
# ccreplay (build-mpi/, Debian's OpenMPI) and its `mpi` test; last, the
# profile-guided build of ccreplay (build-pgo/, scripts/build-pgo.sh),
# whose replays must match the Release build's byte for byte
# (scripts/diffcheck.sh). Set CCREPLAY_SKIP_ASAN=1, CCREPLAY_SKIP_MPI=1 or
# CCREPLAY_SKIP_PGO=1 to skip those passes locally; CCREPLAY_BUILD_DIR /
# CCREPLAY_ASAN_DIR / CCREPLAY_MPI_DIR / CCREPLAY_PGO_BUILD_DIR choose other
# build directories.
set -euo pipefail
cd "$(dirname "$0")/.."
if [[ "${CCREPLAY_SKIP_MPI:-0}" != 1 ]]; then
  ./scripts/deps.sh --mpi
else
  ./scripts/deps.sh
fi
jobs="$(nproc)"
rel="${CCREPLAY_BUILD_DIR:-build}"
asan="${CCREPLAY_ASAN_DIR:-build-asan}"
mpi="${CCREPLAY_MPI_DIR:-build-mpi}"
pgo="${CCREPLAY_PGO_BUILD_DIR:-build-pgo}"
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
if [[ "${CCREPLAY_SKIP_MPI:-0}" != 1 ]]; then
  # Only the binary: the unit tests are the Release pass's, the same code.
  cmake -S . -B "$mpi" -DCMAKE_BUILD_TYPE=Release -DCCREPLAY_MPI=ON \
    -DCCREPLAY_BUILD_BENCH=OFF >/dev/null
  cmake --build "$mpi" -j"$jobs" --target ccreplay
  ctest --test-dir "$mpi" --output-on-failure -L mpi
fi
if [[ "${CCREPLAY_SKIP_PGO:-0}" != 1 ]]; then
  # Only the binary, trained and rebuilt; then 432 replays against the
  # Release binary's, which must agree to the byte.
  ./scripts/build-pgo.sh "$pgo"
  ./scripts/diffcheck.sh "$rel/ccreplay" "$pgo/ccreplay"
fi
