// HarnessService: leaderboards (GetLeaderboard) and designated runs (DesignateRun).
#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "harness/model/leaderboard_order.h"
#include "harness/model/speedup_interval.h"
#include "server/service.h"

namespace kiln {

namespace {

constexpr char kRuleLatest[] = "latest";
constexpr char kRuleBest[] = "best";

}  // namespace

grpc::ServerUnaryReactor* HarnessService::GetLeaderboard(grpc::CallbackServerContext* ctx,
                                                         const v1::LeaderboardRequest* request,
                                                         v1::Leaderboard* response) {
  absl::StatusOr<Principal> caller = Caller(ctx);
  if (!caller.ok()) return Reply(ctx, caller.status());
  return Reply(ctx, DoGetLeaderboard(*caller, *request, response));
}

absl::Status HarnessService::DoGetLeaderboard(const Principal& caller,
                                              const v1::LeaderboardRequest& request,
                                              v1::Leaderboard* response) {
  if (!MaySeeOthersScores(caller)) {
    return absl::PermissionDeniedError(
        absl::StrCat("leaderboards show other principals' scores; agent '", caller.name,
                     "' reads its own runs only"));
  }
  if (request.definition().empty()) return absl::InvalidArgumentError("definition: required");
  if (auto def = context_.node->archive->GetDefinition(request.definition()); !def.ok()) {
    if (absl::IsNotFound(def.status())) {
      return UnknownDefinition(*context_.node->archive, request.definition(), "definition");
    }
    return def.status();
  }
  const std::string mode =
      request.mode().empty() ? context_.admission.default_mode : request.mode();
  if (absl::Status s = ValidateMode(mode); !s.ok()) return s;
  const std::string rule = request.rule().empty() ? kRuleLatest : request.rule();
  if (rule != kRuleLatest && rule != kRuleBest) {
    return absl::InvalidArgumentError(
        absl::StrCat("rule: '", request.rule(), "' is not one of latest, best"));
  }
  auto entries = context_.node->archive->Leaderboard(request.definition(), mode, rule);
  if (!entries.ok()) return entries.status();
  response->set_definition(request.definition());
  response->set_mode(mode);
  response->set_rule(rule);
  std::vector<v1::LeaderboardEntry> ranked;
  for (v1::LeaderboardEntry& e : *entries) {
    if (e.principal() == kHarnessPrincipal) continue;  // the definition's own reference check
    // The score and its noise come from the run's traces (one run per principal).
    auto run = context_.node->archive->GetRun(e.run_id(), /*include_sources=*/false);
    if (!run.ok()) return run.status();
    const RunScore score = ScoreRun(*run);
    e.set_score(score.score.value);
    e.set_score_ci95_low(score.score.low);
    e.set_score_ci95_high(score.score.high);
    e.set_passed_workloads(score.passed);
    e.set_workload_count(score.workloads);
    ranked.push_back(std::move(e));
  }
  std::stable_sort(ranked.begin(), ranked.end(), LeaderboardRanksBefore);
  for (v1::LeaderboardEntry& e : ranked) *response->add_entries() = std::move(e);
  return absl::OkStatus();
}

std::string HarnessService::NotRankable(const v1::Run& run) {
  if (run.principal() == kHarnessPrincipal) return "it is the harness's own reference check";
  if (run.state() != v1::RUN_DONE) return "it has not finished";
  if (!run.registered_workloads()) {
    return "it ran on workloads of its submitter's choosing, not the registered ones";
  }
  if (!run.confirms().empty()) {
    return absl::StrCat("it is a confirmation run (of ", run.confirms(), ")");
  }
  return "";
}

grpc::ServerUnaryReactor* HarnessService::DesignateRun(grpc::CallbackServerContext* ctx,
                                                       const v1::DesignateRunRequest* request,
                                                       v1::DesignateRunResponse* response) {
  absl::StatusOr<Principal> caller = Caller(ctx);
  if (!caller.ok()) return Reply(ctx, caller.status());
  return Reply(ctx, DoDesignateRun(*caller, *request, response));
}

absl::Status HarnessService::DoDesignateRun(const Principal& caller,
                                            const v1::DesignateRunRequest& request,
                                            v1::DesignateRunResponse* response) {
  Archive& archive = *context_.node->archive;
  if (request.clear()) {
    if (!request.run_id().empty()) {
      return absl::InvalidArgumentError("run_id: must be empty with clear (it names a definition)");
    }
    if (request.definition().empty()) return absl::InvalidArgumentError("definition: required");
    if (auto def = archive.GetDefinition(request.definition()); !def.ok()) {
      if (absl::IsNotFound(def.status())) {
        return UnknownDefinition(archive, request.definition(), "definition");
      }
      return def.status();
    }
    const std::string mode =
        request.mode().empty() ? context_.admission.default_mode : request.mode();
    if (absl::Status s = ValidateMode(mode); !s.ok()) return s;
    auto previous = archive.ClearDesignatedRun(caller.name, request.definition(), mode);
    if (!previous.ok()) return previous.status();
    response->set_principal(caller.name);
    response->set_definition(request.definition());
    response->set_mode(mode);
    response->set_previous_run_id(*previous);
    return absl::OkStatus();
  }
  if (!request.definition().empty() || !request.mode().empty()) {
    return absl::InvalidArgumentError(
        "definition, mode: only with clear (a run's own definition and mode are designated)");
  }
  auto run = ReadRun(caller, request.run_id(), /*include_sources=*/false, "run_id");
  if (!run.ok()) return run.status();
  // A run is its submitter's submission: operators may read every run, but designate only
  // their own, so that no team's score is chosen for it.
  if (run->principal() != caller.name) {
    return absl::PermissionDeniedError(
        absl::StrCat("run '", run->run_id(), "' was submitted by '", run->principal(),
                     "'; only its submitter designates it"));
  }
  if (std::string why = NotRankable(*run); !why.empty()) {
    return absl::FailedPreconditionError(
        absl::StrCat("run_id: run '", run->run_id(), "' cannot be ranked: ", why));
  }
  auto previous =
      archive.SetDesignatedRun(caller.name, run->definition(), run->mode(), run->run_id());
  if (!previous.ok()) return previous.status();
  response->set_principal(caller.name);
  response->set_definition(run->definition());
  response->set_mode(run->mode());
  response->set_run_id(run->run_id());
  response->set_previous_run_id(*previous);
  return absl::OkStatus();
}

}  // namespace kiln
