#include "server/evaluation/evaluation.h"

#include <algorithm>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "harness/common/files.h"
#include "harness/common/sha256.h"
#include "harness/compile/forbidden_symbols.h"
#include "harness/compile/kernel_resources.h"
#include "harness/compile/python_toolchain.h"
#include "harness/compile/vendor_library_policy.h"
#include "harness/model/json_interop.h"
#include "harness/model/samples_artifact.h"
#include "harness/model/validate.h"
#include "harness/timing/protocol.h"
#include "harness/verify/integrity_policy.h"
#include "server/deadline_flag.h"
#include "server/evaluation/baseline_program.h"
#include "server/evaluation/profile_run.h"
#include "server/evaluation/role_run.h"
#include "server/evaluation/run_progress_board.h"
#include "server/evaluation/folder_reaper.h"
#include "server/evaluation/scratch_space.h"
#include "server/evaluation/workload_evaluation.h"
#include "server/log_line.h"

namespace kiln {

namespace {

// What makes two solutions the same program (names and prose excluded).
std::string SolutionContentHash(const v1::Solution& s) {
  Sha256 hash;
  hash.AddPart(s.spec().language());
  hash.AddPart(s.spec().entry_point());
  hash.AddPart(s.spec().has_destination_passing_style() && !s.spec().destination_passing_style()
                   ? "value-returning"
                   : "destination-passing");
  for (const std::string& dep : s.spec().dependencies()) hash.AddPart(dep);
  for (const v1::SourceFile& f : s.sources()) {
    hash.AddPart(f.path());
    hash.AddPart(f.content());
  }
  return hash.HexDigest();
}

// The compiler's first error line (file:line kept), else its first line.
std::string CompileErrorSummary(const std::string& log) {
  std::string first;
  for (absl::string_view line : absl::StrSplit(log, '\n', absl::SkipWhitespace())) {
    if (first.empty()) first = std::string(line);
    if (absl::StrContains(line, "error")) return std::string(line.substr(0, 500));
  }
  return first.empty() ? "compilation failed" : first.substr(0, 500);
}

std::string Iso8601(absl::Time t) {
  return absl::FormatTime("%Y-%m-%dT%H:%M:%E6SZ", t, absl::UTCTimeZone());
}

double SecondsSince(absl::Time t) { return absl::ToDoubleSeconds(absl::Now() - t); }

}  // namespace

Evaluation::Evaluation(const NodeContext& node, std::string run_id, AdmittedRun admitted,
                       std::shared_ptr<std::atomic<bool>> cancel, EventSink* sink,
                       absl::Time admitted_at)
    : node_(node),
      admitted_(std::move(admitted)),
      cancel_(std::move(cancel)),
      sink_(sink),
      admitted_at_(admitted_at),
      traces_(admitted_.workloads.size()) {
  run_.set_run_id(std::move(run_id));
}

absl::Status Evaluation::Create() {
  const v1::Solution& s = admitted_.solution;
  run_.set_definition(admitted_.definition.name());
  run_.set_solution_name(s.name());
  run_.set_solution_hash(SolutionContentHash(s));
  run_.set_author(s.author());
  run_.set_state(v1::RUN_QUEUED);
  run_.set_mode(admitted_.mode);
  run_.set_backend(admitted_.backend->name);
  run_.set_created_unix_ms(absl::ToUnixMillis(admitted_at_));
  *run_.mutable_solution() = s;
  run_.set_principal(admitted_.principal.empty() ? "local" : admitted_.principal);
  run_.set_registered_workloads(admitted_.registered_workloads);
  run_.set_confirms(admitted_.confirms);
  run_.set_kind(admitted_.profile.has_value() ? "profile" : "evaluation");
  for (const std::string& b : admitted_.baselines) run_.add_baselines(b);
  if (absl::Status created = node_.archive->CreateRun(run_); !created.ok()) return created;
  run_.clear_solution();  // archived; the sources are not needed again
  LogEvent(node_.quiet, "run_admitted",
           {{"run_id", run_id()},
            {"principal", run_.principal()},
            {"definition", run_.definition()},
            {"solution", s.name()},
            {"author", s.author()},
            {"workloads", absl::StrCat(traces_.size())},
            {"mode", run_.mode()},
            {"backend", run_.backend()}});
  SendProgress(v1::RUN_QUEUED, 0, "queued", nullptr);
  return absl::OkStatus();
}

void Evaluation::Compile() {
  if (cancelled()) {
    FailRemaining(v1::CANCELLED, "cancelled before compiling", "");
    return;
  }
  const absl::Time started = absl::Now();
  run_.set_queued_s(absl::ToDoubleSeconds(started - admitted_at_));
  EnterState(v1::RUN_COMPILING, 0, "compiling");
  candidate_ = CompileCandidate();
  if (candidate_.has_value() && CompileReference()) {
    CompileSolutionBaselines();
    needs_device_ = true;
  }
  run_.set_compile_s(SecondsSince(started));
  node_.metrics->CompileFinished(run_.compile_s());
  node_.metrics->VerdictStage("queued", run_.queued_s());
  node_.metrics->VerdictStage("compile", run_.compile_s());
}

std::vector<std::string> AllowedVendorLibraries(const v1::Definition& def) {
  static constexpr char kPrefix[] = "kiln:allow-library:";
  std::vector<std::string> allowed;
  for (const std::string& tag : def.tags()) {
    if (absl::StartsWith(tag, kPrefix)) allowed.push_back(tag.substr(sizeof(kPrefix) - 1));
  }
  return allowed;
}

std::optional<CompileOutput> Evaluation::CompileCandidate() {
  DeadlineFlag deadline(cancel_.get(), node_.compile_timeout_s);
  auto out = node_.compiler->Compile(admitted_.solution, admitted_.backend->compile_target,
                                     deadline.flag());
  if (cancelled()) {
    FailRemaining(v1::CANCELLED, "cancelled while compiling", "");
    return std::nullopt;
  }
  CompileOutput result;
  if (out.ok()) {
    result = *std::move(out);
  } else {
    result.log = std::string(out.status().message());
  }
  std::string reason = CompileErrorSummary(result.log);
  if (deadline.expired()) {
    result.ok = false;
    reason = absl::StrFormat("compile timed out after %.0f s", node_.compile_timeout_s);
    absl::StrAppend(&result.log, result.log.empty() ? "" : "\n", reason);
  }
  run_.set_compile_log(result.log);
  run_.set_compile_cache_hit(result.cache_hit);
  // The archive keeps the log as the run's compiler_log artifact.
  Archived(node_.archive->RecordCompile(run_id(), result.log, result.cache_hit, result.seconds),
           "RecordCompile");
  if (!result.ok) {
    FailRemaining(v1::COMPILE_ERROR, reason, result.log);
    return std::nullopt;
  }
  // Registers, shared memory, stack and spills per kernel (nvcc -Xptxas -v), kept with the run.
  if (!result.kernel_resources.empty()) {
    Archived(node_.archive
                 ->PutArtifact(run_id(), "resource_usage", "kernels.json",
                               KernelResourcesJson(result.kernel_resources))
                 .status(),
             "PutArtifact");
  }
  // Checked on every compile, cache hits too: the allowance belongs to the definition. A Python
  // solution's artifact is its package, not a library: it calls what the node's Python has
  // (torch, triton, flashinfer), as in flashinfer-bench.
  if (IsPythonLanguage(admitted_.solution.spec().language())) return result;
  if (absl::Status policy =
          CheckForbiddenSymbols(result.artifact_path, admitted_.definition.name(),
                                AllowedVendorLibraries(admitted_.definition));
      !policy.ok()) {
    FailRemaining(v1::REJECTED, std::string(policy.message()), std::string(policy.message()));
    return std::nullopt;
  }
  return result;
}

void Evaluation::CompileSolutionBaselines() {
  for (const auto& [name, solution] : admitted_.solution_baselines) {
    if (cancelled()) return;
    DeadlineFlag deadline(cancel_.get(), node_.compile_timeout_s);
    auto out = node_.compiler->Compile(solution, admitted_.backend->compile_target,
                                       deadline.flag());
    if (out.ok() && out->ok && !deadline.expired()) {
      baseline_builds_[name] = *std::move(out);
      continue;
    }
    std::string log = out.ok() ? out->log : std::string(out.status().message());
    if (deadline.expired()) log = absl::StrCat("compile timed out\n", log);
    baseline_build_errors_[name] = absl::StrCat("failed to compile: ", CompileErrorSummary(log));
  }
}

bool Evaluation::CompileReference() {
  // The Python reference is run by the node's python3; nothing to compile.
  if (admitted_.reference_source == kPythonReference) return true;
  DeadlineFlag deadline(cancel_.get(), node_.compile_timeout_s);
  const v1::Solution& reference = admitted_.definition.native_reference();
  const std::string target =
      ReferenceBackendName(reference.spec().language(), admitted_.backend->name) == "host"
          ? "host"
          : admitted_.backend->compile_target;
  auto out = node_.compiler->Compile(reference, target, deadline.flag());
  if (cancelled()) {
    FailRemaining(v1::CANCELLED, "cancelled while compiling", "");
    return false;
  }
  if (out.ok() && out->ok && !deadline.expired()) {
    reference_ = *std::move(out);
    return true;
  }
  std::string log = out.ok() ? out->log : std::string(out.status().message());
  if (deadline.expired()) absl::StrAppend(&log, "\ncompile timed out");
  FailRemaining(v1::RUNTIME_ERROR,
                absl::StrCat("native reference failed to compile: ", CompileErrorSummary(log)),
                absl::StrCat("native reference failed to compile:\n", log));
  return false;
}

void Evaluation::RunOnDevice(int device_slot) {
  const absl::Time started = absl::Now();
  device_index_ = device_slot;
  on_device_ = true;
  // The run record names the device it is timed on, from the moment it holds the slot.
  const NodeBackend& backend = *admitted_.backend;
  const size_t slot = static_cast<size_t>(device_slot);
  run_.set_device_index(slot < backend.placements.size() ? backend.placements[slot].index
                                                         : device_slot);
  run_.set_device_name(slot < backend.devices.size() ? backend.devices[slot] : "");
  run_.set_device_pci_bus_id(slot < backend.placements.size() ? backend.placements[slot].pci_bus_id
                                                              : "");
  Archived(node_.archive->RecordDevice(run_id(), run_.device_index(), run_.device_name(),
                                       run_.device_pci_bus_id()),
           "RecordDevice");
  LogEvent(node_.quiet, "run_on_device",
           {{"run_id", run_id()},
            {"backend", backend.name},
            {"device", DeviceHardwareLabel(backend, device_slot)}});
  // The run's workers write their outputs in the RAM-backed job folder when they fit there;
  // else in the data dir's, by workers of the run's own (warm and spare workers live in the
  // RAM-backed folder).
  NodeContext node = node_;
  int64_t per_worker_bytes = 0;
  const int64_t output_bytes = OutputFileBytes(&per_worker_bytes);
  bool scratch_reserved = false;
  if (node_.scratch != nullptr) {
    std::string why = "no RAM-backed folder";
    if (node_.scratch->has_fast_dir()) {
      scratch_reserved = node_.scratch->Reserve(output_bytes, per_worker_bytes, &why);
      // The files of runs before it may still be being removed (their room is still reserved
      // and still used): once they are gone, it is asked again.
      if (!scratch_reserved && node_.reaper != nullptr && node_.reaper->Flush()) {
        scratch_reserved = node_.scratch->Reserve(output_bytes, per_worker_bytes, &why);
      }
      if (!scratch_reserved) {
        node.jobs_dir = node_.scratch->disk_dir();
        node.warm = nullptr;
        node.spares = nullptr;
        LogEvent(node_.quiet, "outputs_in_data_dir", {{"run_id", run_id()}, {"why", why}});
      }
    }
    // A run whose files the node cannot hold would fail at its first write, looking like the
    // solution's fault: it is told so before anything runs.
    if (std::string disk; !scratch_reserved && !node_.scratch->FitsDisk(output_bytes, &disk)) {
      FailRemaining(
          v1::RUNTIME_ERROR,
          absl::StrCat(
              "the node cannot hold this run's output files, not a fault of the solution: ",
              FormatBytes(output_bytes),
              " (every trial's checked and recheck outputs of the reference, and two of the "
              "candidate's passes at a time) do not fit in its RAM-backed folder (", why,
              ") and ", disk,
              "; a run with fewer trials (kernelbench mode: one) or a node with more room can "
              "take it"),
          "");
      node_.metrics->EvaluationFinished(SecondsSince(started));
      return;
    }
  }
  const std::string run_dir = absl::StrCat(node.jobs_dir, "/", run_id());
  std::vector<WorkloadJob> jobs;
  for (int i = 0; i < static_cast<int>(traces_.size()); ++i) {
    if (traces_[i].has_value()) continue;
    jobs.push_back(JobFor(i, device_slot, absl::StrCat(run_dir, "/w", i)));
  }
  EvaluateWorkloads(
      node, jobs, run_dir, [this](v1::RunState s) { OnWorkerStage(s); },
      [this](int i, const char* role) {
        current_workload_ = i;
        current_role_ = role;
      },
      cancel_.get(),
      [&](int i, WorkloadResult result) {
        if (!result.worker_log.empty()) {
          Archived(node_.archive
                       ->PutArtifact(run_id(), "worker_log", absl::StrCat("w", i),
                                     result.worker_log)
                       .status(),
                   "PutArtifact");
        }
        for (const auto& [name, log] : result.baseline_logs) {
          Archived(node_.archive
                       ->PutArtifact(run_id(), "worker_log", absl::StrCat("w", i, "_", name), log)
                       .status(),
                   "PutArtifact");
        }
        RememberIntegrityWarnings(result.detail);
        ArchiveSamples(i, result.detail);
        // Outputs can be large; what matters is in the archive now. They are removed off the
        // device slot.
        DiscardFolder(node_.reaper, absl::StrCat(run_dir, "/w", i));
        RecordTrace(i, std::move(result.evaluation), std::move(result.detail));
      });
  if (cancelled()) FailRemaining(v1::CANCELLED, "cancelled", "");
  if (admitted_.profile.has_value()) ProfileOnDevice(device_slot, run_dir);
  // The RAM-backed folder's room is given back once the files are gone.
  ScratchSpace* scratch = scratch_reserved ? node_.scratch : nullptr;
  DiscardFolder(node_.reaper, run_dir, [scratch, output_bytes] {
    if (scratch != nullptr) scratch->Release(output_bytes);
  });
  node_.metrics->EvaluationFinished(SecondsSince(started));
}

int64_t Evaluation::OutputFileBytes(int64_t* per_worker) const {
  // Per workload: every trial's checked outputs and its recheck's (2 x trials passes), written
  // by the reference and each baseline, which keep them until the workload is done (every
  // reference runs before the candidate). The candidate's files of a pass are removed once the
  // pass is judged at its gate, the next pass waiting for that (JudgedFiles,
  // workload_evaluation.cc): at most two passes at a time. The reference's worker, serving every
  // workload of the run, holds the most.
  const int64_t keepers = 1 + static_cast<int64_t>(admitted_.baselines.size());
  auto config = TimingConfigFor(admitted_.mode, admitted_.definition);
  const int64_t trials = config.ok() ? TrialsFor(admitted_.mode, *config) : 3;
  int64_t total = 0;
  int64_t reference = 0;
  for (size_t i = 0; i < admitted_.workloads.size(); ++i) {
    if (traces_[i].has_value()) continue;
    absl::StatusOr<int64_t> bytes = OutputBytes(admitted_.definition, admitted_.workloads[i]);
    const int64_t per_pass = bytes.ok() ? *bytes : int64_t{1} << 40;
    // Past 2^60 the sums would overflow; such a run never fits in memory anyway.
    const int64_t one = per_pass > (int64_t{1} << 50) ? int64_t{1} << 60 : 2 * trials * per_pass;
    const int64_t candidate = std::min(one, 2 * per_pass);
    reference = std::min(reference + one, int64_t{1} << 60);
    total = std::min(total + keepers * one + candidate, int64_t{1} << 60);
  }
  *per_worker = reference;
  return total;
}

WorkloadJob Evaluation::JobFor(int i, int device_slot, const std::string& job_dir) const {
  WorkloadJob job;
  job.definition = &admitted_.definition;
  job.workload = &admitted_.workloads[i];
  job.index = i;
  job.run_id = run_id();
  job.mode = admitted_.mode;
  job.backend = admitted_.backend;
  job.device_index = device_slot;
  job.solution = &admitted_.solution;
  job.candidate = &*candidate_;
  job.reference = reference_.has_value() ? &*reference_ : nullptr;
  job.reference_source = admitted_.reference_source;
  job.baselines = &admitted_.baselines;
  job.solution_baselines = &admitted_.solution_baselines;
  job.baseline_builds = &baseline_builds_;
  job.baseline_build_errors = &baseline_build_errors_;
  job.job_dir = job_dir;
  job.batch_id = admitted_.batch_id;
  job.batch = admitted_.batch.get();
  return job;
}

void Evaluation::ProfileOnDevice(int device_slot, const std::string& run_dir) {
  const ProfileOptions& options = *admitted_.profile;
  v1::RunProfile* profile = run_.mutable_profile();
  profile->set_section(options.section);
  profile->set_workload_index(0);
  profile->set_ncu(node_.profiling.ncu);
  std::vector<std::string> targets = {"solution"};
  targets.insert(targets.end(), options.also.begin(), options.also.end());
  const v1::Trace* trace = traces_.empty() || !traces_[0].has_value() ? nullptr : &*traces_[0];
  if (trace == nullptr || trace->evaluation().status() != v1::PASSED || cancelled()) {
    // Only a correct solution is profiled, as only a correct one is timed.
    const std::string why =
        cancelled() ? "cancelled"
        : trace == nullptr
            ? "the workload was not evaluated"
            : absl::StrCat("the solution did not pass the workload (",
                           std::string(StatusName(trace->evaluation().status())), ": ",
                           trace->kiln().reason(),
                           ")");
    for (const std::string& target : targets) {
      v1::ProfiledTarget* t = profile->add_targets();
      t->set_target(target);
      t->set_error(absl::StrCat("not profiled: ", why));
    }
    return;
  }
  WorkloadJob job = JobFor(0, device_slot, absl::StrCat(run_dir, "/profile"));
  int ordinal = 0;
  for (const std::string& target : targets) {
    RoleProgram program;
    std::string missing;
    if (target == "solution") {
      program = Candidate(job);
    } else if (target == "reference") {
      program = ReferenceProgram(job);
    } else {
      BaselineProgram baseline = BaselineProgramOf(node_, job, target, ++ordinal);
      program = std::move(baseline.program);
      missing = std::move(baseline.missing);
    }
    const std::string what = target == "solution" ? "the solution" : target;
    if (!missing.empty()) {
      v1::ProfiledTarget* t = profile->add_targets();
      t->set_target(target);
      t->set_error(absl::StrCat("not profiled: ", missing));
      continue;
    }
    EnterState(v1::RUN_TIMING, 0,
               absl::StrCat("profiling ", what, " under Nsight Compute (", options.section, ")"));
    ProfileOutcome outcome = ProfileTarget(node_, job, program, target, options.section,
                                           cancel_.get());
    const std::string name = absl::StrCat(target, ".ncu-rep");
    if (!outcome.report.empty()) {
      auto stored = node_.archive->PutArtifact(run_id(), "profile", name, outcome.report);
      Archived(stored.status(), "PutArtifact");
      if (stored.ok()) outcome.target.set_report_artifact(absl::StrCat("profile/", name));
    }
    if (!outcome.log.empty()) {
      Archived(node_.archive
                   ->PutArtifact(run_id(), "worker_log", absl::StrCat("profile_", target),
                                 outcome.log)
                   .status(),
               "PutArtifact");
    }
    LogEvent(node_.quiet, "profiled",
             {{"run_id", run_id()},
              {"target", target},
              {"kernels", absl::StrCat(outcome.target.kernels_size())},
              {"seconds", absl::StrFormat("%.3f", outcome.target.seconds())},
              {"error", outcome.target.error()}});
    SendProgress(v1::RUN_TIMING, 0,
                 outcome.target.error().empty()
                     ? absl::StrFormat("profiled %s: %d kernel%s in %.1f s", what,
                                       outcome.target.kernels_size(),
                                       outcome.target.kernels_size() == 1 ? "" : "s",
                                       outcome.target.seconds())
                     : absl::StrCat("profiling ", what, " failed: ", outcome.target.error()),
                 nullptr);
    *profile->add_targets() = std::move(outcome.target);
    if (cancelled()) break;
  }
  (void)RemoveTree(job.job_dir);
}

void Evaluation::ArchiveSamples(int i, v1::TraceDetail& detail) {
  auto archive = [&](v1::TimingResult* timing, const std::string& name) {
    if (timing->samples_ms().empty()) return;
    Archived(node_.archive
                 ->PutArtifact(run_id(), "samples", name, SamplesArtifact(timing->samples_ms()))
                 .status(),
             "PutArtifact");
    timing->clear_samples_ms();
  };
  archive(detail.mutable_timing(), absl::StrCat("w", i));
  archive(detail.mutable_reference_timing(), absl::StrCat("w", i, "_reference"));
  for (v1::BaselineResult& b : *detail.mutable_baselines()) {
    if (b.name() == "reference") {
      b.mutable_timing()->clear_samples_ms();  // the reference's timing, archived above
    } else {
      archive(b.mutable_timing(), absl::StrCat("w", i, "_", b.name()));
    }
  }
}

void Evaluation::RememberIntegrityWarnings(const v1::TraceDetail& detail) {
  for (const std::string& warning : detail.warnings()) {
    if (!absl::StartsWith(warning, "integrity.degenerate_definition")) continue;
    const std::string key = integrity::DefinitionWarningKey(admitted_.definition.name());
    auto stored = node_.archive->GetSetting(key);
    if (stored.ok() && stored->has_value()) return;
    Archived(node_.archive->PutSetting(key, warning), "PutSetting");
    return;
  }
}

void Evaluation::OnWorkerStage(v1::RunState stage) {
  clock_.Enter(stage);
  if (stage == v1::RUN_STATE_UNSPECIFIED) return;
  // Workers alternate between the two stages (every trial verifies fresh inputs before it is
  // timed). The run's state only moves forward within a workload; the clock keeps the split.
  const bool same_work =
      announced_workload_ == current_workload_ && announced_role_ == current_role_;
  if (same_work && (stage == announced_stage_ || announced_stage_ == v1::RUN_TIMING)) return;
  announced_workload_ = current_workload_;
  announced_role_ = current_role_;
  announced_stage_ = stage;
  // The candidate's lines name the workload alone, as every line about its verdict does; the
  // reference's and the baselines' say whose work it is.
  const std::string whose = current_role_ == kRoleCandidate
                                ? WorkloadLabel(current_workload_)
                                : absl::StrCat(current_role_, " for ",
                                               WorkloadLabel(current_workload_));
  EnterState(stage, current_workload_,
             absl::StrCat(whose, stage == v1::RUN_TIMING ? ": timing" : ": verifying"),
             current_role_);
}

void Evaluation::EnterState(v1::RunState state, int workload_index, const std::string& message,
                            const std::string& role) {
  if (state != state_) {
    state_ = state;
    Archived(node_.archive->UpdateRunState(run_id(), state), "UpdateRunState");
  }
  if (node_.progress != nullptr) node_.progress->Set(run_id(), message);
  SendProgress(state, workload_index, message, nullptr, role);
}

void Evaluation::SendProgress(v1::RunState stage, int workload_index, const std::string& message,
                              const v1::Trace* trace, const std::string& role) {
  v1::EvaluateEvent event;
  v1::Progress* p = event.mutable_progress();
  p->set_run_id(run_id());
  p->set_stage(stage);
  p->set_workload_index(workload_index);
  p->set_workload_count(static_cast<int32_t>(traces_.size()));
  p->set_message(message);
  p->set_role(role);
  if (trace != nullptr) *p->mutable_trace() = *trace;
  sink_->Send(event);
}

void Evaluation::Archived(const absl::Status& status, const char* what) const {
  if (status.ok()) return;
  LogEvent(node_.quiet, "archive_write_failed",
           {{"run_id", run_id()}, {"what", what}, {"error", status.ToString()}});
}

std::string Evaluation::WorkloadLabel(int index) const {
  return absl::StrCat("workload ", index + 1, "/", traces_.size());
}

void Evaluation::RecordTrace(int index, v1::Evaluation evaluation, v1::TraceDetail detail) {
  v1::Trace trace;
  trace.set_definition(admitted_.definition.name());
  *trace.mutable_workload() = admitted_.workloads[index];
  trace.set_solution(admitted_.solution.name());
  v1::Environment* env = evaluation.mutable_environment();
  // "NVIDIA H200 (GPU 1, 0000:19:00.0)": which of the node's GPUs timed it. Traces decided
  // before the run had a device slot (compile errors) name the backend's device model only.
  const auto& devices = admitted_.backend->devices;
  env->set_hardware(on_device_            ? DeviceHardwareLabel(*admitted_.backend, device_index_)
                    : devices.empty() ? ""
                                      : devices.front());
  env->mutable_libs()->insert(node_.libs.begin(), node_.libs.end());
  if (IsPythonLanguage(admitted_.solution.spec().language()) && node_.python != nullptr) {
    (*env->mutable_libs())["python"] = PythonSolutionRuntime(node_.python->Get());
  }
  evaluation.set_timestamp(Iso8601(absl::Now()));
  *trace.mutable_evaluation() = std::move(evaluation);
  detail.set_workload_index(index);
  if (!admitted_.batch_id.empty()) detail.set_batch_id(admitted_.batch_id);
  *trace.mutable_kiln() = std::move(detail);
  Archived(node_.archive->PutTrace(run_id(), index, trace), "PutTrace");
  traces_[index] = trace;
  SendProgress(state_, index,
               absl::StrCat(WorkloadLabel(index), ": ",
                            std::string(StatusName(trace.evaluation().status()))),
               &trace);
}

void Evaluation::FailRemaining(v1::EvaluationStatus status, const std::string& reason,
                               const std::string& log) {
  for (size_t i = 0; i < traces_.size(); ++i) {
    if (traces_[i].has_value()) continue;
    v1::Evaluation evaluation;
    evaluation.set_status(status);
    evaluation.set_log(log);
    v1::TraceDetail detail;
    detail.set_reason(reason);
    RecordTrace(static_cast<int>(i), std::move(evaluation), std::move(detail));
  }
}

void Evaluation::DecideVerdict() {
  run_.set_status(v1::PASSED);
  run_.clear_reason();
  bool any_cancelled = false;
  for (const auto& trace : traces_) {
    const v1::EvaluationStatus status = trace->evaluation().status();
    any_cancelled |= status == v1::CANCELLED;
    if (status == v1::PASSED || run_.status() != v1::PASSED) continue;
    run_.set_status(status);
    run_.set_reason(trace->kiln().reason());
  }
  if (cancelled() && any_cancelled) {
    run_.set_status(v1::CANCELLED);
    run_.set_reason("cancelled by the client");
  }
}

void Evaluation::Finish() {
  clock_.Enter(v1::RUN_STATE_UNSPECIFIED);
  FailRemaining(v1::RUNTIME_ERROR, "not evaluated", "");  // defensive: every workload has a trace
  DecideVerdict();
  run_.set_state(v1::RUN_DONE);
  run_.set_verify_s(clock_.verify_s());
  run_.set_timing_s(clock_.timing_s());
  run_.set_finished_unix_ms(absl::ToUnixMillis(absl::Now()));
  Archived(node_.archive->FinishRun(run_), "FinishRun");
  if (node_.progress != nullptr) node_.progress->Clear(run_id());
  const std::string status(StatusName(run_.status()));
  LogEvent(node_.quiet, "run_finished",
           {{"run_id", run_id()},
            {"principal", run_.principal()},
            {"status", status},
            {"reason", run_.reason()},
            {"seconds", absl::StrFormat("%.3f", SecondsSince(admitted_at_))}});
  node_.metrics->RunFinished(status);
  node_.metrics->VerdictStage("verdict", SecondsSince(admitted_at_));
  // The principal's quota slot is free before the client hears the verdict, so that its next
  // submission is never refused for a run it already saw finish.
  admitted_.quota_hold.reset();
  sink_->Close(FinalEvent());
  sink_ = nullptr;
}

v1::EvaluateEvent Evaluation::FinalEvent() {
  v1::EvaluateEvent event;
  auto archived = node_.archive->GetRun(run_id(), /*include_sources=*/false);
  if (archived.ok()) {
    *event.mutable_run() = *std::move(archived);
    return event;
  }
  // The archive could not be read back: the client still gets the verdict it was promised.
  v1::Run* run = event.mutable_run();
  *run = run_;
  for (const auto& trace : traces_) *run->add_traces() = *trace;
  return event;
}

double Evaluation::GpuWorkSeconds() const {
  double ms = 0;
  auto add = [&ms](const v1::TimingResult& timing) {
    for (const v1::GpuWork& w : timing.gpu_work()) ms += w.total_ms();
  };
  for (const std::optional<v1::Trace>& trace : traces_) {
    if (!trace.has_value()) continue;
    add(trace->kiln().timing());
    for (const v1::BaselineResult& b : trace->kiln().baselines()) {
      // torch_eager from the Python reference is the reference's own measurement (AddBaselines
      // copies it), already counted under "reference".
      const bool reference_copy = b.name() == "torch_eager" && b.source() == kPythonReference;
      if (!b.cached() && !reference_copy) add(b.timing());
    }
  }
  return ms / 1000;
}

}  // namespace kiln
