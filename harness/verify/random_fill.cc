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
#include "harness/verify/random_scheme.h"

namespace kiln {
namespace {

constexpr int kPhiloxLanes = 4;    // words per Philox block
constexpr int kBlocks = 16;  // blocks per batch
constexpr int kBatch = kPhiloxLanes * kBlocks;
constexpr int kPairs = kBatch / 2;
// Below this many elements one thread is faster than starting more.
constexpr int64_t kElementsPerThread = int64_t{1} << 20;
constexpr int kMaxThreads = 16;

// Philox words of kBlocks consecutive blocks: word[lane][b] is lane `lane` of block
// first_block + b, i.e. element 4 (first_block + b) + lane.
struct Words {
  uint32_t word[kPhiloxLanes][kBlocks];
};

void PhiloxBatch(uint64_t counter_hi, uint64_t first_block, uint64_t key, Words* out) {
  uint32_t(&c)[kPhiloxLanes][kBlocks] = out->word;
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

// The normal transform: random_scheme.h, shared with the CUDA generator.
using random_scheme::MinusTwoLog;
using random_scheme::PolarToCartesian;

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
    r[p] = MinusTwoLog(random_scheme::Uniform(even[p]));
  }
  // Kept apart from the vectorized loops: sqrt's errno path is control flow.
  for (int p = 0; p < kPairs; ++p) r[p] = std::sqrt(r[p]);
  float zx[kPairs], zy[kPairs];
  for (int p = 0; p < kPairs; ++p) PolarToCartesian(r[p], odd[p], &zx[p], &zy[p]);
  for (int b = 0; b < kBlocks; ++b) {
    z[kPhiloxLanes * b + 0] = zx[b];
    z[kPhiloxLanes * b + 1] = zy[b];
    z[kPhiloxLanes * b + 2] = zx[kBlocks + b];
    z[kPhiloxLanes * b + 3] = zy[kBlocks + b];
  }
}

// Calls batch(start, n, words, z) for consecutive batches covering [begin, end): words[k] is the
// Philox word of element start + k and, when `normal`, z[k] its normal value. `begin` is a
// multiple of kPhiloxLanes.
template <typename Batch>
void ForEachBatch(int64_t begin, int64_t end, uint64_t seed, int input_index, bool normal,
                  Batch batch) {
  Words w;
  uint32_t words[kBatch];
  float z[kBatch] = {};
  for (int64_t start = begin; start < end; start += kBatch) {
    const int n = static_cast<int>(std::min<int64_t>(kBatch, end - start));
    PhiloxBatch(static_cast<uint64_t>(input_index), static_cast<uint64_t>(start / kPhiloxLanes), seed,
                &w);
    if (normal) {
      NormalBatch(w, z);
    } else {
      for (int b = 0; b < kBlocks; ++b) {
        for (int lane = 0; lane < kPhiloxLanes; ++lane) words[kPhiloxLanes * b + lane] = w.word[lane][b];
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

// Elements [begin, end) of the input; element i is stored at position i - origin of `dst`.
void FillNormal(v1::DType dtype, int64_t begin, int64_t end, uint64_t seed, int input_index,
                void* dst, int64_t origin) {
  auto fill = [&](auto store) {
    ForEachBatch(begin, end, seed, input_index, true,
                 [&](int64_t start, int n, const uint32_t*, const float* z) {
                   for (int k = 0; k < n; ++k) store(start + k - origin, z[k]);
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
                 void* dst, int64_t origin) {
  auto fill = [&](auto store) {
    ForEachBatch(begin, end, seed, input_index, false,
                 [&](int64_t start, int n, const uint32_t* words, const float*) {
                   for (int k = 0; k < n; ++k) store(start + k - origin, words[k]);
                 });
  };
  switch (dtype) {
    case v1::DTYPE_INT8:
      return fill([&](int64_t i, uint32_t w) {
        Put<int8_t>(dst, i, static_cast<int8_t>(random_scheme::Int8Value(w)));
      });
    case v1::DTYPE_INT16:
      return fill([&](int64_t i, uint32_t w) {
        Put<int16_t>(dst, i, static_cast<int16_t>(random_scheme::WideIntValue(w)));
      });
    case v1::DTYPE_INT32:
      return fill([&](int64_t i, uint32_t w) {
        Put<int32_t>(dst, i, random_scheme::WideIntValue(w));
      });
    case v1::DTYPE_INT64:
      return fill([&](int64_t i, uint32_t w) {
        Put<int64_t>(dst, i, static_cast<int64_t>(random_scheme::WideIntValue(w)));
      });
    case v1::DTYPE_BOOL:
      return fill(
          [&](int64_t i, uint32_t w) {
            Put<uint8_t>(dst, i, static_cast<uint8_t>(random_scheme::BoolValue(w)));
          });
    default:
      return;
  }
}

void FillRange(v1::DType dtype, int64_t begin, int64_t end, uint64_t seed, int input_index,
               void* dst, int64_t origin = 0) {
  if (DTypeIsFloat(dtype)) return FillNormal(dtype, begin, end, seed, input_index, dst, origin);
  FillInteger(dtype, begin, end, seed, input_index, dst, origin);
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
    workers.emplace_back(FillRange, dtype, begin, end, seed, input_index, dst, int64_t{0});
  }
  for (std::thread& w : workers) w.join();
}

}  // namespace kiln

namespace kiln {

void FillRandomSpan(v1::DType dtype, int64_t first, int64_t count, uint64_t seed, int input_index,
                    void* dst) {
  if (count <= 0) return;
  // The batches start on whole Philox blocks: from the block of `first`, into a scratch buffer
  // when `first` is not on a block boundary.
  const int64_t begin = first / kPhiloxLanes * kPhiloxLanes;
  if (begin == first) return FillRange(dtype, first, first + count, seed, input_index, dst, first);
  std::vector<uint8_t> scratch(static_cast<size_t>(DTypeStorageBytes(dtype, first + count - begin)));
  FillRange(dtype, begin, first + count, seed, input_index, scratch.data(), begin);
  const int64_t skip = DTypeStorageBytes(dtype, first - begin);
  std::memcpy(dst, scratch.data() + skip, scratch.size() - static_cast<size_t>(skip));
}

}  // namespace kiln
