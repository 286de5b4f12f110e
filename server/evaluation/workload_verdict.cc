#include "server/evaluation/workload_verdict.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "harness/model/json_interop.h"
#include "harness/verify/integrity_policy.h"
#include "harness/verify/own_kernels.h"
#include "harness/verify/own_work.h"
#include "server/evaluation/speed_of_light.h"

namespace kiln {

void SetFailure(WorkloadResult& out, v1::EvaluationStatus status, const std::string& reason,
                const std::string& log) {
  out.evaluation.set_status(status);
  out.evaluation.set_log(log);
  out.detail.set_reason(reason);
}

bool AcceptReference(const RoleRun& ref, const std::atomic<bool>* cancel, WorkloadResult& out) {
  if (ref.started.ok() && ref.result.status() == v1::PASSED) return true;
  if (cancel != nullptr && cancel->load()) {
    SetFailure(out, v1::CANCELLED, "cancelled", "");
    return false;
  }
  const std::string error =
      ref.started.ok() ? ref.result.error() : std::string(ref.started.message());
  SetFailure(out, v1::RUNTIME_ERROR, absl::StrCat("reference failed: ", FirstLine(error)),
             absl::StrCat("reference failed: ", error, ref.log.empty() ? "" : "\n", ref.log));
  return false;
}

bool AcceptCandidate(const RoleRun& cand, WorkloadResult& out) {
  if (!cand.started.ok()) {
    const std::string error(cand.started.message());
    SetFailure(out, v1::RUNTIME_ERROR, absl::StrCat("worker did not start: ", FirstLine(error)),
               error);
    return false;
  }
  if (cand.result.status() == v1::PASSED) return true;
  v1::EvaluationStatus status = cand.result.status();
  if (status == v1::STATUS_UNSPECIFIED) status = v1::RUNTIME_ERROR;
  const std::string& error = cand.result.error();
  SetFailure(out, status, error.empty() ? std::string(StatusName(status)) : FirstLine(error),
             error);
  return false;
}

void ApplyVerdict(const OutputVerdict& verdict, const v1::TimingResult& timing,
                  const v1::TimingResult& ref_timing, WorkloadResult& out) {
  out.evaluation.set_status(verdict.status);
  out.detail.set_reason(verdict.reason);
  if (verdict.status != v1::PASSED) out.evaluation.set_log(verdict.reason);
  out.detail.set_mismatched_elements(verdict.mismatched);
  out.detail.set_checked_elements(verdict.checked);
  out.detail.set_worst_output(verdict.worst_output);
  if (verdict.compared) {
    v1::Correctness* c = out.evaluation.mutable_correctness();
    c->set_max_relative_error(verdict.max_rel_error);
    c->set_max_absolute_error(verdict.max_abs_error);
    c->set_extra_json(absl::StrFormat(R"({"mismatched": %d, "checked": %d})", verdict.mismatched,
                                      verdict.checked));
  }
  // As flashinfer-bench: performance only for a correct candidate.
  if (verdict.status != v1::PASSED) return;
  v1::Performance* p = out.evaluation.mutable_performance();
  p->set_latency_ms(timing.latency_ms());
  p->set_reference_latency_ms(ref_timing.latency_ms());
  p->set_speedup_factor(timing.latency_ms() > 0 ? ref_timing.latency_ms() / timing.latency_ms()
                                                : 0);
}

double PeakBandwidth(const NodeContext& node, const WorkloadJob& job, v1::WorkerRequest request,
                     const StageFn& on_stage, const std::atomic<bool>* cancel) {
  if (node.peak_bandwidth == nullptr) return 0;
  const std::string key =
      absl::StrCat(job.backend->name, "|", job.backend->devices[job.device_index]);
  return node.peak_bandwidth->Get(key, [&]() -> absl::StatusOr<double> {
    request.set_measure_peak_bandwidth(true);
    request.clear_trial_seeds();
    RoleRun probe = RunRole(node, job, request, WorkerOnly(), "bandwidth",
                            /*measure=*/false, on_stage, cancel);
    if (!probe.started.ok()) return probe.started;
    if (probe.result.status() != v1::PASSED) {
      return absl::InternalError(absl::StrCat("bandwidth probe: ", probe.result.error()));
    }
    return probe.result.peak_bandwidth_gbps();
  });
}

void ApplyFloor(const WorkloadJob& job, double peak_gbps, WorkloadResult& out) {
  absl::StatusOr<int64_t> bytes = BytesMoved(*job.definition, *job.workload);
  if (!bytes.ok() || peak_gbps <= 0) return;
  const v1::SpeedOfLight sol = FloorOf(*bytes, peak_gbps);
  *out.detail.mutable_speed_of_light() = sol;
  const v1::TimingResult& timing = out.detail.timing();
  if (out.evaluation.status() != v1::PASSED || timing.flush_bytes() <= 0 ||
      timing.latency_ms() >= sol.floor_ms()) {
    return;
  }
  const std::string reason = integrity::Reason(
      integrity::kFasterThanMemory,
      absl::StrFormat("latency %.6f ms is below the speed-of-light floor %.6f ms (%d bytes the "
                      "workload must move at %.1f GB/s, %.1fx the measured peak of this device): "
                      "the timed calls did not do the work",
                      timing.latency_ms(), sol.floor_ms(), sol.bytes(), kPeakHeadroom * peak_gbps,
                      kPeakHeadroom));
  out.evaluation.set_status(v1::REJECTED);
  out.evaluation.clear_performance();
  out.evaluation.set_log(reason);
  out.detail.set_reason(reason);
}

void ApplyOwnKernelCheck(const WorkloadJob& job, WorkloadResult& out) {
  if (job.solution == nullptr || !out.detail.has_timing()) return;
  *out.detail.mutable_own_work() =
      integrity::OwnWorkOf(*job.definition, *job.solution, out.detail.timing());
  if (out.evaluation.status() != v1::PASSED) return;
  if (std::optional<std::string> not_made = integrity::OwnKernelCheckNotMade(
          *job.definition, *job.solution, out.detail.timing())) {
    out.detail.add_warnings(*not_made);
    return;
  }
  std::optional<integrity::OwnKernelFinding> finding =
      integrity::JudgeOwnKernel(*job.definition, *job.solution, out.detail.timing());
  if (!finding.has_value()) {
    finding = integrity::JudgeOwnKernelShare(*job.definition, out.detail.own_work());
  }
  if (!finding.has_value()) return;
  if (finding->warning_only) {
    out.detail.add_warnings(finding->reason);
    return;
  }
  out.evaluation.set_status(v1::REJECTED);
  out.evaluation.clear_performance();
  out.evaluation.set_log(finding->reason);
  out.detail.set_reason(finding->reason);
}

}  // namespace kiln
