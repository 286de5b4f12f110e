#include "server/evaluation/admission.h"

#include <algorithm>
#include <optional>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "harness/compile/python_toolchain.h"
#include "harness/model/solution_baseline.h"
#include "harness/model/unknown_definition.h"
#include "server/definition_settings.h"

namespace kiln {

absl::Status UnknownDefinition(Archive& archive, const std::string& name,
                               const std::string& field) {
  std::vector<std::string> names;
  if (absl::StatusOr<v1::ListDefinitionsResponse> list = archive.ListDefinitions(); list.ok()) {
    for (const v1::DefinitionSummary& d : list->definitions()) names.push_back(d.name());
  }
  return absl::NotFoundError(
      absl::StrCat(field.empty() ? "" : absl::StrCat(field, ": "),
                   UnknownDefinitionMessage(name, names)));
}

namespace {

bool Contains(const std::vector<std::string>& names, const std::string& name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

absl::StatusOr<v1::Definition> RegisteredDefinition(Archive& archive, const std::string& name,
                                                    const std::string& field) {
  auto def = DefinitionForRuns(archive, name);
  if (absl::IsNotFound(def.status())) return UnknownDefinition(archive, name, field);
  return def;
}

bool HasPythonReference(const v1::Definition& def) {
  return def.reference().find_first_not_of(" \t\r\n") != std::string::npos;
}

bool HasNativeReference(const v1::Definition& def) {
  return def.has_native_reference() && !def.native_reference().sources().empty();
}

// Why the Python reference cannot run here ("" when it can).
std::string PythonUnavailable(const v1::Definition& def, const NodeBackend& backend,
                              const PythonRuntime* python) {
  if (!HasPythonReference(def)) return "it has no Python reference";
  // A KernelBench problem's reference (its Model, in torch) runs under the CPU torch on the host
  // backend too; other Python references (flashinfer-bench's run(), written for CUDA tensors)
  // on the cuda backend only.
  const bool host_too = def.has_kernelbench();
  if (backend.name != "cuda" && !(host_too && backend.name == "host")) {
    return absl::StrCat("Python references run on the cuda backend, not '", backend.name, "'");
  }
  if (python == nullptr) return "this node has no Python reference runner";
  const PythonReference& probed = python->Get();
  if (backend.name == "host") {
    if (!probed.torch) {
      return absl::StrCat("no Python reference runner: ",
                          probed.solutions_note.empty() ? probed.note : probed.solutions_note);
    }
    return "";
  }
  if (!probed.available) return absl::StrCat("no Python reference runner: ", probed.note);
  return "";
}

// A Python or Triton solution needs the node's Python with torch (and triton, on a GPU).
absl::Status CheckPythonSolution(const v1::Solution& solution, const NodeBackend& backend,
                                 const PythonRuntime* python) {
  const std::string& language = solution.spec().language();
  if (language != "python" && language != "triton") return absl::OkStatus();
  const std::string missing =
      python == nullptr ? std::string("this node runs no Python")
                        : PythonLanguageUnavailable(python->Get(), language, backend.name);
  if (missing.empty()) return absl::OkStatus();
  return absl::FailedPreconditionError(absl::StrCat("solution.spec.language: '", language,
                                                    "' cannot run on backend '", backend.name,
                                                    "' of this node: ", missing));
}

absl::StatusOr<std::string> ChooseReference(const v1::Definition& def,
                                            const NodeBackend& backend,
                                            const PythonRuntime* python) {
  // On the host backend a native reference, where there is one, stays the reference: the
  // Python one runs there only for definitions that have nothing else.
  if (backend.name == "host" && HasNativeReference(def)) return std::string(kNativeReference);
  const std::string python_missing = PythonUnavailable(def, backend, python);
  if (python_missing.empty()) return std::string(kPythonReference);
  if (HasNativeReference(def)) return std::string(kNativeReference);
  return absl::FailedPreconditionError(absl::StrCat(
      "definition '", def.name(), "' has no native_reference, and its Python reference cannot ",
      "run here: ", python_missing));
}

// The registered solution a "solution:NAME" baseline names (`where` is "baselines[i]").
absl::StatusOr<v1::Solution> RegisteredBaseline(Archive& archive, const std::string& definition,
                                                const std::string& name, const std::string& where) {
  if (absl::Status s = ValidateSolutionName(name, absl::StrCat(where, ": solution name"));
      !s.ok()) {
    return s;
  }
  absl::StatusOr<v1::Solution> solution = archive.GetSolution(definition, name);
  if (absl::IsNotFound(solution.status())) {
    return absl::InvalidArgumentError(
        absl::StrCat(where, ": no solution '", name, "' is registered for definition '", definition,
                     "' (kiln solutions list --definition ", definition, ")"));
  }
  return solution;
}

// Checks the baselines the request names and resolves each "solution:NAME" into
// run.solution_baselines. Whether the node can time a solution baseline is the evaluation's
// to report, as for a torch baseline whose run fails.
absl::Status ResolveBaselines(const v1::EvaluateRequest& request, Archive& archive,
                              const NodeBackend& backend, const PythonRuntime* python,
                              AdmittedRun& run) {
  int first_torch = -1;
  int compile_index = -1;
  for (int i = 0; i < request.baselines_size(); ++i) {
    const std::string& name = request.baselines(i);
    const std::string where = absl::StrCat("baselines[", i, "]");
    for (int j = 0; j < i; ++j) {
      if (request.baselines(j) == name) {
        return absl::InvalidArgumentError(absl::StrCat(where, ": '", name, "' is named twice"));
      }
    }
    if (std::optional<std::string> registered = SolutionBaselineName(name)) {
      absl::StatusOr<v1::Solution> solution =
          RegisteredBaseline(archive, run.definition.name(), *registered, where);
      if (!solution.ok()) return solution.status();
      // It runs on the run's device slot, so the run's backend must run its language.
      const std::string& language = solution->spec().language();
      std::string cannot;
      if (!Contains(backend.languages, language)) {
        cannot = absl::StrCat("backend '", backend.name, "' does not run ", language);
      } else if (IsPythonLanguage(language)) {
        cannot = python == nullptr ? std::string("this node runs no Python")
                                   : PythonLanguageUnavailable(python->Get(), language,
                                                               backend.name);
      }
      if (!cannot.empty()) {
        return absl::FailedPreconditionError(absl::StrCat(
            where, ": solution '", *registered, "' (", language, ") cannot run here: ", cannot));
      }
      run.solution_baselines[name] = *std::move(solution);
      continue;
    }
    if (!Contains(BaselineNames(), name)) {
      return absl::InvalidArgumentError(absl::StrCat(where, ": '", name, "' is not one of ",
                                                     absl::StrJoin(BaselineNames(), ", "),
                                                     " or solution:NAME"));
    }
    if (name == "torch_compile" && compile_index < 0) compile_index = i;
    if (first_torch < 0) first_torch = i;
  }
  if (first_torch < 0) return absl::OkStatus();
  const std::string missing = PythonUnavailable(run.definition, backend, python);
  if (!missing.empty()) {
    return absl::FailedPreconditionError(absl::StrCat(
        "baselines[", first_torch, "]: ", request.baselines(first_torch), " runs definition '",
        run.definition.name(), "''s Python reference under torch, which cannot run here: ",
        missing));
  }
  if (compile_index >= 0 && python != nullptr) {
    // torch.compile came with torch 2.0: on an older torch the baseline could only fail, and
    // its failure would read as the reference's.
    const PythonReference& probed = python->Get();
    int major = 0;
    if (probed.torch &&
        absl::SimpleAtoi(probed.torch_version.substr(0, probed.torch_version.find('.')),
                         &major) &&
        major < 2) {
      return absl::FailedPreconditionError(absl::StrCat(
          "baselines[", compile_index, "]: torch_compile needs torch >= 2.0 (torch.compile); "
          "this node's Python has torch ", probed.torch_version,
          " (torch_eager times the reference as it is)"));
    }
  }
  return absl::OkStatus();
}

absl::Status CheckRunnable(const v1::Definition& def, const v1::Solution& solution,
                           const NodeBackend& backend, const std::string& reference_source) {
  const v1::Solution& reference = def.native_reference();
  const std::string& language = solution.spec().language();
  if (!Contains(backend.languages, language)) {
    return absl::FailedPreconditionError(
        absl::StrCat("solution.spec.language: '", language, "' does not run on backend '",
                     backend.name, "' (it runs ", absl::StrJoin(backend.languages, ", "), ")"));
  }
  if (reference_source == kPythonReference) return absl::OkStatus();
  // A C++ reference runs on the host whatever the candidate's backend (ReferenceBackendName).
  if (ReferenceBackendName(reference.spec().language(), backend.name) != "host" &&
      !Contains(backend.languages, reference.spec().language())) {
    return absl::FailedPreconditionError(absl::StrCat(
        "definition '", def.name(), "': native_reference language '", reference.spec().language(),
        "' does not run on backend '", backend.name, "'"));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<v1::Workload>> RunWorkloads(const v1::EvaluateRequest& request,
                                                       const v1::Definition& def, Archive& archive,
                                                       const Limits& limits) {
  if (request.workloads_size() > limits.max_workloads) {
    return absl::InvalidArgumentError(absl::StrCat("workloads: ", request.workloads_size(),
                                                   " given, at most ", limits.max_workloads));
  }
  std::vector<v1::Workload> workloads(request.workloads().begin(), request.workloads().end());
  for (size_t i = 0; i < workloads.size(); ++i) {
    absl::Status valid =
        ValidateWorkload(def, workloads[i], limits, absl::StrCat("workloads[", i, "]"));
    if (!valid.ok()) return valid;
  }
  if (!workloads.empty()) return workloads;
  auto registered = archive.GetWorkloads(def.name());
  if (!registered.ok()) return registered.status();
  if (registered->empty()) {
    return absl::FailedPreconditionError(
        absl::StrCat("definition '", def.name(), "' has no workloads; pass some"));
  }
  return registered;
}

// Level Zero work (backend level_zero, or an opencl solution with no backend named) on a node
// without Level Zero GPUs is refused with the reason: no loader, no driver, or no GPU.
absl::Status CheckLevelZeroPresent(const v1::EvaluateRequest& request,
                                   const std::string& requested,
                                   const std::vector<NodeBackend>& backends) {
  bool wants = requested == "level_zero" ||
               (requested.empty() && request.solution().spec().language() == "opencl");
  if (!wants) return absl::OkStatus();
  for (const NodeBackend& b : backends) {
    if (b.name == "level_zero") return absl::OkStatus();
  }
  return LevelZeroBackendStatus();  // OK when the node could, but was started without it
}

}  // namespace

const std::vector<std::string>& BaselineNames() {
  static const std::vector<std::string> kNames = {"torch_eager", "torch_compile"};
  return kNames;
}

const std::vector<std::string>& TimingModeNames() {
  static const std::vector<std::string> kModes = {"official", "kernelbench", "robust"};
  return kModes;
}

absl::Status ValidateMode(const std::string& mode) {
  if (Contains(TimingModeNames(), mode)) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrCat("mode: '", mode, "' is not one of ", absl::StrJoin(TimingModeNames(), ", ")));
}

std::string CannotEvaluate(const v1::Definition& def, const AdmissionPolicy& policy) {
  if (policy.backends == nullptr || policy.backends->empty()) return "this node has no backend";
  std::vector<std::string> reasons;
  for (const NodeBackend& backend : *policy.backends) {
    absl::StatusOr<std::string> source = ChooseReference(def, backend, policy.python);
    if (source.ok()) {
      if (*source == kPythonReference) return "";
      const std::string& language = def.native_reference().spec().language();
      if (ReferenceBackendName(language, backend.name) == "host" ||
          Contains(backend.languages, language)) {
        return "";
      }
      reasons.push_back(absl::StrCat(backend.name, ": its native_reference (", language,
                                     ") does not run there"));
      continue;
    }
    if (!HasPythonReference(def)) {
      reasons.push_back(absl::StrCat(backend.name, ": it has neither a native_reference nor a "
                                                   "Python reference"));
    } else {
      reasons.push_back(absl::StrCat(backend.name, ": no native_reference, and its Python "
                                                   "reference cannot run: ",
                                     PythonUnavailable(def, backend, policy.python)));
    }
  }
  return absl::StrJoin(reasons, "; ");
}

absl::StatusOr<AdmittedRun> AdmitRequest(const v1::EvaluateRequest& request, Archive& archive,
                                         const AdmissionPolicy& policy) {
  AdmittedRun run;
  const std::string& named = request.definition();
  const std::string& solution_def = request.solution().definition();
  if (named.empty() && solution_def.empty()) {
    return absl::InvalidArgumentError("definition: required");
  }
  // The definition is looked up first: an unknown `definition` (a typo) is named as such, not
  // blamed on the solution that names another.
  auto def = RegisteredDefinition(archive, named.empty() ? solution_def : named,
                                  named.empty() ? "solution.definition" : "definition");
  if (!def.ok()) return def.status();
  if (!named.empty() && !solution_def.empty() && named != solution_def) {
    return absl::InvalidArgumentError(absl::StrCat("solution.definition: '", solution_def,
                                                   "' does not match definition '", named, "'"));
  }
  run.definition = *std::move(def);

  if (absl::Status s = ValidateSolution(run.definition, request.solution(), policy.limits);
      !s.ok()) {
    return s;
  }
  auto workloads = RunWorkloads(request, run.definition, archive, policy.limits);
  if (!workloads.ok()) return workloads.status();
  run.workloads = *std::move(workloads);
  run.registered_workloads = request.workloads().empty();

  run.mode = request.mode().empty() ? policy.default_mode : request.mode();
  if (absl::Status s = ValidateMode(run.mode); !s.ok()) return s;
  // Without a backend named, the first of the node's backends that runs the solution's language.
  std::string requested = request.backend();
  if (requested.empty()) {
    for (const NodeBackend& b : *policy.backends) {
      if (Contains(b.languages, request.solution().spec().language())) {
        requested = b.name;
        break;
      }
    }
  }
  if (absl::Status s = CheckLevelZeroPresent(request, requested, *policy.backends); !s.ok()) {
    return s;
  }
  auto backend = SelectBackend(*policy.backends, requested);
  if (!backend.ok()) return backend.status();
  run.backend = *backend;
  auto source = ChooseReference(run.definition, *run.backend, policy.python);
  if (!source.ok()) return source.status();
  run.reference_source = *std::move(source);
  if (absl::Status s =
          CheckRunnable(run.definition, request.solution(), *run.backend, run.reference_source);
      !s.ok()) {
    return s;
  }
  if (absl::Status s = CheckPythonSolution(request.solution(), *run.backend, policy.python);
      !s.ok()) {
    return s;
  }
  if (absl::Status s = ResolveBaselines(request, archive, *run.backend, policy.python, run);
      !s.ok()) {
    return s;
  }
  run.baselines.assign(request.baselines().begin(), request.baselines().end());
  run.solution = request.solution();
  if (run.solution.definition().empty()) run.solution.set_definition(run.definition.name());
  return run;
}

}  // namespace kiln
