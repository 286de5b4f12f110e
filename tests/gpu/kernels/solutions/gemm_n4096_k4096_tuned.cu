// gemm_n4096_k4096, tuned: C = A @ B.T on the tensor cores (WMMA, float16 inputs, float32
// accumulation). Each 256-thread block computes a 128 x 128 tile of C; its 8 warps (2 x 4) own
// 64 x 32 each, i.e. 4 x 2 WMMA 16x16x16 accumulators. K advances in steps of 32: the block
// stages a 128 x 32 slice of A and of B in shared memory (rows padded by 8 halves against bank
// conflicts) while the next slice is already loading into registers. B is [N, K] row-major,
// which is exactly B.T [K, N] in column-major order, so it feeds matrix_b as col_major. The
// epilogue goes through a per-warp 16 x 16 float scratch to convert to float16 and store 128-bit
// rows, skipping rows past M. Needs N % 128 == 0 and K % 32 == 0 (true for 4096 x 4096).
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <kiln/abi.h>
#include <mma.h>
#include <stdint.h>

using namespace nvcuda;

#define N_SIZE 4096
#define K_SIZE 4096

constexpr int kBlockM = 128, kBlockN = 128, kBlockK = 32;
constexpr int kLds = kBlockK + 8;  // shared-memory row pitch in halves (80 bytes)
constexpr int kWarpsM = 2, kWarpsN = 4, kThreads = 32 * kWarpsM * kWarpsN;
constexpr int kWarpM = kBlockM / kWarpsM, kWarpN = kBlockN / kWarpsN;  // 64 x 32
constexpr int kFragsM = kWarpM / 16, kFragsN = kWarpN / 16;            // 4 x 2
constexpr int kVecsPerRow = kBlockK / 8;                                // 16-byte vectors
constexpr int kLoads = kBlockM * kVecsPerRow / kThreads;                // per thread and matrix

static_assert(kBlockM == kBlockN, "A and B slices share one load pattern");
static_assert(kBlockM * kVecsPerRow % kThreads == 0, "whole vectors per thread");
static_assert(N_SIZE % kBlockN == 0 && K_SIZE % kBlockK == 0, "no partial N or K tiles");

__global__ void __launch_bounds__(kThreads)
    gemm_wmma_kernel(const __half* __restrict__ a, const __half* __restrict__ b,
                     __half* __restrict__ c, int m_size) {
  __shared__ __align__(128) __half a_tile[kBlockM * kLds];
  __shared__ __align__(128) __half b_tile[kBlockN * kLds];
  __shared__ __align__(128) float scratch[kThreads / 32][16 * 16];

  const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
  const int warp_m = warp / kWarpsN, warp_n = warp % kWarpsN;
  const int m0 = blockIdx.y * kBlockM, n0 = blockIdx.x * kBlockN;

  wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc[kFragsM][kFragsN];
#pragma unroll
  for (int i = 0; i < kFragsM; ++i)
#pragma unroll
    for (int j = 0; j < kFragsN; ++j) wmma::fill_fragment(acc[i][j], 0.0f);

  uint4 a_next[kLoads], b_next[kLoads];
  auto load_slice = [&](int k0) {
#pragma unroll
    for (int t = 0; t < kLoads; ++t) {
      const int v = tid + t * kThreads, row = v / kVecsPerRow, col = (v % kVecsPerRow) * 8;
      const int gm = m0 + row;
      a_next[t] = gm < m_size
                      ? *reinterpret_cast<const uint4*>(a + (int64_t)gm * K_SIZE + k0 + col)
                      : make_uint4(0, 0, 0, 0);
      b_next[t] = *reinterpret_cast<const uint4*>(b + (int64_t)(n0 + row) * K_SIZE + k0 + col);
    }
  };
  auto store_slice = [&]() {
#pragma unroll
    for (int t = 0; t < kLoads; ++t) {
      const int v = tid + t * kThreads, row = v / kVecsPerRow, col = (v % kVecsPerRow) * 8;
      *reinterpret_cast<uint4*>(&a_tile[row * kLds + col]) = a_next[t];
      *reinterpret_cast<uint4*>(&b_tile[row * kLds + col]) = b_next[t];
    }
  };

  load_slice(0);
  for (int k0 = 0; k0 < K_SIZE; k0 += kBlockK) {
    store_slice();
    __syncthreads();
    if (k0 + kBlockK < K_SIZE) load_slice(k0 + kBlockK);
#pragma unroll
    for (int kk = 0; kk < kBlockK; kk += 16) {
      wmma::fragment<wmma::matrix_a, 16, 16, 16, __half, wmma::row_major> a_frag[kFragsM];
      wmma::fragment<wmma::matrix_b, 16, 16, 16, __half, wmma::col_major> b_frag[kFragsN];
#pragma unroll
      for (int i = 0; i < kFragsM; ++i)
        wmma::load_matrix_sync(a_frag[i], &a_tile[(warp_m * kWarpM + i * 16) * kLds + kk], kLds);
#pragma unroll
      for (int j = 0; j < kFragsN; ++j)
        wmma::load_matrix_sync(b_frag[j], &b_tile[(warp_n * kWarpN + j * 16) * kLds + kk], kLds);
#pragma unroll
      for (int i = 0; i < kFragsM; ++i)
#pragma unroll
        for (int j = 0; j < kFragsN; ++j)
          wmma::mma_sync(acc[i][j], a_frag[i], b_frag[j], acc[i][j]);
    }
    __syncthreads();
  }

  float* s = scratch[warp];
  const int r = lane / 2, col = (lane % 2) * 8;
#pragma unroll
  for (int i = 0; i < kFragsM; ++i) {
#pragma unroll
    for (int j = 0; j < kFragsN; ++j) {
      wmma::store_matrix_sync(s, acc[i][j], 16, wmma::mem_row_major);
      __syncwarp();
      const int gm = m0 + warp_m * kWarpM + i * 16 + r;
      const int gn = n0 + warp_n * kWarpN + j * 16 + col;
      if (gm < m_size) {
        uint4 out;
        __half2* h = reinterpret_cast<__half2*>(&out);
#pragma unroll
        for (int q = 0; q < 4; ++q) {
          h[q] = __floats2half2_rn(s[r * 16 + col + 2 * q], s[r * 16 + col + 2 * q + 1]);
        }
        *reinterpret_cast<uint4*>(c + (int64_t)gm * N_SIZE + gn) = out;
      }
      __syncwarp();
    }
  }
}

extern "C" int run(const kiln_tensor* args, int32_t nargs, const kiln_context* ctx) {
  if (nargs != 3 || args[0].ndim != 2 || args[0].shape[1] != K_SIZE || args[1].shape[0] != N_SIZE)
    return 2;
  for (int i = 0; i < 3; ++i) {
    if (((uintptr_t)args[i].data & 15) != 0) return 3; /* 128-bit accesses need 16-byte alignment */
  }
  const int64_t m_size = args[0].shape[0];
  if (m_size == 0) return 0;
  if (m_size > (int64_t)1 << 30) return 2;
  const dim3 grid(N_SIZE / kBlockN, (unsigned)((m_size + kBlockM - 1) / kBlockM));
  gemm_wmma_kernel<<<grid, kThreads, 0, (cudaStream_t)ctx->stream>>>(
      (const __half*)args[0].data, (const __half*)args[1].data, (__half*)args[2].data,
      (int)m_size);
  return cudaGetLastError() != cudaSuccess ? 1 : 0;
}
