#!/usr/bin/env bash
# Quick start, step 1: install what is missing, build (Release), and run the
# main job: the TPS186 baseline on the built-in default hardware.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/deps.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j"$(nproc)" --target ccreplay
./build/ccreplay baseline
