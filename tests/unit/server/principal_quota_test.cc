// Per-principal limits on unfinished runs and on runs per hour.
#include "access/principal_quota.h"

#include <catch2/catch.hpp>

namespace kiln {
namespace {

struct FakeClock {
  absl::Time now = absl::FromUnixSeconds(1700000000);
  PrincipalQuota::Clock fn() {
    return [this] { return now; };
  }
};

const Principal kRed{"red", Role::kTeam};
const Principal kBlue{"blue", Role::kTeam};

TEST_CASE("a principal at its queued limit is refused until one of its runs finishes") {
  FakeClock clock;
  PrincipalQuota quota({/*max_queued=*/2, /*max_runs_per_hour=*/0}, clock.fn());
  auto a = quota.Admit(kRed);
  auto b = quota.Admit(kRed);
  REQUIRE(a.ok());
  REQUIRE(b.ok());
  CHECK(quota.queued("red") == 2);
  auto c = quota.Admit(kRed);
  REQUIRE_FALSE(c.ok());
  CHECK(c.status().code() == absl::StatusCode::kResourceExhausted);
  CHECK_THAT(std::string(c.status().message()), Catch::Contains("--max-queued-per-principal"));
  CHECK(quota.Admit(kBlue).ok());  // other principals are not affected
  a->reset();
  CHECK(quota.queued("red") == 1);
  CHECK(quota.Admit(kRed).ok());
}

TEST_CASE("runs per hour are counted over a sliding hour") {
  FakeClock clock;
  PrincipalQuota quota({0, /*max_runs_per_hour=*/2}, clock.fn());
  REQUIRE(quota.Admit(kRed).ok());  // holds released at once: only the hourly count matters
  clock.now += absl::Minutes(30);
  REQUIRE(quota.Admit(kRed).ok());
  auto third = quota.Admit(kRed);
  REQUIRE_FALSE(third.ok());
  CHECK(third.status().code() == absl::StatusCode::kResourceExhausted);
  CHECK_THAT(std::string(third.status().message()), Catch::Contains("--max-runs-per-hour"));
  CHECK_THAT(std::string(third.status().message()), Catch::Contains("1800 s"));
  clock.now += absl::Minutes(30);  // the first admission is an hour old
  CHECK(quota.Admit(kRed).ok());
}

TEST_CASE("operators are not limited") {
  FakeClock clock;
  PrincipalQuota quota({1, 1}, clock.fn());
  const Principal ops{"ops", Role::kOperator};
  std::vector<std::shared_ptr<void>> holds;
  for (int i = 0; i < 5; ++i) {
    auto hold = quota.Admit(ops);
    REQUIRE(hold.ok());
    holds.push_back(*hold);
  }
  CHECK(quota.queued("ops") == 0);
}

}  // namespace
}  // namespace kiln
