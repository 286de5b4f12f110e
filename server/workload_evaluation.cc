#include "server/workload_evaluation.h"

#include <algorithm>
#include <climits>
#include <cstdlib>
#include <optional>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "harness/common/files.h"
#include "harness/model/json_interop.h"
#include "harness/timing/protocol.h"
#include "harness/verify/input_generator.h"
#include "harness/worker/worker_client.h"
#include "server/output_comparison.h"

namespace kiln {

namespace {

constexpr size_t kMaxLogBytes = 1 << 20;

// One worker run (one role) of the workload.
struct RoleRun {
  absl::Status started;     // RunWorker's error: the worker could not be started
  v1::WorkerResult result;  // valid when started is OK
  std::string dir;          // canonical job folder of the role
  std::string log;          // the worker's output, tail
};

std::string FirstLine(const std::string& text) {
  std::string line = text.substr(0, text.find('\n'));
  if (line.size() > 500) line = line.substr(0, 500) + "...";
  return line;
}

std::string Tail(std::string text, size_t max_bytes) {
  if (text.size() <= max_bytes) return text;
  return absl::StrCat("[... ", text.size() - max_bytes, " bytes cut]\n",
                      text.substr(text.size() - max_bytes));
}

v1::RunState StageOf(const std::string& worker_stage) {
  if (worker_stage == "warmup" || worker_stage == "timing") return v1::RUN_TIMING;
  return v1::RUN_VERIFYING;  // inputs, verify, and anything a worker may add
}

std::string CanonicalDir(const std::string& path) {
  char resolved[PATH_MAX];
  return ::realpath(path.c_str(), resolved) != nullptr ? std::string(resolved) : path;
}

v1::WorkerRequest BaseRequest(const NodeContext& node, const WorkloadJob& job,
                              const v1::TimingConfig& config, int trials) {
  v1::WorkerRequest request;
  *request.mutable_definition() = *job.definition;
  *request.mutable_workload() = *job.workload;
  for (int t = 0; t < trials; ++t) {
    request.add_trial_seeds(MixSeed(node.server_secret, job.run_id, job.index, t));
  }
  *request.mutable_timing() = config;
  request.set_backend(job.backend->name);
  request.set_device_index(job.device_index);
  request.set_blob_root(node.blob_root);
  return request;
}

RoleRun RunRole(const NodeContext& node, const WorkloadJob& job, v1::WorkerRequest request,
                const CompileOutput& library, const std::string& role, bool measure,
                const StageFn& on_stage, const std::atomic<bool>* cancel) {
  RoleRun run;
  const std::string folder = absl::StrCat(job.job_dir, "/", role == "reference" ? "ref" : "cand");
  run.started = MakeDirs(absl::StrCat(folder, "/out"));
  if (!run.started.ok()) return run;
  // Resolved now, before the worker runs, so the worker cannot move it.
  run.dir = CanonicalDir(folder);
  request.set_role(role);
  request.set_measure(measure);
  request.set_library_path(library.library_path);
  request.set_symbol(library.symbol);
  request.set_output_dir(absl::StrCat(run.dir, "/out"));
  WorkerLaunch launch;
  launch.worker_path = node.worker_path;
  launch.job_dir = run.dir;
  // Beside the role's folder, not in it: the worker's own files are untrusted.
  launch.log_path = absl::StrCat(job.job_dir, "/", role, ".log");
  launch.timeout_s = node.worker_timeout_s;
  on_stage(v1::RUN_VERIFYING);
  auto result = RunWorker(
      launch, request, [&](const v1::WorkerStatus& s) { on_stage(StageOf(s.stage())); }, cancel);
  on_stage(v1::RUN_STATE_UNSPECIFIED);
  if (auto log = ReadFile(launch.log_path); log.ok()) run.log = Tail(*std::move(log), kMaxLogBytes);
  if (!result.ok()) {
    run.started = result.status();
    return run;
  }
  run.result = *std::move(result);
  return run;
}

void SetFailure(WorkloadResult& out, v1::EvaluationStatus status, const std::string& reason,
                const std::string& log) {
  out.evaluation.set_status(status);
  out.evaluation.set_log(log);
  out.detail.set_reason(reason);
}

// The reference's outcome; false (with `out` set) when the workload cannot go on.
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

}  // namespace

int TrialsFor(const std::string& mode, const v1::TimingConfig& config) {
  return std::max(1, config.trials());
}

WorkloadResult EvaluateWorkload(const NodeContext& node, const WorkloadJob& job,
                                const StageFn& on_stage, const std::atomic<bool>* cancel) {
  WorkloadResult out;
  out.detail.set_workload_index(job.index);
  auto config = DefaultTimingConfig(job.mode);
  if (!config.ok()) {
    SetFailure(out, v1::RUNTIME_ERROR, std::string(config.status().message()), "");
    return out;
  }
  const int trials = TrialsFor(job.mode, *config);
  const v1::WorkerRequest base = BaseRequest(node, job, *config, trials);
  const std::string& device = job.backend->devices[job.device_index];
  const std::string cache_key = ReferenceTimingCache::Key(job.reference->cache_key, *job.workload,
                                                          job.mode, job.backend->name, device);
  std::optional<v1::TimingResult> cached = node.reference_timings->Find(cache_key);

  v1::WorkerRequest ref_request = base;
  ref_request.set_backend(ReferenceBackendName(
      job.definition->native_reference().spec().language(), job.backend->name));
  if (ref_request.backend() != base.backend()) ref_request.set_device_index(0);
  RoleRun ref = RunRole(node, job, ref_request, *job.reference, "reference", !cached.has_value(),
                        on_stage, cancel);
  if (!AcceptReference(ref, cancel, out)) return out;
  const v1::TimingResult ref_timing = cached ? *cached : ref.result.timing();
  if (!cached) node.reference_timings->Store(cache_key, ref_timing);
  *out.detail.mutable_reference_timing() = ref_timing;

  RoleRun cand =
      RunRole(node, job, base, *job.candidate, "candidate", /*measure=*/true, on_stage, cancel);
  out.worker_log = cand.log;
  if (!AcceptCandidate(cand, out)) return out;
  *out.detail.mutable_timing() = cand.result.timing();

  OutputVerdict verdict = CompareOutputs(*job.definition, *job.workload, trials,
                                         {&ref.result, ref.dir}, {&cand.result, cand.dir});
  ApplyVerdict(verdict, cand.result.timing(), ref_timing, out);
  return out;
}

}  // namespace kiln
