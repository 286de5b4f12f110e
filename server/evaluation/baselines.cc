// A workload's baselines (baseline_program.h): how each is run, the timing-cache keys of their
// latencies and the reference's, and timing them beside the reference once the candidate is done.
#include <optional>
#include <string>

#include "absl/strings/str_cat.h"
#include "harness/common/sha256.h"
#include "harness/timing/protocol.h"
#include "server/evaluation/admission.h"
#include "server/evaluation/baseline_program.h"
#include "server/evaluation/output_comparison.h"
#include "server/evaluation/role_run.h"

namespace kiln {

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

}  // namespace

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

}  // namespace kiln
