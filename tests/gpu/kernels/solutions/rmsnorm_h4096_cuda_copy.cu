// rmsnorm_h4096 into a scratch buffer, then copied into the output with cudaMemcpyAsync: every
// call launches the kernel and a device-to-device copy whose size follows the batch. Honest: the
// same-work rule compares the timed calls of one trial with each other, not across batches.
#include <cuda_bf16.h>
#include <cuda_runtime.h>
#include <kiln/abi.h>
#include <stdint.h>

#define HIDDEN 4096
#define EPS 1e-5f
#define THREADS 256

__global__ void rmsnorm_scratch_kernel(const __nv_bfloat16* x, const __nv_bfloat16* w,
                                       __nv_bfloat16* y) {
  const int64_t row = blockIdx.x;
  const __nv_bfloat16* xr = x + row * HIDDEN;
  __shared__ float partial[THREADS];
  float sum = 0.0f;
  for (int i = threadIdx.x; i < HIDDEN; i += THREADS) {
    const float v = __bfloat162float(xr[i]);
    sum += v * v;
  }
  partial[threadIdx.x] = sum;
  __syncthreads();
  for (int s = THREADS / 2; s > 0; s >>= 1) {
    if (threadIdx.x < s) partial[threadIdx.x] += partial[threadIdx.x + s];
    __syncthreads();
  }
  const float inv_rms = rsqrtf(partial[0] / HIDDEN + EPS);
  for (int i = threadIdx.x; i < HIDDEN; i += THREADS) {
    const float v = __bfloat162float(xr[i]);
    y[row * HIDDEN + i] = __float2bfloat16(v * inv_rms * __bfloat162float(w[i]));
  }
}

static void* scratch = nullptr;
static size_t scratch_bytes = 0;

extern "C" int run(const kiln_tensor* args, int32_t nargs, const kiln_context* ctx) {
  if (nargs != 3 || args[0].ndim != 2 || args[0].shape[1] != HIDDEN) return 2;
  const int64_t rows = args[0].shape[0];
  if (rows == 0) return 0;
  const size_t bytes = (size_t)rows * HIDDEN * sizeof(__nv_bfloat16);
  if (bytes > scratch_bytes) {
    if (scratch != nullptr) cudaFree(scratch);
    if (cudaMalloc(&scratch, bytes) != cudaSuccess) return 1;
    scratch_bytes = bytes;
  }
  cudaStream_t stream = (cudaStream_t)ctx->stream;
  rmsnorm_scratch_kernel<<<(unsigned)rows, THREADS, 0, stream>>>(
      (const __nv_bfloat16*)args[0].data, (const __nv_bfloat16*)args[1].data,
      (__nv_bfloat16*)scratch);
  if (cudaMemcpyAsync(args[2].data, scratch, bytes, cudaMemcpyDeviceToDevice, stream) !=
      cudaSuccess) {
    return 1;
  }
  return cudaGetLastError() != cudaSuccess ? 1 : 0;
}
