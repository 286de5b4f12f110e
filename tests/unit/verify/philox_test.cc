// Philox4x32-10 against Random123's known-answer vectors (kat_vectors), and seed mixing.
#include <catch2/catch.hpp>
#include <cstdint>
#include <set>

#include "harness/verify/input_generator.h"

namespace kiln {
namespace {

// Packs Random123 counter words {c0, c1, c2, c3} into kiln's (counter_hi, counter_lo).
void RunKat(const uint32_t ctr[4], const uint32_t key[2], const uint32_t want[4]) {
  const uint64_t lo = (static_cast<uint64_t>(ctr[1]) << 32) | ctr[0];
  const uint64_t hi = (static_cast<uint64_t>(ctr[3]) << 32) | ctr[2];
  const uint64_t k = (static_cast<uint64_t>(key[1]) << 32) | key[0];
  uint32_t out[4];
  Philox4x32(hi, lo, k, out);
  for (int i = 0; i < 4; ++i) CHECK(out[i] == want[i]);
}

TEST_CASE("Philox4x32-10 matches Random123 for a zero counter and key") {
  const uint32_t ctr[4] = {0, 0, 0, 0};
  const uint32_t key[2] = {0, 0};
  const uint32_t want[4] = {0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8};
  RunKat(ctr, key, want);
}

TEST_CASE("Philox4x32-10 matches Random123 for an all-ones counter and key") {
  const uint32_t ctr[4] = {0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff};
  const uint32_t key[2] = {0xffffffff, 0xffffffff};
  const uint32_t want[4] = {0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd};
  RunKat(ctr, key, want);
}

TEST_CASE("Philox4x32-10 matches Random123 for the digits of pi") {
  const uint32_t ctr[4] = {0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344};
  const uint32_t key[2] = {0xa4093822, 0x299f31d0};
  const uint32_t want[4] = {0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1};
  RunKat(ctr, key, want);
}

TEST_CASE("MixSeed is deterministic and depends on every part") {
  const uint64_t base = MixSeed("secret", "run-1", 0, 0);
  CHECK(MixSeed("secret", "run-1", 0, 0) == base);
  std::set<uint64_t> seeds = {base,
                              MixSeed("other", "run-1", 0, 0),
                              MixSeed("secret", "run-2", 0, 0),
                              MixSeed("secret", "run-1", 1, 0),
                              MixSeed("secret", "run-1", 0, 1),
                              MixSeed("secret", "run-10", 0, 0),
                              MixSeed("secretrun-1", "", 0, 0)};
  CHECK(seeds.size() == 7);
}

}  // namespace
}  // namespace kiln
