// What the harness checks of a worker's request and result beside running it (worker_client.h):
// the environment a worker gets, where it writes its outputs, and whether a PASSED result's
// claims hold (CheckResultClaims).
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "harness/worker/worker_client.h"

namespace kiln {

std::vector<std::string> OverrideEnvironment(const std::vector<std::string>& base,
                                             const std::vector<std::string>& overrides) {
  std::vector<std::string> out;
  auto name_of = [](const std::string& kv) { return kv.substr(0, kv.find('=')); };
  for (const std::string& kv : base) {
    bool replaced = false;
    for (const std::string& o : overrides) replaced = replaced || name_of(o) == name_of(kv);
    if (!replaced) out.push_back(kv);
  }
  out.insert(out.end(), overrides.begin(), overrides.end());
  return out;
}

std::string WorkerOutputFile(int trial, const std::string& name, bool recheck) {
  return absl::StrCat(recheck ? "r" : "t", trial, "_", name, ".bin");
}

std::string WorkerOutputPath(const std::string& output_dir, int trial, const std::string& name,
                             bool recheck) {
  return absl::StrCat(output_dir.empty() ? "." : output_dir, "/",
                      WorkerOutputFile(trial, name, recheck));
}

std::string WorkerReuseFile(const std::string& name) {
  return absl::StrCat("reuse_", name, ".bin");
}

std::string WorkerReusePath(const std::string& output_dir, const std::string& name) {
  return absl::StrCat(output_dir.empty() ? "." : output_dir, "/", WorkerReuseFile(name));
}

std::string WorkerKeptFile(int trial, const std::string& name, bool recheck) {
  return absl::StrCat("kept_", WorkerOutputFile(trial, name, recheck));
}

std::string WorkerKeptPath(const std::string& output_dir, int trial, const std::string& name,
                           bool recheck) {
  return absl::StrCat(output_dir.empty() ? "." : output_dir, "/",
                      WorkerKeptFile(trial, name, recheck));
}

absl::Status CheckResultClaims(const v1::WorkerRequest& request, const v1::WorkerResult& result,
                               const GateRecord& gates) {
  const v1::Definition& def = request.definition();
  if (request.gate_trials()) {
    // The passes of each kind are exactly those reported at their gates, unchanged.
    auto as_reported = [](const auto& passes, const std::vector<v1::TrialOutputs>& reported,
                          const char* kind) {
      if (passes.size() != static_cast<int>(reported.size())) {
        return absl::InvalidArgumentError(absl::StrCat("worker result: ", passes.size(), " ",
                                                       kind, ", ", reported.size(),
                                                       " reported at the gates"));
      }
      for (int t = 0; t < passes.size(); ++t) {
        if (passes.Get(t).SerializeAsString() != reported[t].SerializeAsString()) {
          return absl::InvalidArgumentError(absl::StrCat(
              "worker result: ", kind, "[", t, "] differs from what was reported at its gate"));
        }
      }
      return absl::OkStatus();
    };
    if (absl::Status s = as_reported(result.trials(), gates.reported, "trials"); !s.ok()) return s;
    if (absl::Status s = as_reported(result.rechecks(), gates.rechecks, "rechecks"); !s.ok()) {
      return s;
    }
    if (gates.stopped && result.has_timing()) {
      return absl::InvalidArgumentError(
          "worker result: timed after the harness stopped it at a gate");
    }
  }
  if (!request.measure() && result.trials_size() != request.trial_seeds_size()) {
    return absl::InvalidArgumentError(absl::StrCat("worker result: ", result.trials_size(),
                                                   " trials for ", request.trial_seeds_size(),
                                                   " trial seeds"));
  }
  if (request.profile_call() && result.has_timing()) {
    return absl::InvalidArgumentError("worker result: timed during a profile");
  }
  const bool stopped = request.gate_trials() && gates.stopped;
  if (request.measure() && !stopped && (result.trials_size() == 0 || !result.has_timing() ||
                            result.timing().trials() != result.trials_size())) {
    return absl::InvalidArgumentError(absl::StrCat("worker result: ", result.trials_size(),
                                                   " trials measured, timing claims ",
                                                   result.timing().trials()));
  }
  for (int t = 0; t < result.trials_size(); ++t) {
    const v1::TrialOutputs& trial = result.trials(t);
    std::string where = absl::StrCat("worker result: trials[", t, "]");
    if (trial.trial() != t) {
      return absl::InvalidArgumentError(absl::StrCat(where, ".trial is ", trial.trial()));
    }
    if (trial.outputs_size() != def.outputs_size()) {
      return absl::InvalidArgumentError(absl::StrCat(
          where, " has ", trial.outputs_size(), " outputs, the definition ", def.outputs_size()));
    }
    for (int o = 0; o < def.outputs_size(); ++o) {
      const v1::OutputTensor& out = trial.outputs(o);
      const v1::TensorSpec& spec = def.outputs(o);
      std::string expected = WorkerOutputPath(request.output_dir(), t, spec.name());
      if (out.name() != spec.name() || out.dtype() != spec.dtype() || out.path() != expected) {
        return absl::InvalidArgumentError(
            absl::StrCat(where, ".outputs[", o, "]: expected '", spec.name(), "' at ", expected));
      }
    }
  }
  return absl::OkStatus();
}

}  // namespace kiln
