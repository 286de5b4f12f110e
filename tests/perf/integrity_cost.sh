#!/usr/bin/env bash
# The cost of kiln's per-call integrity checks on timing (docs/integrity.md): the same honest
# vector_add_f32 solution evaluated in one process with the checks on and off, alternately, for a
# small and a large workload. Prints one JSON line per (size) to stdout.
#
#   host: tests/perf/integrity_cost.sh [BUILD_DIR] [REPEATS] [MODE]
#   GPU:  tests/perf/integrity_cost.sh --cuda [BUILD_DIR] [REPEATS] [MODE]   (needs nvcc + a GPU)
set -euo pipefail
backend=host
if [[ "${1:-}" == "--cuda" ]]; then backend=cuda; shift; fi
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
build="$(cd "${1:-$root/build}" && pwd)"
repeats="${2:-5}"
mode="${3:-official}"
tmp="$(mktemp -d "${TMPDIR:-/tmp}/kiln-integrity-cost-XXXXXX")"
trap 'rm -rf "$tmp"' EXIT

if [[ "$backend" == host ]]; then
  cat > "$tmp/add.cc" <<'SRC'
#include <kiln/abi.h>
extern "C" int run(const kiln_tensor* args, int32_t nargs, const kiln_context* ctx) {
  const float* a = (const float*)args[0].data;
  const float* b = (const float*)args[1].data;
  float* c = (float*)args[2].data;
  for (int64_t i = 0; i < args[0].shape[0]; ++i) c[i] = a[i] + b[i];
  return 0;
}
SRC
  g++ -O3 -march=native -shared -fPIC -std=c++17 -I"$root/harness/include" -o "$tmp/add.so" \
    "$tmp/add.cc"
  sizes="4096 4194304"
else
  cat > "$tmp/add.cu" <<'SRC'
#include <kiln/abi.h>
__global__ void add(const float* a, const float* b, float* c, int64_t n) {
  int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
  if (i < n) c[i] = a[i] + b[i];
}
extern "C" int run(const kiln_tensor* args, int32_t nargs, const kiln_context* ctx) {
  int64_t n = args[0].shape[0];
  add<<<(n + 255) / 256, 256, 0, (cudaStream_t)ctx->stream>>>(
      (const float*)args[0].data, (const float*)args[1].data, (float*)args[2].data, n);
  return cudaGetLastError() != cudaSuccess;
}
SRC
  nvcc -O3 -shared -Xcompiler -fPIC -cudart shared -I"$root/harness/include" -o "$tmp/add.so" \
    "$tmp/add.cu"
  sizes="4096 67108864"
fi
echo "# $(date -u +%Y-%m-%dT%H:%M:%SZ) $(uname -n), $(nproc) cores, mode $mode, repeats $repeats" >&2
for n in $sizes; do
  "$build/bin/integrity_cost" "$backend" "$tmp/add.so" run "$n" "$mode" "$repeats"
done
