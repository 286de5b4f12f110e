// integrity.degenerate_definition's check: whether an all-zero or a constant output passes a
// reference at its tolerances, decided chunk by chunk as a comparison of the whole tensor would.
#include "harness/verify/degenerate_output.h"

#include <catch2/catch.hpp>
#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "harness/verify/comparator.h"

namespace kiln {
namespace {

// The oracle: the whole trivial output materialized and compared at once.
bool WholePasses(const std::vector<float>& expected, float value, const Tolerances& tol) {
  std::vector<float> trivial(expected.size(), value);
  return CompareTensors(v1::DTYPE_FLOAT32, trivial.data(), expected.data(),
                        static_cast<int64_t>(expected.size()), tol)
      .passed;
}

std::string Trivial(const std::vector<float>& expected, const Tolerances& tol, int threads = 0) {
  return TrivialOutputThatPasses(v1::DTYPE_FLOAT32, expected.data(),
                                 static_cast<int64_t>(expected.size()), tol, threads);
}

TEST_CASE("an all-zero or flat reference is found, a varied one is not") {
  Tolerances tol;
  CHECK(Trivial(std::vector<float>(1000, 0.0f), tol) == "all-zero");
  CHECK(Trivial(std::vector<float>(1000, 5.0f), tol) == "constant 5");
  std::vector<float> varied(1000);
  for (size_t i = 0; i < varied.size(); ++i) varied[i] = static_cast<float>(i % 17) - 8.0f;
  CHECK(Trivial(varied, tol).empty());
  // A NaN of the reference must be reproduced: neither output does.
  std::vector<float> with_nan(1000, 0.0f);
  with_nan[500] = std::numeric_limits<float>::quiet_NaN();
  CHECK(Trivial(with_nan, tol).empty());
  CHECK(Trivial({}, tol).empty());
}

TEST_CASE("over several chunks the finding is the whole comparison's, at every matched ratio") {
  // More than one chunk of 4 Mi elements, and a part chunk after them.
  const size_t n = (size_t{1} << 23) + 12345;
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> big(1.0f, 2.0f);
  for (double share_nonzero : {0.0005, 0.3, 0.5}) {
    std::vector<float> expected(n, 0.0f);
    for (size_t i = 0; i < n; ++i) {
      if (std::generate_canonical<double, 32>(rng) < share_nonzero) expected[i] = big(rng);
    }
    for (double ratio : {1.0, 0.9995, 0.7, 0.5}) {
      Tolerances tol;
      tol.required_matched_ratio = ratio;
      INFO("share " << share_nonzero << ", required ratio " << ratio);
      const std::string finding = Trivial(expected, tol, /*threads=*/3);
      CHECK((finding == "all-zero") == WholePasses(expected, 0.0f, tol));
      CHECK(Trivial(expected, tol, 1) == finding);
    }
  }
  // A flat reference with a few outliers past the last chunk boundary.
  std::vector<float> flat(n, 3.0f);
  for (size_t i = n - 10; i < n; ++i) flat[i] = 30.0f;
  Tolerances strict;
  CHECK(Trivial(flat, strict).empty());
  CHECK_FALSE(WholePasses(flat, 3.0f, strict));
  Tolerances loose;
  loose.required_matched_ratio = 0.999;
  const std::string finding = Trivial(flat, loose);
  REQUIRE(finding.rfind("constant ", 0) == 0);
  const float mean = std::stof(finding.substr(9));
  CHECK(WholePasses(flat, mean, loose));
}

}  // namespace
}  // namespace kiln
