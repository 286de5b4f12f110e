#!/usr/bin/env bash
# Installs what kiln needs from Debian 12 packages (only what is missing) and builds kiln into
# build/. Safe to run again: a no-op install and an incremental build.
#   bash deploy/setup.sh          everything, the tests included
#   bash deploy/setup.sh --demo   only what the demo runs and a node serves (kiln, kiln-harness,
#                                 kiln-worker, the Python runner's library) and only the packages
#                                 they need; no kiln-controller, no test program
set -euo pipefail
demo=0
case "${1:-}" in
  "") ;;
  --demo) demo=1 ;;
  *) echo "usage: bash deploy/setup.sh [--demo]" >&2; exit 2 ;;
esac
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

# What the programs build with and the demo runs with (the demo compiles its C++ solution with
# g++ and runs it in bubblewrap).
packages=(
  cmake ninja-build g++ pkg-config
  libgrpc++-dev libprotobuf-dev protobuf-compiler protobuf-compiler-grpc
  libabsl-dev libsqlite3-dev libssl-dev nlohmann-json3-dev
  bubblewrap libseccomp-dev
  libyaml-cpp-dev libcurl4-openssl-dev prometheus-cpp-dev libcpp-httplib-dev libdtl-dev
  python3
)
# What the whole test suite needs beside them: Catch2, the bundle (patchelf), the fuzz targets
# (clang), Level Zero and OpenCL, the Python paths (torch), the browser tests, the deploy tests.
test_packages=(
  catch2 patchelf
  clang libclang-rt-dev openssl
  libze-dev libze1 clang-14 llvm-spirv-14 spirv-tools
  python3-torch libtorch-dev pybind11-dev
  chromium python3-pil
  systemd python3-yaml
)
((demo)) || packages+=("${test_packages[@]}")
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
# Node.js and npm for the MCP test's official SDK client; a node that came with its own npm is
# kept.
((demo)) || command -v npm >/dev/null || missing+=(nodejs npm)
if ((${#missing[@]})); then
  echo "kiln setup: installing ${missing[*]}" >&2
  sudo=""
  [[ $(id -u) -eq 0 ]] || sudo="sudo"
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get update -q
  $sudo apt-get install -y -q --no-install-recommends "${missing[@]}"
fi

jobs="${KILN_BUILD_JOBS:-$(nproc)}"
targets=()
tests=ON
if ((demo)); then
  targets=(--target kiln kiln-harness kiln-worker kiln_worker_python)
  # The tests' CMake needs their packages; the programs do not. A later full setup turns it on.
  [[ -f "$root/build/CMakeCache.txt" ]] && grep -q '^KILN_BUILD_TESTS:BOOL=ON' \
    "$root/build/CMakeCache.txt" || tests=OFF
fi
cmake -S "$root" -B "$root/build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DKILN_BUILD_TESTS="$tests" >/dev/null
echo "kiln setup: building ${targets[*]:-everything} in build/ ($jobs jobs)" >&2
cmake --build "$root/build" -j "$jobs" "${targets[@]}"
