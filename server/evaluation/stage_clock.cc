#include "server/evaluation/stage_clock.h"

namespace kiln {

void StageClock::Enter(v1::RunState stage, absl::Time now) {
  const double elapsed = absl::ToDoubleSeconds(now - since_);
  if (current_ == v1::RUN_VERIFYING) verify_s_ += elapsed;
  if (current_ == v1::RUN_TIMING) timing_s_ += elapsed;
  current_ = stage;
  since_ = now;
}

}  // namespace kiln
