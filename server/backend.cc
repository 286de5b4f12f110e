#include "server/backend.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "server/node_info.h"

#ifdef KILN_HAVE_CUDA
#include "harness/backend/cuda/cuda_devices.h"
#endif
#ifdef KILN_HAVE_LEVEL_ZERO
#include "harness/backend/level_zero/ze_devices.h"
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

// The node's Level Zero GPUs, or why there are none (on a node without the driver: "no Level
// Zero device: zeInit: ...; no Level Zero driver is installed ..."). C++ host launchers
// (language cpp) run here too when a run asks for backend level_zero.
absl::StatusOr<NodeBackend> LevelZeroBackend() {
#ifdef KILN_HAVE_LEVEL_ZERO
  absl::StatusOr<std::vector<ZeDeviceInfo>> gpus = ListLevelZeroDevices();
  if (!gpus.ok()) {
    return absl::FailedPreconditionError(absl::StrCat(
        "backend 'level_zero' is not available on this node: ", gpus.status().message()));
  }
  NodeBackend level_zero;
  level_zero.name = "level_zero";
  level_zero.compile_target = "level_zero";
  level_zero.languages = {"opencl", "cpp"};
  for (const ZeDeviceInfo& gpu : *gpus) level_zero.devices.push_back(gpu.name);
  return level_zero;
#else
  return absl::FailedPreconditionError(
      "backend 'level_zero' is not available on this node: this kiln-harness was built without "
      "the Level Zero headers");
#endif
}

}  // namespace

absl::Status LevelZeroBackendStatus() {
  static const absl::Status* status = new absl::Status(LevelZeroBackend().status());
  return *status;
}

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
    // After the host: cpp solutions keep running on the host unless a run asks for level_zero.
    if (absl::StatusOr<NodeBackend> ze = LevelZeroBackend(); ze.ok()) out.push_back(*ze);
    return out;
  }
  if (flag == "host") return std::vector<NodeBackend>{HostBackend()};
  if (flag == "level_zero") {
    absl::StatusOr<NodeBackend> ze = LevelZeroBackend();
    if (!ze.ok()) return ze.status();
    return std::vector<NodeBackend>{*std::move(ze)};
  }
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
