#!/usr/bin/env bash
# Installs what kiln needs from Debian 12 packages (only what is missing) and builds kiln into
# build/. Safe to run again: a no-op install and an incremental build.
#   bash deploy/setup.sh          everything, the tests included
#   bash deploy/setup.sh --demo   only the programs (kiln, kiln-harness, kiln-worker,
#                                 kiln-controller, the Python runner's library): 235 of the 396
#                                 build steps, no test program
set -euo pipefail
targets=()
case "${1:-}" in
  "") ;;
  --demo) targets=(--target kiln kiln-harness kiln-worker kiln-controller kiln_worker_python) ;;
  *) echo "usage: bash deploy/setup.sh [--demo]" >&2; exit 2 ;;
esac
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

packages=(
  cmake ninja-build g++ pkg-config
  libgrpc++-dev libprotobuf-dev protobuf-compiler protobuf-compiler-grpc
  libabsl-dev libsqlite3-dev libssl-dev nlohmann-json3-dev catch2
  bubblewrap libseccomp-dev patchelf
  libyaml-cpp-dev libcurl4-openssl-dev prometheus-cpp-dev libcpp-httplib-dev libdtl-dev
  clang libclang-rt-dev openssl
  libze-dev libze1 clang-14 llvm-spirv-14 spirv-tools
  python3 python3-torch libtorch-dev pybind11-dev
  chromium python3-pil
  systemd python3-yaml
)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
# Node.js and npm for the MCP test's official SDK client; a node that came with its own npm is
# kept.
command -v npm >/dev/null || missing+=(nodejs npm)
if ((${#missing[@]})); then
  echo "kiln setup: installing ${missing[*]}" >&2
  sudo=""
  [[ $(id -u) -eq 0 ]] || sudo="sudo"
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get update -q
  $sudo apt-get install -y -q --no-install-recommends "${missing[@]}"
fi

jobs="${KILN_BUILD_JOBS:-$(nproc)}"
cmake -S "$root" -B "$root/build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
echo "kiln setup: building ${targets[*]:-everything} in build/ ($jobs jobs)" >&2
cmake --build "$root/build" -j "$jobs" "${targets[@]}"
