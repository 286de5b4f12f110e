// The execution backends a kiln-harness node offers (host now; cuda and level_zero later) and
// the devices of each. A node resolves its backends once at start (--backend); each run then
// picks one of them (EvaluateRequest.backend, empty for the node default).
#ifndef KILN_SERVER_BACKEND_H_
#define KILN_SERVER_BACKEND_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace kiln {

struct NodeBackend {
  std::string name;                    // host | cuda | level_zero
  std::string compile_target;          // the target passed to Compiler::Compile
  std::vector<std::string> languages;  // solution languages this backend runs
  std::vector<std::string> devices;    // device names, indexed by device index
  std::vector<int> compute_capabilities;  // cuda: 10 * major + minor per device
};

// The backend a definition's native reference runs on: C++ references run on the host (inputs
// generated there, outputs compared there), CUDA ones on the candidate's backend.
std::string ReferenceBackendName(const std::string& reference_language,
                                 const std::string& candidate_backend);

// "host, cuda, level_zero": every backend name kiln knows.
const std::vector<std::string>& KnownBackendNames();

// OK when this node can drive Level Zero GPUs; else FAILED_PRECONDITION saying why ("backend
// 'level_zero' is not available on this node: no Level Zero device: ..."). Probed once.
absl::Status LevelZeroBackendStatus();

// The backends of this node for the --backend value `flag` (auto | host | cuda | level_zero).
// The first is the node default. An unknown name is INVALID_ARGUMENT; a known backend this node
// cannot drive is FAILED_PRECONDITION "backend 'cuda' is not available on this node".
absl::StatusOr<std::vector<NodeBackend>> ResolveNodeBackends(const std::string& flag);

// The backend a run uses: `requested`, or the node default when empty. Errors as above.
absl::StatusOr<const NodeBackend*> SelectBackend(const std::vector<NodeBackend>& backends,
                                                 const std::string& requested);

}  // namespace kiln

#endif  // KILN_SERVER_BACKEND_H_
