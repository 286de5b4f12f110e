// The flashinfer-bench correctness rule (comparator.h).
#include "harness/verify/comparator.h"

#include <catch2/catch.hpp>
#include <cmath>
#include <limits>
#include <vector>

#include "harness/model/dtype.h"

namespace kiln {
namespace {

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
constexpr float kInf = std::numeric_limits<float>::infinity();

Comparison Compare(const std::vector<float>& got, const std::vector<float>& want,
                   Tolerances tol = {}) {
  REQUIRE(got.size() == want.size());
  return CompareTensors(v1::DTYPE_FLOAT32, got.data(), want.data(),
                        static_cast<int64_t>(got.size()), tol);
}

TEST_CASE("identical tensors pass") {
  const auto c = Compare({1, 2, 3, -4}, {1, 2, 3, -4});
  CHECK(c.passed);
  CHECK(c.elements == 4);
  CHECK(c.mismatched == 0);
  CHECK(c.max_abs_error == 0);
  CHECK(c.summary.rfind("PASS", 0) == 0);
}

TEST_CASE("an element fails only when both the absolute and the relative error are too large") {
  // 1000 vs 1005: abs 5 > atol, rel 0.005 <= rtol -> ok.
  CHECK(Compare({1005}, {1000}).passed);
  // 0.001 vs 0.009: rel huge, abs 0.008 <= atol -> ok.
  CHECK(Compare({0.009f}, {0.001f}).passed);
  // 1.0 vs 1.5: abs 0.5, rel 0.33 -> fails.
  const auto c = Compare({1, 1.5f, 3}, {1, 1, 3});
  CHECK_FALSE(c.passed);
  CHECK(c.mismatched == 1);
  CHECK(c.worst_index == 1);
  CHECK(c.worst_got == 1.5);
  CHECK(c.worst_expected == 1.0);
  CHECK(c.max_abs_error == Approx(0.5));
  CHECK(c.max_rel_error == Approx(0.5));
  CHECK(c.summary.find("1/3 elements off") != std::string::npos);
  CHECK(c.summary.find("[1]") != std::string::npos);
}

TEST_CASE("the required matched ratio allows a share of mismatches") {
  std::vector<float> want(20, 1.0f), got(20, 1.0f);
  got[3] = 2.0f;
  Tolerances tol;
  tol.required_matched_ratio = 0.9;
  CHECK(Compare(got, want, tol).passed);  // 19/20 = 0.95
  got[4] = 2.0f;
  CHECK(Compare(got, want, tol).passed);  // 18/20 = 0.9
  got[5] = 2.0f;
  const auto c = Compare(got, want, tol);  // 17/20 = 0.85
  CHECK_FALSE(c.passed);
  CHECK(c.mismatched == 3);
}

TEST_CASE("exactly the required ratio passes") {
  std::vector<float> want(10, 1.0f), got(10, 1.0f);
  got[0] = 5.0f;
  Tolerances tol;
  tol.required_matched_ratio = 0.9;
  CHECK(Compare(got, want, tol).passed);  // 9/10 == 0.9
}

TEST_CASE("a NaN or Inf in the candidate fails outright where the reference is finite") {
  Tolerances lenient;
  lenient.required_matched_ratio = 0.0;
  auto c = Compare({1, kNaN, 3}, {1, 2, 3}, lenient);
  CHECK_FALSE(c.passed);
  CHECK(c.non_finite == 1);
  CHECK(c.summary.find("NaN/Inf") != std::string::npos);
  c = Compare({kInf, 2}, {1, 2}, lenient);
  CHECK_FALSE(c.passed);
  CHECK(c.non_finite == 1);
}

TEST_CASE("non-finite reference values must be matched exactly") {
  CHECK(Compare({kNaN, kInf, -kInf, 1}, {kNaN, kInf, -kInf, 1}).passed);
  Tolerances lenient;
  lenient.required_matched_ratio = 0.0;
  CHECK_FALSE(Compare({0, 1}, {kNaN, 1}, lenient).passed);
  CHECK_FALSE(Compare({-kInf, 1}, {kInf, 1}, lenient).passed);
  CHECK_FALSE(Compare({1e30f, 1}, {kInf, 1}, lenient).passed);
}

TEST_CASE("narrow dtypes are compared on their decoded values") {
  std::vector<uint16_t> want = {FloatToBf16(1.0f), FloatToBf16(-2.0f)};
  std::vector<uint16_t> got = {FloatToBf16(1.0f), FloatToBf16(-2.5f)};
  auto c = CompareTensors(v1::DTYPE_BFLOAT16, got.data(), want.data(), 2, {});
  CHECK_FALSE(c.passed);
  CHECK(c.worst_index == 1);
  CHECK(c.max_abs_error == 0.5);
  c = CompareTensors(v1::DTYPE_BFLOAT16, want.data(), want.data(), 2, {});
  CHECK(c.passed);
  const int32_t ia[3] = {1, 2, 3}, ib[3] = {1, 2, 4};
  c = CompareTensors(v1::DTYPE_INT32, ia, ib, 3, {});
  CHECK_FALSE(c.passed);
  CHECK(c.mismatched == 1);
}

TEST_CASE("an empty tensor passes") {
  const auto c = CompareTensors(v1::DTYPE_FLOAT32, nullptr, nullptr, 0, {});
  CHECK(c.passed);
  CHECK(c.elements == 0);
}

TEST_CASE("tolerances come from the definition's extension or default to flashinfer-bench's") {
  v1::Definition def;
  Tolerances t = TolerancesFor(def);
  CHECK(t.atol == 1e-2);
  CHECK(t.rtol == 1e-2);
  CHECK(t.required_matched_ratio == 1.0);
  def.mutable_tolerance()->set_atol(1.0);
  def.mutable_tolerance()->set_rtol(0.3);
  def.mutable_tolerance()->set_required_matched_ratio(0.9);
  t = TolerancesFor(def);
  CHECK(t.atol == 1.0);
  CHECK(t.rtol == 0.3);
  CHECK(t.required_matched_ratio == 0.9);
}

}  // namespace
}  // namespace kiln

