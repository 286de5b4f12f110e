// GPU clocks and temperature through NVML (libnvidia-ml.so.1, part of the driver), loaded at run
// time and only read: kiln never changes a clock. Used to flag samples taken under clock
// throttling (SM clock below 75% of the default, nvbench's rule) and to record the clocks and
// temperature around a run.
#ifndef KILN_HARNESS_BACKEND_CUDA_NVML_CLOCKS_H_
#define KILN_HARNESS_BACKEND_CUDA_NVML_CLOCKS_H_

#include <memory>
#include <string>

namespace kiln {

struct NvmlApi;  // the NVML entry points, resolved at run time (nvml_clocks.cc)

class NvmlClocks {
 public:
  // A sample is throttled when the SM clock is below this fraction of the default SM clock.
  static constexpr double kThrottledFraction = 0.75;

  // NVML for the GPU at `pci_bus_id` ("0000:3b:00.0", as cudaDeviceGetPCIBusId writes it), or
  // nullptr with *why set when NVML or the device cannot be opened.
  static std::unique_ptr<NvmlClocks> Open(const std::string& pci_bus_id, std::string* why);
  ~NvmlClocks() = default;  // NVML stays initialised for the life of the process
  NvmlClocks(const NvmlClocks&) = delete;
  NvmlClocks& operator=(const NvmlClocks&) = delete;

  // The current SM clock in MHz, 0 when it cannot be read.
  unsigned SmClockMhz() const;
  // The default applications SM clock (else the maximum), MHz; 0 when unknown.
  unsigned DefaultSmClockMhz() const { return default_sm_mhz_; }
  // True when the SM clock can be read and is below kThrottledFraction of the default.
  bool Throttled() const;
  // "SM 1980 MHz (default 1980 MHz), memory 2619 MHz, 41 C"; unreadable values say "?".
  std::string Describe() const;

 private:
  NvmlClocks(const NvmlApi* api, void* device, unsigned default_sm_mhz)
      : api_(api), device_(device), default_sm_mhz_(default_sm_mhz) {}
  const NvmlApi* api_;
  void* device_;  // nvmlDevice_t
  unsigned default_sm_mhz_;
};

}  // namespace kiln

#endif  // KILN_HARNESS_BACKEND_CUDA_NVML_CLOCKS_H_
