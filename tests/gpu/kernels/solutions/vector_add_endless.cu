// vector_add_cuda, never finishes: every thread spins on a device flag that nothing sets. The
// flag is volatile so the loop is not folded away. The worker's wall-clock limit must end it.
#include <cuda_runtime.h>
#include <kiln/abi.h>
#include <stdint.h>

__device__ volatile int kiln_release_flag = 0;

__global__ void vector_add_endless_kernel(const float* a, const float* b, float* c, int64_t n) {
  const int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  while (kiln_release_flag == 0) {
  }
  if (i < n) c[i] = a[i] + b[i];
}

extern "C" int run(const kiln_tensor* args, int32_t nargs, const kiln_context* ctx) {
  if (nargs != 3) return 2;
  const int64_t n = args[0].shape[0];
  if (n == 0) return 0;
  vector_add_endless_kernel<<<(unsigned)((n + 255) / 256), 256, 0, (cudaStream_t)ctx->stream>>>(
      (const float*)args[0].data, (const float*)args[1].data, (float*)args[2].data, n);
  return cudaGetLastError() != cudaSuccess ? 1 : 0;
}
