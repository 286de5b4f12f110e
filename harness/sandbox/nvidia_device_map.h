// Which /dev/nvidiaN node belongs to which GPU. The CUDA ordinal of a device is not its device
// node's minor number in general (CUDA orders devices fastest first, or as CUDA_VISIBLE_DEVICES
// says; the driver numbers them in probe order), so a worker pinned to one GPU is given the node
// whose minor the driver reports for that GPU's PCI bus id, read from
// <proc_root>/driver/nvidia/gpus/<domain:bus:device.function>/information ("Device Minor:").
//
//   absl::StatusOr<int> minor = NvidiaDeviceMinor("/proc", "0000:19:00.0");
//   if (minor.ok()) nodes = GpuDeviceNodes("cuda", *minor);
//
// Reads files only: no driver call, so tests use a fake tree.
#ifndef KILN_HARNESS_SANDBOX_NVIDIA_DEVICE_MAP_H_
#define KILN_HARNESS_SANDBOX_NVIDIA_DEVICE_MAP_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace kiln {

// One GPU as the NVIDIA kernel driver lists it.
struct NvidiaProcGpu {
  std::string pci_bus_id;  // normalised: "0000:19:00.0"
  int minor = -1;          // N of /dev/nvidiaN
  std::string uuid;        // "GPU-..." ("GPU UUID:" line); empty when the file has none
  std::string model;       // "Model:" line
};

// "0000:19:00.0" for any spelling the driver or CUDA use ("00000000:19:00.0", upper or lower
// case hex, a missing ".0"); empty when `bus_id` is not DOMAIN:BUS:DEVICE[.FUNCTION] in hex.
std::string NormalizePciBusId(const std::string& bus_id);

// Every GPU under <proc_root>/driver/nvidia/gpus. FAILED_PRECONDITION naming the folder when it
// cannot be read (no NVIDIA driver); a GPU whose information file has no readable
// "Device Minor:" line is FAILED_PRECONDITION naming the file.
absl::StatusOr<std::vector<NvidiaProcGpu>> ReadNvidiaProcGpus(const std::string& proc_root);

// The minor of the GPU at `pci_bus_id`. NOT_FOUND naming the bus id and the ones the driver
// lists when none matches; INVALID_ARGUMENT when the bus id does not parse.
absl::StatusOr<int> NvidiaDeviceMinor(const std::string& proc_root, const std::string& pci_bus_id);

}  // namespace kiln

#endif  // KILN_HARNESS_SANDBOX_NVIDIA_DEVICE_MAP_H_
