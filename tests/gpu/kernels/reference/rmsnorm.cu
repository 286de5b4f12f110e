// RMSNorm reference (bfloat16 in and out, float32 math), the native stand-in for the Python
// reference of the flashinfer-trace rmsnorm_h* and fused_add_rmsnorm_h* definitions:
//
//   x = hidden_states (+ residual when KILN_FUSED_ADD), in float32
//   y = (x * rsqrt(mean(x^2) + EPS)) * weight, rounded to bfloat16
//
// The residual is only read: the definitions return y alone and do not update it in place.
// Arguments: hidden_states [batch, H], (residual [batch, H],) weight [H], then output [batch, H].
// One block per row; the sum of squares is reduced in float32 through shared memory. Written to
// be obviously correct, not fast. Specialised by KILN_HIDDEN, KILN_EPS and KILN_FUSED_ADD.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <kiln/abi.h>
#include <stdint.h>

#if !defined(KILN_HIDDEN) || !defined(KILN_EPS) || !defined(KILN_FUSED_ADD)
#error "define KILN_HIDDEN, KILN_EPS and KILN_FUSED_ADD"
#endif

#define KILN_THREADS 256

__device__ float kiln_input(const __nv_bfloat16* x, const __nv_bfloat16* r, int64_t i) {
  float v = __bfloat162float(x[i]);
#if KILN_FUSED_ADD
  v += __bfloat162float(r[i]);
#endif
  return v;
}

__global__ void rmsnorm_reference_kernel(const __nv_bfloat16* x, const __nv_bfloat16* r,
                                         const __nv_bfloat16* w, __nv_bfloat16* y) {
  __shared__ float partial[KILN_THREADS];
  const int64_t base = (int64_t)blockIdx.x * KILN_HIDDEN;
  float sum = 0.0f;
  for (int i = threadIdx.x; i < KILN_HIDDEN; i += KILN_THREADS) {
    const float v = kiln_input(x, r, base + i);
    sum += v * v;
  }
  partial[threadIdx.x] = sum;
  __syncthreads();
  for (int stride = KILN_THREADS / 2; stride > 0; stride /= 2) {
    if (threadIdx.x < stride) partial[threadIdx.x] += partial[threadIdx.x + stride];
    __syncthreads();
  }
  const float inv_rms = 1.0f / sqrtf(partial[0] / (float)KILN_HIDDEN + KILN_EPS);
  for (int i = threadIdx.x; i < KILN_HIDDEN; i += KILN_THREADS) {
    const float v = kiln_input(x, r, base + i);
    y[base + i] = __float2bfloat16((v * inv_rms) * __bfloat162float(w[i]));
  }
}

static int kiln_is_rows(const kiln_tensor* t, int64_t rows) {
  return t->dtype == KILN_BFLOAT16 && t->ndim == 2 && t->shape[0] == rows &&
         t->shape[1] == KILN_HIDDEN;
}

extern "C" int run(const kiln_tensor* args, int32_t nargs, const kiln_context* ctx) {
  const int32_t expected = KILN_FUSED_ADD ? 4 : 3;
  if (nargs != expected || ctx == NULL || args[0].ndim != 2) return 2;
  const int64_t rows = args[0].shape[0];
  const kiln_tensor* x = &args[0];
  const kiln_tensor* r = KILN_FUSED_ADD ? &args[1] : NULL;
  const kiln_tensor* w = &args[KILN_FUSED_ADD ? 2 : 1];
  const kiln_tensor* y = &args[KILN_FUSED_ADD ? 3 : 2];
  if (!kiln_is_rows(x, rows) || !kiln_is_rows(y, rows) || (r != NULL && !kiln_is_rows(r, rows)) ||
      w->dtype != KILN_BFLOAT16 || w->ndim != 1 || w->shape[0] != KILN_HIDDEN) {
    return 3;
  }
  if (rows == 0) return 0;
  rmsnorm_reference_kernel<<<(unsigned)rows, KILN_THREADS, 0, (cudaStream_t)ctx->stream>>>(
      (const __nv_bfloat16*)x->data, r != NULL ? (const __nv_bfloat16*)r->data : NULL,
      (const __nv_bfloat16*)w->data, (__nv_bfloat16*)y->data);
  return cudaGetLastError() != cudaSuccess ? 1 : 0;
}
