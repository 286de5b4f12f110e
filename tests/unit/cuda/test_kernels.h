// CUDA test solutions for the vector_add definition (inputs a, b float32 [n]; output c float32
// [n]), one entry point per behaviour the CUDA backend must handle. Compiled by the nvcc
// toolchain in the compile tests (no GPU needed) and run through kiln-worker in the GPU tests.
#ifndef KILN_TESTS_UNIT_CUDA_TEST_KERNELS_H_
#define KILN_TESTS_UNIT_CUDA_TEST_KERNELS_H_

namespace kiln::testing {

inline constexpr char kCudaTestKernels[] = R"cu(
#include <kiln/abi.h>
#include <cuda_runtime.h>
#include <stdint.h>

__device__ volatile int kiln_test_never_set = 0;

static int64_t numel(const kiln_tensor* t) {
  int64_t n = 1;
  for (int32_t i = 0; i < t->ndim; ++i) n *= t->shape[i];
  return n;
}

static unsigned blocks_for(int64_t n) { return (unsigned)((n + 255) / 256); }

__global__ void add_kernel(const float* a, const float* b, float* c, int64_t n) {
  int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i] = a[i] + b[i];
}

__global__ void sub_kernel(const float* a, const float* b, float* c, int64_t n) {
  int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i] = a[i] - b[i];
}

/* Static shared memory, so ptxas reports it. */
__global__ void staged_add_kernel(const float* a, const float* b, float* c, int64_t n) {
  __shared__ float tile[256];
  int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  tile[threadIdx.x] = i < n ? a[i] : 0.0f;
  __syncthreads();
  if (i < n) c[i] = tile[threadIdx.x] + b[i];
}

/* The pointer comes from the host, so the compiler cannot turn the store into a trap. */
__global__ void write_through_kernel(int* p) { *p = 1; }

__global__ void spin_kernel() {
  while (kiln_test_never_set == 0) {
  }
}

/* Adds, then holds the GPU until `ns` nanoseconds of the global timer have passed. */
__global__ void slow_add_kernel(const float* a, const float* b, float* c, int64_t n,
                                unsigned long long ns) {
  int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i] = a[i] + b[i];
  if (i == 0) {
    unsigned long long start, now;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
    do {
      asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
    } while (now - start < ns);
  }
}

__global__ void bump_kernel(float* x) { x[0] += 1.0f; }

static int valid_add_args(const kiln_tensor* t, int32_t nargs, const kiln_context* ctx) {
  if (nargs != 3 || ctx->abi_version != KILN_ABI_VERSION || ctx->backend != KILN_BACKEND_CUDA ||
      ctx->stream == NULL || ctx->device == NULL || t[0].dtype != KILN_FLOAT32)
    return 0;
  /* -cudart shared: the worker's runtime, so its current device is the one the worker chose. */
  int current = -1;
  if (cudaGetDevice(&current) != cudaSuccess || current != *(const int*)ctx->device) return 0;
  return 1;
}

#define KILN_ARGS const kiln_tensor *t, int32_t nargs, const kiln_context *ctx
#define KILN_ADD_LAUNCH(kernel, stream)                                                   \
  kernel<<<blocks_for(numel(&t[2])), 256, 0, (stream)>>>(                                \
      (const float*)t[0].data, (const float*)t[1].data, (float*)t[2].data, numel(&t[2]))

extern "C" int add(KILN_ARGS) {
  if (!valid_add_args(t, nargs, ctx)) return 7;
  KILN_ADD_LAUNCH(add_kernel, (cudaStream_t)ctx->stream);
  return cudaGetLastError() == cudaSuccess ? 0 : 8;
}

extern "C" int staged_add(KILN_ARGS) {
  KILN_ADD_LAUNCH(staged_add_kernel, (cudaStream_t)ctx->stream);
  return cudaGetLastError() == cudaSuccess ? 0 : 8;
}

extern "C" int sub(KILN_ARGS) {
  KILN_ADD_LAUNCH(sub_kernel, (cudaStream_t)ctx->stream);
  return cudaGetLastError() == cudaSuccess ? 0 : 8;
}

static volatile uintptr_t kiln_test_null = 0;

extern "C" int write_null(KILN_ARGS) {
  write_through_kernel<<<1, 1, 0, (cudaStream_t)ctx->stream>>>((int*)kiln_test_null);
  return 0;
}

extern "C" int spin(KILN_ARGS) {
  spin_kernel<<<1, 1, 0, (cudaStream_t)ctx->stream>>>();
  return 0;
}

