// Admission of an EvaluateRequest: everything that can be refused is refused here, before a run
// exists, so that bad input changes nothing on the node. Reads the archive, never writes it.
#ifndef KILN_SERVER_ADMISSION_H_
#define KILN_SERVER_ADMISSION_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "harness/archive/archive.h"
#include "harness/model/validate.h"
#include "kiln/v1/harness.pb.h"
#include "server/backend.h"

namespace kiln {

struct AdmissionPolicy {
  Limits limits;
  std::string default_mode = "official";
  const std::vector<NodeBackend>* backends = nullptr;  // the node's; first is the default
};

// A request that passed admission, with the node's defaults filled in.
struct AdmittedRun {
  v1::Definition definition;
  v1::Solution solution;
  std::vector<v1::Workload> workloads;
  std::string mode;
  const NodeBackend* backend = nullptr;
  bool registered_workloads = false;  // the request named no workloads
  std::string principal;              // who submitted it; set by the service
  std::shared_ptr<void> quota_hold;   // the principal's quota slot, held until the run finishes
};

// "official", "kernelbench", "robust".
const std::vector<std::string>& TimingModeNames();
// INVALID_ARGUMENT "mode: 'fast' is not one of official, kernelbench, robust".
absl::Status ValidateMode(const std::string& mode);

// Errors: NOT_FOUND for an unregistered definition; INVALID_ARGUMENT naming the field for bad
// solutions, workloads, modes or backends; FAILED_PRECONDITION for what this node cannot do
// (no native reference, no workloads, a language its backend does not run).
absl::StatusOr<AdmittedRun> AdmitRequest(const v1::EvaluateRequest& request, Archive& archive,
                                         const AdmissionPolicy& policy);

}  // namespace kiln

#endif  // KILN_SERVER_ADMISSION_H_
