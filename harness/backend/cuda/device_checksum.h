// Input checksums computed on the GPU (integrity_kernels.cu): the worker checks every input after
// every call, timed ones included, and copying hundreds of MiB to the host for that would leave
// the GPU idle for milliseconds between timed calls, which the official protocol never does.
//
// The kernels come from a fatbin embedded at build time and loaded with cudaLibraryLoadData on
// first use; when the build had no nvcc, or the fatbin has no code the GPU can run, Create fails
// and the caller checksums on the host instead.
#ifndef KILN_HARNESS_BACKEND_CUDA_DEVICE_CHECKSUM_H_
#define KILN_HARNESS_BACKEND_CUDA_DEVICE_CHECKSUM_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "harness/backend/cuda/cuda_runtime_api.h"
#include "harness/backend/device.h"

namespace kiln {

class DeviceChecksum {
 public:
  // Every CUDA call's result goes through `check` (the device's sticky-failure bookkeeping).
  using Check = std::function<absl::Status(cudaError_t, absl::string_view)>;

  // UNIMPLEMENTED when kiln was built without the kernels or they cannot be loaded (the reason).
  static absl::StatusOr<std::unique_ptr<DeviceChecksum>> Create(const CudaRuntimeApi& rt,
                                                                cudaStream_t stream, int ordinal,
                                                                Check check);
  ~DeviceChecksum();

  // One keyed checksum per region (see integrity_kernels.cu), computed on the stream; returns
  // when they are on the host. Values compare only with values from the same object.
  absl::StatusOr<std::vector<uint64_t>> Compute(const std::vector<MemoryRegion>& regions);

 private:
  DeviceChecksum(const CudaRuntimeApi& rt, cudaStream_t stream, Check check)
      : rt_(rt), stream_(stream), check_(std::move(check)) {}

  const CudaRuntimeApi& rt_;
  cudaStream_t stream_;
  Check check_;
  cudaKernel_t kernel_ = nullptr;
  uint64_t key_ = 0;
  unsigned long long* sums_ = nullptr;  // device array of `capacity_` sums
  size_t capacity_ = 0;
  int sm_count_ = 1;
};

}  // namespace kiln

#endif  // KILN_HARNESS_BACKEND_CUDA_DEVICE_CHECKSUM_H_
