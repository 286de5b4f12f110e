// rmsnorm_h4096 written against TVM-FFI, the way a flashinfer-bench team submits CUDA:
// TensorView arguments, the stream from TVMFFIEnvGetStream, TVM_FFI_ICHECK argument checks and
// TVM_FFI_DLL_EXPORT_TYPED_FUNC. kiln compiles it unchanged with its TVM-FFI compatibility
// headers (docs/tvm-ffi.md); entry point kernel.cu::run names the export. One 256-thread block
// per row, 128-bit loads and stores, float32 accumulation, warp-shuffle reduction.
#include <cuda_bf16.h>
#include <cuda_runtime.h>
#include <tvm/ffi/container/tensor.h>
#include <tvm/ffi/error.h>
#include <tvm/ffi/extra/c_env_api.h>
#include <tvm/ffi/function.h>

#include <cstdint>

namespace rmsnorm {

using tvm::ffi::TensorView;

constexpr int kThreads = 256;
constexpr int kWarps = kThreads / 32;
constexpr int kVec = 8;  // bfloat16 per 128-bit access
constexpr float kEps = 1e-5f;

__global__ void __launch_bounds__(kThreads)
    RmsNormKernel(const __nv_bfloat16* __restrict__ x, const __nv_bfloat16* __restrict__ w,
                  __nv_bfloat16* __restrict__ y, int hidden) {
  __shared__ float warp_sums[kWarps];
  __shared__ float inv_rms;
  const int64_t base = static_cast<int64_t>(blockIdx.x) * hidden;
  const uint4* xr = reinterpret_cast<const uint4*>(x + base);
  const uint4* wv = reinterpret_cast<const uint4*>(w);
  uint4* yr = reinterpret_cast<uint4*>(y + base);
  const int vectors = hidden / kVec;

  float sum = 0.0f;
  for (int v = threadIdx.x; v < vectors; v += kThreads) {
    const uint4 packed = xr[v];
    const __nv_bfloat162* pairs = reinterpret_cast<const __nv_bfloat162*>(&packed);
#pragma unroll
    for (int k = 0; k < kVec / 2; ++k) {
      const float2 f = __bfloat1622float2(pairs[k]);
      sum += f.x * f.x + f.y * f.y;
    }
  }
#pragma unroll
  for (int offset = 16; offset > 0; offset /= 2) sum += __shfl_xor_sync(0xffffffffu, sum, offset);
  if (threadIdx.x % 32 == 0) warp_sums[threadIdx.x / 32] = sum;
  __syncthreads();
  if (threadIdx.x == 0) {
    float total = 0.0f;
    for (int i = 0; i < kWarps; ++i) total += warp_sums[i];
    inv_rms = rsqrtf(total / hidden + kEps);
  }
  __syncthreads();

  const float scale = inv_rms;
  for (int v = threadIdx.x; v < vectors; v += kThreads) {
    const uint4 packed = xr[v];
    const uint4 weights = wv[v];
    uint4 out;
    const __nv_bfloat162* xp = reinterpret_cast<const __nv_bfloat162*>(&packed);
    const __nv_bfloat162* wp = reinterpret_cast<const __nv_bfloat162*>(&weights);
    __nv_bfloat162* op = reinterpret_cast<__nv_bfloat162*>(&out);
#pragma unroll
    for (int k = 0; k < kVec / 2; ++k) {
      const float2 a = __bfloat1622float2(xp[k]);
      const float2 b = __bfloat1622float2(wp[k]);
      op[k] = __floats2bfloat162_rn(a.x * scale * b.x, a.y * scale * b.y);
    }
    yr[v] = out;
  }
}

void RmsNorm(TensorView hidden_states, TensorView weight, TensorView output) {
  const DLDataType bf16{kDLBfloat, 16, 1};
  TVM_FFI_ICHECK_EQ(hidden_states.ndim(), 2) << "hidden_states must be [batch_size, hidden_size]";
  TVM_FFI_ICHECK_EQ(weight.ndim(), 1) << "weight must be [hidden_size]";
  const int64_t batch_size = hidden_states.size(0);
  const int64_t hidden_size = hidden_states.size(-1);
  TVM_FFI_ICHECK_EQ(weight.size(0), hidden_size);
  TVM_FFI_ICHECK(output.shape() == hidden_states.shape())
      << "output " << output.shape() << " vs hidden_states " << hidden_states.shape();
  TVM_FFI_ICHECK_EQ(hidden_states.dtype(), bf16);
  TVM_FFI_ICHECK_EQ(weight.dtype(), bf16);
  TVM_FFI_ICHECK_EQ(output.dtype(), bf16);
  TVM_FFI_ICHECK_EQ(hidden_size % kVec, 0) << "rows are read with 128-bit loads";
  TVM_FFI_ICHECK(hidden_states.IsContiguous() && weight.IsContiguous() && output.IsContiguous());
  TVM_FFI_ICHECK_EQ(hidden_states.device().device_type, kDLCUDA);
  if (batch_size == 0) return;

  cudaStream_t stream = static_cast<cudaStream_t>(
      TVMFFIEnvGetStream(hidden_states.device().device_type, hidden_states.device().device_id));
  RmsNormKernel<<<static_cast<unsigned>(batch_size), kThreads, 0, stream>>>(
      static_cast<const __nv_bfloat16*>(hidden_states.data_ptr()),
      static_cast<const __nv_bfloat16*>(weight.data_ptr()),
      static_cast<__nv_bfloat16*>(output.data_ptr()), static_cast<int>(hidden_size));
  const cudaError_t err = cudaGetLastError();
  if (err != cudaSuccess) {
    TVM_FFI_THROW(RuntimeError) << "RmsNormKernel launch failed: " << cudaGetErrorString(err);
  }
}

}  // namespace rmsnorm

TVM_FFI_DLL_EXPORT_TYPED_FUNC(run, rmsnorm::RmsNorm);
