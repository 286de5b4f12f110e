// GEMM reference C = A @ B.T (float16 in and out, float32 accumulation), the native stand-in for
// the Python reference of the flashinfer-trace gemm_n*_k* definitions (torch.matmul(A, B.T)).
// Arguments: A [M, K], B [N, K], then C [M, N]; M varies, N and K are the definition's constants.
// A plain shared-memory tiled kernel: each 16x16 block stages 16x16 tiles of A and B (widened to
// float) and every thread accumulates one element of C in float32, rounded once at the end.
// Written to be obviously correct, not fast. Specialised by KILN_N and KILN_K.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <kiln/abi.h>
#include <stdint.h>

#if !defined(KILN_N) || !defined(KILN_K)
#error "define KILN_N and KILN_K"
#endif

#define KILN_TILE 16

__global__ void gemm_reference_kernel(const __half* a, const __half* b, __half* c, int64_t m_size,
                                      int64_t n_size, int64_t k_size) {
  __shared__ float a_tile[KILN_TILE][KILN_TILE + 1];  // [m][k]
  __shared__ float b_tile[KILN_TILE][KILN_TILE + 1];  // [k][n]
  const int tx = threadIdx.x, ty = threadIdx.y;
  const int64_t m = (int64_t)blockIdx.y * KILN_TILE + ty;
  const int64_t n = (int64_t)blockIdx.x * KILN_TILE + tx;
  const int64_t b_row = (int64_t)blockIdx.x * KILN_TILE + ty;  // the row of B this thread stages
  float acc = 0.0f;
  for (int64_t k0 = 0; k0 < k_size; k0 += KILN_TILE) {
    const int64_t k = k0 + tx;
    a_tile[ty][tx] = (m < m_size && k < k_size) ? __half2float(a[m * k_size + k]) : 0.0f;
    b_tile[tx][ty] = (b_row < n_size && k < k_size) ? __half2float(b[b_row * k_size + k]) : 0.0f;
    __syncthreads();
    for (int kk = 0; kk < KILN_TILE; ++kk) acc += a_tile[ty][kk] * b_tile[kk][tx];
    __syncthreads();
  }
  if (m < m_size && n < n_size) c[m * n_size + n] = __float2half(acc);
}

extern "C" int run(const kiln_tensor* args, int32_t nargs, const kiln_context* ctx) {
  if (nargs != 3 || ctx == NULL) return 2;
  const kiln_tensor* a = &args[0];
  const kiln_tensor* b = &args[1];
  const kiln_tensor* c = &args[2];
  if (a->dtype != KILN_FLOAT16 || b->dtype != KILN_FLOAT16 || c->dtype != KILN_FLOAT16 ||
      a->ndim != 2 || b->ndim != 2 || c->ndim != 2) {
    return 3;
  }
  const int64_t m_size = a->shape[0];
  if (a->shape[1] != KILN_K || b->shape[0] != KILN_N || b->shape[1] != KILN_K ||
      c->shape[0] != m_size || c->shape[1] != KILN_N) {
    return 3;
  }
  if (m_size == 0) return 0;
  const dim3 block(KILN_TILE, KILN_TILE);
  const dim3 grid((unsigned)((KILN_N + KILN_TILE - 1) / KILN_TILE),
                  (unsigned)((m_size + KILN_TILE - 1) / KILN_TILE));
  gemm_reference_kernel<<<grid, block, 0, (cudaStream_t)ctx->stream>>>(
      (const __half*)a->data, (const __half*)b->data, (__half*)c->data, m_size, KILN_N, KILN_K);
  return cudaGetLastError() != cudaSuccess ? 1 : 0;
}
