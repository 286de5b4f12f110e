// Picks the Device a worker evaluates on from the request's backend name.
#ifndef KILN_HARNESS_WORKER_OPEN_DEVICE_H_
#define KILN_HARNESS_WORKER_OPEN_DEVICE_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "harness/backend/device.h"

namespace kiln {

// backend: "host" (or empty) | "cuda" | "level_zero"; device_index selects the GPU. A backend
// not built into this kiln-worker is UNIMPLEMENTED, naming it.
absl::StatusOr<std::unique_ptr<Device>> OpenDevice(const std::string& backend, int device_index);

// The device a worker's requests evaluate on: opened by the first request, kept for the next
// ones of the same process (a worker serves a run's workloads one after the other; context,
// stream, timer and flush buffer are made once). Another backend or index opens anew. Only
// the worker's request thread calls this.
absl::StatusOr<std::shared_ptr<Device>> WorkerDevice(const std::string& backend, int device_index);

}  // namespace kiln

#endif  // KILN_HARNESS_WORKER_OPEN_DEVICE_H_
