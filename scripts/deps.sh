#!/usr/bin/env bash
# Installs what ccreplay needs to build and test, from Debian 12's packages.
# Idempotent: installs only what is missing. Run as root (or via sudo).
# `deps.sh --mpi` adds Debian's OpenMPI for the optional MPI build
# (-DCCREPLAY_MPI=ON); the default build does not need it.
set -euo pipefail
pkgs=(cmake g++ make pkg-config
      libprotobuf-dev protobuf-compiler libabsl-dev libcli11-dev
      libgtest-dev libgmock-dev libbenchmark-dev
      nlohmann-json3-dev libtinyxml2-dev
      chromium)  # tests/report_test.cc renders the HTML report headless
if [ "${1:-}" = --mpi ]; then
  pkgs+=(libopenmpi-dev openmpi-bin)
fi
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" \
    || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "deps: installing ${missing[*]}"
  SUDO=""
  [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends \
    "${missing[@]}" >/dev/null
fi
