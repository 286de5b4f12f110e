// Philox4x32-10 (Salmon et al., "Parallel Random Numbers: As Easy as 1, 2, 3", SC'11), the
// generator of Random123, curand and torch's CUDA RNG.
#include <cstdint>

#include "harness/verify/input_generator.h"
#include "harness/verify/philox_round.h"

namespace kiln {

void Philox4x32(uint64_t counter_hi, uint64_t counter_lo, uint64_t key, uint32_t out[4]) {
  uint32_t c0 = static_cast<uint32_t>(counter_lo);
  uint32_t c1 = static_cast<uint32_t>(counter_lo >> 32);
  uint32_t c2 = static_cast<uint32_t>(counter_hi);
  uint32_t c3 = static_cast<uint32_t>(counter_hi >> 32);
  uint32_t k0 = static_cast<uint32_t>(key);
  uint32_t k1 = static_cast<uint32_t>(key >> 32);
  for (int round = 0; round < philox::kRounds; ++round) {
    if (round > 0) {
      k0 += philox::kWeyl0;
      k1 += philox::kWeyl1;
    }
    philox::Round(c0, c1, c2, c3, k0, k1);
  }
  out[0] = c0;
  out[1] = c1;
  out[2] = c2;
  out[3] = c3;
}

}  // namespace kiln
