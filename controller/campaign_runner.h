// Runs one campaign to its end: the baseline, then rounds of one agent request each (functional
// passes until a candidate is correct, then optimisation passes with one direction chosen from
// the evidence), budgets checked before every request, a supervisor that switches agent or stops
// on plateau, repeated failures, duplicates or an exhausted agent, and promotion by the rule in
// promotion.h. Every step is recorded before the next, so a runner started on a campaign that a
// killed controller left "running" continues where it stopped.
#ifndef KILN_CONTROLLER_CAMPAIGN_RUNNER_H_
#define KILN_CONTROLLER_CAMPAIGN_RUNNER_H_

#include <atomic>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "controller/agents/agent.h"
#include "controller/campaign_archive.h"
#include "controller/candidate_evaluator.h"
#include "controller/harness_pool.h"
#include "controller/loop_state.h"
#include "controller/spec/campaign_spec.h"

namespace kiln::controller {

// Called after every event is archived (the service wakes its watchers).
using EventListener = std::function<void(const std::string& campaign_id)>;

class CampaignRunner {
 public:
  CampaignRunner(CampaignArchive& archive, HarnessPool& pool, CampaignSpec spec, CampaignRow row,
                 std::string workspace_root, EventListener listener);

  // Blocks until the campaign ends, is cancelled, or Stop() is called.
  void Run();
  // Ends the campaign as cancelled (at the next check; in-flight runs are cancelled).
  void Cancel() { cancelled_.store(true), stop_.store(true); }
  // The controller is shutting down: return soon, leaving the campaign "running" in the archive.
  void Stop() { stop_.store(true); }

 private:
  void Event(const std::string& kind, const std::string& message);
  bool Save();
  void End(const std::string& status, const std::string& reason);
  std::string BudgetExhausted();
  bool RegisterDefinition();
  bool Baseline();
  bool NextRound();
  // The request of the round that starts: the pass's direction or feedback, evidence for TASK.md.
  AgentRequest BuildRequest(std::string* evidence);
  // Adds to the incumbent's summary the profile of its slowest workload (spec `profile`), once
  // per incumbent; a profile that cannot be taken leaves a "profile_note" saying why.
  void ProfileIncumbent();
  // Records the answer's new candidates; returns how many, counting duplicates in `duplicates`.
  int RecordCandidates(const AgentRequest& request, const AgentResponse& response, int* duplicates);
  // Evaluates the request's undecided candidates and decides the round. False when stopped.
  bool ProcessRequest(int64_t request_id, bool exhausted, bool only_duplicates);
  // The first evaluation of every candidate of a request, `parallel` at a time.
  std::vector<absl::StatusOr<Json>> EvaluateAll(const std::vector<CandidateRow>& candidates);
  // Confirms and promotes the fastest passing candidate, or not: "promoted" | "rejected";
  // nullopt when stopped meanwhile.
  std::optional<std::string> DecideRound(const std::vector<std::pair<CandidateRow, Json>>& passing);
  void Promote(const CandidateRow& candidate, const Json& summary, double latency, double noise);
  // Switches agent or ends the campaign when the supervisor says so. False when it ended.
  bool Supervise(bool exhausted, bool only_duplicates);

  CampaignArchive& archive_;
  HarnessPool& pool_;
  CampaignSpec spec_;
  CampaignRow row_;
  LoopState state_;
  std::string workspace_root_;
  EventListener listener_;
  std::vector<std::unique_ptr<Agent>> agents_;
  std::atomic<bool> stop_{false};
  std::atomic<bool> cancelled_{false};
  CandidateEvaluator evaluator_;
};

}  // namespace kiln::controller

#endif  // KILN_CONTROLLER_CAMPAIGN_RUNNER_H_
