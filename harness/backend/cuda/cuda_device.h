// The CUDA backend: one GPU, selected with cudaSetDevice; device memory from cudaMalloc; one
// blocking stream (ordered with the legacy default stream) created here and handed to solutions as kiln_context.stream (device: a
// pointer to the device ordinal, which is what a CUdevice is; context: the primary context).
// The runtime is loaded at run time (cuda_runtime_api.h), so a kiln-worker without a driver
// still serves the host backend and Open reports FAILED_PRECONDITION here.
//
// Failures: every CUDA call is checked; the first failure (an illegal address in a solution's
// kernel, say) is kept, and every later call returns it, so the worker reports it and stops.
// After a failure the destructors make no CUDA call (a faulted context may hang), and the
// process is expected to exit.
//
// Timing: CUPTI activity spans (cupti_timer.h) when CUPTI loads, else CUDA events on the stream
// (event_timer.h); TimerName() says which. Before every timed call Flush() resets persisting L2
// lines and the stream's access-policy window, then zero-fills a buffer of 2x L2 and waits for
// the device. Clock throttling is read through NVML where the driver provides it.
#ifndef KILN_HARNESS_BACKEND_CUDA_CUDA_DEVICE_H_
#define KILN_HARNESS_BACKEND_CUDA_CUDA_DEVICE_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "harness/backend/cuda/cuda_runtime_api.h"
#include "harness/backend/cuda/cupti_timer.h"
#include "harness/backend/cuda/device_kernels.h"
#include "harness/backend/cuda/event_timer.h"
#include "harness/backend/cuda/nvml_clocks.h"
#include "harness/backend/device.h"

namespace kiln {

class CudaDevice final : public Device {
 public:
  // Opens GPU `index`. FAILED_PRECONDITION "no CUDA device: <reason>" when the runtime, the
  // driver or a GPU is missing or the context cannot be created; INVALID_ARGUMENT naming
  // request.device_index when the index is out of range.
  static absl::StatusOr<std::unique_ptr<CudaDevice>> Open(int index);
  ~CudaDevice() override;
  CudaDevice(const CudaDevice&) = delete;
  CudaDevice& operator=(const CudaDevice&) = delete;

  // Device
  kiln_backend Backend() const override { return KILN_BACKEND_CUDA; }
  bool HostAccessible() const override { return false; }
  absl::StatusOr<void*> Allocate(int64_t bytes) override;
  void Free(void* ptr) override;
  absl::Status CopyToDevice(void* dst, const void* src, int64_t bytes) override;
  absl::Status CopyOnDevice(void* dst, const void* src, int64_t bytes) override;
  absl::Status SynchronizeStream() override;
  absl::Status CopyToHost(void* dst, const void* src, int64_t bytes) override;
  void* AllocateStaging(int64_t bytes) override;
  void FreeStaging(void* ptr) override;
  absl::Status Fill(void* dst, uint8_t value, int64_t bytes) override;
  absl::Status QueueFill(void* dst, uint8_t value, int64_t bytes) override;
  // Waits for all work on the device (a solution may use streams of its own; outputs are read
  // right after) and reports a failed launch of the solution (cudaGetLastError) or a fault.
  absl::Status Synchronize() override;
  absl::Status CheckAfterTimedCall() override;
  kiln_context Context() const override;
  // On the GPU with kiln's kernels (device_kernels.h); UNIMPLEMENTED without them.
  absl::StatusOr<std::vector<uint64_t>> ChecksumOnDevice(
      const std::vector<MemoryRegion>& regions) override;
  absl::Status QueueChecksums(const std::vector<MemoryRegion>& regions) override;
  absl::StatusOr<std::vector<uint64_t>> TakeQueuedChecksums() override;
  absl::Status FillRandomOnDevice(void* dst, kiln_dtype dtype, int64_t numel, uint64_t seed,
                                  int input_index) override;
  // Zeroes `bytes` at `dst` (16-byte aligned) on the stream, with kiln_fill_zero (a fill kernel,
  // as torch's `zero_()`), or a driver memset where kiln's kernels cannot load. What Flush does
  // to its buffer. Returns once queued.
  absl::Status ZeroOnDevice(void* dst, int64_t bytes);
  absl::Status StartProfiler() override;
  absl::Status StopProfiler() override;

