#include "controller/candidate_evaluator.h"

#include "absl/strings/str_cat.h"
#include "harness/model/json_interop.h"

namespace kiln::controller {

Json CandidateEvaluator::Summarize(const HarnessRun& run) {
  Json summary = SummarizeRun(run.run, spec_.definition, spec_.target.peak_bandwidth_gbps);
  summary["harness"] = run.harness;
  // Reference latency of the same run: the baseline when the baseline is the reference.
  double ref_sum = 0;
  int ref_count = 0;
  for (const auto& w : summary["workloads"]) {
    if (w.contains("reference_latency_ms") && w["reference_latency_ms"].get<double>() > 0) {
      ref_sum += w["reference_latency_ms"].get<double>();
      ++ref_count;
    }
  }
  summary["mean_reference_latency_ms"] = ref_count > 0 ? ref_sum / ref_count : 0.0;
  // A baseline the harness times (campaign `baseline: torch_compile` or `solution:NAME`): its
  // mean latency over the workloads where the harness measured it.
  double baseline_sum = 0;
  int baseline_count = 0;
  if (!spec_.harness_baseline.empty()) {
    for (const v1::Trace& trace : run.run.traces()) {
      for (const v1::BaselineResult& b : trace.kiln().baselines()) {
        if (b.name() != spec_.harness_baseline || b.latency_ms() <= 0) continue;
        baseline_sum += b.latency_ms();
        ++baseline_count;
      }
    }
  }
  summary["mean_baseline_latency_ms"] = spec_.harness_baseline.empty()
                                            ? summary["mean_reference_latency_ms"].get<double>()
                                        : baseline_count > 0 ? baseline_sum / baseline_count
                                                             : 0.0;
  for (const v1::ArtifactRef& a : run.run.artifacts()) {
    if (a.kind() != "resource_usage") continue;
    absl::StatusOr<std::string> kernels = pool_.GetArtifact(run.harness, a.sha256());
    if (kernels.ok()) AttachResources(*kernels, &summary);
  }
  return summary;
}

absl::StatusOr<HarnessRun> CandidateEvaluator::Run(const v1::Solution& solution,
                                                   EvaluationRow* row) {
  // Admitted before a restart: follow that run rather than evaluating again.
  if (!row->run_id.empty() && !row->harness.empty()) {
    absl::StatusOr<v1::Run> run = pool_.AwaitRun(row->harness, row->run_id, stop_);
    if (stop_.load()) return absl::CancelledError("stopped");
    if (run.ok() && run->status() != v1::INTERRUPTED) {
      (void)archive_.EndAttempt(id_, row->harness, row->run_id, "verdict",
                                v1::EvaluationStatus_Name(run->status()));
      return HarnessRun{row->harness, *run};
    }
    const std::string detail =
        run.ok() ? absl::StrCat("after the controller restarted: ", run->reason())
                 : absl::StrCat("could not be followed after the controller restarted: ",
                                run.status().message());
    (void)archive_.EndAttempt(id_, row->harness, row->run_id,
                              run.ok() ? "interrupted" : "abandoned", detail);
  }
  v1::EvaluateRequest request;
  request.set_definition(spec_.definition_name);
  *request.mutable_solution() = solution;
  for (const v1::Workload& w : spec_.workloads) *request.add_workloads() = w;
  request.set_mode(spec_.target.mode);
  request.set_backend(spec_.target.backend);
  if (!spec_.harness_baseline.empty()) request.add_baselines(spec_.harness_baseline);
  AttemptObserver observer;
  observer.admitted = [this, row](const std::string& harness, const std::string& run_id) {
    row->harness = harness;
    row->run_id = run_id;
    (void)archive_.PutEvaluation(*row);
    AttemptRow attempt;
    attempt.campaign_id = id_;
    attempt.candidate_hash = row->candidate_hash;
    attempt.purpose = row->purpose;
    attempt.harness = harness;
    attempt.run_id = run_id;
    (void)archive_.AddAttempt(attempt);
  };
  observer.ended = [this, row](const AttemptEnd& end) {
    ++row->attempts;
    if (end.run_id.empty() ||
        !archive_.EndAttempt(id_, end.harness, end.run_id, end.outcome, end.detail).ok()) {
      AttemptRow attempt;
      attempt.campaign_id = id_;
      attempt.candidate_hash = row->candidate_hash;
      attempt.purpose = row->purpose;
      attempt.harness = end.harness;
      attempt.run_id = end.run_id;
      attempt.outcome = end.outcome;
      attempt.detail = end.detail;
      (void)archive_.AddAttempt(attempt);
    }
    if (end.outcome == "verdict" || end.outcome == "cancelled") return;
    if (event_) {
      event_("attempt", absl::StrCat(row->purpose, " evaluation of ", row->candidate_hash.substr(0, 12),
                                     " on ", end.harness,
                                     end.run_id.empty() ? "" : absl::StrCat(" (run ", end.run_id, ")"),
                                     ": ", end.outcome, ": ", end.detail));
    }
  };
  return pool_.Evaluate(request, spec_.target.backend, observer, stop_);
}

absl::StatusOr<Json> CandidateEvaluator::Evaluate(const std::string& hash,
                                                  const v1::Solution& solution,
                                                  const std::string& purpose, int round) {
  absl::StatusOr<std::optional<EvaluationRow>> existing =
      archive_.GetEvaluation(id_, hash, purpose);
  if (!existing.ok()) return existing.status();
  EvaluationRow row;
  if (existing->has_value()) {
    row = **existing;
    if (Done(row)) {
      Json recorded = Json::parse(row.result_json, nullptr, false);
      if (recorded.is_object()) return recorded;
      return Json{{"status", row.status}, {"workloads", Json::array()}};
    }
  } else {
    row.campaign_id = id_;
    row.candidate_hash = hash;
    row.purpose = purpose;
    row.round = round;
    if (absl::Status s = archive_.PutEvaluation(row); !s.ok()) return s;
  }
  absl::StatusOr<HarnessRun> run = Run(solution, &row);
  if (!run.ok()) {
    if (run.status().code() == absl::StatusCode::kCancelled || stop_.load()) {
      return absl::CancelledError("stopped");
    }
    row.state = "failed";
    row.status = "UNAVAILABLE";
    row.result_json = Json{
        {"status", "UNAVAILABLE"},
        {"reason", std::string(run.status().message())},
        {"workloads", Json::array()},
        {"mean_latency_ms",
         0.0}}.dump();
    (void)archive_.PutEvaluation(row);
    return run.status();
  }
  Json summary = Summarize(*run);
  row.harness = run->harness;
  row.run_id = run->run.run_id();
  row.state = "done";
  row.status = summary.value("status", "");
  row.mean_latency_ms = summary.value("mean_latency_ms", 0.0);
  row.gpu_seconds = GpuSeconds(run->run);
  row.result_json = summary.dump();
  if (absl::Status s = archive_.PutEvaluation(row); !s.ok()) return s;
  return summary;
}

}  // namespace kiln::controller
