// The second half of a round: evaluate the agent's candidates, decide promotion, and let the
// supervisor switch agent or stop (see campaign_runner.h).
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "controller/campaign_runner.h"
#include "controller/promotion.h"
#include "harness/model/json_interop.h"

namespace kiln::controller {

std::vector<absl::StatusOr<Json>> CampaignRunner::EvaluateAll(
    const std::vector<CandidateRow>& candidates) {
  // Recorded evaluations are reused by the evaluator; the rest run `parallel` at a time.
  std::vector<absl::StatusOr<Json>> results(candidates.size(), absl::UnknownError("unset"));
  std::vector<std::thread> threads;
  for (size_t i = 0; i < candidates.size(); ++i) {
    threads.emplace_back([&, i] {
      const CandidateRow& c = candidates[i];
      absl::StatusOr<v1::Solution> solution = ParseSolutionJson(c.solution_json);
      if (!solution.ok()) {
        results[i] = solution.status();
        return;
      }
      results[i] = evaluator_.Evaluate(c.hash, *solution, "first", c.round);
    });
    if (static_cast<int>(threads.size()) >= spec_.parallel) {
      for (std::thread& t : threads) t.join();
      threads.clear();
    }
  }
  for (std::thread& t : threads) t.join();
  return results;
}

std::optional<std::string> CampaignRunner::DecideRound(
    const std::vector<std::pair<CandidateRow, Json>>& passing) {
  auto best = std::min_element(passing.begin(), passing.end(), [](const auto& a, const auto& b) {
    return a.second.value("mean_latency_ms", 0.0) < b.second.value("mean_latency_ms", 0.0);
  });
  if (state_.incumbent_summary.empty() ||
      state_.incumbent_summary.value("status", "") != "PASSED") {
    state_.incumbent_summary = best->second;  // evidence for the next direction
  }
  PromotionDecision d = PreliminaryDecision(best->second, state_.incumbent_latency_ms,
                                            state_.incumbent_noise, spec_.promotion);
  if (d.promote && spec_.promotion.confirm) {
    absl::StatusOr<v1::Solution> s = ParseSolutionJson(best->first.solution_json);
    absl::StatusOr<Json> repeat =
        s.ok() ? evaluator_.Evaluate(best->first.hash, *s, "confirm", state_.round)
               : absl::StatusOr<Json>(s.status());
    if (stop_.load()) return std::nullopt;
    Json confirm = repeat.ok() ? *repeat : Json{{"status", "UNAVAILABLE"}};
    d = DecidePromotion(best->second, &confirm, state_.incumbent_latency_ms, state_.incumbent_noise,
                        spec_.promotion);
  }
  if (d.promote) {
    Promote(best->first, best->second, d.latency_ms, d.noise);
    return std::string("promoted");
  }
  Event("rejected", absl::StrCat(best->first.hash.substr(0, 12), ": ", d.reason));
  return std::string("rejected");
}

bool CampaignRunner::ProcessRequest(int64_t request_id, bool exhausted, bool only_duplicates) {
  absl::StatusOr<std::vector<CandidateRow>> candidates = archive_.CandidatesOfRequest(request_id);
  if (!candidates.ok()) {
    End("failed", absl::StrCat("archive: ", candidates.status().message()));
    return false;
  }
  std::vector<absl::StatusOr<Json>> results = EvaluateAll(*candidates);
  if (stop_.load()) return false;

  std::vector<std::pair<CandidateRow, Json>> passing;
  int failed = 0;
  for (size_t i = 0; i < candidates->size(); ++i) {
    CandidateRow& c = (*candidates)[i];
    Json summary = results[i].ok() ? *results[i]
                                   : Json{{"status", "UNAVAILABLE"},
                                          {"reason", std::string(results[i].status().message())},
                                          {"workloads", Json::array()}};
    summary["hash"] = c.hash;
    if (c.state != "evaluated") {
      c.state = "evaluated";
      c.status = summary.value("status", "");
      c.mean_latency_ms = summary.value("mean_latency_ms", 0.0);
      (void)archive_.UpdateCandidate(c);
      absl::StatusOr<v1::Solution> s = ParseSolutionJson(c.solution_json);
      Event("evaluation", absl::StrFormat("%s: %s, %.6f ms", s.ok() ? s->name() : c.hash, c.status,
                                          c.mean_latency_ms));
    }
    if (state_.baseline_latency_ms <= 0 && summary.value("mean_baseline_latency_ms", 0.0) > 0) {
      // The reference is the baseline: its latency comes with the first timed run.
      state_.baseline_latency_ms = summary["mean_baseline_latency_ms"].get<double>();
      row_.baseline_latency_ms = state_.baseline_latency_ms;
      if (state_.incumbent_hash.empty()) {
        state_.incumbent_latency_ms = state_.baseline_latency_ms;
        row_.best_latency_ms = state_.baseline_latency_ms;
      }
    }
    if (AllPassed(summary)) {
      passing.emplace_back(c, summary);
    } else {
      ++failed;
      state_.last_failure = summary;
    }
  }
  state_.failures += failed;
  state_.consecutive_failures = passing.empty() ? state_.consecutive_failures + failed : 0;

  std::string outcome;
  if (candidates->empty()) {
    outcome = only_duplicates ? "duplicate" : "no candidate";
  } else if (passing.empty()) {
    outcome = "failed";
  } else {
    state_.have_correct = true;
    state_.functional_attempts = 0;
    std::optional<std::string> decided = DecideRound(passing);
    if (!decided.has_value()) return false;
    outcome = *decided;
  }
  if (state_.pass == "optimization") {
    state_.plateau = outcome == "promoted" ? 0 : state_.plateau + 1;
    state_.history.push_back({state_.open_direction, outcome});
  } else if (outcome != "promoted" && passing.empty()) {
    ++state_.functional_attempts;
  }
  (void)archive_.FinishRound(row_.id, state_.round, outcome);
  state_.open_request = 0;
  Save();
  Event("round", absl::StrFormat("round %d (%s) %s; best %.6f ms", state_.round, state_.pass,
                                 outcome, row_.best_latency_ms));
  return Supervise(exhausted, only_duplicates);
}

void CampaignRunner::Promote(const CandidateRow& candidate, const Json& summary, double latency,
                             double noise) {
  absl::StatusOr<std::vector<v1::Promotion>> existing = archive_.Promotions(row_.id);
  bool recorded = false;
  if (existing.ok()) {
    for (const v1::Promotion& p : *existing) recorded |= p.candidate_hash() == candidate.hash;
  }
  absl::StatusOr<v1::Solution> solution = ParseSolutionJson(candidate.solution_json);
  v1::Promotion p;
  p.set_round(state_.round);
  p.set_candidate_hash(candidate.hash);
  p.set_solution_name(solution.ok() ? solution->name() : "");
  p.set_agent(candidate.agent);
  p.set_latency_ms(latency);
  p.set_previous_latency_ms(state_.incumbent_latency_ms);
  p.set_noise(noise);
  p.set_unix_ms(NowUnixMs());
  if (!recorded) (void)archive_.AddPromotion(row_.id, p);
  state_.incumbent_hash = candidate.hash;
  state_.incumbent_solution_json = candidate.solution_json;
  state_.incumbent_params = candidate.params_json;
  state_.incumbent_agent = candidate.agent;
  state_.incumbent_latency_ms = latency;
  state_.incumbent_noise = noise;
  state_.incumbent_summary = summary;
  ++state_.promotions;
  row_.best_latency_ms = latency;
  row_.incumbent_hash = candidate.hash;
  Event("promotion",
        absl::StrFormat("%s promoted: %.6f ms (was %.6f ms, noise %.2f%%)", p.solution_name(),
                        latency, p.previous_latency_ms(), noise * 100));
}

bool CampaignRunner::Supervise(bool exhausted, bool only_duplicates) {
  state_.consecutive_duplicates = only_duplicates ? state_.consecutive_duplicates + 1 : 0;
  const SupervisorSpec& v = spec_.supervisor;
  const std::string& agent = spec_.agents[state_.agent_index].name;
  std::string reason;
  if (exhausted) {
    reason = absl::StrCat("agent ", agent, " has no further candidates");
  } else if (state_.plateau >= v.plateau_rounds) {
    reason = absl::StrCat("plateau: ", state_.plateau, " optimisation rounds without promotion");
  } else if (state_.consecutive_failures >= v.max_failures) {
    reason = absl::StrCat("repeated failures: ", state_.consecutive_failures,
                          " failing candidates in a row");
  } else if (state_.consecutive_duplicates >= v.max_duplicates) {
    reason = absl::StrCat("duplicates: ", state_.consecutive_duplicates,
                          " answers in a row held only duplicates");
  } else if (state_.functional_attempts >= v.functional_attempts) {
    reason = absl::StrCat("no correct candidate after ", state_.functional_attempts,
                          " functional attempts");
  }
  if (reason.empty()) return true;
  if (state_.agent_index + 1 < static_cast<int>(spec_.agents.size())) {
    ++state_.agent_index;
    state_.plateau = state_.consecutive_failures = state_.consecutive_duplicates = 0;
    state_.functional_attempts = 0;
    Save();
    Event("agent_switch",
          absl::StrCat(reason, "; switching to agent ", spec_.agents[state_.agent_index].name));
    return true;
  }
  End("completed", reason);
  return false;
}

}  // namespace kiln::controller
