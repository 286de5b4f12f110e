#include "controller/campaign_runner.h"

#include <unistd.h>

#include <chrono>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "controller/agents/workspace.h"
#include "controller/campaign_view.h"
#include "controller/promotion.h"
#include "harness/common/files.h"
#include "harness/model/json_interop.h"

namespace kiln::controller {

CampaignRunner::CampaignRunner(CampaignArchive& archive, HarnessPool& pool, CampaignSpec spec,
                               CampaignRow row, std::string workspace_root, EventListener listener)
    : archive_(archive),
      pool_(pool),
      spec_(std::move(spec)),
      row_(std::move(row)),
      state_(StateFromJson(row_.state_json)),
      workspace_root_(std::move(workspace_root)),
      listener_(std::move(listener)),
      evaluator_(archive, pool, spec_, row_.id, stop_,
                 [this](const std::string& kind, const std::string& message) {
                   Event(kind, message);
                 }) {
  for (const AgentSpec& a : spec_.agents) agents_.push_back(MakeAgent(a, spec_));
}

void CampaignRunner::Event(const std::string& kind, const std::string& message) {
  (void)archive_.AddEvent(row_.id, kind, message);
  if (listener_) listener_(row_.id);
}

namespace {

// The kiln CLI installed beside kiln-controller (bin/), whose `kiln mcp` command agents get.
std::string KilnBinary() {
  const std::string path = absl::StrCat(ExecutableDir(), "/kiln");
  return ::access(path.c_str(), X_OK) == 0 ? path : "";
}

}  // namespace

bool CampaignRunner::Save() {
  row_.state_json = StateToJson(state_);
  return archive_.SaveCampaign(row_).ok();
}

void CampaignRunner::End(const std::string& status, const std::string& reason) {
  // The event first: a watcher that reads the campaign as no longer running stops after the
  // events it then reads (ControllerService::WatchCampaign), so "ended" must be among them.
  Event("ended", absl::StrCat(status, ": ", reason));
  row_.status = status;
  row_.reason = reason;
  row_.finished_unix_ms = NowUnixMs();
  Save();
  if (listener_) listener_(row_.id);
}

std::string CampaignRunner::BudgetExhausted() {
  absl::StatusOr<v1::BudgetUsage> usage = ComputeUsage(archive_, row_);
  if (!usage.ok()) return "";
  const BudgetSpec& b = spec_.budget;
  const int evaluations = usage->candidates() + usage->agent_evaluations();
  if (b.max_candidates > 0 && evaluations >= b.max_candidates) {
    return absl::StrCat("max_candidates (", usage->candidates(), " candidates",
                        usage->agent_evaluations() > 0
                            ? absl::StrCat(" and ", usage->agent_evaluations(),
                                           " evaluations by agents")
                            : "",
                        ")");
  }
  if (b.max_rounds > 0 && state_.round >= b.max_rounds) {
    return absl::StrCat("max_rounds (", state_.round, ")");
  }
  if (b.wall_clock_s > 0 && usage->wall_clock_s() >= b.wall_clock_s) {
    return absl::StrFormat("wall_clock_s (%.0f s)", usage->wall_clock_s());
  }
  if (b.max_cost_usd > 0 && usage->cost_usd() >= b.max_cost_usd) {
    return absl::StrFormat("max_cost_usd (%.4f USD)", usage->cost_usd());
  }
  if (b.max_gpu_seconds > 0 && usage->gpu_seconds() >= b.max_gpu_seconds) {
    return absl::StrFormat("max_gpu_seconds (%.1f s)", usage->gpu_seconds());
  }
  return "";
}

bool CampaignRunner::RegisterDefinition() {
  if (!spec_.definition_from_file) return true;
  while (!stop_.load()) {
    absl::Status s = pool_.RegisterDefinition(spec_.definition, spec_.workloads);
    if (s.ok()) return true;
    if (!absl::IsUnavailable(s) && !absl::IsDeadlineExceeded(s)) {
      End("failed", absl::StrCat("a harness refused the definition: ", s.message()));
      return false;
    }
    Event("waiting", absl::StrCat("registering the definition: ", s.message()));
    for (int i = 0; i < 20 && !stop_.load(); ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
  }
  return false;
}

bool CampaignRunner::Baseline() {
  if (state_.baseline_done) return true;
  if (spec_.baseline_is_reference) {
    state_.baseline_done = true;
    Event("baseline", "baseline is the definition's reference (timed with the first candidate)");
    return Save();
  }
  const std::string hash = ContentHash(spec_.baseline);
  CandidateRow candidate;
  candidate.campaign_id = row_.id;
  candidate.hash = hash;
  candidate.agent = "baseline";
  candidate.solution_json = SolutionToJson(spec_.baseline, -1);
  (void)archive_.AddCandidate(candidate);
  Event("evaluation", absl::StrCat("evaluating baseline ", spec_.baseline.name()));
  absl::StatusOr<Json> summary = evaluator_.Evaluate(hash, spec_.baseline, "baseline", 0);
  if (!summary.ok()) {
    if (stop_.load()) return false;
    End("failed", absl::StrCat("baseline could not be evaluated: ", summary.status().message()));
    return false;
  }
  candidate.state = "evaluated";
  candidate.status = summary->value("status", "");
  candidate.mean_latency_ms = summary->value("mean_latency_ms", 0.0);
  (void)archive_.UpdateCandidate(candidate);
  if (AllPassed(*summary)) {
    state_.have_correct = true;
    state_.incumbent_hash = hash;
    state_.incumbent_solution_json = candidate.solution_json;
    state_.incumbent_agent = "baseline";
    state_.incumbent_latency_ms = candidate.mean_latency_ms;
    state_.incumbent_noise = summary->value("relative_noise", 0.0);
    state_.incumbent_summary = *summary;
    state_.baseline_latency_ms = candidate.mean_latency_ms;
    row_.baseline_latency_ms = candidate.mean_latency_ms;
    row_.best_latency_ms = candidate.mean_latency_ms;
    row_.incumbent_hash = hash;
    Event("baseline", absl::StrFormat("baseline %s: %.6f ms", spec_.baseline.name(),
                                      candidate.mean_latency_ms));
  } else {
    summary->emplace("hash", hash);
    state_.last_failure = *summary;
    Event("baseline", absl::StrCat("baseline ", spec_.baseline.name(), " is ", candidate.status,
                                   "; the reference is the incumbent"));
  }
  state_.baseline_done = true;
  return Save();
}

void CampaignRunner::ProfileIncumbent() {
  Json& summary = state_.incumbent_summary;
  if (!spec_.profile || !summary.is_object() || summary.contains("profile") ||
      summary.contains("profile_note") || summary.value("status", "") != "PASSED") {
    return;
  }
  if (state_.incumbent_solution_json.empty()) {
    summary["profile_note"] = "the definition's reference is the incumbent: no solution to profile";
    return;
  }
  const Json* slowest = SlowestWorkload(summary);
  absl::StatusOr<v1::Solution> incumbent = ParseSolutionJson(state_.incumbent_solution_json);
  if (slowest == nullptr || !incumbent.ok()) return;
  const std::string axes = slowest->value("axes", "");
  v1::ProfileRequest request;
  request.set_definition(spec_.definition_name);
  *request.mutable_solution() = *incumbent;
  request.set_workload_uuid(slowest->value("uuid", ""));
  request.set_section(spec_.profile_section);
  request.set_backend(spec_.target.backend);
  Event("profile", absl::StrCat("profiling the incumbent on its slowest workload ", axes,
                                " (Nsight Compute, section ", spec_.profile_section, ")"));
  absl::StatusOr<HarnessRun> run = pool_.Profile(request, spec_.target.backend, stop_);
  if (!run.ok()) {
    // A node that cannot profile (no ncu, counters restricted, the hourly limit) says why; the
    // round goes on with the evidence it has.
    summary["profile_note"] =
        absl::StrCat("no profile of the incumbent on workload ", axes, ": ", run.status().message());
    Event("profile", summary["profile_note"].get<std::string>());
  } else {
    summary["profile"] = ProfileEvidence(run->run, axes);
    Event("profile", summary["profile"].contains("error")
                         ? absl::StrCat("no profile: ", summary["profile"].value("error", ""))
                         : absl::StrCat("profile run ", run->run.run_id(), ": ",
                                        summary["profile"].value("direction", "")));
  }
  (void)Save();
}

AgentRequest CampaignRunner::BuildRequest(std::string* evidence) {
  AgentRequest request;
  request.campaign_id = row_.id;
  request.round = state_.round;
  request.pass = state_.pass;
  request.prompt = kWorkspacePrompt;
  if (!state_.incumbent_solution_json.empty()) {
    absl::StatusOr<v1::Solution> inc = ParseSolutionJson(state_.incumbent_solution_json);
    if (inc.ok()) request.incumbent = *inc;
  }
  request.incumbent_params_json = state_.incumbent_params;
  if (state_.pass == "optimization") {
    ProfileIncumbent();
    request.direction = ChooseDirection(state_.incumbent_summary, state_.history);
    *evidence = EvidenceMarkdown(state_.incumbent_summary, state_.history);
  } else if (!state_.last_failure.empty()) {
    request.feedback = FunctionalFeedback(state_.last_failure);
    // A repair starts from the candidate that failed.
    absl::StatusOr<std::optional<CandidateRow>> failed =
        archive_.GetCandidate(row_.id, state_.last_failure.value("hash", ""));
    if (failed.ok() && failed->has_value()) {
      absl::StatusOr<v1::Solution> s = ParseSolutionJson((*failed)->solution_json);
      if (s.ok()) request.incumbent = *s;
    }
  }
  // Never ask for more candidates than the budget has left.
  int n = spec_.parallel;
  absl::StatusOr<v1::BudgetUsage> usage = ComputeUsage(archive_, row_);
  int left = -1;  // evaluations the budget has left; -1: no limit
  if (spec_.budget.max_candidates > 0 && usage.ok()) {
    left = spec_.budget.max_candidates - usage->candidates() - usage->agent_evaluations();
    n = std::min(n, left);
  }
  request.max_candidates = std::max(n, 1);
  // A command agent gets kiln mcp on a harness of the campaign, with what the budget leaves
  // once the candidates it returns are evaluated.
  request.kiln_mcp.kiln_binary = KilnBinary();
  if (!pool_.addresses().empty()) request.kiln_mcp.harness = pool_.addresses().front();
  request.kiln_mcp.token = pool_.token();
  request.kiln_mcp.max_evaluations = left < 0 ? -1 : std::max(left - request.max_candidates, 0);
  request.seen = [this](const std::string& hash) {
    absl::StatusOr<std::optional<CandidateRow>> c = archive_.GetCandidate(row_.id, hash);
    return c.ok() && c->has_value();
  };
  return request;
}

int CampaignRunner::RecordCandidates(const AgentRequest& request, const AgentResponse& response,
                                     int* duplicates) {
  int fresh = 0;
  for (const AgentCandidate& c : response.candidates) {
    const std::string hash = ContentHash(c.solution);
    if (request.seen(hash)) {
      ++*duplicates;
      Event("duplicate", absl::StrCat(c.solution.name(), " is a duplicate of ", hash.substr(0, 12),
                                      "; not evaluated"));
      continue;
    }
    // The request asked for at most max_candidates, what the budget had left: a fresh
    // candidate past that is not evaluated, whatever the agent sent.
    if (fresh >= request.max_candidates) {
      Event("over_request",
            absl::StrCat(c.solution.name(), " not evaluated: the request asked for ",
                         request.max_candidates, " candidate(s), what the budget had left"));
      continue;
    }
    CandidateRow row;
    row.campaign_id = row_.id;
    row.hash = hash;
    row.request_id = request.request_id;
    row.round = state_.round;
    row.agent = spec_.agents[state_.agent_index].name;
    row.params_json = c.params_json;
    row.solution_json = SolutionToJson(c.solution, -1);
    (void)archive_.AddCandidate(row);
    ++fresh;
  }
  return fresh;
}

bool CampaignRunner::NextRound() {
  const AgentSpec& agent_spec = spec_.agents[state_.agent_index];
  ++state_.round;
  state_.pass = state_.have_correct ? "optimization" : "functional";
  std::string evidence;
  AgentRequest request = BuildRequest(&evidence);
  (void)archive_.StartRound(row_.id, state_.round, state_.pass, agent_spec.name, request.direction,
                            state_.incumbent_summary.dump());
  RequestRow req;
  req.campaign_id = row_.id;
  req.round = state_.round;
  req.agent = agent_spec.name;
  req.pass = state_.pass;
  req.prompt = state_.pass == "optimization" ? request.direction : request.feedback;
  absl::StatusOr<int64_t> id = archive_.AddRequest(req);
  if (!id.ok()) {
    End("failed", absl::StrCat("archive: ", id.status().message()));
    return false;
  }
  req.id = request.request_id = *id;
  request.workspace = absl::StrCat(workspace_root_, "/", row_.id, "/request-", *id);
  absl::StatusOr<std::string> task = PrepareWorkspace(spec_, request, evidence);
  // From here a restart resumes this request instead of sending another.
  state_.open_request = *id;
  state_.open_direction = request.direction;
  Save();
  Event("request", absl::StrCat("round ", state_.round, " ", state_.pass, " -> ", agent_spec.name,
                                request.direction.empty() ? "" : ": ", request.direction));
  AgentResponse response;
  if (task.ok()) {
    response = agents_[state_.agent_index]->Generate(request);
  } else {
    response.error = std::string(task.status().message());
  }
  int duplicates = 0;
  int fresh = RecordCandidates(request, response, &duplicates);
  req.state = response.error.empty() ? "answered" : "failed";
  req.response = response.transcript.substr(0, 16000);
  req.error = response.error;
  req.cost_usd = response.cost_usd;
  req.turns = response.turns;
  req.candidate_count = static_cast<int>(response.candidates.size());
  req.agent_evaluations = response.agent_evaluations;
  if (response.agent_evaluations > 0) {
    Event("agent_evaluations", absl::StrCat(agent_spec.name, " evaluated ",
                                            response.agent_evaluations,
                                            " solution(s) itself through kiln mcp"));
  }
  (void)archive_.FinishRequest(req);
  state_.duplicates += duplicates;
  if (!response.error.empty()) Event("agent_error", response.error);
  return ProcessRequest(*id, response.exhausted, fresh == 0 && duplicates > 0);
}

void CampaignRunner::Run() {
  Event(state_.round == 0 && !state_.baseline_done ? "started" : "resumed",
        absl::StrCat("campaign ", row_.name, " on ", spec_.definition_name));
  if (!RegisterDefinition() || !Baseline()) return;
  if (state_.open_request != 0 && !ProcessRequest(state_.open_request, false, false)) return;
  while (row_.status == "running") {
    if (cancelled_.load()) return End("cancelled", "cancelled by request");
    if (stop_.load()) return;
    if (std::string reason = BudgetExhausted(); !reason.empty()) {
      return End("completed", absl::StrCat("budget: ", reason));
    }
    if (!NextRound()) {
      if (cancelled_.load() && row_.status == "running") End("cancelled", "cancelled by request");
      return;
    }
  }
}

}  // namespace kiln::controller
