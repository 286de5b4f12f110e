// The GPUs of this node, as the CUDA runtime sees them, for the harness: how many device slots to
// offer and which architectures to compile for (NvccArchListFor). Creates no CUDA context.
//
//   absl::StatusOr<std::vector<CudaDeviceInfo>> gpus = ListCudaDevices();
//   std::vector<int> ccs;
//   for (const CudaDeviceInfo& gpu : *gpus) ccs.push_back(gpu.compute_capability);
//   std::vector<std::string> archs = NvccArchListFor(ccs);
#ifndef KILN_HARNESS_BACKEND_CUDA_CUDA_DEVICES_H_
#define KILN_HARNESS_BACKEND_CUDA_CUDA_DEVICES_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace kiln {

struct CudaDeviceInfo {
  int index = 0;
  std::string name;            // "NVIDIA H200"
  int compute_capability = 0;  // 10 * major + minor: 90 for 9.0
  int64_t memory_bytes = 0;
  int64_t l2_bytes = 0;
  std::string pci_bus_id;  // "0000:19:00.0"
  std::string uuid;        // "GPU-5a3c...": what CUDA_VISIBLE_DEVICES accepts; empty if unknown
};

// "GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx", as nvidia-smi and CUDA_VISIBLE_DEVICES spell the
// 16 bytes of cudaDeviceProp::uuid; empty when they are all zero.
std::string FormatGpuUuid(const unsigned char bytes[16]);

// Every GPU the runtime reports. FAILED_PRECONDITION "no CUDA device: <reason>" when the runtime
// or the driver is missing or there is no GPU.
absl::StatusOr<std::vector<CudaDeviceInfo>> ListCudaDevices();

}  // namespace kiln

#endif  // KILN_HARNESS_BACKEND_CUDA_CUDA_DEVICES_H_
