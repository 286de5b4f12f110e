// Reproducible random and scalar inputs (input_generator.h).
#include "harness/verify/input_generator.h"

#include <algorithm>
#include <bit>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstring>
#include <numbers>
#include <vector>

#include "harness/model/dtype.h"

namespace kiln {
namespace {

std::vector<uint8_t> Fill(v1::DType t, int64_t numel, uint64_t seed, int index, int threads) {
  std::vector<uint8_t> buf(DTypeStorageBytes(t, numel), 0x5a);
  FillRandom(t, numel, seed, index, buf.data(), threads);
  return buf;
}

v1::TensorSpec Spec(const std::string& name, v1::DType t) {
  v1::TensorSpec s;
  s.set_name(name);
  s.set_dtype(t);
  return s;
}

v1::WorkloadInput Scalar(const std::string& json) {
  v1::WorkloadInput in;
  in.set_kind(v1::WorkloadInput::SCALAR);
  in.set_value_json(json);
  return in;
}

TEST_CASE("random inputs do not depend on the thread count") {
  for (v1::DType t : {v1::DTYPE_FLOAT32, v1::DTYPE_BFLOAT16, v1::DTYPE_FLOAT8_E4M3FN,
                      v1::DTYPE_FLOAT4_E2M1, v1::DTYPE_INT8, v1::DTYPE_INT64, v1::DTYPE_BOOL}) {
    INFO(DTypeName(t));
    const int64_t numel = 100'003;  // not a multiple of the block or of the thread count
    const auto one = Fill(t, numel, 42, 3, 1);
    CHECK(Fill(t, numel, 42, 3, 7) == one);
    CHECK(Fill(t, numel, 42, 3, 0) == one);
  }
}

TEST_CASE("random inputs differ by seed and by input index") {
  const auto a = Fill(v1::DTYPE_FLOAT32, 1024, 1, 0, 1);
  CHECK(Fill(v1::DTYPE_FLOAT32, 1024, 1, 0, 1) == a);
  CHECK(Fill(v1::DTYPE_FLOAT32, 1024, 2, 0, 1) != a);
  CHECK(Fill(v1::DTYPE_FLOAT32, 1024, 1, 1, 1) != a);
}

TEST_CASE("random elements follow the documented Philox and Box-Muller scheme") {
  const uint64_t seed = 0x1234567890abcdefull;
  const int64_t n = 40'000;
  const auto buf = Fill(v1::DTYPE_FLOAT32, n, seed, 5, 1);
  double worst = 0;
  for (int64_t i = 0; i < n; ++i) {
    uint32_t w[4];
    Philox4x32(5, static_cast<uint64_t>(i / 4), seed, w);
    const int pair = static_cast<int>(i % 4) / 2;
    const double u1 = ((w[2 * pair] >> 9) + 0.5) / 8388608.0;
    const double theta = 2 * std::numbers::pi * (w[2 * pair + 1] / 4294967296.0);
    const double r = std::sqrt(-2.0 * std::log(u1));
    const double z = (i % 2 == 0) ? r * std::cos(theta) : r * std::sin(theta);
    float got;
    std::memcpy(&got, buf.data() + 4 * i, 4);
    worst = std::max(worst, std::fabs(got - z));
  }
  // The float32 polynomials agree with libm's double result to a few float ulps (the angle is
  // quantised to 2^-26 of a turn, about 1e-7 rad).
  CHECK(worst < 2e-6);
  const auto ints = Fill(v1::DTYPE_INT32, 8, seed, 2, 1);
  uint32_t w[4];
  Philox4x32(2, 1, seed, w);
  int32_t v;
  std::memcpy(&v, ints.data() + 4 * 6, 4);
  CHECK(v == static_cast<int32_t>(w[2] >> 21) - 1024);
}

TEST_CASE("random input bits are pinned, so a change to the scheme is noticed") {
  const auto buf = Fill(v1::DTYPE_FLOAT32, 4, 1, 0, 1);
  float first;
  std::memcpy(&first, buf.data(), 4);
  CHECK(std::bit_cast<uint32_t>(first) == 0x3ec2c3dfu);
}

TEST_CASE("narrow float inputs are the float32 normals rounded by dtype.h's conversions") {
  const int64_t n = 300'000;
  const auto f32 = Fill(v1::DTYPE_FLOAT32, n, 21, 2, 1);
  const auto bf16 = Fill(v1::DTYPE_BFLOAT16, n, 21, 2, 1);
  const auto f16 = Fill(v1::DTYPE_FLOAT16, n, 21, 2, 1);
  const auto e4m3 = Fill(v1::DTYPE_FLOAT8_E4M3FN, n, 21, 2, 1);
  const auto e5m2 = Fill(v1::DTYPE_FLOAT8_E5M2, n, 21, 2, 1);
  const auto fp4 = Fill(v1::DTYPE_FLOAT4_E2M1, n, 21, 2, 1);
  const auto f64 = Fill(v1::DTYPE_FLOAT64, n, 21, 2, 1);
  int64_t mismatches = 0;
  for (int64_t i = 0; i < n; ++i) {
    float z;
    std::memcpy(&z, f32.data() + 4 * i, 4);
    uint16_t h;
    std::memcpy(&h, bf16.data() + 2 * i, 2);
    mismatches += h != FloatToBf16(z);
    std::memcpy(&h, f16.data() + 2 * i, 2);
    mismatches += h != FloatToF16(z);
    const float clamped = std::clamp(z, -2.0f, 2.0f);
    mismatches += e4m3[i] != FloatToFp8E4m3(clamped);
    mismatches += e5m2[i] != FloatToFp8E5m2(clamped);
    const uint8_t nibble = (i % 2 == 0) ? (fp4[i / 2] & 0xf) : (fp4[i / 2] >> 4);
    mismatches += nibble != FloatToFp4E2m1(z);
    mismatches += LoadAsDouble(v1::DTYPE_FLOAT64, f64.data(), i) != static_cast<double>(z);
  }
  CHECK(mismatches == 0);
}

TEST_CASE("FillRandomSpan gives exactly the elements FillRandom writes there") {
  for (v1::DType t : {v1::DTYPE_FLOAT32, v1::DTYPE_FLOAT64, v1::DTYPE_BFLOAT16,
                      v1::DTYPE_FLOAT16, v1::DTYPE_FLOAT8_E4M3FN, v1::DTYPE_FLOAT8_E5M2,
                      v1::DTYPE_FLOAT4_E2M1, v1::DTYPE_INT8, v1::DTYPE_INT16, v1::DTYPE_INT32,
                      v1::DTYPE_INT64, v1::DTYPE_BOOL}) {
    INFO(DTypeName(t));
    const int64_t numel = 10'001;
    const auto whole = Fill(t, numel, 99, 4, 1);
    // On and off Philox block and batch boundaries, single elements, and the tail.
    for (auto [first, count] : std::vector<std::pair<int64_t, int64_t>>{
             {0, 1}, {0, 64}, {2, 2}, {6, 1}, {64, 130}, {4094, 7}, {9998, 3}, {10000, 1}}) {
      INFO("first " << first << ", count " << count);
      std::vector<uint8_t> span(DTypeStorageBytes(t, count), 0xa5);
      FillRandomSpan(t, first, count, 99, 4, span.data());
      const int64_t at = DTypeStorageBytes(t, first);
      std::vector<uint8_t> expected(whole.begin() + at, whole.begin() + at + span.size());
      if (t == v1::DTYPE_FLOAT4_E2M1 && count % 2 == 1 && first + count < numel) {
        expected.back() &= 0x0f;  // the span's last byte holds one element; its high nibble is 0
      }
      CHECK(span == expected);
    }
  }
}

TEST_CASE("float inputs are standard normal") {
  const int64_t n = 1 << 20;
  const auto buf = Fill(v1::DTYPE_FLOAT32, n, 7, 0, 0);
  double sum = 0, sum_sq = 0;
  for (int64_t i = 0; i < n; ++i) {
    const double v = LoadAsDouble(v1::DTYPE_FLOAT32, buf.data(), i);
    sum += v;
    sum_sq += v * v;
  }
  const double mean = sum / n;
  CHECK(std::fabs(mean) < 0.01);
  CHECK(std::fabs(std::sqrt(sum_sq / n - mean * mean) - 1.0) < 0.01);
}

TEST_CASE("fp8 inputs are clamped to +-2 and reach the bounds") {
  for (v1::DType t : {v1::DTYPE_FLOAT8_E4M3FN, v1::DTYPE_FLOAT8_E5M2}) {
    const int64_t n = 100'000;
    const auto buf = Fill(t, n, 9, 1, 1);
    double lo = 0, hi = 0;
    for (int64_t i = 0; i < n; ++i) {
      const double v = LoadAsDouble(t, buf.data(), i);
      lo = std::min(lo, v);
      hi = std::max(hi, v);
    }
    CHECK(lo == -2.0);
    CHECK(hi == 2.0);
  }
}

TEST_CASE("integer and bool inputs cover exactly their flashinfer-bench ranges") {
  struct Case {
    v1::DType t;
    double lo, hi;
  };
  for (const Case& c : {Case{v1::DTYPE_INT8, -128, 127}, Case{v1::DTYPE_INT16, -1024, 1023},
                        Case{v1::DTYPE_INT32, -1024, 1023}, Case{v1::DTYPE_INT64, -1024, 1023},
                        Case{v1::DTYPE_BOOL, 0, 1}}) {
    INFO(DTypeName(c.t));
    const int64_t n = 200'000;
    const auto buf = Fill(c.t, n, 11, 0, 1);
    double lo = 1e9, hi = -1e9;
    for (int64_t i = 0; i < n; ++i) {
      const double v = LoadAsDouble(c.t, buf.data(), i);
      lo = std::min(lo, v);
      hi = std::max(hi, v);
    }
    CHECK(lo == c.lo);
    CHECK(hi == c.hi);
  }
}

TEST_CASE("an odd-length fp4 input leaves the spare nibble zero") {
  const auto buf = Fill(v1::DTYPE_FLOAT4_E2M1, 5, 3, 0, 1);
  REQUIRE(buf.size() == 3);
  CHECK((buf[2] & 0xf0) == 0);
}

TEST_CASE("scalar inputs take the workload's value in the spec's dtype") {
  float f = 0;
  REQUIRE(GenerateInput(Spec("sm_scale", v1::DTYPE_FLOAT32), Scalar("0.08838834764831843"), {}, 0,
                        0, "", &f)
              .ok());
  CHECK(f == 0.08838834764831843f);
  int32_t i = 0;
  REQUIRE(GenerateInput(Spec("page", v1::DTYPE_INT32), Scalar("128"), {}, 0, 0, "", &i).ok());
  CHECK(i == 128);
  int64_t big = 0;
  REQUIRE(
      GenerateInput(Spec("n", v1::DTYPE_INT64), Scalar("1152921504606846977"), {}, 0, 0, "", &big)
          .ok());
  CHECK(big == 1152921504606846977LL);
  uint8_t b = 7;
  REQUIRE(GenerateInput(Spec("causal", v1::DTYPE_BOOL), Scalar("true"), {}, 0, 0, "", &b).ok());
  CHECK(b == 1);
  uint16_t h = 0;
  REQUIRE(GenerateInput(Spec("eps", v1::DTYPE_BFLOAT16), Scalar("2.5"), {}, 0, 0, "", &h).ok());
  CHECK(Bf16ToFloat(h) == 2.5f);
}

TEST_CASE("bad scalar values are rejected naming the input") {
  int32_t i = 0;
  auto s = GenerateInput(Spec("page", v1::DTYPE_INT32), Scalar("2.5"), {}, 0, 0, "", &i);
  CHECK(s.code() == absl::StatusCode::kInvalidArgument);
  CHECK(std::string(s.message()).find("page") != std::string::npos);
  s = GenerateInput(Spec("page", v1::DTYPE_INT32), Scalar("\"x\""), {}, 0, 0, "", &i);
  CHECK(s.code() == absl::StatusCode::kInvalidArgument);
  s = GenerateInput(Spec("page", v1::DTYPE_INT32), Scalar("{not json"), {}, 0, 0, "", &i);
  CHECK(s.code() == absl::StatusCode::kInvalidArgument);
}

TEST_CASE("GenerateInput fills a random tensor exactly as FillRandom does") {
  v1::WorkloadInput random;
  random.set_kind(v1::WorkloadInput::RANDOM);
  std::vector<uint8_t> buf(2 * 3 * 2);
  REQUIRE(GenerateInput(Spec("x", v1::DTYPE_BFLOAT16), random, {2, 3}, 77, 4, "", buf.data()).ok());
  CHECK(buf == Fill(v1::DTYPE_BFLOAT16, 6, 77, 4, 1));
}

}  // namespace
}  // namespace kiln
