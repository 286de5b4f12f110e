#include "controller/campaign_view.h"

#include <nlohmann/json.hpp>

#include "controller/loop_state.h"
#include "sqlite/status_macros.h"

namespace kiln::controller {

v1::Budget BudgetOf(const BudgetSpec& b) {
  v1::Budget out;
  out.set_max_candidates(b.max_candidates);
  out.set_max_rounds(b.max_rounds);
  out.set_wall_clock_s(b.wall_clock_s);
  out.set_max_cost_usd(b.max_cost_usd);
  out.set_max_gpu_seconds(b.max_gpu_seconds);
  return out;
}

absl::StatusOr<v1::BudgetUsage> ComputeUsage(CampaignArchive& archive, const CampaignRow& row) {
  v1::BudgetUsage usage;
  ARCHIVE_ASSIGN_OR_RETURN(std::vector<EvaluationRow> evaluations, archive.Evaluations(row.id));
  int candidates = 0;
  double gpu = 0;
  for (const EvaluationRow& e : evaluations) {
    gpu += e.gpu_seconds;
    if (e.purpose == "first" && e.state != "submitted") ++candidates;
  }
  ARCHIVE_ASSIGN_OR_RETURN(std::vector<RequestRow> requests, archive.Requests(row.id));
  double cost = 0;
  int agent_evaluations = 0;
  for (const RequestRow& r : requests) {
    cost += r.cost_usd;
    agent_evaluations += r.agent_evaluations;
  }
  usage.set_agent_evaluations(agent_evaluations);
  usage.set_candidates(candidates);
  usage.set_gpu_seconds(gpu);
  usage.set_cost_usd(cost);
  usage.set_rounds(StateFromJson(row.state_json).round);
  int64_t end = row.finished_unix_ms > 0 ? row.finished_unix_ms : NowUnixMs();
  usage.set_wall_clock_s(static_cast<double>(end - row.created_unix_ms) / 1000.0);
  return usage;
}

absl::StatusOr<v1::Campaign> BuildCampaign(CampaignArchive& archive, const CampaignRow& row) {
  LoopState state = StateFromJson(row.state_json);
  v1::Campaign c;
  c.set_campaign_id(row.id);
  c.set_owner(row.owner);
  c.set_name(row.name);
  c.set_definition(row.definition);
  c.set_status(row.status);
  c.set_reason(row.reason);
  c.set_round(state.round);
  c.set_pass(state.pass);
  c.set_baseline_latency_ms(row.baseline_latency_ms);
  c.set_best_latency_ms(row.best_latency_ms);
  c.set_incumbent_hash(row.incumbent_hash);
  c.set_created_unix_ms(row.created_unix_ms);
  c.set_finished_unix_ms(row.finished_unix_ms);
  c.set_duplicates(state.duplicates);
  c.set_failures(state.failures);
  std::map<std::string, std::string> files;
  nlohmann::json parsed = nlohmann::json::parse(row.spec_files_json, nullptr, false);
  if (parsed.is_object()) {
    for (const auto& [k, v] : parsed.items()) files[k] = v.get<std::string>();
  }
  MapCampaignFiles shipped(files);
  absl::StatusOr<CampaignSpec> spec = ParseCampaignSpec(row.spec_yaml, shipped);
  if (spec.ok()) {
    *c.mutable_budget() = BudgetOf(spec->budget);
    if (state.agent_index < static_cast<int>(spec->agents.size())) {
      c.set_agent(spec->agents[state.agent_index].name);
    }
  }
  ARCHIVE_ASSIGN_OR_RETURN(v1::BudgetUsage usage, ComputeUsage(archive, row));
  *c.mutable_used() = usage;
  c.set_candidates_evaluated(usage.candidates());
  ARCHIVE_ASSIGN_OR_RETURN(std::vector<v1::Promotion> promotions, archive.Promotions(row.id));
  c.set_promotions(static_cast<int>(promotions.size()));
  for (const v1::Promotion& p : promotions) *c.add_promotion_history() = p;
  return c;
}

}  // namespace kiln::controller
