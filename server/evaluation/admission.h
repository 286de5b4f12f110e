// Admission of an EvaluateRequest: everything that can be refused is refused here, before a run
// exists, so that bad input changes nothing on the node. Reads the archive, never writes it.
#ifndef KILN_SERVER_EVALUATION_ADMISSION_H_
#define KILN_SERVER_EVALUATION_ADMISSION_H_

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "harness/archive/archive.h"
#include "harness/model/validate.h"
#include "harness/python/python_reference.h"
#include "kiln/v1/harness.pb.h"
#include "server/backend.h"

namespace kiln {

class BatchReferences;

struct AdmissionPolicy {
  Limits limits;
  std::string default_mode = "official";
  const std::vector<NodeBackend>* backends = nullptr;  // the node's; first is the default
  // The node's Python (null: no Python references or solutions). Waited for only when a run
  // needs it.
  const PythonRuntime* python = nullptr;
};

// What computes a run's reference outputs and latency.
inline constexpr char kPythonReference[] = "python";
inline constexpr char kNativeReference[] = "native_reference";
// Baselines a request may name besides the reference (and besides "solution:NAME", a solution
// registered for the run's definition).
const std::vector<std::string>& BaselineNames();

// A profile's options (the Profile RPC): what ncu collects, and what is profiled beside the
// solution ("reference", torch_eager, torch_compile, solution:NAME).
struct ProfileOptions {
  std::string section = "basic";
  std::vector<std::string> also;
  std::string workload_uuid;  // the registered workload profiled; empty: the first
};

// A request that passed admission, with the node's defaults filled in.
struct AdmittedRun {
  v1::Definition definition;
  v1::Solution solution;
  std::vector<v1::Workload> workloads;
  std::string mode;
  const NodeBackend* backend = nullptr;
  bool registered_workloads = false;  // the request named no workloads
  // kPythonReference: the definition's `reference` run() under torch (flashinfer-bench's
  // reference), chosen on a CUDA backend when the node's python3 imports torch; else
  // kNativeReference.
  std::string reference_source;
  std::vector<std::string> baselines;  // torch_eager | torch_compile | solution:NAME, as requested
  // The registered solution of every "solution:NAME" in `baselines`, keyed by that baseline name
  // ("solution:NAME"), as it was when the run was admitted.
  std::map<std::string, v1::Solution> solution_baselines;
  std::string principal;              // who submitted it; set by the service
  // EvaluateBatch: the batch's id (its inputs' seed in place of the run id) and the reference
  // outputs its runs share. Empty / null for a run of its own.
  std::string batch_id;
  std::shared_ptr<BatchReferences> batch;
  std::shared_ptr<void> quota_hold;   // the principal's quota slot, held until the run finishes
  std::string confirms;  // a confirmation run: the ranked run it evaluates again (Run.confirms)
  // A profile (Run.kind "profile"): the solution evaluated on its one workload, then profiled.
  std::optional<ProfileOptions> profile;
};

// "official", "kernelbench", "robust".
const std::vector<std::string>& TimingModeNames();
// INVALID_ARGUMENT "mode: 'fast' is not one of official, kernelbench, robust".
absl::Status ValidateMode(const std::string& mode);

// The run's definition carries the operator's settings (server/definition_settings.h): its
// tolerance and official-mode counts are fixed at admission.
// Errors: NOT_FOUND for an unregistered definition; INVALID_ARGUMENT naming the field for bad
// solutions, workloads, modes, backends or baselines (a "solution:NAME" not registered for the
// definition); FAILED_PRECONDITION for what this node cannot do (no reference this node can run,
// no workloads, a language its backend does not run, a Python or Triton solution the node's
// Python cannot run, a torch baseline without torch, a solution baseline in a language the
// run's backend does not run).
// NOT_FOUND "FIELD: unknown definition 'X' (registered on this node: ...)": one wording for an
// unregistered definition name wherever one is taken.
absl::Status UnknownDefinition(Archive& archive, const std::string& name,
                               const std::string& field);

// Why no run of `def` can be evaluated on this node: per backend, why neither its native
// reference nor its Python reference runs there ("host: ...; cuda: ..."); "" when some backend
// can compute its reference.
std::string CannotEvaluate(const v1::Definition& def, const AdmissionPolicy& policy);

absl::StatusOr<AdmittedRun> AdmitRequest(const v1::EvaluateRequest& request, Archive& archive,
                                         const AdmissionPolicy& policy);

}  // namespace kiln

#endif  // KILN_SERVER_EVALUATION_ADMISSION_H_
