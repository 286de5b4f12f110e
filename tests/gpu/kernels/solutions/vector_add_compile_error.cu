// vector_add_cuda, does not compile: the statement in the kernel misses its semicolon, so the
// compiler log must name kernel.cu and the line.
#include <cuda_runtime.h>
#include <kiln/abi.h>
#include <stdint.h>

__global__ void vector_add_kernel(const float* a, const float* b, float* c, int64_t n) {
  const int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i] = a[i] + b[i]
}

extern "C" int run(const kiln_tensor* args, int32_t nargs, const kiln_context* ctx) {
  const int64_t n = args[0].shape[0];
  vector_add_kernel<<<(unsigned)((n + 255) / 256), 256, 0, (cudaStream_t)ctx->stream>>>(
      (const float*)args[0].data, (const float*)args[1].data, (float*)args[2].data, n);
  return cudaGetLastError() != cudaSuccess ? 1 : 0;
}
