#include "harness/verify/integrity.h"

#include <algorithm>
#include <cstring>

#include "harness/model/dtype.h"

namespace kiln {
namespace {

constexpr uint64_t kMul = 0x9E3779B97F4A7C15ull;  // odd, so multiplication is a bijection
constexpr int kLanes = 4;

// One absorbing step. Each of its parts (xor with a fixed word, multiply by an odd constant,
// xorshift) is a bijection of the state, so two inputs that differ in exactly one word always
// leave different states: a single flipped bit (or word) anywhere is always detected.
inline uint64_t Absorb(uint64_t h, uint64_t w) {
  h = (h ^ w) * kMul;
  return h ^ (h >> 29);
}

}  // namespace

uint8_t PoisonByte(v1::DType dtype) {
  switch (dtype) {
    case v1::DTYPE_FLOAT32:
    case v1::DTYPE_FLOAT64:
    case v1::DTYPE_FLOAT16:
    case v1::DTYPE_BFLOAT16:
    case v1::DTYPE_FLOAT8_E4M3FN:  // 0xff = S.1111.111, the only NaN
    case v1::DTYPE_FLOAT8_E5M2:    // 0xff = S.11111.11, a NaN
      return 0xff;
    default:  // integers, bool and float4_e2m1 (which has no NaN)
      return 0xa5;
  }
}

void PoisonHost(v1::DType dtype, void* data, size_t bytes) {
  std::memset(data, PoisonByte(dtype), bytes);
}

namespace {

// The first storage unit of `got` that holds the poison of `dtype` and for which `counts`
// (given the unit's index and size) is true, as an element index; -1 when none.
template <typename Counts>
int64_t FirstPoisonUnit(v1::DType dtype, const void* got, int64_t numel, Counts counts) {
  const auto* g = static_cast<const unsigned char*>(got);
  const int bits = DTypeBits(dtype);
  const int64_t unit = std::max(1, bits / 8);
  const int64_t per_unit = bits < 8 ? 8 / bits : 1;
  const int64_t units = DTypeStorageBytes(dtype, numel) / unit;
  const uint8_t poison = PoisonByte(dtype);
  for (int64_t u = 0; u < units; ++u) {
    const unsigned char* x = g + u * unit;
    if (std::all_of(x, x + unit, [&](unsigned char b) { return b == poison; }) &&
        counts(u, unit)) {
      return u * per_unit;
    }
  }
  return -1;
}

}  // namespace

int64_t FirstPoisonedElement(v1::DType dtype, const void* got, const void* expected,
                             int64_t numel) {
  const auto* g = static_cast<const unsigned char*>(got);
  const auto* e = static_cast<const unsigned char*>(expected);
  return FirstPoisonUnit(dtype, got, numel, [&](int64_t u, int64_t unit) {
    return std::memcmp(g + u * unit, e + u * unit, static_cast<size_t>(unit)) != 0;
  });
}

int64_t FirstPoisonElement(v1::DType dtype, const void* got, int64_t numel) {
  return FirstPoisonUnit(dtype, got, numel, [](int64_t, int64_t) { return true; });
}

// Four independent lanes over consecutive 8-byte words keep the multiplier pipeline busy; the
// lanes, the tail and the length are then absorbed in a fixed order.
uint64_t Checksum64(const void* data, size_t bytes) {
  const auto* p = static_cast<const unsigned char*>(data);
  uint64_t lane[kLanes] = {0x243F6A8885A308D3ull, 0x13198A2E03707344ull, 0xA4093822299F31D0ull,
                           0x082EFA98EC4E6C89ull};
  const size_t words = bytes / 8;
  size_t i = 0;
  for (; i + kLanes <= words; i += kLanes) {
    for (int l = 0; l < kLanes; ++l) {
      uint64_t w;
      std::memcpy(&w, p + 8 * (i + l), 8);
      lane[l] = Absorb(lane[l], w);
    }
  }
  uint64_t h = lane[0];
  for (int l = 1; l < kLanes; ++l) h = Absorb(h, lane[l]);
  for (; i < words; ++i) {
    uint64_t w;
    std::memcpy(&w, p + 8 * i, 8);
    h = Absorb(h, w);
  }
  uint64_t tail = 0;
  std::memcpy(&tail, p + 8 * words, bytes % 8);
  h = Absorb(h, tail);
  h = Absorb(h, static_cast<uint64_t>(bytes));
  return h ^ (h >> 32);
}

}  // namespace kiln
