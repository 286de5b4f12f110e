// Three kernels whose Nsight Compute profiles kiln's profile parser and direction rules are
// tested against (tests/gpu/ncu/record_fixtures.sh records them on a GPU node): a copy (memory
// bound), a chain of FMAs on registers (compute bound) and a naive SGEMM (neither: latency and
// L1 bound). Only the region between cudaProfilerStart and cudaProfilerStop is profiled.
#include <cuda_profiler_api.h>
#include <cuda_runtime.h>

#include <cstdio>

__global__ void copy_f32x4(const float4* __restrict__ in, float4* __restrict__ out, size_t n) {
  for (size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x; i < n;
       i += size_t{gridDim.x} * blockDim.x) {
    out[i] = in[i];
  }
}

__global__ void fma_chain(float* out, int iterations) {
  float a = threadIdx.x * 1e-3f, b = 1.0001f, c = 0.9999f, d = blockIdx.x * 1e-4f;
  for (int i = 0; i < iterations; ++i) {
    a = fmaf(a, b, c);
    d = fmaf(d, c, b);
    b = fmaf(b, a, d);
    c = fmaf(c, d, a);
  }
  out[blockIdx.x * blockDim.x + threadIdx.x] = a + b + c + d;
}

__global__ void sgemm_naive(const float* A, const float* B, float* C, int n) {
  int row = blockIdx.y * blockDim.y + threadIdx.y;
  int col = blockIdx.x * blockDim.x + threadIdx.x;
  if (row >= n || col >= n) return;
  float acc = 0;
  for (int k = 0; k < n; ++k) acc += A[row * n + k] * B[k * n + col];
  C[row * n + col] = acc;
}

#define CHECK(x)                                                                  \
  do {                                                                            \
    cudaError_t e = (x);                                                          \
    if (e != cudaSuccess) {                                                       \
      std::fprintf(stderr, "%s: %s\n", #x, cudaGetErrorString(e));                \
      return 1;                                                                   \
    }                                                                             \
  } while (0)

int main() {
  const size_t copy_bytes = size_t{256} << 20;
  const size_t n4 = copy_bytes / sizeof(float4);
  const int n = 2048;
  float4 *in = nullptr, *out = nullptr;
  float *fma_out = nullptr, *A = nullptr, *B = nullptr, *C = nullptr;
  CHECK(cudaMalloc(&in, copy_bytes));
  CHECK(cudaMalloc(&out, copy_bytes));
  CHECK(cudaMalloc(&fma_out, sizeof(float) * 132 * 8 * 256));
  CHECK(cudaMalloc(&A, sizeof(float) * n * n));
  CHECK(cudaMalloc(&B, sizeof(float) * n * n));
  CHECK(cudaMalloc(&C, sizeof(float) * n * n));
  CHECK(cudaMemset(in, 1, copy_bytes));
  CHECK(cudaMemset(A, 0, sizeof(float) * n * n));
  CHECK(cudaMemset(B, 0, sizeof(float) * n * n));
  CHECK(cudaDeviceSynchronize());
  CHECK(cudaProfilerStart());
  copy_f32x4<<<132 * 8, 256>>>(in, out, n4);
  fma_chain<<<132 * 8, 256>>>(fma_out, 1 << 14);
  sgemm_naive<<<dim3(n / 16, n / 16), dim3(16, 16)>>>(A, B, C, n);
  CHECK(cudaDeviceSynchronize());
  CHECK(cudaProfilerStop());
  std::printf("ncu_targets: 3 kernels launched\n");
  return 0;
}
