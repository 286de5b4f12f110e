// Summary statistics of timing samples (statistics.h).
#include "harness/timing/statistics.h"

#include <catch2/catch.hpp>
#include <cmath>
#include <vector>

namespace kiln {
namespace {

TEST_CASE("Summarize reports numpy-linear quantiles, sample stdev and a t-based 95% CI") {
  const SampleStats s = Summarize({5, 3, 1, 4, 2});
  CHECK(s.count == 5);
  CHECK(s.min == 1);
  CHECK(s.q1 == 2);
  CHECK(s.median == 3);
  CHECK(s.q3 == 4);
  CHECK(s.max == 5);
  CHECK(s.mean == 3);
  CHECK(s.stdev == Approx(std::sqrt(2.5)));
  const double half = 2.776 * std::sqrt(2.5) / std::sqrt(5.0);  // t(0.975, df 4)
  CHECK(s.ci95_low == Approx(3 - half));
  CHECK(s.ci95_high == Approx(3 + half));
}

TEST_CASE("quartiles interpolate between closest ranks") {
  const SampleStats s = Summarize({4, 1, 3, 2});
  CHECK(s.q1 == Approx(1.75));
  CHECK(s.median == Approx(2.5));
  CHECK(s.q3 == Approx(3.25));
}

TEST_CASE("an empty sample set summarizes to zeros and one sample has no spread") {
  const SampleStats empty = Summarize({});
  CHECK(empty.count == 0);
  CHECK(empty.mean == 0);
  CHECK(empty.ci95_high == 0);
  const SampleStats one = Summarize({2.5});
  CHECK(one.count == 1);
  CHECK(one.median == 2.5);
  CHECK(one.stdev == 0);
  CHECK(one.ci95_low == 2.5);
  CHECK(one.ci95_high == 2.5);
}

TEST_CASE("the CI of many samples uses the normal quantile") {
  std::vector<double> v;
  for (int i = 0; i < 10'000; ++i) v.push_back(i % 2 == 0 ? 1.0 : 3.0);
  const SampleStats s = Summarize(v);
  const double z = (s.ci95_high - s.mean) / (s.stdev / std::sqrt(10'000.0));
  CHECK(z > 1.96);
  CHECK(z < 1.963);
}

TEST_CASE("the CI widens continuously past the t table") {
  auto z_for = [](int n) {
    std::vector<double> v;
    for (int i = 0; i < n; ++i) v.push_back(i % 2 == 0 ? 1.0 : 2.0);
    const SampleStats s = Summarize(v);
    return (s.ci95_high - s.mean) / (s.stdev / std::sqrt(static_cast<double>(n)));
  };
  CHECK(z_for(31) == Approx(2.042));   // df 30
  CHECK(z_for(41) == Approx(2.021));   // df 40
  CHECK(z_for(121) == Approx(1.980));  // df 120
  CHECK(z_for(51) < z_for(41));
  CHECK(z_for(51) > z_for(61));
}

TEST_CASE("Median averages the middle pair of an even count") {
  CHECK(Median({3, 1, 2}) == 2);
  CHECK(Median({4, 1, 3, 2}) == 2.5);
  CHECK(Median({7}) == 7);
  CHECK(Median({}) == 0);
}

}  // namespace
}  // namespace kiln
