// FillRandom: the element-wise random scheme documented in input_generator.h.
//
// Elements are produced in batches of 16 Philox blocks laid out lane by lane (structure of
// arrays) so that the compiler vectorizes the Philox rounds and the Box-Muller transform;
// 64 MiB of any dtype takes a fraction of a second on one core.
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <thread>
#include <vector>

#include "harness/model/dtype.h"
#include "harness/verify/input_generator.h"
#include "harness/verify/philox_round.h"

namespace kiln {
namespace {

constexpr int kLanes = 4;    // words per Philox block
constexpr int kBlocks = 16;  // blocks per batch
constexpr int kBatch = kLanes * kBlocks;
constexpr int kPairs = kBatch / 2;
// Below this many elements one thread is faster than starting more.
constexpr int64_t kElementsPerThread = int64_t{1} << 20;
constexpr int kMaxThreads = 16;

// Philox words of kBlocks consecutive blocks: word[lane][b] is lane `lane` of block
// first_block + b, i.e. element 4 (first_block + b) + lane.
struct Words {
  uint32_t word[kLanes][kBlocks];
};

void PhiloxBatch(uint64_t counter_hi, uint64_t first_block, uint64_t key, Words* out) {
  uint32_t(&c)[kLanes][kBlocks] = out->word;
  for (int b = 0; b < kBlocks; ++b) {
    const uint64_t lo = first_block + static_cast<uint64_t>(b);
    c[0][b] = static_cast<uint32_t>(lo);
    c[1][b] = static_cast<uint32_t>(lo >> 32);
    c[2][b] = static_cast<uint32_t>(counter_hi);
    c[3][b] = static_cast<uint32_t>(counter_hi >> 32);
  }
  uint32_t k0 = static_cast<uint32_t>(key);
  uint32_t k1 = static_cast<uint32_t>(key >> 32);
  for (int round = 0; round < philox::kRounds; ++round) {
    if (round > 0) {
      k0 += philox::kWeyl0;
      k1 += philox::kWeyl1;
    }
    for (int b = 0; b < kBlocks; ++b) philox::Round(c[0][b], c[1][b], c[2][b], c[3][b], k0, k1);
  }
}

// The normal transform runs in float32 with fixed polynomials instead of libm, for speed and so
// that the bits do not depend on the libm a node happens to have: only +, -, *, / and sqrt are
// used, which IEEE 754 rounds identically everywhere, provided nothing is fused into an FMA
// (GCC in ISO C++ mode does not contract; clang is told so below).
#if defined(__clang__)
#pragma clang fp contract(off)
#endif

// -2 ln(u) for u in (0, 1): u = m * 2^e with m in [sqrt(1/2), sqrt(2)), and
// ln m = 2 atanh(s) = 2 (s + s^3/3 + ... + s^9/9) with s = (m - 1) / (m + 1), |s| < 0.172.
inline float MinusTwoLog(float u) {
  constexpr uint32_t kSqrtHalfBits = 0x3f3504f3u;
  constexpr float kLn2 = 0.693147180559945309f;
  const uint32_t bits = std::bit_cast<uint32_t>(u);
  const int32_t e = static_cast<int32_t>(bits - kSqrtHalfBits) >> 23;
  const float m = std::bit_cast<float>(bits - (static_cast<uint32_t>(e) << 23));
  const float s = (m - 1.0f) / (m + 1.0f);
  const float s2 = s * s;
  const float ln_m =
      s * (2.0f + s2 * (2.0f / 3 + s2 * (2.0f / 5 + s2 * (2.0f / 7 + s2 * (2.0f / 9)))));
  return -2.0f * (static_cast<float>(e) * kLn2 + ln_m);
}

// Multiplies r by cos and sin of 2 pi w / 2^32: the top two bits of w pick the quadrant, the
// next 24 the angle phi = x + pi/4 within it (x in [-pi/4, pi/4); Taylor polynomials of degree
// 9 and 10, accurate to float rounding there).
inline void PolarToCartesian(float r, uint32_t w, float* x_out, float* y_out) {
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
  const uint32_t sin_phi = std::bit_cast<uint32_t>((sin_x + cos_x) * kSqrtHalf);
  const uint32_t cos_phi = std::bit_cast<uint32_t>((cos_x - sin_x) * kSqrtHalf);
  // Rotate by the quadrant without branches: odd quadrants swap cos and sin; the signs of
  // (cos, sin) per quadrant are (+,+) (-,+) (-,-) (+,-).
  const uint32_t swap = 0u - (quadrant & 1u);
  const uint32_t cos_bits = (sin_phi & swap) | (cos_phi & ~swap);
  const uint32_t sin_bits = (cos_phi & swap) | (sin_phi & ~swap);
  const uint32_t cos_sign = (((quadrant + 1u) >> 1) & 1u) << 31;
  const uint32_t sin_sign = (quadrant >> 1) << 31;
  *x_out = r * std::bit_cast<float>(cos_bits ^ cos_sign);
  *y_out = r * std::bit_cast<float>(sin_bits ^ sin_sign);
}

// Box-Muller over the word pairs (lane 0, lane 1) and (lane 2, lane 3) of every block; z[k] is
// the normal value of element k of the batch.
void NormalBatch(const Words& w, float z[kBatch]) {
  uint32_t even[kPairs], odd[kPairs];
  for (int b = 0; b < kBlocks; ++b) {
    even[b] = w.word[0][b];
    odd[b] = w.word[1][b];
    even[kBlocks + b] = w.word[2][b];
    odd[kBlocks + b] = w.word[3][b];
  }
  float r[kPairs];
  for (int p = 0; p < kPairs; ++p) {
    const float u1 = (static_cast<float>(even[p] >> 9) + 0.5f) * (1.0f / 8388608.0f);
    r[p] = MinusTwoLog(u1);
  }
  // Kept apart from the vectorized loops: sqrt's errno path is control flow.
  for (int p = 0; p < kPairs; ++p) r[p] = std::sqrt(r[p]);
  float zx[kPairs], zy[kPairs];
  for (int p = 0; p < kPairs; ++p) PolarToCartesian(r[p], odd[p], &zx[p], &zy[p]);
  for (int b = 0; b < kBlocks; ++b) {
    z[kLanes * b + 0] = zx[b];
    z[kLanes * b + 1] = zy[b];
    z[kLanes * b + 2] = zx[kBlocks + b];
    z[kLanes * b + 3] = zy[kBlocks + b];
  }
}

// Calls batch(start, n, words, z) for consecutive batches covering [begin, end): words[k] is the
// Philox word of element start + k and, when `normal`, z[k] its normal value. `begin` is a
// multiple of kLanes.
template <typename Batch>
void ForEachBatch(int64_t begin, int64_t end, uint64_t seed, int input_index, bool normal,
                  Batch batch) {
  Words w;
  uint32_t words[kBatch];
  float z[kBatch] = {};
  for (int64_t start = begin; start < end; start += kBatch) {
    const int n = static_cast<int>(std::min<int64_t>(kBatch, end - start));
    PhiloxBatch(static_cast<uint64_t>(input_index), static_cast<uint64_t>(start / kLanes), seed,
                &w);
    if (normal) {
      NormalBatch(w, z);
    } else {
      for (int b = 0; b < kBlocks; ++b) {
        for (int lane = 0; lane < kLanes; ++lane) words[kLanes * b + lane] = w.word[lane][b];
      }
    }
    batch(start, n, words, z);
  }
}

template <typename T>
void Put(void* dst, int64_t i, T v) {
  std::memcpy(static_cast<char*>(dst) + i * static_cast<int64_t>(sizeof(T)), &v, sizeof v);
}

// Round to nearest even of a finite float into the IEEE-style format with kExp exponent bits
// and kMan mantissa bits (bias 2^(kExp-1) - 1), for |f| within the format's normal range: the
// exponent is rebiased in place and the carry of the rounding add moves into it. Values below the
// normal range take `slow` (dtype.h's exact conversion); the result equals that conversion
// everywhere in range (the tests compare them).
template <int kExp, int kMan, typename Slow>
inline uint32_t RoundNormalRange(float f, Slow slow) {
  constexpr int kBias = (1 << (kExp - 1)) - 1;
  constexpr int kDrop = 23 - kMan;
  constexpr uint32_t kMinNormal = static_cast<uint32_t>(128 - kBias) << 23;
  constexpr uint32_t kRebias = static_cast<uint32_t>(127 - kBias) << 23;
  const uint32_t bits = std::bit_cast<uint32_t>(f);
  const uint32_t a = bits & 0x7fffffffu;
  if (a < kMinNormal) return slow(f);
  const uint32_t sign = (bits >> 31) << (kExp + kMan);
  const uint32_t odd = (a >> kDrop) & 1u;
  return sign | ((a - kRebias + (1u << (kDrop - 1)) - 1u + odd) >> kDrop);
}

void FillNormal(v1::DType dtype, int64_t begin, int64_t end, uint64_t seed, int input_index,
                void* dst) {
  auto fill = [&](auto store) {
    ForEachBatch(begin, end, seed, input_index, true,
                 [&](int64_t start, int n, const uint32_t*, const float* z) {
                   for (int k = 0; k < n; ++k) store(start + k, z[k]);
                 });
  };
  auto* bytes = static_cast<uint8_t*>(dst);
  switch (dtype) {
    case v1::DTYPE_FLOAT32:
      return fill([&](int64_t i, float z) { Put<float>(dst, i, z); });
    case v1::DTYPE_FLOAT64:
      return fill([&](int64_t i, float z) { Put<double>(dst, i, z); });
    case v1::DTYPE_FLOAT16:
      return fill([&](int64_t i, float z) {
        Put<uint16_t>(dst, i, static_cast<uint16_t>(RoundNormalRange<5, 10>(z, FloatToF16)));
      });
    case v1::DTYPE_BFLOAT16:
      return fill([&](int64_t i, float z) {
        Put<uint16_t>(dst, i, static_cast<uint16_t>(RoundNormalRange<8, 7>(z, FloatToBf16)));
      });
    case v1::DTYPE_FLOAT8_E4M3FN:
      return fill([&](int64_t i, float z) {
        bytes[i] = static_cast<uint8_t>(
            RoundNormalRange<4, 3>(std::clamp(z, -2.0f, 2.0f), FloatToFp8E4m3));
      });
    case v1::DTYPE_FLOAT8_E5M2:
      return fill([&](int64_t i, float z) {
        bytes[i] = static_cast<uint8_t>(
            RoundNormalRange<5, 2>(std::clamp(z, -2.0f, 2.0f), FloatToFp8E5m2));
      });
    case v1::DTYPE_FLOAT4_E2M1:
      // Even elements write the low nibble and clear the high one; odd elements add the high.
      return fill([&](int64_t i, float z) {
        const uint8_t nibble = FloatToFp4E2m1(z);
        bytes[i / 2] = i % 2 == 0 ? nibble : static_cast<uint8_t>(bytes[i / 2] | (nibble << 4));
      });
    default:
      return;
  }
}

void FillInteger(v1::DType dtype, int64_t begin, int64_t end, uint64_t seed, int input_index,
                 void* dst) {
  auto fill = [&](auto store) {
    ForEachBatch(begin, end, seed, input_index, false,
                 [&](int64_t start, int n, const uint32_t* words, const float*) {
                   for (int k = 0; k < n; ++k) store(start + k, words[k]);
                 });
  };
  switch (dtype) {
    case v1::DTYPE_INT8:
      return fill([&](int64_t i, uint32_t w) {
        Put<int8_t>(dst, i, static_cast<int8_t>(static_cast<int32_t>(w >> 24) - 128));
      });
    case v1::DTYPE_INT16:
      return fill([&](int64_t i, uint32_t w) {
        Put<int16_t>(dst, i, static_cast<int16_t>(static_cast<int32_t>(w >> 21) - 1024));
      });
    case v1::DTYPE_INT32:
      return fill([&](int64_t i, uint32_t w) {
        Put<int32_t>(dst, i, static_cast<int32_t>(w >> 21) - 1024);
      });
    case v1::DTYPE_INT64:
      return fill([&](int64_t i, uint32_t w) {
        Put<int64_t>(dst, i, static_cast<int64_t>(w >> 21) - 1024);
      });
    case v1::DTYPE_BOOL:
      return fill(
          [&](int64_t i, uint32_t w) { Put<uint8_t>(dst, i, static_cast<uint8_t>(w >> 31)); });
    default:
      return;
  }
}

void FillRange(v1::DType dtype, int64_t begin, int64_t end, uint64_t seed, int input_index,
               void* dst) {
  if (DTypeIsFloat(dtype)) return FillNormal(dtype, begin, end, seed, input_index, dst);
  FillInteger(dtype, begin, end, seed, input_index, dst);
}

int ThreadCount(int64_t numel, int requested) {
  if (requested > 0) return requested;
  const int64_t by_size = numel / kElementsPerThread + 1;
  const int hardware = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  return static_cast<int>(std::min<int64_t>({by_size, hardware, kMaxThreads}));
}

}  // namespace

void FillRandom(v1::DType dtype, int64_t numel, uint64_t seed, int input_index, void* dst,
                int threads) {
  if (numel <= 0) return;
  const int n = ThreadCount(numel, threads);
  if (n == 1) return FillRange(dtype, 0, numel, seed, input_index, dst);
  // Chunks start on whole batches, which are also byte boundaries for float4 (two per byte),
  // so no two threads write the same byte.
  const int64_t batches = (numel + kBatch - 1) / kBatch;
  const int64_t per_chunk = (batches + n - 1) / n * kBatch;
  std::vector<std::thread> workers;
  for (int t = 0; t < n; ++t) {
    const int64_t begin = t * per_chunk;
    const int64_t end = std::min(numel, begin + per_chunk);
    if (begin >= end) break;
    workers.emplace_back(FillRange, dtype, begin, end, seed, input_index, dst);
  }
  for (std::thread& w : workers) w.join();
}

}  // namespace kiln
