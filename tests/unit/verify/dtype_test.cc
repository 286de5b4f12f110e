// Element types: names, sizes and exact conversions (harness/model/dtype.h). Kept with the verify
// tests because the comparator and the input generator are built on these conversions.
#include "harness/model/dtype.h"

#include <bit>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <vector>

#include "kiln/host_types.h"

namespace kiln {
namespace {

float F(uint32_t bits) { return std::bit_cast<float>(bits); }
uint32_t B(float f) { return std::bit_cast<uint32_t>(f); }

// Float bit patterns spread over the whole 32-bit space plus the edges that matter.
std::vector<uint32_t> ManyFloatPatterns() {
  std::vector<uint32_t> out;
  for (uint64_t b = 0; b <= 0xffffffffull; b += 251) out.push_back(static_cast<uint32_t>(b));
  for (uint32_t edge : {0x00000000u, 0x80000000u, 0x7f800000u, 0xff800000u, 0x7fc00000u,
                        0x7f800001u, 0x7f7fffffu, 0x477fefffu, 0x477ff000u, 0x33000000u,
                        0x33000001u, 0x38800000u, 0x387fffffu, 0x00000001u, 0x007fffffu}) {
    out.push_back(edge);
    out.push_back(edge ^ 0x80000000u);
  }
  return out;
}

// Checks that `encode` rounds x to the nearest value `decode` can produce, ties to the even
// code, by brute force over every code of an n-bit format whose top bit is the sign.
void ExpectNearestEven(float x, int bits, const std::function<uint32_t(float)>& encode,
                       const std::function<float(uint32_t)>& decode) {
  double best = std::numeric_limits<double>::infinity();
  std::vector<uint32_t> best_codes;
  for (uint32_t c = 0; c < (1u << bits); ++c) {
    const float v = decode(c);
    if (!std::isfinite(v) || std::signbit(v) != std::signbit(x)) continue;
    const double d = std::fabs(static_cast<double>(v) - x);
    if (d < best) {
      best = d;
      best_codes = {c};
    } else if (d == best) {
      best_codes.push_back(c);
    }
  }
  const uint32_t got = encode(x);
  INFO("x = " << x << " got code " << got);
  REQUIRE(std::isfinite(decode(got)));
  CHECK(std::fabs(static_cast<double>(decode(got)) - x) == best);
  if (best_codes.size() > 1 && decode(best_codes[0]) != decode(best_codes[1])) {
    CHECK((got & 1u) == 0u);  // a true tie goes to the even mantissa
  }
}

TEST_CASE("dtype names round-trip in flashinfer-bench spelling") {
  for (const char* name : {"float32", "float16", "bfloat16", "float8_e4m3fn", "float8_e5m2",
                           "float4_e2m1", "int64", "int32", "int16", "int8", "bool", "float64"}) {
    auto parsed = ParseDType(name);
    REQUIRE(parsed.ok());
    CHECK(DTypeName(*parsed) == name);
  }
  CHECK(DTypeName(v1::DTYPE_UNSPECIFIED) == "unknown");
}

TEST_CASE("an unknown dtype is rejected with its name in the message") {
  auto parsed = ParseDType("float13");
  REQUIRE_FALSE(parsed.ok());
  CHECK(parsed.status().code() == absl::StatusCode::kInvalidArgument);
  CHECK(std::string(parsed.status().message()).find("unknown dtype 'float13'") !=
        std::string::npos);
}

TEST_CASE("dtype sizes, storage and ABI values") {
  CHECK(DTypeBits(v1::DTYPE_FLOAT4_E2M1) == 4);
  CHECK(DTypeBits(v1::DTYPE_BOOL) == 8);
  CHECK(DTypeBits(v1::DTYPE_BFLOAT16) == 16);
  CHECK(DTypeBits(v1::DTYPE_INT64) == 64);
  CHECK(DTypeStorageBytes(v1::DTYPE_FLOAT4_E2M1, 3) == 2);
  CHECK(DTypeStorageBytes(v1::DTYPE_FLOAT4_E2M1, 4) == 2);
  CHECK(DTypeStorageBytes(v1::DTYPE_FLOAT32, 5) == 20);
  CHECK(DTypeStorageBytes(v1::DTYPE_FLOAT8_E5M2, 0) == 0);
  CHECK(DTypeIsFloat(v1::DTYPE_FLOAT8_E4M3FN));
  CHECK(DTypeIsFloat(v1::DTYPE_FLOAT64));
  CHECK_FALSE(DTypeIsFloat(v1::DTYPE_INT8));
  CHECK_FALSE(DTypeIsFloat(v1::DTYPE_BOOL));
  CHECK(ToAbiDType(v1::DTYPE_FLOAT4_E2M1) == KILN_FLOAT4_E2M1);
  CHECK(ToAbiDType(v1::DTYPE_BOOL) == KILN_BOOL);
  CHECK(ToAbiDType(v1::DTYPE_FLOAT64) == KILN_FLOAT64);
}

TEST_CASE("bf16 and f16 widening agree with host_types.h for all 65536 patterns") {
  for (uint32_t h = 0; h <= 0xffffu; ++h) {
    const auto v = static_cast<uint16_t>(h);
    INFO("pattern " << h);
    REQUIRE(B(Bf16ToFloat(v)) == B(kiln_bf16_to_float(v)));
    REQUIRE(B(F16ToFloat(v)) == B(kiln_f16_to_float(v)));
  }
}

TEST_CASE("bf16 and f16 narrowing agree with host_types.h bit for bit") {
  for (uint32_t bits : ManyFloatPatterns()) {
    const float f = F(bits);
    INFO("float bits " << bits);
    REQUIRE(FloatToBf16(f) == kiln_float_to_bf16(f));
    REQUIRE(FloatToF16(f) == kiln_float_to_f16(f));
  }
}

TEST_CASE("f16 narrowing rounds to nearest even with subnormals, overflow and NaN") {
  CHECK(FloatToF16(65504.0f) == 0x7bff);
  CHECK(FloatToF16(65519.0f) == 0x7bff);
  CHECK(FloatToF16(65520.0f) == 0x7c00);  // halfway to 2^16 rounds to even: infinity
  CHECK(FloatToF16(-INFINITY) == 0xfc00);
  CHECK((FloatToF16(NAN) & 0x7fff) > 0x7c00);
  CHECK(FloatToF16(std::ldexp(1.0f, -24)) == 0x0001);
  CHECK(FloatToF16(std::ldexp(1.0f, -25)) == 0x0000);         // tie to even (zero)
  CHECK(FloatToF16(std::ldexp(3.0f, -26)) == 0x0001);         // 0.75 quanta rounds up
  CHECK(FloatToF16(std::ldexp(3.0f, -25)) == 0x0002);         // 1.5 quanta, tie to even (2)
  CHECK(FloatToF16(1.0f + std::ldexp(1.0f, -11)) == 0x3c00);  // tie to even
  CHECK(FloatToF16(1.0f + std::ldexp(3.0f, -11)) == 0x3c02);
  CHECK(F16ToFloat(0x0001) == std::ldexp(1.0f, -24));
  CHECK(F16ToFloat(0x7bff) == 65504.0f);
  CHECK(std::isnan(F16ToFloat(0x7e00)));
}

TEST_CASE("bf16 narrowing keeps NaN quiet and rounds overflow to infinity") {
  CHECK(FloatToBf16(1.0f) == 0x3f80);
  CHECK(FloatToBf16(F(0x3f808000u)) == 0x3f80);  // tie, even stays
  CHECK(FloatToBf16(F(0x3f818000u)) == 0x3f82);  // tie, odd rounds up
  CHECK(FloatToBf16(F(0x7f7fffffu)) == 0x7f80);
  CHECK(std::isnan(Bf16ToFloat(FloatToBf16(F(0x7f800001u)))));
}

TEST_CASE("fp8 e4m3fn follows torch: max 448, no infinity, overflow is NaN") {
  CHECK(Fp8E4m3ToFloat(0x7e) == 448.0f);
  CHECK(Fp8E4m3ToFloat(0x01) == std::ldexp(1.0f, -9));
  CHECK(Fp8E4m3ToFloat(0x08) == std::ldexp(1.0f, -6));
  CHECK(Fp8E4m3ToFloat(0x38) == 1.0f);
  CHECK(std::isnan(Fp8E4m3ToFloat(0x7f)));
  CHECK(std::isnan(Fp8E4m3ToFloat(0xff)));
  CHECK_FALSE(std::isnan(Fp8E4m3ToFloat(0x78)));  // 256: e=15 is a normal exponent here
  CHECK(FloatToFp8E4m3(448.0f) == 0x7e);
  CHECK(FloatToFp8E4m3(460.0f) == 0x7e);
  CHECK(FloatToFp8E4m3(464.0f) == 0x7e);  // tie between 448 and the NaN code: even wins
  CHECK(FloatToFp8E4m3(465.0f) == 0x7f);
  CHECK(FloatToFp8E4m3(-1000.0f) == 0xff);
  CHECK(FloatToFp8E4m3(INFINITY) == 0x7f);
  CHECK(FloatToFp8E4m3(NAN) == 0x7f);
  CHECK(FloatToFp8E4m3(-0.0f) == 0x80);
  CHECK(FloatToFp8E4m3(std::ldexp(1.0f, -10)) == 0x00);  // half the smallest subnormal: even
  CHECK(FloatToFp8E4m3(std::ldexp(1.5f, -10)) == 0x01);
}

TEST_CASE("fp8 e5m2 has infinity and rounds past 57344 to it") {
  CHECK(Fp8E5m2ToFloat(0x7b) == 57344.0f);
  CHECK(std::isinf(Fp8E5m2ToFloat(0x7c)));
  CHECK(std::isnan(Fp8E5m2ToFloat(0x7d)));
  CHECK(Fp8E5m2ToFloat(0x01) == std::ldexp(1.0f, -16));
  CHECK(FloatToFp8E5m2(57344.0f) == 0x7b);
  CHECK(FloatToFp8E5m2(61439.0f) == 0x7b);
  CHECK(FloatToFp8E5m2(61440.0f) == 0x7c);
  CHECK(FloatToFp8E5m2(-INFINITY) == 0xfc);
  CHECK((FloatToFp8E5m2(NAN) & 0x7f) == 0x7f);
}

TEST_CASE("fp4 e2m1 holds 0 .5 1 1.5 2 3 4 6 and saturates") {
  const float expected[8] = {0, 0.5f, 1, 1.5f, 2, 3, 4, 6};
  for (uint8_t c = 0; c < 8; ++c) {
    CHECK(Fp4E2m1ToFloat(c) == expected[c]);
    CHECK(Fp4E2m1ToFloat(c | 8) == -expected[c]);
    CHECK(FloatToFp4E2m1(expected[c]) == c);
  }
  CHECK(FloatToFp4E2m1(5.0f) == 0x6);   // tie 4|6 -> even code (4)
  CHECK(FloatToFp4E2m1(2.5f) == 0x4);   // tie 2|3 -> 2
  CHECK(FloatToFp4E2m1(3.5f) == 0x6);   // tie 3|4 -> 4
  CHECK(FloatToFp4E2m1(0.25f) == 0x0);  // tie 0|0.5 -> 0
  CHECK(FloatToFp4E2m1(0.75f) == 0x2);  // tie 0.5|1 -> 1
  CHECK(FloatToFp4E2m1(100.0f) == 0x7);
  CHECK(FloatToFp4E2m1(-INFINITY) == 0xf);
}

TEST_CASE("narrow float encoders pick the nearest code, ties to even") {
  std::vector<float> xs;
  for (int i = -2000; i <= 2000; ++i) xs.push_back(static_cast<float>(i) / 7.0f);
  for (int e = -30; e <= 20; ++e) {
    for (float m : {1.0f, 1.03125f, 1.0625f, 1.125f, 1.1875f, 1.25f, 1.3f, 1.5f, 1.75f, 1.9f}) {
      xs.push_back(std::ldexp(m, e));
      xs.push_back(-std::ldexp(m, e));
    }
  }
  for (float x : xs) {
    if (std::fabs(x) < 448.0f) {
      ExpectNearestEven(
          x, 8, [](float f) { return FloatToFp8E4m3(f); },
          [](uint32_t c) { return Fp8E4m3ToFloat(static_cast<uint8_t>(c)); });
    }
    if (std::fabs(x) < 57344.0f) {
      ExpectNearestEven(
          x, 8, [](float f) { return FloatToFp8E5m2(f); },
          [](uint32_t c) { return Fp8E5m2ToFloat(static_cast<uint8_t>(c)); });
    }
    if (std::fabs(x) <= 6.0f) {
      ExpectNearestEven(
          x, 4, [](float f) { return FloatToFp4E2m1(f); },
          [](uint32_t c) { return Fp4E2m1ToFloat(static_cast<uint8_t>(c)); });
    }
  }
}

TEST_CASE("every fp8 and fp4 code survives a round trip through float") {
  for (uint32_t c = 0; c < 256; ++c) {
    const auto v = static_cast<uint8_t>(c);
    if (!std::isnan(Fp8E4m3ToFloat(v))) CHECK(FloatToFp8E4m3(Fp8E4m3ToFloat(v)) == v);
    if (!std::isnan(Fp8E5m2ToFloat(v))) CHECK(FloatToFp8E5m2(Fp8E5m2ToFloat(v)) == v);
  }
  for (uint8_t c = 0; c < 16; ++c) CHECK(FloatToFp4E2m1(Fp4E2m1ToFloat(c)) == c);
}

TEST_CASE("StoreFromDouble rounds a double once, not twice via float") {
  // 1 + 2^-8 + 2^-40: just above the bf16 tie, so it rounds up; float would lose the 2^-40
  // and a second rounding would tie to 1.0.
  const double v = 1.0 + std::ldexp(1.0, -8) + std::ldexp(1.0, -40);
  uint16_t out = 0;
  StoreFromDouble(v1::DTYPE_BFLOAT16, &out, 0, v);
  CHECK(out == 0x3f81);
  StoreFromDouble(v1::DTYPE_FLOAT16, &out, 0, 1.0 + std::ldexp(1.0, -11) + std::ldexp(1.0, -40));
  CHECK(out == 0x3c01);
}

TEST_CASE("LoadAsDouble and StoreFromDouble cover every dtype") {
  const v1::DType all[] = {v1::DTYPE_FLOAT32,       v1::DTYPE_FLOAT16,     v1::DTYPE_BFLOAT16,
                           v1::DTYPE_FLOAT8_E4M3FN, v1::DTYPE_FLOAT8_E5M2, v1::DTYPE_FLOAT4_E2M1,
                           v1::DTYPE_INT64,         v1::DTYPE_INT32,       v1::DTYPE_INT16,
                           v1::DTYPE_INT8,          v1::DTYPE_BOOL,        v1::DTYPE_FLOAT64};
  const double values[] = {1.5, -3.0, 0.0, 2.0, -0.5};
  for (v1::DType t : all) {
    std::vector<uint8_t> buf(DTypeStorageBytes(t, 5) + 1, 0);
    for (int i = 0; i < 5; ++i) StoreFromDouble(t, buf.data(), i, values[i]);
    for (int i = 0; i < 5; ++i) {
      INFO(DTypeName(t) << " element " << i);
      double want = values[i];
      if (!DTypeIsFloat(t)) want = std::trunc(want);
      if (t == v1::DTYPE_BOOL) want = values[i] != 0 ? 1 : 0;
      CHECK(LoadAsDouble(t, buf.data(), i) == want);
    }
  }
}

TEST_CASE("fp4 elements pack two per byte, low nibble first") {
  uint8_t buf[2] = {0, 0};
  StoreFromDouble(v1::DTYPE_FLOAT4_E2M1, buf, 0, 1.0);   // code 2
  StoreFromDouble(v1::DTYPE_FLOAT4_E2M1, buf, 1, -6.0);  // code 0xf
  StoreFromDouble(v1::DTYPE_FLOAT4_E2M1, buf, 2, 0.5);   // code 1
  CHECK(buf[0] == 0xf2);
  CHECK(buf[1] == 0x01);
  CHECK(LoadAsDouble(v1::DTYPE_FLOAT4_E2M1, buf, 1) == -6.0);
}

TEST_CASE("integer stores truncate toward zero and saturate") {
  int8_t i8 = 0;
  StoreFromDouble(v1::DTYPE_INT8, &i8, 0, 300.0);
  CHECK(i8 == 127);
  StoreFromDouble(v1::DTYPE_INT8, &i8, 0, -1e9);
  CHECK(i8 == -128);
  StoreFromDouble(v1::DTYPE_INT8, &i8, 0, -2.9);
  CHECK(i8 == -2);
  int64_t i64 = 0;
  StoreFromDouble(v1::DTYPE_INT64, &i64, 0, 1e30);
  CHECK(i64 == std::numeric_limits<int64_t>::max());
  StoreFromDouble(v1::DTYPE_INT64, &i64, 0, NAN);
  CHECK(i64 == 0);
  int32_t i32 = 0;
  StoreFromDouble(v1::DTYPE_INT32, &i32, 0, 2147483647.0);
  CHECK(i32 == 2147483647);
}

}  // namespace
}  // namespace kiln
