// The host backend: solutions run on the CPU in the worker's own thread; memory is ordinary
// 64-byte-aligned heap memory; samples come from std::chrono::steady_clock; the cache flush
// writes zeros over a buffer of 2x the last-level cache.
#ifndef KILN_HARNESS_BACKEND_HOST_HOST_DEVICE_H_
#define KILN_HARNESS_BACKEND_HOST_HOST_DEVICE_H_

#include <cstdint>
#include <string>

#include "harness/backend/device.h"

namespace kiln {

class HostDevice final : public Device {
 public:
  // Used when the last-level cache size cannot be read.
  static constexpr int64_t kFallbackFlushBytes = int64_t{64} << 20;

  HostDevice();
  ~HostDevice() override;
  HostDevice(const HostDevice&) = delete;
  HostDevice& operator=(const HostDevice&) = delete;

  // Device
  kiln_backend Backend() const override { return KILN_BACKEND_HOST; }
  bool HostAccessible() const override { return true; }
  absl::StatusOr<void*> Allocate(int64_t bytes) override;
  void Free(void* ptr) override;
  absl::Status CopyToDevice(void* dst, const void* src, int64_t bytes) override;
  absl::Status CopyToHost(void* dst, const void* src, int64_t bytes) override;
  absl::Status Fill(void* dst, uint8_t value, int64_t bytes) override;
  absl::Status Synchronize() override { return absl::OkStatus(); }
  kiln_context Context() const override;

  // TimedDevice
  absl::Status Flush(int64_t bytes) override;
  absl::StatusOr<double> TimeCall(const std::function<absl::Status()>& call,
                                  bool* throttled) override;
  std::string TimerName() const override { return "host"; }
  int64_t DefaultFlushBytes() const override { return default_flush_bytes_; }
  std::string DeviceName() const override { return device_name_; }

 private:
  int64_t default_flush_bytes_;
  std::string device_name_;
  // The flush buffer, allocated on first use and grown when a larger flush is asked for.
  DeviceBuffer flush_buffer_;  // grown by Flush
};

}  // namespace kiln

#endif  // KILN_HARNESS_BACKEND_HOST_HOST_DEVICE_H_
