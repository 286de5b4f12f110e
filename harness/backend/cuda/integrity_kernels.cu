// kiln's own kernels on the CUDA backend (device_kernels.h), compiled by nvcc at build time into a
// fatbin that is embedded in kiln-worker and loaded with cudaLibraryLoadData (no nvcc or
// libcuda link needed at run time). Compiled with -fmad=false: kiln_fill_random must round
// exactly as the host generator does.
//
// kiln_checksum64: a keyed, position-dependent 64-bit checksum of `bytes` bytes at `data`,
// added into *out (which the caller zeroes). Each 8-byte word contributes Mix(word ^ Mix(index
// ^ key)), so reordering, flipping or rewriting any word changes the sum; the key is random per
// worker process, so a collision cannot be prepared offline. It reads the buffer once at
// memory bandwidth, so checking the inputs after every timed call keeps the GPU busy for
// microseconds instead of copying them to the host.

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>

#include "harness/verify/philox_round.h"
#include "harness/verify/random_scheme.h"
#include "kiln/abi.h"

__device__ __forceinline__ unsigned long long Mix(unsigned long long x) {
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdull;
  x ^= x >> 33;
  x *= 0xc4ceb9fe1a85ec53ull;
  x ^= x >> 33;
  return x;
}

__device__ __forceinline__ unsigned long long WordSum(unsigned long long word,
                                                     unsigned long long index,
                                                     unsigned long long key) {
  return Mix(word ^ Mix(index ^ key));
}

// Each thread keeps kChecksumUnroll 16-byte loads in flight before it mixes them, instead of one
// 8-byte load at a time (on an H100, the GPU's time between the timed calls of a 6 GiB
// KernelBench problem went from 17.1-17.7 ms to 15.6-16.0 ms; docs/gpu-measurements.md). The
// sum is the same whatever the grid and the split: words are added mod 2^64 by index.
constexpr int kChecksumUnroll = 4;

extern "C" __global__ void kiln_checksum64(const unsigned char* data, unsigned long long bytes,
                                           unsigned long long key, unsigned long long* out) {
  const unsigned long long words = bytes / 8;
  const unsigned long long stride = static_cast<unsigned long long>(gridDim.x) * blockDim.x;
  const unsigned long long first =
      static_cast<unsigned long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  unsigned long long acc = 0;
  unsigned long long done = 0;  // words summed by the paired loop
  if ((reinterpret_cast<unsigned long long>(data) & 15) == 0) {
    const ulonglong2* pairs = reinterpret_cast<const ulonglong2*>(data);
    const unsigned long long count = words / 2;
    unsigned long long p = first;
    for (; p + (kChecksumUnroll - 1) * stride < count; p += kChecksumUnroll * stride) {
      ulonglong2 v[kChecksumUnroll];
#pragma unroll
      for (int u = 0; u < kChecksumUnroll; ++u) v[u] = __ldcs(pairs + p + u * stride);
#pragma unroll
      for (int u = 0; u < kChecksumUnroll; ++u) {
        const unsigned long long i = 2 * (p + u * stride);
        acc += WordSum(v[u].x, i, key) + WordSum(v[u].y, i + 1, key);
      }
    }
    for (; p < count; p += stride) {
      const ulonglong2 v = __ldcs(pairs + p);
      acc += WordSum(v.x, 2 * p, key) + WordSum(v.y, 2 * p + 1, key);
    }
    done = 2 * count;
  } else {
    const unsigned long long* w = reinterpret_cast<const unsigned long long*>(data);
    for (unsigned long long i = first; i < words; i += stride) acc += WordSum(w[i], i, key);
    done = words;
  }
  if (first == 0) {
    const unsigned long long* w = reinterpret_cast<const unsigned long long*>(data);
    for (unsigned long long i = done; i < words; ++i) acc += WordSum(w[i], i, key);  // an odd last word
    unsigned long long tail = 0;
    for (unsigned long long b = words * 8; b < bytes; ++b) {
      tail |= static_cast<unsigned long long>(data[b]) << (8 * (b - words * 8));
    }
    acc += Mix(tail ^ Mix(words ^ key)) + Mix(bytes ^ key);
  }
  for (int offset = 16; offset > 0; offset /= 2) acc += __shfl_down_sync(0xffffffffu, acc, offset);
  if ((threadIdx.x & 31) == 0) atomicAdd(out, acc);
}

// kiln_fill_random: elements [0, numel) of input `input_index` for `seed` under kiln's random
// scheme (input_generator.h), dtype a kiln_dtype other than KILN_FLOAT4_E2M1. One thread per
// Philox block: elements 4b .. 4b+3 from Philox4x32(counter_hi = input_index, counter_lo = b,
// key = seed); floats are the Box-Muller pairs of lanes (0, 1) and (2, 3) rounded to nearest even
// to the dtype (fp8 clamped to +-2 first), as random_fill.cc does on the host.
template <typename T>
__device__ __forceinline__ void Store(unsigned char* dst, unsigned long long i, T v) {
  reinterpret_cast<T*>(dst)[i] = v;
}

