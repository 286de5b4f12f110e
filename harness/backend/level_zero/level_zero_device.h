// The Level Zero backend: one GPU of a Level Zero driver; device memory from zeMemAllocDevice
// (USM); one context and one asynchronous immediate command list created here and handed to
// solutions as kiln_context.stream (device: the ze_device_handle_t; context: the
// ze_context_handle_t). The loader is opened at run time (ze_api.h), so a kiln-worker without it
// still serves the other backends and Open reports FAILED_PRECONDITION here.
//
// Synchronization: a barrier signalling a host-visible event, then zeEventHostSynchronize.
//
// Timing ("ze-kernel-timestamps"): kiln's marker kernel, with a kernel-timestamp event, is
// appended before and after the call, each fenced by a barrier; the sample is the global-timer
// span from the end of the first marker to the start of the second (masked to the device's valid
// bits, wraparound handled, ticks converted as kernel_timestamp.h says). Like CUDA events it
// includes launch gaps inside the call and misses work a solution puts on other command lists.
// Flush() runs kiln's flush kernel over a buffer of 2x the largest cache, then synchronizes.
// Clock throttling is not read (Sysman is not used): samples are never flagged throttled.
//
// Failures: every call is checked; the first failure is kept and every later call returns it.
#ifndef KILN_HARNESS_BACKEND_LEVEL_ZERO_LEVEL_ZERO_DEVICE_H_
#define KILN_HARNESS_BACKEND_LEVEL_ZERO_LEVEL_ZERO_DEVICE_H_

#include <cstdint>
#include <memory>
#include <string>

#include "absl/strings/string_view.h"
#include "harness/backend/device.h"
#include "harness/backend/level_zero/kernel_timestamp.h"
#include "harness/backend/level_zero/ze_api.h"
#include "harness/backend/level_zero/ze_devices.h"

namespace kiln {

class LevelZeroDevice final : public Device {
 public:
  // Opens GPU `index` (across drivers, in ListLevelZeroDevices order) with the loader's table, or
  // with `ze` (tests). FAILED_PRECONDITION "no Level Zero device: <reason>" without a loader,
  // driver or GPU; INVALID_ARGUMENT naming request.device_index when out of range.
  static absl::StatusOr<std::unique_ptr<LevelZeroDevice>> Open(int index,
                                                               const ZeApi* ze = nullptr);
  ~LevelZeroDevice() override;
  LevelZeroDevice(const LevelZeroDevice&) = delete;
  LevelZeroDevice& operator=(const LevelZeroDevice&) = delete;

  // Device
  kiln_backend Backend() const override { return KILN_BACKEND_LEVEL_ZERO; }
  bool HostAccessible() const override { return false; }
  absl::StatusOr<void*> Allocate(int64_t bytes) override;
  void Free(void* ptr) override;
  absl::Status CopyToDevice(void* dst, const void* src, int64_t bytes) override;
  absl::Status CopyToHost(void* dst, const void* src, int64_t bytes) override;
  absl::Status Fill(void* dst, uint8_t value, int64_t bytes) override;
  absl::Status Synchronize() override;
  kiln_context Context() const override;

  // TimedDevice
  absl::Status Flush(int64_t bytes) override;
  absl::StatusOr<double> TimeCall(const std::function<absl::Status()>& call,
                                  bool* throttled) override;
  std::string TimerName() const override { return "ze-kernel-timestamps"; }
  int64_t DefaultFlushBytes() const override;
  std::string DeviceName() const override { return info_.name; }

  const ZeDeviceInfo& info() const { return info_; }

 private:
  LevelZeroDevice(const ZeApi& ze, ZeDeviceInfo info) : ze_(ze), info_(std::move(info)) {}
  absl::Status Initialize();
  absl::Status CreateEvents();
  absl::Status CreateBuiltinKernels();
  absl::Status Check(ze_result_t result, absl::string_view call);
  // Appends kiln's marker kernel signalling `event`, fenced by barriers.
  absl::Status AppendMarker(ze_event_handle_t event);
  absl::Status ReadSpan(double* ms);

  const ZeApi& ze_;
  ZeDeviceInfo info_;
  ze_context_handle_t context_ = nullptr;
  ze_command_list_handle_t list_ = nullptr;
  ze_event_pool_handle_t timestamp_pool_ = nullptr;
  ze_event_pool_handle_t sync_pool_ = nullptr;
  ze_event_handle_t start_ = nullptr;
  ze_event_handle_t end_ = nullptr;
  ze_event_handle_t sync_ = nullptr;
  ze_module_handle_t module_ = nullptr;
  ze_kernel_handle_t flush_kernel_ = nullptr;
  ze_kernel_handle_t marker_kernel_ = nullptr;
  DeviceBuffer flush_buffer_;  // grown by Flush
  absl::Status failure_;
};

// kiln's built-in kernels as SPIR-V (builtin_kernels.cl, compiled when kiln is built).
absl::string_view BuiltinKernelsSpirv();

}  // namespace kiln

#endif  // KILN_HARNESS_BACKEND_LEVEL_ZERO_LEVEL_ZERO_DEVICE_H_
