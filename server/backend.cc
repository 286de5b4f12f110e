#include "server/backend.h"

#include <algorithm>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "harness/sandbox/nvidia_device_map.h"
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
  host.languages = {"cpp", "python"};
  host.devices = {CpuModelName()};
  host.placements = {DevicePlacement{}};
  return host;
}

// The node's GPUs that --gpus selects, or why there are none.
absl::StatusOr<NodeBackend> CudaBackend(const std::string& gpus_flag) {
#ifdef KILN_HAVE_CUDA
  absl::StatusOr<std::vector<CudaDeviceInfo>> gpus = ListCudaDevices();
  if (!gpus.ok()) {
    return absl::FailedPreconditionError(absl::StrCat(
        "backend 'cuda' is not available on this node: ", gpus.status().message()));
  }
  std::vector<GpuFacts> facts;
  for (const CudaDeviceInfo& gpu : *gpus) {
    facts.push_back(
        GpuFacts{gpu.index, gpu.name, gpu.compute_capability, gpu.pci_bus_id, gpu.uuid});
  }
  return CudaBackendFor(facts, gpus_flag, "/proc");
#else
  (void)gpus_flag;
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
  for (const ZeDeviceInfo& gpu : *gpus) {
    DevicePlacement placement;
    placement.index = static_cast<int>(level_zero.devices.size());
    placement.device_minor = placement.index;  // /dev/dri/renderD<128 + index>
    level_zero.devices.push_back(gpu.name);
    level_zero.placements.push_back(placement);
  }
  return level_zero;
#else
  return absl::FailedPreconditionError(
      "backend 'level_zero' is not available on this node: this kiln-harness was built without "
      "the Level Zero headers");
#endif
}

std::string ExistingGpus(int device_count) {
  if (device_count <= 0) return "this node has no CUDA device";
  std::vector<int> indices;
  for (int i = 0; i < device_count; ++i) indices.push_back(i);
  return absl::StrCat("this node has ", device_count, " CUDA device(s): ",
                      absl::StrJoin(indices, ", "));
}

}  // namespace

absl::StatusOr<std::vector<int>> ParseGpuList(const std::string& flag, int device_count) {
  const std::string trimmed(absl::StripAsciiWhitespace(flag));
  std::vector<int> out;
  if (trimmed.empty() || trimmed == "all") {
    for (int i = 0; i < device_count; ++i) out.push_back(i);
    return out;
  }
  for (absl::string_view entry : absl::StrSplit(trimmed, ',')) {
    entry = absl::StripAsciiWhitespace(entry);
    int index = -1;
    if (entry.empty() || !absl::SimpleAtoi(entry, &index) || index < 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--gpus '", flag, "': '", entry,
          "' is not a GPU index (give CUDA device indices such as 0,2,5, or all; ",
          ExistingGpus(device_count), ")"));
    }
    if (index >= device_count) {
      return absl::InvalidArgumentError(absl::StrCat("--gpus '", flag, "': GPU ", index,
                                                     " does not exist; ",
                                                     ExistingGpus(device_count)));
    }
    if (std::find(out.begin(), out.end(), index) != out.end()) {
      return absl::InvalidArgumentError(
          absl::StrCat("--gpus '", flag, "': GPU ", index, " is listed twice"));
    }
    out.push_back(index);
  }
  std::sort(out.begin(), out.end());
  return out;
}

absl::StatusOr<NodeBackend> CudaBackendFor(const std::vector<GpuFacts>& gpus,
                                           const std::string& gpus_flag,
                                           const std::string& proc_root) {
  absl::StatusOr<std::vector<int>> selected =
      ParseGpuList(gpus_flag, static_cast<int>(gpus.size()));
  if (!selected.ok()) return selected.status();
  NodeBackend cuda;
  cuda.name = "cuda";
  cuda.compile_target = "cuda";
  cuda.languages = {"cuda", "python", "triton"};
  for (int i : *selected) {
    const GpuFacts& gpu = gpus[static_cast<size_t>(i)];
    DevicePlacement placement;
    placement.index = gpu.index;
    placement.pci_bus_id = NormalizePciBusId(gpu.pci_bus_id);
    if (placement.pci_bus_id.empty()) placement.pci_bus_id = gpu.pci_bus_id;
    placement.uuid = gpu.uuid;
    absl::StatusOr<int> minor =
        gpu.pci_bus_id.empty()
            ? absl::StatusOr<int>(absl::NotFoundError("the runtime reported no PCI bus id"))
            : NvidiaDeviceMinor(proc_root, gpu.pci_bus_id);
    if (minor.ok()) {
      placement.device_minor = *minor;
      placement.minor_source = "PCI bus id";
    } else {
      placement.device_minor = gpu.index;
      placement.minor_guessed = true;
      placement.minor_source =
          absl::StrCat("assumed equal to the CUDA ordinal: ", minor.status().message());
      cuda.warnings.push_back(absl::StrCat(
          "GPU ", gpu.index, " (", gpu.name,
          "): its /dev/nvidiaN node could not be found from its PCI bus id (",
          minor.status().message(), "); assuming /dev/nvidia", gpu.index,
          ". A sandboxed worker may be given another GPU's node where the CUDA order and the "
          "driver's order differ"));
    }
    cuda.devices.push_back(gpu.name);
    cuda.compute_capabilities.push_back(gpu.compute_capability);
    cuda.placements.push_back(std::move(placement));
  }
  if (cuda.devices.empty()) {
    return absl::FailedPreconditionError("backend 'cuda' is not available on this node: no GPU");
  }
  return cuda;
}

std::string DeviceHardwareLabel(const NodeBackend& backend, int slot) {
  if (slot < 0 || slot >= static_cast<int>(backend.devices.size())) return "";
  const std::string& name = backend.devices[static_cast<size_t>(slot)];
  if (slot >= static_cast<int>(backend.placements.size())) return name;
  const DevicePlacement& p = backend.placements[static_cast<size_t>(slot)];
  if (backend.name == "host") return name;
  if (p.pci_bus_id.empty()) return absl::StrCat(name, " (GPU ", p.index, ")");
  return absl::StrCat(name, " (GPU ", p.index, ", ", p.pci_bus_id, ")");
}

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

absl::StatusOr<std::vector<NodeBackend>> ResolveNodeBackends(const std::string& flag,
                                                             const std::string& gpus) {
  const bool all_gpus = absl::StripAsciiWhitespace(gpus).empty() || gpus == "all";
  if (!all_gpus && flag != "auto" && !flag.empty() && flag != "cuda") {
    return absl::InvalidArgumentError(absl::StrCat(
        "--gpus '", gpus, "' selects CUDA devices, but --backend ", flag, " serves none"));
  }
  // `auto` prefers the GPUs and keeps the host backend beside them.
  if (flag == "auto" || flag.empty()) {
    std::vector<NodeBackend> out;
    absl::StatusOr<NodeBackend> cuda = CudaBackend(gpus);
    if (cuda.ok()) {
      out.push_back(*cuda);
    } else if (cuda.status().code() == absl::StatusCode::kInvalidArgument) {
      return cuda.status();  // a bad --gpus, named by ParseGpuList
    } else if (!all_gpus) {
      // GPUs were asked for by index: serving none of them silently would be wrong.
      return absl::FailedPreconditionError(
          absl::StrCat("--gpus '", gpus, "': ", cuda.status().message()));
    }
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
    absl::StatusOr<NodeBackend> cuda = CudaBackend(gpus);
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