__device__ __forceinline__ void StoreFloat(unsigned char* dst, unsigned long long i, float z,
                                           int dtype) {
  switch (dtype) {
    case KILN_FLOAT32:
      Store<float>(dst, i, z);
      break;
    case KILN_FLOAT64:
      Store<double>(dst, i, static_cast<double>(z));
      break;
    case KILN_FLOAT16:
      Store<unsigned short>(dst, i, __half_as_ushort(__float2half_rn(z)));
      break;
    case KILN_BFLOAT16:
      Store<unsigned short>(dst, i, __bfloat16_as_ushort(__float2bfloat16_rn(z)));
      break;
    case KILN_FLOAT8_E4M3FN:
      Store<unsigned char>(dst, i, static_cast<unsigned char>(__nv_cvt_float_to_fp8(
                                       fminf(fmaxf(z, -2.0f), 2.0f), __NV_SATFINITE, __NV_E4M3)));
      break;
    case KILN_FLOAT8_E5M2:
      Store<unsigned char>(dst, i, static_cast<unsigned char>(__nv_cvt_float_to_fp8(
                                       fminf(fmaxf(z, -2.0f), 2.0f), __NV_SATFINITE, __NV_E5M2)));
      break;
    default:
      break;
  }
}

__device__ __forceinline__ void StoreInteger(unsigned char* dst, unsigned long long i,
                                             unsigned int w, int dtype) {
  using namespace kiln::random_scheme;
  switch (dtype) {
    case KILN_INT8:
      Store<signed char>(dst, i, static_cast<signed char>(Int8Value(w)));
      break;
    case KILN_INT16:
      Store<short>(dst, i, static_cast<short>(WideIntValue(w)));
      break;
    case KILN_INT32:
      Store<int>(dst, i, WideIntValue(w));
      break;
    case KILN_INT64:
      Store<long long>(dst, i, static_cast<long long>(WideIntValue(w)));
      break;
    case KILN_BOOL:
      Store<unsigned char>(dst, i, static_cast<unsigned char>(BoolValue(w)));
      break;
    default:
      break;
  }
}

extern "C" __global__ void kiln_fill_random(unsigned char* dst, unsigned long long numel,
                                            unsigned long long seed,
                                            unsigned long long input_index, int dtype) {
  using namespace kiln::random_scheme;
  const bool is_float = dtype == KILN_FLOAT32 || dtype == KILN_FLOAT64 || dtype == KILN_FLOAT16 ||
                        dtype == KILN_BFLOAT16 || dtype == KILN_FLOAT8_E4M3FN ||
                        dtype == KILN_FLOAT8_E5M2;
  const unsigned long long blocks = (numel + 3) / 4;
  const unsigned long long stride = static_cast<unsigned long long>(gridDim.x) * blockDim.x;
  for (unsigned long long b = static_cast<unsigned long long>(blockIdx.x) * blockDim.x +
                              threadIdx.x;
       b < blocks; b += stride) {
    unsigned int c[4] = {static_cast<unsigned int>(b), static_cast<unsigned int>(b >> 32),
                         static_cast<unsigned int>(input_index),
                         static_cast<unsigned int>(input_index >> 32)};
    unsigned int k0 = static_cast<unsigned int>(seed);
    unsigned int k1 = static_cast<unsigned int>(seed >> 32);
    for (int round = 0; round < kiln::philox::kRounds; ++round) {
      if (round > 0) {
        k0 += kiln::philox::kWeyl0;
        k1 += kiln::philox::kWeyl1;
      }
      kiln::philox::Round(c[0], c[1], c[2], c[3], k0, k1);
    }
    const unsigned long long first = 4 * b;
    const int n = numel - first < 4 ? static_cast<int>(numel - first) : 4;
    if (is_float) {
      float z[4];
      PolarToCartesian(Sqrt(MinusTwoLog(Uniform(c[0]))), c[1], &z[0], &z[1]);
      PolarToCartesian(Sqrt(MinusTwoLog(Uniform(c[2]))), c[3], &z[2], &z[3]);
      for (int k = 0; k < n; ++k) StoreFloat(dst, first + k, z[k], dtype);
    } else {
      for (int k = 0; k < n; ++k) StoreInteger(dst, first + k, c[k], dtype);
    }
  }
}

// kiln_fill_zero: zeroes `bytes` bytes at `dst` (16-byte aligned) with ordinary stores from the
// SMs, one 16-byte store per thread and no grid-stride loop, as torch's `buffer.zero_()` (an
// elementwise fill kernel) does in flashinfer-bench's flush. The flush before every timed call
// is this kernel, not a driver memset, so that the L2 the timed kernel meets is the one the
// official evaluator leaves.
extern "C" __global__ void kiln_fill_zero(unsigned char* dst, unsigned long long bytes) {
  const unsigned long long i =
      static_cast<unsigned long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  const unsigned long long words = bytes / 16;
  if (i < words) {
    reinterpret_cast<uint4*>(dst)[i] = make_uint4(0, 0, 0, 0);
  } else if (i == words) {
    for (unsigned long long b = words * 16; b < bytes; ++b) dst[b] = 0;
  }
}
