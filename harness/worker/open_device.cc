#include "harness/worker/open_device.h"

#include "absl/strings/str_cat.h"
#include "harness/backend/host/host_device.h"
#ifdef KILN_HAVE_CUDA
#include "harness/backend/cuda/cuda_device.h"
#endif
#ifdef KILN_HAVE_LEVEL_ZERO
#include "harness/backend/level_zero/level_zero_device.h"
#endif

namespace kiln {

absl::StatusOr<std::unique_ptr<Device>> OpenDevice(const std::string& backend, int device_index) {
  if (backend.empty() || backend == "host") {
    if (device_index != 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          "request.device_index: the host backend has only device 0, not ", device_index));
    }
    return std::unique_ptr<Device>(new HostDevice());
  }
#ifdef KILN_HAVE_CUDA
  if (backend == "cuda") {
    // FAILED_PRECONDITION "no CUDA device: ..." where the runtime, driver or GPU is missing.
    absl::StatusOr<std::unique_ptr<CudaDevice>> device = CudaDevice::Open(device_index);
    if (!device.ok()) return device.status();
    return std::unique_ptr<Device>(*std::move(device));
  }
#endif
#ifdef KILN_HAVE_LEVEL_ZERO
  if (backend == "level_zero") {
    // FAILED_PRECONDITION "no Level Zero device: ..." where the loader, driver or GPU is missing.
    absl::StatusOr<std::unique_ptr<LevelZeroDevice>> device = LevelZeroDevice::Open(device_index);
    if (!device.ok()) return device.status();
    return std::unique_ptr<Device>(*std::move(device));
  }
#endif
  if (backend == "cuda" || backend == "level_zero") {
    return absl::UnimplementedError(
        absl::StrCat("request.backend: '", backend, "' is not built into this kiln-worker"));
  }
  return absl::InvalidArgumentError(absl::StrCat("request.backend: unknown backend '", backend,
                                                 "' (expected host, cuda or level_zero)"));
}

absl::StatusOr<std::shared_ptr<Device>> WorkerDevice(const std::string& backend,
                                                     int device_index) {
  struct Kept {
    std::string backend;
    int index = -1;
    std::shared_ptr<Device> device;
  };
  static auto* kept = new Kept();  // never destroyed: workers end with _exit
  if (kept->device != nullptr && kept->backend == backend && kept->index == device_index) {
    return kept->device;
  }
  kept->device.reset();
  absl::StatusOr<std::unique_ptr<Device>> device = OpenDevice(backend, device_index);
  if (!device.ok()) return device.status();
  kept->backend = backend;
  kept->index = device_index;
  kept->device = std::shared_ptr<Device>(*std::move(device));
  return kept->device;
}

}  // namespace kiln
