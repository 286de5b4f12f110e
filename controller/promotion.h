// The promotion rule (DESIGN §8): a candidate replaces the incumbent only when every workload
// PASSED, and its mean latency beats the incumbent's by more than the measured noise, confirmed
// by a repeat evaluation in the same round. The noise a gain must beat is the largest of the
// rule's minimum improvement, the trial-to-trial spread of either run, the spread between the
// run and its repeat, and the incumbent's own noise.
#ifndef KILN_CONTROLLER_PROMOTION_H_
#define KILN_CONTROLLER_PROMOTION_H_

#include <string>

#include "controller/evidence.h"
#include "controller/spec/campaign_spec.h"

namespace kiln::controller {

struct PromotionDecision {
  bool promote = false;
  double latency_ms = 0;  // mean of the run and its repeat
  double noise = 0;       // relative
  std::string reason;     // why not, or the gain
};

// Whether `first` (a SummarizeRun) deserves a confirmation run: it passed everywhere and beat
// the incumbent by more than the noise known so far.
PromotionDecision PreliminaryDecision(const Json& first, double incumbent_latency_ms,
                                      double incumbent_noise, const PromotionSpec& rule);

// The final decision; `confirm` may be null only when rule.confirm is false.
PromotionDecision DecidePromotion(const Json& first, const Json* confirm,
                                  double incumbent_latency_ms, double incumbent_noise,
                                  const PromotionSpec& rule);

// True when every workload of the summary PASSED and at least one was timed.
bool AllPassed(const Json& summary);

}  // namespace kiln::controller

#endif  // KILN_CONTROLLER_PROMOTION_H_
