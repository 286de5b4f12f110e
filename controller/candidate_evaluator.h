// Evaluates one candidate of a campaign on the harness pool, exactly once per (hash, purpose):
// a recorded result is reused, a run admitted before a controller restart is followed to its end
// on the harness that has it, anything else is evaluated afresh. The harness and run id are
// recorded as soon as a harness admits the run; every attempt, and how it ended, is recorded in
// evaluation_attempts, and an attempt given up is told in the campaign's events.
#ifndef KILN_CONTROLLER_CANDIDATE_EVALUATOR_H_
#define KILN_CONTROLLER_CANDIDATE_EVALUATOR_H_

#include <atomic>
#include <functional>
#include <string>

#include "absl/status/statusor.h"
#include "controller/campaign_archive.h"
#include "controller/evidence.h"
#include "controller/harness_pool.h"
#include "controller/spec/campaign_spec.h"

namespace kiln::controller {

// Adds an event (kind, message) to the campaign's log.
using EventSink = std::function<void(const std::string& kind, const std::string& message)>;

class CandidateEvaluator {
 public:
  CandidateEvaluator(CampaignArchive& archive, HarnessPool& pool, const CampaignSpec& spec,
                     std::string campaign_id, const std::atomic<bool>& stop, EventSink event)
      : archive_(archive),
        pool_(pool),
        spec_(spec),
        id_(std::move(campaign_id)),
        stop_(stop),
        event_(std::move(event)) {}

  // The SummarizeRun of the evaluation (`purpose`: first | confirm | baseline). CANCELLED when
  // stopped; other errors when no harness could run it (recorded as a failed evaluation).
  absl::StatusOr<Json> Evaluate(const std::string& hash, const v1::Solution& solution,
                                const std::string& purpose, int round);

  // A recorded evaluation that is final (never evaluated again).
  static bool Done(const EvaluationRow& row) {
    return row.state == "done" || row.state == "failed";
  }

 private:
  absl::StatusOr<HarnessRun> Run(const v1::Solution& solution, EvaluationRow* row);
  Json Summarize(const HarnessRun& run);

  CampaignArchive& archive_;
  HarnessPool& pool_;
  const CampaignSpec& spec_;
  std::string id_;
  const std::atomic<bool>& stop_;
  EventSink event_;
};

}  // namespace kiln::controller

#endif  // KILN_CONTROLLER_CANDIDATE_EVALUATOR_H_
