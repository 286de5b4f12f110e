// Output poisoning and input checksums (integrity.h).
#include "harness/verify/integrity.h"

#include <catch2/catch.hpp>
#include <cmath>
#include <cstring>
#include <set>
#include <vector>

#include "harness/model/dtype.h"
#include "harness/verify/comparator.h"

namespace kiln {
namespace {

TEST_CASE("poisoned float outputs read back as NaN in every float dtype with a NaN") {
  for (v1::DType t : {v1::DTYPE_FLOAT32, v1::DTYPE_FLOAT64, v1::DTYPE_FLOAT16, v1::DTYPE_BFLOAT16,
                      v1::DTYPE_FLOAT8_E4M3FN, v1::DTYPE_FLOAT8_E5M2}) {
    INFO(DTypeName(t));
    std::vector<uint8_t> buf(DTypeStorageBytes(t, 7));
    PoisonHost(t, buf.data(), buf.size());
    for (int i = 0; i < 7; ++i) CHECK(std::isnan(LoadAsDouble(t, buf.data(), i)));
    CHECK(PoisonByte(t) == 0xff);
  }
}

TEST_CASE("poisoned integer outputs hold the 0xA5 pattern") {
  for (v1::DType t : {v1::DTYPE_INT32, v1::DTYPE_INT8, v1::DTYPE_BOOL, v1::DTYPE_FLOAT4_E2M1}) {
    CHECK(PoisonByte(t) == 0xa5);
  }
  int32_t v[2] = {0, 0};
  PoisonHost(v1::DTYPE_INT32, v, sizeof v);
  CHECK(static_cast<uint32_t>(v[0]) == 0xa5a5a5a5u);
  CHECK(static_cast<uint32_t>(v[1]) == 0xa5a5a5a5u);
}

TEST_CASE("an unwritten output is caught by poisoning") {
  const std::vector<float> reference(64, 0.0f);  // a degenerate all-zero reference
  std::vector<float> output(64, 0.0f);           // stale memory that would happen to match
  PoisonHost(v1::DTYPE_FLOAT32, output.data(), output.size() * sizeof(float));
  Tolerances lenient;
  lenient.atol = 1e30;
  lenient.rtol = 1e30;
  const auto c = CompareTensors(v1::DTYPE_FLOAT32, output.data(), reference.data(), 64, lenient);
  CHECK_FALSE(c.passed);
  CHECK(c.non_finite == 64);
}

TEST_CASE("the input checksum detects a single flipped bit anywhere") {
  for (size_t size : {size_t{1}, size_t{7}, size_t{8}, size_t{67}, size_t{4099}}) {
    std::vector<uint8_t> buf(size);
    for (size_t i = 0; i < size; ++i) buf[i] = static_cast<uint8_t>(i * 131 + 7);
    const uint64_t base = Checksum64(buf.data(), size);
    CHECK(Checksum64(buf.data(), size) == base);
    const size_t step = size > 100 ? 13 : 1;
    for (size_t byte = 0; byte < size; byte += step) {
      for (int bit = 0; bit < 8; ++bit) {
        buf[byte] ^= static_cast<uint8_t>(1u << bit);
        const uint64_t flipped = Checksum64(buf.data(), size);
        buf[byte] ^= static_cast<uint8_t>(1u << bit);
        if (flipped == base) FAIL("bit " << bit << " of byte " << byte << " of " << size);
      }
    }
  }
}

TEST_CASE("the input checksum depends on the length, not only on the bytes") {
  const std::vector<uint8_t> zeros(64, 0);
  std::set<uint64_t> sums;
  for (size_t n = 0; n <= 64; ++n) sums.insert(Checksum64(zeros.data(), n));
  CHECK(sums.size() == 65);
}

TEST_CASE("swapping two words changes the input checksum") {
  std::vector<uint64_t> words = {1, 2, 3, 4, 5, 6, 7, 8, 9};
  const uint64_t base = Checksum64(words.data(), words.size() * 8);
  std::swap(words[0], words[8]);
  CHECK(Checksum64(words.data(), words.size() * 8) != base);
}

}  // namespace
}  // namespace kiln
