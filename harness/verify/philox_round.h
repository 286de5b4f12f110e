// One Philox4x32 round and its key schedule, shared by the scalar generator (philox.cc), the
// batched one behind FillRandom (random_fill.cc) and the CUDA one (integrity_kernels.cu), so
// they cannot drift apart.
#ifndef KILN_HARNESS_VERIFY_PHILOX_ROUND_H_
#define KILN_HARNESS_VERIFY_PHILOX_ROUND_H_

#include <cstdint>

#include "harness/verify/random_scheme.h"

namespace kiln::philox {

inline constexpr uint32_t kMul0 = 0xD2511F53u;
inline constexpr uint32_t kMul1 = 0xCD9E8D57u;
inline constexpr uint32_t kWeyl0 = 0x9E3779B9u;  // golden ratio
inline constexpr uint32_t kWeyl1 = 0xBB67AE85u;  // sqrt(3) - 1
inline constexpr int kRounds = 10;

// Updates the counter words c0..c3 in place with key words k0, k1.
KILN_RANDOM_FN void Round(uint32_t& c0, uint32_t& c1, uint32_t& c2, uint32_t& c3, uint32_t k0,
                  uint32_t k1) {
  const uint64_t p0 = static_cast<uint64_t>(kMul0) * c0;
  const uint64_t p1 = static_cast<uint64_t>(kMul1) * c2;
  const uint32_t n0 = static_cast<uint32_t>(p1 >> 32) ^ c1 ^ k0;
  const uint32_t n2 = static_cast<uint32_t>(p0 >> 32) ^ c3 ^ k1;
  c1 = static_cast<uint32_t>(p1);
  c3 = static_cast<uint32_t>(p0);
  c0 = n0;
  c2 = n2;
}

}  // namespace kiln::philox

#endif  // KILN_HARNESS_VERIFY_PHILOX_ROUND_H_
