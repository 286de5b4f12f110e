#include "server/backend.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "server/node_info.h"

#ifdef KILN_HAVE_CUDA
#include "harness/backend/cuda/cuda_devices.h"
#endif

namespace kiln {

namespace {

bool IsKnown(const std::string& name) {
  const auto& known = KnownBackendNames();
  return std::find(known.begin(), known.end(), name) != known.end();
}

absl::Status Unknown(const std::string& name) {
  return absl::InvalidArgumentError(absl::StrCat("backend: '", name, "' is not one of ",
                                                 absl::StrJoin(KnownBackendNames(), ", ")));
}

absl::Status Unavailable(const std::string& name) {
  return absl::FailedPreconditionError(
      absl::StrCat("backend '", name, "' is not available on this node"));
}

NodeBackend HostBackend() {
  NodeBackend host;
  host.name = "host";
  host.compile_target = "host";
  host.languages = {"cpp"};
  host.devices = {CpuModelName()};
  return host;
}

// The node's GPUs, or why there are none.
absl::StatusOr<NodeBackend> CudaBackend() {
#ifdef KILN_HAVE_CUDA
  absl::StatusOr<std::vector<CudaDeviceInfo>> gpus = ListCudaDevices();
  if (!gpus.ok()) {
    return absl::FailedPreconditionError(absl::StrCat(
        "backend 'cuda' is not available on this node: ", gpus.status().message()));
  }
  NodeBackend cuda;
  cuda.name = "cuda";
  cuda.compile_target = "cuda";
  cuda.languages = {"cuda"};
  for (const CudaDeviceInfo& gpu : *gpus) {
    cuda.devices.push_back(gpu.name);
    cuda.compute_capabilities.push_back(gpu.compute_capability);
  }
  return cuda;
#else
  return absl::FailedPreconditionError(
      "backend 'cuda' is not available on this node: this kiln-harness was built without the "
      "CUDA toolkit");
#endif
}

}  // namespace

std::string ReferenceBackendName(const std::string& reference_language,
                                 const std::string& candidate_backend) {
  return reference_language == "cpp" ? "host" : candidate_backend;
}

const std::vector<std::string>& KnownBackendNames() {
  static const std::vector<std::string> kNames = {"host", "cuda", "level_zero"};
  return kNames;
}

absl::StatusOr<std::vector<NodeBackend>> ResolveNodeBackends(const std::string& flag) {
  // `auto` prefers the GPUs and keeps the host backend beside them.
  if (flag == "auto" || flag.empty()) {
    std::vector<NodeBackend> out;
    if (absl::StatusOr<NodeBackend> cuda = CudaBackend(); cuda.ok()) out.push_back(*cuda);
    out.push_back(HostBackend());
    return out;
  }
  if (flag == "host") return std::vector<NodeBackend>{HostBackend()};
  if (flag == "cuda") {
    absl::StatusOr<NodeBackend> cuda = CudaBackend();
    if (!cuda.ok()) return cuda.status();
    return std::vector<NodeBackend>{*std::move(cuda)};
  }
  if (!IsKnown(flag)) return Unknown(flag);
  return Unavailable(flag);
}

absl::StatusOr<const NodeBackend*> SelectBackend(const std::vector<NodeBackend>& backends,
                                                 const std::string& requested) {
  if (backends.empty()) return absl::FailedPreconditionError("this node has no backend");
  if (requested.empty()) return &backends.front();
  for (const NodeBackend& b : backends) {
    if (b.name == requested) return &b;
  }
  if (!IsKnown(requested)) return Unknown(requested);
  return Unavailable(requested);
}

}  // namespace kiln
