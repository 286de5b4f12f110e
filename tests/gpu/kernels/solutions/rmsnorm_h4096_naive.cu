// rmsnorm_h4096, naive: one thread per row walks its 4096 elements twice (sum of squares, then
// the scaled output). Correct, and slow on purpose: neighbouring threads read addresses 8 KiB
// apart, so no load is coalesced, and small batches leave almost the whole GPU idle.
#include <cuda_bf16.h>
#include <cuda_runtime.h>
#include <kiln/abi.h>
#include <stdint.h>

#define HIDDEN 4096
#define EPS 1e-5f

__global__ void rmsnorm_naive_kernel(const __nv_bfloat16* x, const __nv_bfloat16* w,
                                     __nv_bfloat16* y, int64_t rows) {
  const int64_t row = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (row >= rows) return;
  const __nv_bfloat16* xr = x + row * HIDDEN;
  float sum = 0.0f;
  for (int i = 0; i < HIDDEN; ++i) {
    const float v = __bfloat162float(xr[i]);
    sum += v * v;
  }
  const float inv_rms = rsqrtf(sum / HIDDEN + EPS);
  for (int i = 0; i < HIDDEN; ++i) {
    const float v = __bfloat162float(xr[i]);
    y[row * HIDDEN + i] = __float2bfloat16(v * inv_rms * __bfloat162float(w[i]));
  }
}

extern "C" int run(const kiln_tensor* args, int32_t nargs, const kiln_context* ctx) {
  if (nargs != 3 || args[0].ndim != 2 || args[0].shape[1] != HIDDEN) return 2;
  const int64_t rows = args[0].shape[0];
  if (rows == 0) return 0;
  rmsnorm_naive_kernel<<<(unsigned)((rows + 127) / 128), 128, 0, (cudaStream_t)ctx->stream>>>(
      (const __nv_bfloat16*)args[0].data, (const __nv_bfloat16*)args[1].data,
      (__nv_bfloat16*)args[2].data, rows);
  return cudaGetLastError() != cudaSuccess ? 1 : 0;
}