/* Launches nothing: the output stays poisoned, and a timed call has no GPU work. */
extern "C" int noop(KILN_ARGS) { return 0; }

/* The work goes to a private stream and is not waited for. */
extern "C" int private_stream_add(KILN_ARGS) {
  static cudaStream_t own = NULL;
  if (own == NULL && cudaStreamCreateWithFlags(&own, cudaStreamNonBlocking) != cudaSuccess)
    return 9;
  slow_add_kernel<<<blocks_for(numel(&t[2])), 256, 0, own>>>(
      (const float*)t[0].data, (const float*)t[1].data, (float*)t[2].data, numel(&t[2]),
      2000000ull);
  return cudaGetLastError() == cudaSuccess ? 0 : 8;
}

__global__ void idle_kernel(void) {}

/* Every other call also launches a second kernel that writes nothing, so consecutive timed
   calls launch different GPU work while their outputs stay identical. */
extern "C" int changing_work(KILN_ARGS) {
  static int calls = 0;
  KILN_ADD_LAUNCH(add_kernel, (cudaStream_t)ctx->stream);
  if (calls++ % 2 == 1) idle_kernel<<<1, 1, 0, (cudaStream_t)ctx->stream>>>();
  return cudaGetLastError() == cudaSuccess ? 0 : 8;
}

/* Correct output, but input b is changed on the device. */
extern "C" int mutate_b(KILN_ARGS) {
  KILN_ADD_LAUNCH(add_kernel, (cudaStream_t)ctx->stream);
  bump_kernel<<<1, 1, 0, (cudaStream_t)ctx->stream>>>((float*)t[1].data);
  return cudaGetLastError() == cudaSuccess ? 0 : 8;
}

__global__ void flip_last_byte_kernel(unsigned char* bytes, long long n) { bytes[n - 1] ^= 1; }

/* Correct output, but one bit of the last byte of input b flips (the checksum's tail path when
   b's size is not a multiple of 8 bytes). */
extern "C" int flip_last_byte_of_b(KILN_ARGS) {
  KILN_ADD_LAUNCH(add_kernel, (cudaStream_t)ctx->stream);
  flip_last_byte_kernel<<<1, 1, 0, (cudaStream_t)ctx->stream>>>(
      (unsigned char*)t[1].data, numel(&t[1]) * 4);
  return cudaGetLastError() == cudaSuccess ? 0 : 8;
}

__global__ void add_then_bump_kernel(const float* a, float* b, float* c, int64_t n, int bump) {
  int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i] = a[i] + b[i];
  if (bump && i == n - 1) b[i] += 1.0f; /* after its own read: the output stays correct */
}

/* Clean on its first three calls (the checked call and the first warmups), then changes input b
   on every call with the same kernel (so the timed calls' GPU work does not change): only a check
   after the timed calls catches it. */
extern "C" int mutate_b_later(KILN_ARGS) {
  static int calls = 0;
  int64_t n = numel(&t[2]);
  add_then_bump_kernel<<<blocks_for(n), 256, 0, (cudaStream_t)ctx->stream>>>(
      (const float*)t[0].data, (float*)t[1].data, (float*)t[2].data, n, calls++ >= 3);
  return cudaGetLastError() == cudaSuccess ? 0 : 8;
}

/* Correct on every call; on the 5th and 6th (timed calls under QuickOfficialTiming: checked,
   second, warmup, then timed) also a launch the GPU refuses, which only the runtime's last error
   tells. */
extern "C" int bad_launch_later(KILN_ARGS) {
  static int calls = 0;
  int64_t n = numel(&t[2]);
  add_kernel<<<blocks_for(n), 256, 0, (cudaStream_t)ctx->stream>>>(
      (const float*)t[0].data, (const float*)t[1].data, (float*)t[2].data, n);
  const int call = calls++;
  if (call == 4 || call == 5) {
    add_kernel<<<1, 4096, 0, (cudaStream_t)ctx->stream>>>(
        (const float*)t[0].data, (const float*)t[1].data, (float*)t[2].data, n);
  }
  return 0;
}

/* A launch the GPU refuses (more threads per block than any GPU allows). */
extern "C" int bad_launch(KILN_ARGS) {
  add_kernel<<<1, 4096, 0, (cudaStream_t)ctx->stream>>>(
      (const float*)t[0].data, (const float*)t[1].data, (float*)t[2].data, numel(&t[2]));
  return 0;
}
)cu";

}  // namespace kiln::testing

#endif  // KILN_TESTS_UNIT_CUDA_TEST_KERNELS_H_
