#include "server/evaluation/workload_evaluation.h"

#include <algorithm>
#include <climits>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <future>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "harness/common/cuda_toolkit.h"
#include "harness/common/files.h"
#include "harness/common/sha256.h"
#include "harness/compile/python_toolchain.h"
#include "harness/model/json_interop.h"
#include "harness/timing/protocol.h"
#include "harness/verify/comparator.h"
#include "harness/verify/input_generator.h"
#include "harness/verify/integrity_policy.h"
#include "harness/verify/own_kernels.h"
#include "harness/verify/own_work.h"
#include "harness/worker/worker_client.h"
#include "server/evaluation/admission.h"
#include "server/evaluation/baseline_program.h"
#include "server/evaluation/batch_references.h"
#include "server/evaluation/output_comparison.h"
#include "server/evaluation/role_run.h"
#include "server/evaluation/spare_workers.h"
#include "server/evaluation/speed_of_light.h"
#include "server/evaluation/warm_workers.h"

namespace kiln {

v1::WorkerRequest WorkloadBaseRequest(const NodeContext& node, const WorkloadJob& job,
                                      const v1::TimingConfig& config, int trials) {
  v1::WorkerRequest request;
  *request.mutable_definition() = *job.definition;
  *request.mutable_workload() = *job.workload;
  for (int t = 0; t < trials; ++t) {
    // A batch's runs share their inputs: the batch's id in place of the run's.
    request.add_trial_seeds(MixSeed(node.server_secret,
                                    job.batch_id.empty() ? job.run_id : job.batch_id, job.index,
                                    t));
  }
  *request.mutable_timing() = config;
  if (const int64_t flush = HostFlushOverride(node, job); flush > 0) {
    request.mutable_timing()->set_flush_bytes(flush);
  }
  request.set_backend(job.backend->name);
  // The device's index as the harness's runtime numbers it; RunRole renumbers it for a worker
  // that sees only its own GPU.
  request.set_device_index(PlacementOf(job).index);
  request.set_blob_root(node.blob_root);
  return request;
}

namespace {

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

// The node's peak bandwidth on the candidate's device, measured by a kiln-worker on this device
// slot the first time; 0 when unknown (no floor applies).
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

// integrity.faster_than_memory: a PASSED candidate faster than the workload's floor is REJECTED.
// Only timings taken after a cache flush are judged (data may sit in cache otherwise).
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

// integrity.no_own_kernel (own_kernels.h), then integrity.own_kernel_share (own_work.h), whose
// split of the GPU time the trace keeps either way: REJECTED, or a warning where the definition
// allows torch.
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

// The key of a reference or baseline latency in the node's timing cache: what ran (the compiled
// native reference, or the Python reference's source under this torch as `baseline`), the
// workload, the mode, the backend and the device.
// The key of a latency in the node's timing cache: `what` ran (a build's cache key, the Python
// reference's source under a torch), the workload, the mode and its counts, the backend and the
// device.
std::string TimingCacheKeyOf(const NodeContext& node, const WorkloadJob& job, std::string what);

// The key of a reference or baseline latency: what ran (the compiled native reference, or the
// Python reference's source under this torch as `baseline`), then as TimingCacheKeyOf.
std::string TimingCacheKey(const NodeContext& node, const WorkloadJob& job,
                           const std::string& baseline) {
  std::string what;
  if (job.reference_source == kPythonReference) {
    what = absl::StrCat("python|", baseline, "|torch ",
                        node.python != nullptr ? node.python->Get().torch_version : "", "|",
                        Sha256Hex(job.definition->reference()));
  } else {
    what = job.reference->cache_key;
    // Another baseline is another program than the native reference: entries of its own.
    if (baseline != "reference") absl::StrAppend(&what, "|", baseline);
  }
  return TimingCacheKeyOf(node, job, std::move(what));
}

std::string TimingCacheKeyOf(const NodeContext& node, const WorkloadJob& job, std::string what) {
  // A flush size other than the mode's default times differently: its own entries.
  const int64_t flush = HostFlushOverride(node, job);
  std::string mode = flush > 0 ? absl::StrCat(job.mode, "|flush=", flush) : job.mode;
  // So do timed-call counts other than the mode's (kiln defs set).
  const auto counts = TimingConfigFor(job.mode, *job.definition);
  const auto defaults = DefaultTimingConfig(job.mode);
  if (counts.ok() && defaults.ok() &&
      (counts->warmup() != defaults->warmup() || counts->iterations() != defaults->iterations() ||
       counts->trials() != defaults->trials())) {
    absl::StrAppend(&mode, "|counts=", counts->warmup(), "/", counts->iterations(), "/",
                    counts->trials());
  }
  return ReferenceTimingCache::Key(what, *job.workload, mode, job.backend->name,
                                   job.backend->devices[job.device_index]);
}

}  // namespace

BaselineProgram BaselineProgramOf(const NodeContext& node, const WorkloadJob& job,
                                  const std::string& name, int ordinal) {
  BaselineProgram out;
  if (name.rfind("solution:", 0) != 0) {
    out.program = Python(name);
    out.source = kPythonReference;
    out.cache_key = TimingCacheKey(node, job, name);
    return out;
  }
  out.source = "solution";
  const v1::Solution* solution = nullptr;
  if (job.solution_baselines != nullptr) {
    auto it = job.solution_baselines->find(name);
    if (it != job.solution_baselines->end()) solution = &it->second;
  }
  const CompileOutput* build = nullptr;
  if (job.baseline_builds != nullptr) {
    auto it = job.baseline_builds->find(name);
    if (it != job.baseline_builds->end()) build = &it->second;
  }
  if (solution == nullptr || build == nullptr) {
    std::string why = "it was not built";
    if (job.baseline_build_errors != nullptr) {
      auto it = job.baseline_build_errors->find(name);
      if (it != job.baseline_build_errors->end()) why = it->second;
    }
    out.missing = absl::StrCat(name, " ", why);
    return out;
  }
  out.program = Built(solution, build, absl::StrCat("sol", ordinal));
  out.cache_key = TimingCacheKeyOf(node, job, absl::StrCat("solution|", build->cache_key));
  return out;
}

namespace {

v1::BaselineResult Baseline(const std::string& name, const std::string& source,
                            const v1::TimingResult& timing, bool cached, const WorkloadResult& out) {
  v1::BaselineResult b;
  b.set_name(name);
  b.set_source(source);
  b.set_latency_ms(timing.latency_ms());
  *b.mutable_timing() = timing;
  b.set_cached(cached);
  const double candidate = out.evaluation.has_performance()
                               ? out.evaluation.performance().latency_ms()
                               : 0;
  if (candidate > 0 && timing.latency_ms() > 0) b.set_speedup(timing.latency_ms() / candidate);
  return b;
}

// The baselines of a workload whose reference ran: the reference always, then those the run
// asked for, timed (unless cached) by the Python runner with the candidate's protocol on the
// same device slot and inputs. torch_eager is the reference itself when the reference is the
// Python run() (flashinfer-bench's reference is eager torch); torch_compile is run() under
// torch.compile, compiled in the untimed checked call and its outputs compared with the
// reference's.
void AddBaselines(const NodeContext& node, const WorkloadJob& job, const v1::WorkerRequest& base,
                  const RoleRun& ref, const v1::TimingResult& ref_timing, bool ref_cached,
                  const StageFn& on_stage, const std::atomic<bool>* cancel, WorkloadResult& out) {
  *out.detail.add_baselines() =
      Baseline("reference", job.reference_source, ref_timing, ref_cached, out);
  if (job.baselines == nullptr) return;
  const bool python = job.reference_source == kPythonReference;
  int solution_baselines = 0;
  for (const std::string& name : *job.baselines) {
    if (name == "torch_eager" && python) {
      v1::BaselineResult b = Baseline(name, kPythonReference, ref_timing, ref_cached, out);
      b.set_note("the definition's reference run() in eager torch: the reference's measurement");
      *out.detail.add_baselines() = std::move(b);
      continue;
    }
    BaselineProgram what = BaselineProgramOf(node, job, name, ++solution_baselines);
    v1::BaselineResult missing;
    missing.set_name(name);
    missing.set_source(what.source);
    if (out.evaluation.status() != v1::PASSED) {
      missing.set_note("not measured: the candidate did not pass");
      *out.detail.add_baselines() = std::move(missing);
      continue;
    }
    if (!what.missing.empty()) {
      missing.set_note(absl::StrCat("not measured: ", what.missing));
      *out.detail.add_baselines() = std::move(missing);
      continue;
    }
    const std::string& key = what.cache_key;
    if (std::optional<v1::TimingResult> hit = node.reference_timings->Find(key); hit) {
      *out.detail.add_baselines() = Baseline(name, what.source, *hit, true, out);
      continue;
    }
    RoleRun run = RunRole(node, job, what.source == "solution" ? SolutionRequest(base) : base,
                          what.program, "baseline", /*measure=*/true, on_stage, cancel);
    if (!run.log.empty()) out.baseline_logs.emplace_back(name, run.log);
    if (!run.started.ok() || run.result.status() != v1::PASSED) {
      const std::string error =
          run.started.ok() ? run.result.error() : std::string(run.started.message());
      missing.set_note(absl::StrCat("not measured: ", name, " failed: ", FirstLine(error)));
      *out.detail.add_baselines() = std::move(missing);
      continue;
    }
    v1::BaselineResult b = Baseline(name, what.source, run.result.timing(), /*cached=*/false, out);
    // A baseline is only a baseline if it computes what the reference computes.
    const int trials = base.trial_seeds_size();
    OutputVerdict agree = CompareOutputs(*job.definition, *job.workload, trials,
                                         {&ref.result, ref.dir}, {&run.result, run.dir});
    if (agree.status == v1::PASSED) {
      node.reference_timings->Store(key, run.result.timing());
    } else {
      b.set_note(absl::StrCat("its outputs differ from the reference's (", agree.reason,
                              "); latency not cached"));
    }
    *out.detail.add_baselines() = std::move(b);
  }
}

}  // namespace

int TrialsFor(const std::string& mode, const v1::TimingConfig& config) {
  return std::max(1, config.trials());
}

namespace {

// One workload of the run on its way through the phases.
struct WorkloadState {
  const WorkloadJob* job = nullptr;
  WorkloadResult out;
  v1::WorkerRequest base;
  int trials = 0;
  RoleRun ref;
  v1::TimingResult ref_timing;
  bool ref_cached = false;
  std::string ref_folder;  // the reference's outputs, removed once the workload is done
  // The reference's latency in the node's timing cache, looked up before the references run.
  std::string ref_cache_key;
  std::optional<v1::TimingResult> cached_ref_timing;
  bool decided = false;    // `out` is final (failed before the candidate's result)
  // The candidate's outputs against the reference's, trial by trial as the worker reports them
  // at its gates, then the rechecks.
  std::unique_ptr<OutputComparison> comparison;
};

std::string SlotOf(const WorkloadJob& job) {
  return absl::StrCat(job.backend->name, "#", job.device_index);
}

// What a warm reference worker serves: the program and its definition (any change of either is
// a new worker), on the backend its requests name.
std::string WarmKey(const NodeContext& node, const WorkloadJob& job, const std::string& backend) {
  if (job.reference_source == kPythonReference) {
    return absl::StrCat("python|reference|", backend, "|torch ",
                        node.python != nullptr ? node.python->Get().torch_version : "", "|",
                        Sha256Hex(job.definition->SerializeAsString()));
  }
  return absl::StrCat("native|", job.reference->cache_key, "|", backend, "|",
                      Sha256Hex(job.definition->SerializeAsString()));
}

// The reference of one workload: by the slot's warm worker for it (started now if there is
// none), or, without warm workers, by a worker of its own in the workload's folder.
RoleRun RunReference(const NodeContext& node, const WorkloadJob& job,
                     const v1::WorkerRequest& request, bool measure, const StageFn& on_stage,
                     const std::atomic<bool>* cancel, std::string* folder) {
  RoleProgram program = ReferenceProgram(job);
  if (node.warm == nullptr) {
    *folder = "";
    return RunRole(node, job, request, program, "reference", measure, on_stage, cancel);
  }
  program.backend = request.backend();
  static std::atomic<int64_t> started{0};
  const std::string slot = SlotOf(job);
  const std::string key = WarmKey(node, job, request.backend());
  RoleRun run;
  // A warm worker that has served before and fails now may have died idle: the request is
  // tried once more in a fresh one, which tells a real failure of the reference from that.
  for (int attempt = 0; attempt < 2; ++attempt) {
    WarmWorkers::Lease lease = node.warm->Take(slot, key);
    RoleWorker worker;
    if (lease.session == nullptr) {
      auto prepared = PrepareRoleWorker(
          node, job, program,
          absl::StrCat(node.jobs_dir, "/warm/", job.backend->name, job.device_index, "_",
                       started.fetch_add(1)));
      if (!prepared.ok()) {
        run = RoleRun{};
        run.started = prepared.status();
        return run;
      }
      auto session = WorkerSession::Start(prepared->launch);
      if (!session.ok()) {
        run = RoleRun{};
        run.started = session.status();
        return run;
      }
      worker = *std::move(prepared);
      lease.session = *std::move(session);
      lease.dir = worker.dir;
      lease.log_path = worker.launch.log_path;
      lease.device_zero = worker.device_zero;
      node.metrics->WarmWorkerStarted();
    }
    worker.dir = lease.dir;
    worker.device_zero = lease.device_zero;
    *folder = absl::StrCat(lease.dir, "/", job.batch_id.empty() ? job.run_id : job.batch_id,
                           "_w", job.index);
    run = RoleRun{};
    run.started = MakeDirs(absl::StrCat(*folder, "/out"));
    if (!run.started.ok()) return run;
    const bool warm = lease.served > 0;
    run = CallRole(*lease.session,
                   RoleRequest(request, worker, program, "reference", measure,
                               absl::StrCat(*folder, "/out")),
                   *folder, lease.log_path, /*last=*/false, on_stage, cancel);
    ++lease.served;
    const bool ok = run.result.status() == v1::PASSED;
    node.warm->Give(slot, std::move(lease));
    if (ok || !warm || (cancel != nullptr && cancel->load())) break;
    (void)RemoveTree(*folder);
  }
  return run;
}

// The reference of workload `w`; false when the workload is decided by it.
bool ReferencePhase(const NodeContext& node, const StageFn& on_stage,
                    const std::atomic<bool>* cancel, WorkloadState& w) {
  const WorkloadJob& job = *w.job;
  WorkloadResult& out = w.out;
  out.detail.set_workload_index(job.index);
  // What the workload is judged with: the definition's tolerances and official-mode counts
  // (kiln defs set included); the counts are recorded in the TimingResults.
  *out.detail.mutable_tolerance() = ToleranceProto(*job.definition);
  auto config = TimingConfigFor(job.mode, *job.definition);
  if (!config.ok()) {
    SetFailure(out, v1::RUNTIME_ERROR, std::string(config.status().message()), "");
    return false;
  }
  w.trials = TrialsFor(job.mode, *config);
  w.base = WorkloadBaseRequest(node, job, *config, w.trials);
  const bool python = job.reference_source == kPythonReference;
  const std::optional<v1::TimingResult>& cached = w.cached_ref_timing;

  v1::WorkerRequest ref_request = w.base;
  if (!python) {
    ref_request.set_backend(ReferenceBackendName(
        job.definition->native_reference().spec().language(), job.backend->name));
    if (ref_request.backend() != w.base.backend()) ref_request.set_device_index(0);
  }
  if (job.batch != nullptr) {
    // The batch's runs compute each workload's reference once.
    std::lock_guard<std::mutex> lock(job.batch->mu());
    if (std::optional<RoleRun> shared = job.batch->Find(job.index); shared.has_value()) {
      w.ref = *std::move(shared);
    } else {
      // Outside the run's folder: the batch's other runs read it after this run is done.
      WorkloadJob shared_job = job;
      shared_job.job_dir = absl::StrCat(node.jobs_dir, "/", job.batch_id, "_w", job.index);
      w.ref = RunReference(node, shared_job, ref_request, !cached.has_value(), on_stage, cancel,
                           &w.ref_folder);
      if (w.ref.started.ok() && w.ref.result.status() == v1::PASSED) {
        job.batch->Keep(job.index, w.ref,
                        w.ref_folder.empty() ? shared_job.job_dir : w.ref_folder);
        w.ref_folder.clear();  // the batch's now
      }
    }
  } else {
    w.ref = RunReference(node, job, ref_request, !cached.has_value(), on_stage, cancel,
                         &w.ref_folder);
  }
  out.detail.set_reference_source(job.reference_source);
  if (!AcceptReference(w.ref, cancel, out)) return false;
  w.ref_cached = cached.has_value();
  w.ref_timing = cached ? *cached : w.ref.result.timing();
  if (!cached) node.reference_timings->Store(w.ref_cache_key, w.ref_timing);
  *out.detail.mutable_reference_timing() = w.ref_timing;
  return true;
}

// The candidate's outputs of workload `w` judged: the checked outputs were compared at the
// worker's gates (all of them, or up to the trial found incorrect, where the worker stopped);
// now the rechecks, then the speed-of-light floor.
void Judge(const RoleRun& cand, double peak_gbps, WorkloadState& w) {
  const WorkloadJob& job = *w.job;
  WorkloadResult& out = w.out;
  out.worker_log = cand.log;
  if (!AcceptCandidate(cand, out)) return;
  *out.detail.mutable_timing() = cand.result.timing();
  OutputComparison& comparison = *w.comparison;
  const WorkerOutputs candidate{&cand.result, cand.dir};
  if (comparison.verdict().status == v1::PASSED) {
    // The claims held (trials as reported at the gates): a trial short of the workload's is
    // "not written".
    for (int t = cand.result.trials_size(); t < w.trials; ++t) {
      if (!comparison.Compare(t, /*recheck=*/false, candidate)) break;
    }
    // Workers of this build always recheck; results without rechecks come from tests.
    for (int t = 0; t < w.trials && !w.ref.result.rechecks().empty(); ++t) {
      if (!comparison.Compare(t, /*recheck=*/true, candidate)) break;
    }
  }
  OutputVerdict verdict = comparison.Finish();
  ApplyVerdict(verdict, cand.result.timing(), w.ref_timing, out);
  for (const std::string& warning : verdict.warnings) out.detail.add_warnings(warning);
  ApplyFloor(job, peak_gbps, out);
  ApplyOwnKernelCheck(job, out);
}

// The candidate's worker for the run: one process serving every workload from `from` on.
struct CandidateWorker {
  RoleWorker worker;
  std::unique_ptr<WorkerSession> session;
  absl::Status started;
  // A spare's folder lies outside the run's folder: removed when the run is done.
  std::string spare_dir;
  // Where a spare was given the solution: its package and entry come with every request.
  std::string package;
};

constexpr int64_t kMaxTritonCacheBytes = int64_t{256} << 20;

// A Triton solution's JIT cache, kept per build: only runs of the very same sources (same build
// key) ever read it. Copied into the candidate's folder before it starts, and the files a run
// that passed every workload added are copied back (never over a file already kept).
std::string TritonCacheOf(const CompileOutput& build) {
  const std::string& pkg = build.artifact_path;
  return absl::StrCat(pkg.substr(0, pkg.rfind('/')), "/triton_cache");
}

// A new spare for `slot`, when the node keeps them and the candidate is Python.
void StartSpare(const NodeContext& node, const WorkloadJob& job) {
  // GPU backends only: a spare warms up on the CPU while another run may be timed, which on a
  // GPU is GPU time, but on the host backend is the very CPU time being measured.
  if (node.spares == nullptr || job.backend->name != "cuda") return;
  static std::atomic<int64_t> started{0};
  RoleProgram spare;
  spare.spare = "python";
  spare.backend = job.backend->name;
  auto prepared = PrepareRoleWorker(
      node, job, spare,
      absl::StrCat(node.jobs_dir, "/spare/", job.backend->name, job.device_index, "_",
                   started.fetch_add(1)));
  if (!prepared.ok()) return;
  auto session = WorkerSession::Start(prepared->launch);
  if (!session.ok()) {
    (void)RemoveTree(prepared->dir);
    return;
  }
  auto kept = std::make_unique<SpareWorkers::Spare>();
  kept->worker = *std::move(prepared);
  kept->session = *std::move(session);
  node.spares->Put(SlotOf(job), std::move(kept));
}

CandidateWorker StartCandidate(const NodeContext& node, const WorkloadJob& job,
                               const RoleProgram& program, const std::string& folder,
                               const std::vector<WorkloadState*>& workloads, bool may_use_spare) {
  CandidateWorker c;
  const bool python = program.python_solution != nullptr;
  std::unique_ptr<SpareWorkers::Spare> spare;
  if (python && may_use_spare && node.spares != nullptr) spare = node.spares->Take(SlotOf(job));
  if (spare != nullptr) {
    c.worker = std::move(spare->worker);
    c.session = std::move(spare->session);
    c.spare_dir = c.worker.dir;
    // The spare was started with no access to any solution: its package is copied in.
    c.package = absl::StrCat(c.worker.dir, "/pkg");
    auto copied = CopyPlainTree(program.build->artifact_path, c.package, /*overwrite=*/true,
                                int64_t{1} << 30);
    if (!copied.ok()) c.started = copied.status();
  } else {
    auto prepared = PrepareRoleWorker(node, job, program, folder);
    if (!prepared.ok()) {
      c.started = prepared.status();
      return c;
    }
    c.worker = *std::move(prepared);
  }
  if (python) {
    (void)CopyPlainTree(TritonCacheOf(*program.build),
                        absl::StrCat(c.worker.dir, "/triton_cache"), /*overwrite=*/false,
                        kMaxTritonCacheBytes);
    // The next Python candidate on this slot finds its interpreter started.
    if (may_use_spare) StartSpare(node, job);
  }
  // Every output folder exists before the worker has its solution: the harness makes nothing in
  // the candidate's folder while the candidate runs.
  for (const WorkloadState* w : workloads) {
    c.started.Update(MakeDirs(absl::StrCat(c.worker.dir, "/w", w->job->index, "/out")));
  }
  if (!c.started.ok() || c.session != nullptr) return c;
  if (!python && program.backend != "host") {
    // Its device opened before the first request (harness/worker/main.cc).
    const int index = c.worker.device_zero ? 0 : PlacementOf(job).index;
    c.worker.launch.env_overrides.push_back(
        absl::StrCat("KILN_WORKER_DEVICE=", program.backend, ":", index));
  }
  auto session = WorkerSession::Start(c.worker.launch);
  if (!session.ok()) {
    c.started = session.status();
    return c;
  }
  c.session = *std::move(session);
  return c;
}

}  // namespace

void EvaluateWorkloads(const NodeContext& node, const std::vector<WorkloadJob>& jobs,
                       const std::string& run_dir, const StageFn& on_stage,
                       const WorkloadStarted& on_workload, const std::atomic<bool>* cancel,
                       const WorkloadDone& done) {
  auto cancelled = [cancel] { return cancel != nullptr && cancel->load(); };
  std::vector<WorkloadState> states(jobs.size());
  std::vector<WorkloadState*> ready;
  auto finish = [&](WorkloadState& w) {
    if (!w.ref_folder.empty()) (void)RemoveTree(w.ref_folder);
    done(w.job->index, std::move(w.out));
  };
  if (jobs.empty()) return;
  // Whether every workload's reference latency is cached: the references then only compute
  // outputs, and nothing of this run is timed before the candidate.
  bool references_cached = true;
  for (size_t i = 0; i < jobs.size(); ++i) {
    WorkloadState& w = states[i];
    w.job = &jobs[i];
    w.ref_cache_key = TimingCacheKey(node, jobs[i], "reference");
    w.cached_ref_timing = node.reference_timings->Find(w.ref_cache_key);
    references_cached &= w.cached_ref_timing.has_value();
  }
  RoleProgram program = Candidate(jobs.front());
  program.backend = jobs.front().backend->name;
  const std::string first_folder = absl::StrCat(run_dir, "/cand");
  // The candidate's process starts (and opens its device) while the references run when none
  // of them is timed: their latencies are all cached, so they only compute outputs. Starting a
  // process and creating a context is CPU and driver work that would disturb a reference being
  // timed; and nothing of the candidate runs before its first request (the worker loads the
  // solution then), so no candidate code runs beside a reference either way.
  std::future<CandidateWorker> early;
  if (references_cached && !cancelled()) {
    std::vector<WorkloadState*> all;
    for (WorkloadState& w : states) all.push_back(&w);
    early = std::async(std::launch::async, [&node, &jobs, program, first_folder, all] {
      return StartCandidate(node, jobs.front(), program, first_folder, all,
                            /*may_use_spare=*/true);
    });
  }
  // A candidate started early and not used: its process ends, its spare folder goes.
  auto drop_early = [&early] {
    if (!early.valid()) return;
    CandidateWorker unused = early.get();
    unused.session.reset();
    if (!unused.spare_dir.empty()) (void)RemoveTree(unused.spare_dir);
  };
  // 1. Every reference first: nothing of the candidate runs while a reference is timed.
  for (size_t i = 0; i < jobs.size(); ++i) {
    if (cancelled()) break;
    on_workload(jobs[i].index, kRoleReference);
    const auto t0 = absl::Now();
    const bool ok = ReferencePhase(node, on_stage, cancel, states[i]);
    node.metrics->VerdictStage("reference", absl::ToDoubleSeconds(absl::Now() - t0));
    if (ok) {
      ready.push_back(&states[i]);
    } else {
      finish(states[i]);
    }
  }
  if (ready.empty() || cancelled()) {
    drop_early();
    for (WorkloadState* w : ready) {
      SetFailure(w->out, v1::CANCELLED, "cancelled", "");
      finish(*w);
    }
    return;
  }
  const double peak_gbps =
      PeakBandwidth(node, *ready.front()->job, ready.front()->base, on_stage, cancel);

  // 2. The candidate: one fresh process for all its workloads (a new one only after a failure
  // ended the last), each workload judged as soon as its result is in.
  const WorkloadJob& first = *ready.front()->job;
  const bool baselines = first.baselines != nullptr && !first.baselines->empty();
  CandidateWorker cand;
  int processes = 0;
  if (early.valid()) {
    cand = early.get();
    processes = 1;
  }
  bool all_passed = true;
  for (size_t k = 0; k < ready.size(); ++k) {
    WorkloadState& w = *ready[k];
    if (cancelled()) {
      SetFailure(w.out, v1::CANCELLED, "cancelled", "");
      finish(w);
      continue;
    }
    on_workload(w.job->index, kRoleCandidate);
    const auto t0 = absl::Now();
    if (cand.session == nullptr || !cand.session->open()) {
      cand.session.reset();
      std::vector<WorkloadState*> rest(ready.begin() + static_cast<long>(k), ready.end());
      if (!cand.spare_dir.empty()) (void)RemoveTree(cand.spare_dir);
      cand = StartCandidate(node, *w.job, program,
                            processes == 0 ? first_folder
                                           : absl::StrCat(first_folder, "_", processes),
                            rest, /*may_use_spare=*/processes == 0);
      ++processes;
    }
    RoleRun run;
    w.comparison = std::make_unique<OutputComparison>(
        *w.job->definition, *w.job->workload, WorkerOutputs{&w.ref.result, w.ref.dir});
    if (!cand.started.ok()) {
      run.started = cand.started;
    } else {
      const std::string out_dir = absl::StrCat(cand.worker.dir, "/w", w.job->index, "/out");
      v1::WorkerRequest request = RoleRequest(SolutionRequest(w.base), cand.worker, program,
                                              "candidate", /*measure=*/true, out_dir);
      // Each trial's checked outputs are judged as soon as they are written, before the trial
      // is timed: an incorrect workload is not timed (as flashinfer-bench's evaluator).
      request.set_gate_trials(true);
      if (!cand.package.empty()) {
        const v1::BuildSpec& spec = w.job->solution->spec();
        request.set_artifact_path(cand.package);
        request.set_symbol(spec.entry_point());
        request.set_value_returning(spec.has_destination_passing_style() &&
                                    !spec.destination_passing_style());
      }
      v1::WorkerResult reported;  // the trials' outputs as the worker reported them
      const std::string dir = cand.worker.dir;
      auto on_checked = [&w, &reported, &dir](const v1::TrialOutputs& checked) {
        *reported.add_trials() = checked;
        return w.comparison->Compare(checked.trial(), /*recheck=*/false, {&reported, dir}) &&
               w.comparison->verdict().status == v1::PASSED;
      };
      run = CallRole(*cand.session, std::move(request),
                     cand.worker.dir, cand.worker.launch.log_path, /*last=*/k + 1 == ready.size(),
                     on_stage, cancel, on_checked);
    }
    const auto judged = absl::Now();
    node.metrics->VerdictStage("candidate", absl::ToDoubleSeconds(judged - t0));
    Judge(run, peak_gbps, w);
    node.metrics->VerdictStage("judge", absl::ToDoubleSeconds(absl::Now() - judged));
    all_passed &= w.out.evaluation.status() == v1::PASSED;
    if (cand.started.ok()) (void)RemoveTree(absl::StrCat(cand.worker.dir, "/w", w.job->index));
    if (!baselines) {
      // Only the reference's own entry: nothing more runs.
      AddBaselines(node, *w.job, w.base, w.ref, w.ref_timing, w.ref_cached, on_stage, cancel,
                   w.out);
      finish(w);
    }
  }
  // The candidate's process has ended before any baseline is timed.
  cand.session.reset();
  if (program.python_solution != nullptr && all_passed && processes == 1 && cand.started.ok()) {
    (void)CopyPlainTree(absl::StrCat(cand.worker.dir, "/triton_cache"),
                        TritonCacheOf(*first.candidate), /*overwrite=*/false,
                        kMaxTritonCacheBytes);
  }
  if (!cand.spare_dir.empty()) (void)RemoveTree(cand.spare_dir);
  if (!baselines) return;
  // 3. Baselines, timed on the same inputs with no candidate process left.
  for (WorkloadState* w : ready) {
    on_workload(w->job->index, kRoleBaselines);
    const auto t0 = absl::Now();
    if (!cancelled()) {
      AddBaselines(node, *w->job, w->base, w->ref, w->ref_timing, w->ref_cached, on_stage,
                   cancel, w->out);
    }
    node.metrics->VerdictStage("baselines", absl::ToDoubleSeconds(absl::Now() - t0));
    finish(*w);
  }
}

}  // namespace kiln
