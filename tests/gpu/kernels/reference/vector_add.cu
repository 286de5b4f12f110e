// vector_add_cuda reference: c = a + b over float32 vectors of any length n.
// Arguments: a [n], b [n], then c [n]. One thread per element, grid-stride.
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <kiln/abi.h>
#include <stdint.h>

__global__ void vector_add_reference_kernel(const float* a, const float* b, float* c, int64_t n) {
  for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
       i += (int64_t)gridDim.x * blockDim.x) {
    c[i] = a[i] + b[i];
  }
}

extern "C" int run(const kiln_tensor* args, int32_t nargs, const kiln_context* ctx) {
  if (nargs != 3 || ctx == NULL) return 2;
  for (int i = 0; i < 3; ++i) {
    if (args[i].dtype != KILN_FLOAT32 || args[i].ndim != 1 || args[i].shape[0] != args[0].shape[0])
      return 3;
  }
  const int64_t n = args[0].shape[0];
  if (n == 0) return 0;
  const int64_t blocks = (n + 255) / 256;
  vector_add_reference_kernel<<<(unsigned)(blocks < 65536 ? blocks : 65536), 256, 0,
                                (cudaStream_t)ctx->stream>>>(
      (const float*)args[0].data, (const float*)args[1].data, (float*)args[2].data, n);
  return cudaGetLastError() != cudaSuccess ? 1 : 0;
}