  // TimedDevice
  absl::Status Flush(int64_t bytes) override;
  absl::StatusOr<double> TimeCall(const std::function<absl::Status()>& call,
                                  bool* throttled) override;
  std::string TimerName() const override { return cupti_ != nullptr ? "cupti" : "events"; }
  double LastCallUnjoinedMs() const override { return last_unjoined_ms_; }
  // The CUPTI timer defers: one flush of its records per trial, not one per call.
  bool DefersSamples() const override { return cupti_ != nullptr; }
  absl::Status TimeCallDeferred(const std::function<absl::Status()>& call,
                                bool* throttled) override;
  absl::StatusOr<std::vector<double>> TakeDeferredSamples() override;
  std::vector<double> DeferredUnjoinedMs() const override { return deferred_unjoined_ms_; }
  std::vector<double> DeferredCallGapsMs() const override { return deferred_gaps_ms_; }
  void StartInputSet() override {
    if (cupti_ != nullptr) cupti_->StartInputSet();
  }
  std::vector<TimedWork> TakeTimedWork() override;
  int64_t DefaultFlushBytes() const override { return 2 * l2_bytes_; }
  std::string DeviceName() const override { return name_; }

  // Why the CUPTI timer is not used ("" when it is).
  const std::string& TimerFallbackReason() const { return timer_fallback_reason_; }
  // Clocks and temperature now ("SM 1980 MHz (default 1980 MHz), memory 2619 MHz, 41 C"), or
  // why they cannot be read.
  std::string ClockReport() const;
  // "driver 13.0, runtime 13.0"
  std::string VersionReport() const;

 private:
  CudaDevice(const CudaRuntimeApi& rt, int index) : rt_(rt), ordinal_(index) {}
  // Creates the context and the stream, reads the properties, picks the timer.
  absl::Status Initialize();
  absl::Status ReadProperties();  // name, L2 size, persisting-L2 support
  void FindPrimaryContext();
  // OK, or the failure of `err` (recorded: every later call returns the first failure).
  absl::Status Check(cudaError_t err, absl::string_view call);
  // Removes persisting-L2 set-asides and the stream's access-policy window (best effort: a GPU
  // without persisting L2 skips it).
  void ResetPersistingL2();
  absl::Status SynchronizeDevice();

  const CudaRuntimeApi& rt_;
  int ordinal_;  // kiln_context.device points here (a CUdevice is the ordinal)
  cudaStream_t stream_ = nullptr;
  void* primary_context_ = nullptr;  // CUcontext, from cuCtxGetCurrent; null if unavailable
  std::string name_;
  int64_t l2_bytes_ = 0;
  bool persisting_l2_ = false;  // the GPU can set L2 aside for persisting accesses
  DeviceBuffer flush_buffer_;  // grown by Flush
  std::unique_ptr<CuptiTimer> cupti_;
  std::unique_ptr<EventTimer> events_;
  std::unique_ptr<NvmlClocks> clocks_;
  // kiln's kernels, loaded on first use (Kernels()); null when they cannot be.
  DeviceKernels* Kernels();
  std::unique_ptr<DeviceKernels> kernels_;
  bool kernels_tried_ = false;
  double last_unjoined_ms_ = 0;  // of the last TimeCall (CUPTI timer only)
  std::vector<double> deferred_unjoined_ms_;  // of the last TakeDeferredSamples
  std::vector<double> deferred_gaps_ms_;      // of the last TakeDeferredSamples
  std::string clocks_unavailable_;  // why clocks_ is null
  std::string timer_fallback_reason_;
  absl::Status failure_;
};

}  // namespace kiln

#endif  // KILN_HARNESS_BACKEND_CUDA_CUDA_DEVICE_H_
