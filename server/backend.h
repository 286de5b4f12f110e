// The execution backends a kiln-harness node offers (host now; cuda and level_zero later) and
// the devices of each. A node resolves its backends once at start (--backend); each run then
// picks one of them (EvaluateRequest.backend, empty for the node default).
#ifndef KILN_SERVER_BACKEND_H_
#define KILN_SERVER_BACKEND_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace kiln {

// Where the device of one device slot is: what a run record names, and what pins a worker to it.
struct DevicePlacement {
  int index = 0;           // the device's index on the node (cuda: the harness's CUDA ordinal)
  std::string pci_bus_id;  // GPUs: "0000:19:00.0"; empty when unknown
  std::string uuid;        // cuda: "GPU-..." (CUDA_VISIBLE_DEVICES of an unsandboxed worker)
  // The device node a sandboxed worker is given: cuda /dev/nvidia<minor>, level_zero
  // /dev/dri/renderD<128+minor>; -1: none (host).
  int device_minor = -1;
  // cuda: "PCI bus id" when the driver's /proc listing gave the minor; otherwise why it could
  // not, and the minor is the CUDA ordinal (right only when the two orders agree).
  std::string minor_source;
  bool minor_guessed = false;
};

struct NodeBackend {
  std::string name;                    // host | cuda | level_zero
  std::string compile_target;          // the target passed to Compiler::Compile
  std::vector<std::string> languages;  // solution languages this backend runs
  std::vector<std::string> devices;    // device names, indexed by device slot
  std::vector<int> compute_capabilities;  // cuda: 10 * major + minor per device
  std::vector<DevicePlacement> placements;  // per device slot, as `devices`
  std::vector<std::string> warnings;        // said at start and by `kiln-harness --check`
};

// What the CUDA runtime says about one GPU (server-side copy, so that the choice of GPUs is
// testable without the CUDA backend).
struct GpuFacts {
  int index = 0;  // CUDA ordinal
  std::string name;
  int compute_capability = 0;
  std::string pci_bus_id;
  std::string uuid;
};

// The GPUs --gpus selects out of `device_count` CUDA devices: "all" (or empty) for every one,
// else a comma-separated list of CUDA ordinals ("0,2,5"), returned ascending. INVALID_ARGUMENT
// naming --gpus and the devices that exist for an unknown, repeated or malformed entry.
absl::StatusOr<std::vector<int>> ParseGpuList(const std::string& flag, int device_count);

// The cuda backend serving the GPUs of `gpus` that `gpus_flag` selects, one device slot each.
// Each slot's /dev/nvidiaN minor comes from <proc_root>/driver/nvidia/gpus (by PCI bus id); where
// that fails the minor is the CUDA ordinal and `warnings` says so.
absl::StatusOr<NodeBackend> CudaBackendFor(const std::vector<GpuFacts>& gpus,
                                           const std::string& gpus_flag,
                                           const std::string& proc_root);

// "NVIDIA H200 (GPU 1, 0000:19:00.0)": a trace's environment.hardware for device slot `slot`;
// the device name alone for devices without a bus id (the host's CPU).
std::string DeviceHardwareLabel(const NodeBackend& backend, int slot);

// The backend a definition's native reference runs on: C++ references run on the host (inputs
// generated there, outputs compared there), CUDA ones on the candidate's backend.
std::string ReferenceBackendName(const std::string& reference_language,
                                 const std::string& candidate_backend);

// "host, cuda, level_zero": every backend name kiln knows.
const std::vector<std::string>& KnownBackendNames();

// OK when this node can drive Level Zero GPUs; else FAILED_PRECONDITION saying why ("backend
// 'level_zero' is not available on this node: no Level Zero device: ..."). Probed once.
absl::Status LevelZeroBackendStatus();

// The backends of this node for the --backend value `flag` (auto | host | cuda | level_zero) and
// the --gpus value `gpus` (which CUDA devices get a slot; see ParseGpuList). The first is the
// node default. An unknown name is INVALID_ARGUMENT; a known backend this node cannot drive is
// FAILED_PRECONDITION "backend 'cuda' is not available on this node"; --gpus other than "all"
// without the cuda backend is an error naming --gpus.
absl::StatusOr<std::vector<NodeBackend>> ResolveNodeBackends(const std::string& flag,
                                                             const std::string& gpus = "all");

// The backend a run uses: `requested`, or the node default when empty. Errors as above.
absl::StatusOr<const NodeBackend*> SelectBackend(const std::vector<NodeBackend>& backends,
                                                 const std::string& requested);

}  // namespace kiln

#endif  // KILN_SERVER_BACKEND_H_
