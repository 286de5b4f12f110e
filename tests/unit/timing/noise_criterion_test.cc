// nvbench's stdrel stopping criterion (noise_criterion.h).
#include "harness/timing/noise_criterion.h"

#include <catch2/catch.hpp>

namespace kiln {
namespace {

TEST_CASE("quiet samples finish once the minimum measured time has passed") {
  NoiseCriterion c(0.005, 500);
  int n = 0;
  while (n < 10'000) {
    c.AddSample(1.0);
    ++n;
    if (c.IsFinished()) break;
  }
  CHECK(n == 501);  // total must exceed 500 ms
  CHECK(c.noise() == 0);
  CHECK_FALSE(c.converged());
}

TEST_CASE("noise above the target does not finish before the noise settles") {
  NoiseCriterion c(0.005, 500);
  for (int i = 0; i < 64; ++i) {
    c.AddSample(i % 2 == 0 ? 10.0 : 30.0);
    CHECK_FALSE(c.IsFinished());  // too few noise values to judge convergence
  }
  CHECK(c.noise() > 0.4);
}

TEST_CASE("steady noise above the target finishes by convergence") {
  NoiseCriterion c(0.005, 500);
  int n = 0;
  while (n < 100'000) {
    c.AddSample(n % 2 == 0 ? 0.5 : 1.5);
    ++n;
    if (c.IsFinished()) break;
  }
  CHECK(n < 100'000);
  CHECK(n % 16 == 0);
  CHECK(c.converged());
  CHECK(c.total_ms() > 500);
  CHECK(c.noise() == Approx(0.5).epsilon(0.05));
}

}  // namespace
}  // namespace kiln
