// The noise of a speedup (harness/model/speedup_interval.h) and the one wording of an unknown
// definition (harness/model/unknown_definition.h).
#include <catch2/catch.hpp>

#include "harness/model/speedup_interval.h"
#include "harness/model/unknown_definition.h"

namespace kiln {
namespace {

v1::TimingResult Timing(double low, double high, double min_ms = 0) {
  v1::TimingResult t;
  t.set_ci95_low_ms(low);
  t.set_ci95_high_ms(high);
  t.set_min_ms(min_ms);
  return t;
}

// One PASSED trace: latency and reference latency with their intervals.
v1::Trace Passed(double latency, double lat_lo, double lat_hi, double ref, double ref_lo,
                 double ref_hi) {
  v1::Trace t;
  t.mutable_evaluation()->set_status(v1::PASSED);
  t.mutable_evaluation()->mutable_performance()->set_latency_ms(latency);
  t.mutable_evaluation()->mutable_performance()->set_reference_latency_ms(ref);
  *t.mutable_kiln()->mutable_timing() = Timing(lat_lo, lat_hi);
  *t.mutable_kiln()->mutable_reference_timing() = Timing(ref_lo, ref_hi);
  return t;
}

TEST_CASE("a latency interval holds the latency, never reaches below the fastest sample") {
  Interval i = LatencyInterval(Timing(0.9, 1.1), 1.0);
  CHECK(i.low == Approx(0.9));
  CHECK(i.value == Approx(1.0));
  CHECK(i.high == Approx(1.1));
  // The mode's statistic (a median of medians) may lie outside the mean's interval.
  i = LatencyInterval(Timing(1.02, 1.1), 1.0);
  CHECK(i.low == Approx(1.0));
  // A heavy tail puts the t interval below zero; the fastest sample bounds it.
  i = LatencyInterval(Timing(-0.5, 2.5, 0.8), 1.0);
  CHECK(i.low == Approx(0.8));
  // No interval recorded (older traces): the point.
  i = LatencyInterval(v1::TimingResult(), 2.0);
  CHECK(i.low == 2.0);
  CHECK(i.high == 2.0);
}

TEST_CASE("a speedup interval divides the slowest baseline by the fastest candidate and back") {
  const Interval s = SpeedupInterval({1.8, 2.0, 2.2}, {0.9, 1.0, 1.1});
  CHECK(s.value == Approx(2.0));
  CHECK(s.low == Approx(1.8 / 1.1));
  CHECK(s.high == Approx(2.2 / 0.9));
  CHECK_FALSE(CrossesOne(s));
  CHECK(CrossesOne(SpeedupInterval({0.95, 1.0, 1.05}, {0.9, 0.97, 1.0})));
  CHECK_FALSE(CrossesOne(SpeedupInterval({1.0, 1.0, 1.0}, {1.0, 1.0, 1.0})));  // exactly 1x
  const Interval none = SpeedupInterval({0, 0, 0}, {0.9, 1.0, 1.1});
  CHECK(none.value == 0);
}

TEST_CASE("a speedup is a tie when its interval widened by the noise floor holds 1x") {
  // Exactly 1x, crossing 1x: ties at any floor, 0 included.
  CHECK(WithinNoise({1.0, 1.0, 1.0}, 0));
  CHECK(WithinNoise({0.95, 1.01, 1.07}, 0));
  CHECK(WithinNoise({0.95, 1.01, 1.07}, 0.02));
  // Above 1x by less than the floor: a tie at 2 %, a win at 1 % and at 0.
  const Interval small_lead{1.013, 1.015, 1.017};
  CHECK(WithinNoise(small_lead, 0.02));
  CHECK_FALSE(WithinNoise(small_lead, 0.01));
  CHECK_FALSE(WithinNoise(small_lead, 0));
  // Below 1x: the widened interval reaches up to high * (1 + floor).
  const Interval small_loss{0.982, 0.984, 0.986};  // 0.986 * 1.02 = 1.0057
  CHECK(WithinNoise(small_loss, 0.02));
  CHECK_FALSE(WithinNoise(small_loss, 0.01));      // 0.986 * 1.01 = 0.9959
  // Clear wins and losses stay what they are.
  CHECK_FALSE(WithinNoise({1.10, 1.12, 1.14}, kDefaultNoiseFloor));
  CHECK_FALSE(WithinNoise({0.50, 0.52, 0.54}, kDefaultNoiseFloor));
  // Unknown speedups (value 0) and floors that are no floor are never ties.
  CHECK_FALSE(WithinNoise({0, 0, 0}, kDefaultNoiseFloor));
  CHECK_FALSE(WithinNoise({1.0, 1.0, 1.0}, -0.01));
  CHECK_FALSE(WithinNoise({1.0, 1.0, 1.0}, 1.0));
  CHECK(ValidNoiseFloor(kDefaultNoiseFloor));
  CHECK_FALSE(ValidNoiseFloor(std::nan("")));
}

TEST_CASE("a run's score is the mean speedup with a failed workload counting 0, with noise") {
  v1::Run run;
  *run.add_traces() = Passed(1.0, 0.9, 1.1, 2.0, 1.9, 2.1);
  v1::Trace failed;
  failed.mutable_evaluation()->set_status(v1::INCORRECT_NUMERICAL);
  *run.add_traces() = failed;
  const RunScore score = ScoreRun(run);
  CHECK(score.workloads == 2);
  CHECK(score.passed == 1);
  CHECK(score.score.value == Approx(1.0));  // (2 + 0) / 2
  CHECK(score.score.low == Approx(1.9 / 1.1 / 2));
  CHECK(score.score.high == Approx(2.1 / 0.9 / 2));
  CHECK(score.missing_reference == 0);
}

TEST_CASE("an unknown definition is named with the registered ones") {
  CHECK(UnknownDefinitionMessage("rmsnorm_h4069", {"gemm", "rmsnorm_h4096"}) ==
        "unknown definition 'rmsnorm_h4069' (registered on this node: gemm, rmsnorm_h4096)");
  CHECK(UnknownDefinitionMessage("x", {}) ==
        "unknown definition 'x' (no definition is registered on this node)");
  std::vector<std::string> many;
  for (int i = 0; i < 25; ++i) many.push_back("d" + std::to_string(i));
  CHECK_THAT(UnknownDefinitionMessage("x", many), Catch::EndsWith("d19, and 5 more (kiln defs list))"));
}

}  // namespace
}  // namespace kiln
