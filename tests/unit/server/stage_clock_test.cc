#include "server/evaluation/stage_clock.h"

#include <catch2/catch.hpp>

namespace kiln {
namespace {

TEST_CASE("stage time is booked to the stage that was current") {
  StageClock clock;
  const absl::Time t0 = absl::UnixEpoch();
  clock.Enter(v1::RUN_VERIFYING, t0);
  clock.Enter(v1::RUN_TIMING, t0 + absl::Seconds(2));
  clock.Enter(v1::RUN_STATE_UNSPECIFIED, t0 + absl::Seconds(5));
  // Stopped: the gap until the next worker is nobody's.
  clock.Enter(v1::RUN_VERIFYING, t0 + absl::Seconds(100));
  clock.Enter(v1::RUN_STATE_UNSPECIFIED, t0 + absl::Seconds(101));
  CHECK(clock.verify_s() == 3.0);
  CHECK(clock.timing_s() == 3.0);
}

}  // namespace
}  // namespace kiln