namespace kiln {
namespace {

TEST_CASE("a comparison split over threads finds what the serial one finds") {
  // 3.5 Mi elements: chunks of at least 1 Mi, so 3 threads take part.
  const int64_t n = (int64_t{7} << 20) / 2;
  std::vector<float> want(static_cast<size_t>(n)), got(static_cast<size_t>(n));
  uint32_t state = 12345;
  for (int64_t i = 0; i < n; ++i) {
    state = state * 1664525u + 1013904223u;
    want[i] = static_cast<float>(state >> 8) / static_cast<float>(1 << 24) - 0.5f;
    got[i] = want[i];
  }
  // Off elements in every chunk; the two largest errors are equal, the first must be reported.
  for (int64_t i : {int64_t{5}, int64_t{1} << 20, (int64_t{5} << 20) / 2, n - 1}) got[i] += 0.25f;
  want[100] = want[n - 7] = 0.5f;
  got[100] = got[n - 7] = 3.5f;
  got[n / 2] = std::numeric_limits<float>::quiet_NaN();
  Tolerances tol;
  tol.atol = 1e-3;
  tol.rtol = 1e-3;
  const Comparison serial = CompareTensors(v1::DTYPE_FLOAT32, got.data(), want.data(), n, tol, 1);
  for (int threads : {2, 3, 0}) {
    INFO("threads " << threads);
    const Comparison split =
        CompareTensors(v1::DTYPE_FLOAT32, got.data(), want.data(), n, tol, threads);
    CHECK(split.elements == n);
    CHECK(split.mismatched == serial.mismatched);
    CHECK(split.non_finite == serial.non_finite);
    CHECK(split.worst_index == 100);
    CHECK(split.worst_index == serial.worst_index);
    CHECK(split.max_abs_error == serial.max_abs_error);
    CHECK(split.max_rel_error == serial.max_rel_error);
    CHECK(split.passed == serial.passed);
    CHECK(split.summary == serial.summary);
  }
  CHECK(serial.mismatched == 7);
  CHECK(serial.non_finite == 1);
}

}  // namespace
}  // namespace kiln
