// Splits a run's device time between the verify and timing stages. The device slot reports each
// stage change (from the workers' status events); the time since the previous change is booked
// to the previous stage.
#ifndef KILN_SERVER_EVALUATION_STAGE_CLOCK_H_
#define KILN_SERVER_EVALUATION_STAGE_CLOCK_H_

#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "kiln/v1/types.pb.h"

namespace kiln {

class StageClock {
 public:
  // Books the time since the last call to the stage then current and makes `stage` current.
  // RUN_STATE_UNSPECIFIED stops the clock (nothing is booked until the next stage).
  void Enter(v1::RunState stage, absl::Time now = absl::Now());

  double verify_s() const { return verify_s_; }
  double timing_s() const { return timing_s_; }

 private:
  v1::RunState current_ = v1::RUN_STATE_UNSPECIFIED;
  absl::Time since_;
  double verify_s_ = 0;
  double timing_s_ = 0;
};

}  // namespace kiln

#endif  // KILN_SERVER_EVALUATION_STAGE_CLOCK_H_
