#include "controller/promotion.h"

#include <catch2/catch.hpp>

namespace kiln::controller {
namespace {

Json Summary(double latency, double noise = 0.01, const std::string& status = "PASSED") {
  return Json{{"status", status},
              {"mean_latency_ms", latency},
              {"relative_noise", noise},
              {"workloads", Json::array({{{"status", status}, {"latency_ms", latency}}})}};
}

PromotionSpec Rule(double min_improvement = 0.02) {
  PromotionSpec r;
  r.min_improvement = min_improvement;
  return r;
}

TEST_CASE("a faster candidate confirmed by its repeat is promoted") {
  Json first = Summary(0.50), repeat = Summary(0.52);
  PromotionDecision d = DecidePromotion(first, &repeat, 1.0, 0.01, Rule());
  CHECK(d.promote);
  CHECK(d.latency_ms == Approx(0.51));
}

TEST_CASE("a candidate that failed any workload is never promoted") {
  Json first = Summary(0.1);
  first["workloads"].push_back({{"status", "INCORRECT_NUMERICAL"}});
  CHECK_FALSE(PreliminaryDecision(first, 1.0, 0, Rule()).promote);
  Json failed = Summary(0.1, 0.01, "RUNTIME_ERROR");
  CHECK_FALSE(PreliminaryDecision(failed, 1.0, 0, Rule()).promote);
}

TEST_CASE("a gain within the measured noise is not a promotion") {
  // 5% faster, but the incumbent's noise is 8%.
  CHECK_FALSE(PreliminaryDecision(Summary(0.95), 1.0, 0.08, Rule()).promote);
  // 5% faster, but the candidate's own trials spread 10%.
  CHECK_FALSE(PreliminaryDecision(Summary(0.95, 0.10), 1.0, 0.01, Rule()).promote);
  // The rule's minimum applies even with no noise measured.
  CHECK_FALSE(PreliminaryDecision(Summary(0.99, 0.0), 1.0, 0.0, Rule(0.02)).promote);
  CHECK(PreliminaryDecision(Summary(0.95, 0.0), 1.0, 0.0, Rule(0.02)).promote);
}

TEST_CASE("a repeat that disagrees with the first run blocks the promotion") {
  Json first = Summary(0.5);
  Json slow_repeat = Summary(1.1);
  CHECK_FALSE(DecidePromotion(first, &slow_repeat, 1.0, 0.01, Rule()).promote);
  Json failing_repeat = Summary(0.5, 0.01, "INCORRECT_NUMERICAL");
  CHECK_FALSE(DecidePromotion(first, &failing_repeat, 1.0, 0.01, Rule()).promote);
  // The spread between the two runs counts as noise: 0.80 vs 0.96 spreads 18%, gain 12%.
  Json far_repeat = Summary(0.96);
  Json near_first = Summary(0.80);
  CHECK_FALSE(DecidePromotion(near_first, &far_repeat, 1.0, 0.01, Rule()).promote);
}

TEST_CASE("AllPassed needs a timed, passing summary") {
  CHECK(AllPassed(Summary(1.0)));
  CHECK_FALSE(AllPassed(Summary(0.0)));
  CHECK_FALSE(AllPassed(Json()));
  CHECK_FALSE(AllPassed(Json{{"status", "PASSED"}, {"workloads", Json::array()}}));
}

}  // namespace
}  // namespace kiln::controller
