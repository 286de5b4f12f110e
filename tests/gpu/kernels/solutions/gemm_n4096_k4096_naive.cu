// gemm_n4096_k4096, naive: C = A @ B.T with one thread per element of C looping over K straight
// from global memory (float32 accumulation, rounded to float16 once). No tiling, no tensor cores.
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <kiln/abi.h>
#include <stdint.h>

#define N_SIZE 4096
#define K_SIZE 4096

__global__ void gemm_naive_kernel(const __half* a, const __half* b, __half* c, int64_t m_size) {
  const int64_t n = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  const int64_t m = (int64_t)blockIdx.y * blockDim.y + threadIdx.y;
  if (m >= m_size || n >= N_SIZE) return;
  const __half* ar = a + m * K_SIZE;
  const __half* br = b + n * K_SIZE;
  float acc = 0.0f;
  for (int k = 0; k < K_SIZE; ++k) acc += __half2float(ar[k]) * __half2float(br[k]);
  c[m * N_SIZE + n] = __float2half(acc);
}

extern "C" int run(const kiln_tensor* args, int32_t nargs, const kiln_context* ctx) {
  if (nargs != 3 || args[0].ndim != 2 || args[0].shape[1] != K_SIZE || args[1].shape[0] != N_SIZE)
    return 2;
  const int64_t m_size = args[0].shape[0];
  if (m_size == 0) return 0;
  const dim3 block(16, 16);
  const dim3 grid(N_SIZE / 16, (unsigned)((m_size + 15) / 16));
  gemm_naive_kernel<<<grid, block, 0, (cudaStream_t)ctx->stream>>>(
      (const __half*)args[0].data, (const __half*)args[1].data, (__half*)args[2].data, m_size);
  return cudaGetLastError() != cudaSuccess ? 1 : 0;
}
