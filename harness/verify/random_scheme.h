// The per-element arithmetic of kiln's random inputs (the scheme of input_generator.h), shared by
// the host generator (random_fill.cc) and the CUDA one (backend/cuda/integrity_kernels.cu), so
// that the two give the same bits: only +, -, *, / and sqrt, each rounded to nearest even as IEEE
// 754 says, and nothing fused into an FMA (GCC in ISO C++ mode does not contract, clang is told
// so below, nvcc compiles the kernels with -fmad=false; division and sqrt are the correctly
// rounded ones on both sides).
#ifndef KILN_HARNESS_VERIFY_RANDOM_SCHEME_H_
#define KILN_HARNESS_VERIFY_RANDOM_SCHEME_H_

#include <cstdint>

#if defined(__CUDACC__)
#define KILN_RANDOM_FN __host__ __device__ __forceinline__
#else
#include <bit>
#include <cmath>
#define KILN_RANDOM_FN inline
#endif

#if defined(__clang__) && !defined(__CUDACC__)
#pragma clang fp contract(off)
#endif

namespace kiln::random_scheme {

KILN_RANDOM_FN uint32_t FloatBits(float f) {
#if defined(__CUDA_ARCH__)
  return __float_as_uint(f);
#else
  return std::bit_cast<uint32_t>(f);
#endif
}

KILN_RANDOM_FN float BitsFloat(uint32_t u) {
#if defined(__CUDA_ARCH__)
  return __uint_as_float(u);
#else
  return std::bit_cast<float>(u);
#endif
}

KILN_RANDOM_FN float Divide(float a, float b) {
#if defined(__CUDA_ARCH__)
  return __fdiv_rn(a, b);
#else
  return a / b;
#endif
}

KILN_RANDOM_FN float Sqrt(float x) {
#if defined(__CUDA_ARCH__)
  return __fsqrt_rn(x);
#else
  return std::sqrt(x);
#endif
}

// The uniform of Box-Muller's radius from the even word of a pair: ((w >> 9) + 0.5) / 2^23.
KILN_RANDOM_FN float Uniform(uint32_t w_even) {
  return (static_cast<float>(w_even >> 9) + 0.5f) * (1.0f / 8388608.0f);
}

// -2 ln(u) for u in (0, 1): u = m * 2^e with m in [sqrt(1/2), sqrt(2)), and
// ln m = 2 atanh(s) = 2 (s + s^3/3 + ... + s^9/9) with s = (m - 1) / (m + 1), |s| < 0.172.
KILN_RANDOM_FN float MinusTwoLog(float u) {
  constexpr uint32_t kSqrtHalfBits = 0x3f3504f3u;
  constexpr float kLn2 = 0.693147180559945309f;
  const uint32_t bits = FloatBits(u);
  const int32_t e = static_cast<int32_t>(bits - kSqrtHalfBits) >> 23;
  const float m = BitsFloat(bits - (static_cast<uint32_t>(e) << 23));
  const float s = Divide(m - 1.0f, m + 1.0f);
  const float s2 = s * s;
  const float ln_m =
      s * (2.0f + s2 * (2.0f / 3 + s2 * (2.0f / 5 + s2 * (2.0f / 7 + s2 * (2.0f / 9)))));
  return -2.0f * (static_cast<float>(e) * kLn2 + ln_m);
}

// Multiplies r by cos and sin of 2 pi w / 2^32: the top two bits of w pick the quadrant, the
// next 24 the angle phi = x + pi/4 within it (x in [-pi/4, pi/4); Taylor polynomials of degree
// 9 and 10, accurate to float rounding there).
KILN_RANDOM_FN void PolarToCartesian(float r, uint32_t w, float* x_out, float* y_out) {
  constexpr float kQuarterTurnStep = 1.57079632679489662f / 16777216.0f;  // (pi/2) / 2^24
  constexpr float kEighthTurn = 0.785398163397448310f;
  constexpr float kSqrtHalf = 0.707106781186547524f;
  const uint32_t quadrant = w >> 30;
  const float x =
      (static_cast<float>((w >> 6) & 0xffffffu) + 0.5f) * kQuarterTurnStep - kEighthTurn;
  const float x2 = x * x;
  const float sin_x =
      x *
      (1.0f + x2 * (-1.0f / 6 + x2 * (1.0f / 120 + x2 * (-1.0f / 5040 + x2 * (1.0f / 362880)))));
  const float cos_x =
      1.0f +
      x2 * (-1.0f / 2 +
            x2 * (1.0f / 24 + x2 * (-1.0f / 720 + x2 * (1.0f / 40320 + x2 * (-1.0f / 3628800)))));
  const uint32_t sin_phi = FloatBits((sin_x + cos_x) * kSqrtHalf);
  const uint32_t cos_phi = FloatBits((cos_x - sin_x) * kSqrtHalf);
  // Rotate by the quadrant without branches: odd quadrants swap cos and sin; the signs of
  // (cos, sin) per quadrant are (+,+) (-,+) (-,-) (+,-).
  const uint32_t swap = 0u - (quadrant & 1u);
  const uint32_t cos_bits = (sin_phi & swap) | (cos_phi & ~swap);
  const uint32_t sin_bits = (cos_phi & swap) | (sin_phi & ~swap);
  const uint32_t cos_sign = (((quadrant + 1u) >> 1) & 1u) << 31;
  const uint32_t sin_sign = (quadrant >> 1) << 31;
  *x_out = r * BitsFloat(cos_bits ^ cos_sign);
  *y_out = r * BitsFloat(sin_bits ^ sin_sign);
}

// Integer and bool elements from their Philox word.
KILN_RANDOM_FN int32_t Int8Value(uint32_t w) { return static_cast<int32_t>(w >> 24) - 128; }
KILN_RANDOM_FN int32_t WideIntValue(uint32_t w) { return static_cast<int32_t>(w >> 21) - 1024; }
KILN_RANDOM_FN uint32_t BoolValue(uint32_t w) { return w >> 31; }

}  // namespace kiln::random_scheme

#endif  // KILN_HARNESS_VERIFY_RANDOM_SCHEME_H_
