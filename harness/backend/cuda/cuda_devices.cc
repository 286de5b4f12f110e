#include "harness/backend/cuda/cuda_devices.h"

#include "absl/strings/str_cat.h"
#include "harness/backend/cuda/cuda_runtime_api.h"

namespace kiln {
namespace {

absl::Status NoCudaDevice(absl::string_view reason) {
  return absl::FailedPreconditionError(absl::StrCat("no CUDA device: ", reason));
}

absl::StatusOr<CudaDeviceInfo> Describe(const CudaRuntimeApi& rt, int index) {
  CudaDeviceInfo info;
  info.index = index;
  cudaDeviceProp prop{};
  if (cudaError_t err = rt.GetDeviceProperties(&prop, index); err != cudaSuccess) {
    return CudaCallStatus(rt, err, absl::StrCat("cudaGetDeviceProperties(", index, ")"));
  }
  info.name = prop.name;
  info.compute_capability = 10 * prop.major + prop.minor;
  info.memory_bytes = static_cast<int64_t>(prop.totalGlobalMem);
  info.l2_bytes = prop.l2CacheSize;
  char bus_id[32] = {};
  if (rt.DeviceGetPCIBusId(bus_id, sizeof bus_id, index) == cudaSuccess) info.pci_bus_id = bus_id;
  info.uuid = FormatGpuUuid(reinterpret_cast<const unsigned char*>(prop.uuid.bytes));
  return info;
}

}  // namespace

std::string FormatGpuUuid(const unsigned char bytes[16]) {
  bool any = false;
  for (int i = 0; i < 16; ++i) any = any || bytes[i] != 0;
  if (!any) return "";
  std::string out = "GPU-";
  static constexpr char kHex[] = "0123456789abcdef";
  for (int i = 0; i < 16; ++i) {
    if (i == 4 || i == 6 || i == 8 || i == 10) out += '-';
    out += kHex[bytes[i] >> 4];
    out += kHex[bytes[i] & 0xf];
  }
  return out;
}

absl::StatusOr<std::vector<CudaDeviceInfo>> ListCudaDevices() {
  absl::StatusOr<const CudaRuntimeApi*> rt = LoadCudaRuntime();
  if (!rt.ok()) return NoCudaDevice(rt.status().message());
  int count = 0;
  if (cudaError_t err = (*rt)->GetDeviceCount(&count); err != cudaSuccess) {
    (void)(*rt)->GetLastError();
    return NoCudaDevice(absl::StrCat("cudaGetDeviceCount: ", CudaErrorText(**rt, err)));
  }
  if (count <= 0) return NoCudaDevice("the driver reports no GPU");
  std::vector<CudaDeviceInfo> devices;
  for (int i = 0; i < count; ++i) {
    absl::StatusOr<CudaDeviceInfo> info = Describe(**rt, i);
    if (!info.ok()) {
      (void)(*rt)->GetLastError();
      return NoCudaDevice(info.status().message());
    }
    devices.push_back(*std::move(info));
  }
  return devices;
}

}  // namespace kiln
