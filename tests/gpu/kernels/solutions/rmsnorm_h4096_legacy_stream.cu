// rmsnorm_h4096, the tuned kernel (rmsnorm_h4096_tuned.cu) launched as most KernelBench and
// load_inline files launch theirs: `<<<grid, block>>>` with no stream, on the legacy default
// stream, ignoring ctx->stream. flashinfer-bench and KernelBench time on torch's default stream
// (the legacy one), so there the launch is ordered and timed; kiln's blocking stream orders it
// the same way. Honest: it must PASS, with the tuned kernel's latency.
#include <cuda_bf16.h>
#include <cuda_runtime.h>
#include <kiln/abi.h>
#include <stdint.h>

#define HIDDEN 4096
#define EPS 1e-5f
#define THREADS 256
#define VEC 8                                  /* bfloat16 per 128-bit access */
#define PER_THREAD (HIDDEN / (THREADS * VEC))  /* 2 */
#define WARPS (THREADS / 32)

static_assert(HIDDEN % (THREADS * VEC) == 0, "a row must split into whole 128-bit accesses");

__global__ void __launch_bounds__(THREADS)
    rmsnorm_tuned_kernel(const __nv_bfloat16* __restrict__ x, const __nv_bfloat16* __restrict__ w,
                         __nv_bfloat16* __restrict__ y) {
  __shared__ float warp_sums[WARPS];
  const int64_t base = (int64_t)blockIdx.x * HIDDEN;
  const uint4* xr = reinterpret_cast<const uint4*>(x + base);
  float2 v[PER_THREAD][VEC / 2];
  float sum = 0.0f;
#pragma unroll
  for (int p = 0; p < PER_THREAD; ++p) {
    const uint4 packed = xr[threadIdx.x + p * THREADS];
    const __nv_bfloat162* h = reinterpret_cast<const __nv_bfloat162*>(&packed);
#pragma unroll
    for (int q = 0; q < VEC / 2; ++q) {
      v[p][q] = __bfloat1622float2(h[q]);
      sum += v[p][q].x * v[p][q].x + v[p][q].y * v[p][q].y;
    }
  }
#pragma unroll
  for (int offset = 16; offset > 0; offset /= 2) sum += __shfl_xor_sync(0xffffffffu, sum, offset);
  if ((threadIdx.x & 31) == 0) warp_sums[threadIdx.x / 32] = sum;
  __syncthreads();
  float total = 0.0f;
#pragma unroll
  for (int i = 0; i < WARPS; ++i) total += warp_sums[i];
  const float inv_rms = rsqrtf(total / HIDDEN + EPS);

  const uint4* wv = reinterpret_cast<const uint4*>(w);
  uint4* yr = reinterpret_cast<uint4*>(y + base);
#pragma unroll
  for (int p = 0; p < PER_THREAD; ++p) {
    const uint4 packed_w = wv[threadIdx.x + p * THREADS];
    const __nv_bfloat162* hw = reinterpret_cast<const __nv_bfloat162*>(&packed_w);
    uint4 out;
    __nv_bfloat162* ho = reinterpret_cast<__nv_bfloat162*>(&out);
#pragma unroll
    for (int q = 0; q < VEC / 2; ++q) {
      const float2 wf = __bfloat1622float2(hw[q]);
      ho[q] = __floats2bfloat162_rn(v[p][q].x * inv_rms * wf.x, v[p][q].y * inv_rms * wf.y);
    }
    yr[threadIdx.x + p * THREADS] = out;
  }
}

extern "C" int run(const kiln_tensor* args, int32_t nargs, const kiln_context* ctx) {
  if (nargs != 3 || args[0].ndim != 2 || args[0].shape[1] != HIDDEN) return 2;
  for (int i = 0; i < 3; ++i) {
    if (((uintptr_t)args[i].data & 15) != 0) return 3; /* 128-bit accesses need 16-byte alignment */
  }
  const int64_t rows = args[0].shape[0];
  if (rows == 0) return 0;
  (void)ctx; /* the legacy default stream, as KernelBench files launch */
  rmsnorm_tuned_kernel<<<(unsigned)rows, THREADS>>>(
      (const __nv_bfloat16*)args[0].data, (const __nv_bfloat16*)args[1].data,
      (__nv_bfloat16*)args[2].data);
  return cudaGetLastError() != cudaSuccess ? 1 : 0;
}
