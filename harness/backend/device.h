// The device a kiln-worker evaluates on: memory, copies, synchronization, the kiln_context handed
// to solutions, and the timer and cache flush of the timing protocol (TimedDevice).
//
// One implementation per backend: host/ (plain memory, steady_clock) today; cuda/ (cudaMalloc,
// one stream, CUPTI activity spans with CUDA events as the fallback timer) and level_zero/ fit
// the same interface. All memory calls are made from the worker's main thread.
//
//   std::unique_ptr<Device> device = ...;
//   absl::StatusOr<DeviceBuffer> x = DeviceBuffer::Allocate(*device, bytes);
//   device->CopyToDevice(x->data(), host_bytes, bytes);
//   kiln_context ctx = device->Context();
#ifndef KILN_HARNESS_BACKEND_DEVICE_H_
#define KILN_HARNESS_BACKEND_DEVICE_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "harness/timing/protocol.h"
#include "kiln/abi.h"

namespace kiln {

// One kind of GPU work of timed calls: "kernel <name as the profiler gives it>", "memcpy kind
// <k> <bytes> B" or "memset value <v> <bytes> B", with its records' summed GPU time.
struct TimedWork {
  std::string signature;
  double total_ms = 0;
  int64_t launches = 0;
};

// A span of device memory.
struct MemoryRegion {
  const void* data = nullptr;
  int64_t bytes = 0;
  // Mixed into the region's device checksum: pass a stable index of what the region is (the
  // same region, the same key), so that a value does not depend on which regions were
  // checksummed with it.
  uint64_t key = 0;
};

class Device : public TimedDevice {
 public:
  // Every allocation is aligned to at least this many bytes.
  static constexpr int64_t kAlignment = 64;

  virtual kiln_backend Backend() const = 0;
  // True when device memory is ordinary host memory the worker may read and write directly
  // (the host backend); false when it must go through CopyToHost / CopyToDevice / Fill.
  virtual bool HostAccessible() const = 0;

  // Allocates `bytes` (0 gives a valid, distinct pointer). The memory is uninitialised.
  virtual absl::StatusOr<void*> Allocate(int64_t bytes) = 0;
  // Releases memory from Allocate; nullptr is ignored.
  virtual void Free(void* ptr) = 0;
  // Copies complete when the call returns.
  virtual absl::Status CopyToDevice(void* dst, const void* src, int64_t bytes) = 0;
  virtual absl::Status CopyToHost(void* dst, const void* src, int64_t bytes) = 0;
  // Page-locked host memory for CopyToHost (copies into it run at the link's speed), nullptr
  // when the backend has none to give; freed with FreeStaging.
  virtual void* AllocateStaging(int64_t bytes) {
    (void)bytes;
    return nullptr;
  }
  virtual void FreeStaging(void* ptr) { (void)ptr; }
  // Sets `bytes` bytes at `dst` to `value`.
  virtual absl::Status Fill(void* dst, uint8_t value, int64_t bytes) = 0;
  // Fill, queued on the solution's stream: complete once the next Synchronize or Flush has
  // returned, and before any work queued after it on that stream. Default: Fill.
  virtual absl::Status QueueFill(void* dst, uint8_t value, int64_t bytes) {
    return Fill(dst, value, bytes);
  }
  // Waits until all work enqueued on the solution's stream has finished and reports a failure
  // of that work (an illegal address on a GPU, for instance).
  virtual absl::Status Synchronize() = 0;
  // Waits for the solution's stream only (ctx->stream), not for other work on the device; the
  // integrity checks compare what the outputs hold then with what they hold after Synchronize.
  virtual absl::Status SynchronizeStream() { return absl::OkStatus(); }
  // After TimeCall, which waited for the whole device before it returned: reports a failure the
  // timed call left behind (on CUDA a refused launch leaves no fault, only the thread's last
  // error) without waiting for the device again. Default: Synchronize().
  virtual absl::Status CheckAfterTimedCall() { return Synchronize(); }
  // What solutions receive as `ctx`: abi_version, backend and the native stream / device /
  // context handles (NULL on the host). Valid for the device's lifetime.
  virtual kiln_context Context() const = 0;
  // Copies `bytes` between two device buffers and waits for the copy (the peak-bandwidth probe
  // of the speed-of-light floor). UNIMPLEMENTED where device memory is host memory.
  virtual absl::Status CopyOnDevice(void* dst, const void* src, int64_t bytes) {
    (void)dst;
    (void)src;
    (void)bytes;
    return absl::UnimplementedError("no device-to-device copy on this backend");
  }
  // Brackets the calls a profiler started with profiling off (Nsight Compute's
  // --profile-from-start off) collects: cudaProfilerStart / cudaProfilerStop on CUDA.
  // UNIMPLEMENTED where the backend has no profiler.
  virtual absl::Status StartProfiler() {
    return absl::UnimplementedError("no profiler on this backend");
  }
  virtual absl::Status StopProfiler() {
    return absl::UnimplementedError("no profiler on this backend");
  }
  // How long the GPU work of the last TimeCall ran after the solution's stream was idle, in ms
  // (work on a stream the solution did not join to its own); 0 where the timer cannot tell.
  virtual double LastCallUnjoinedMs() const { return 0; }
  // The same for each call of the last TakeDeferredSamples, in call order (a timer that defers
  // its samples knows it only once it has read them); empty where the timer cannot tell.
  virtual std::vector<double> DeferredUnjoinedMs() const { return {}; }
  // For the calls of the last TakeDeferredSamples: the device's time between one call's last
  // work and the next call's first (ms, one value fewer than the calls), the spacing of the
  // timed calls as the device saw it; empty where the timer cannot tell.
  virtual std::vector<double> DeferredCallGapsMs() const { return {}; }
  // The GPU work of the calls timed since the last TakeTimedWork, by kind (the CUPTI timer's
  // activity records), and clears it; empty where the timer cannot tell.
  virtual std::vector<TimedWork> TakeTimedWork() { return {}; }
  // Fills `numel` elements of `dtype` at `dst` (device memory) with input `input_index`'s values
  // for `seed` under kiln's random scheme (harness/verify/input_generator.h), computed on the
  // device; complete when the call returns. UNIMPLEMENTED where the backend or the dtype has no
  // device generator; the caller then generates on the host and copies. The bits must equal the
  // host generator's: callers compare a sample before relying on it (TensorSet).
  virtual absl::Status FillRandomOnDevice(void* dst, kiln_dtype dtype, int64_t numel,
                                          uint64_t seed, int input_index) {
    (void)dst;
    (void)dtype;
    (void)numel;
    (void)seed;
    (void)input_index;
    return absl::UnimplementedError("no device-side input generator on this backend");
  }
  // Checksums of device memory computed on the device, one per region, comparable only with
  // other values from the same Device. UNIMPLEMENTED when the backend cannot; the caller then
  // copies the memory to the host and uses Checksum64.
  virtual absl::StatusOr<std::vector<uint64_t>> ChecksumOnDevice(
      const std::vector<MemoryRegion>& regions) {
    (void)regions;
    return absl::UnimplementedError("no device-side checksum on this backend");
  }
  // ChecksumOnDevice's values, queued on the device behind the work already queued there;
  // returns once they are queued, so the host can do other work (and queue more) while the
  // device computes them. TakeQueuedChecksums returns them, waiting for the device if it must
  // (nothing to wait for after a Flush or Synchronize). A Queue drops values queued before and
  // not taken. UNIMPLEMENTED where ChecksumOnDevice is.
  virtual absl::Status QueueChecksums(const std::vector<MemoryRegion>& regions) {
    (void)regions;
    return absl::UnimplementedError("no device-side checksum on this backend");
  }
  virtual absl::StatusOr<std::vector<uint64_t>> TakeQueuedChecksums() {
    return absl::UnimplementedError("no device-side checksum on this backend");
  }
};

// Device memory owned by one object; move-only. The device must outlive the buffer.
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  [[nodiscard]] static absl::StatusOr<DeviceBuffer> Allocate(Device& device, int64_t bytes) {
    absl::StatusOr<void*> ptr = device.Allocate(bytes);
    if (!ptr.ok()) return ptr.status();
    return DeviceBuffer(&device, *ptr, bytes);
  }
  DeviceBuffer(DeviceBuffer&& other) noexcept
      : device_(std::exchange(other.device_, nullptr)),
        data_(std::exchange(other.data_, nullptr)),
        bytes_(std::exchange(other.bytes_, 0)) {}
  DeviceBuffer& operator=(DeviceBuffer&& other) noexcept {
    if (this != &other) {
      Reset();
      device_ = std::exchange(other.device_, nullptr);
      data_ = std::exchange(other.data_, nullptr);
      bytes_ = std::exchange(other.bytes_, 0);
    }
    return *this;
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  ~DeviceBuffer() { Reset(); }

  void* data() const { return data_; }
  int64_t bytes() const { return bytes_; }

  void Reset() {
    if (device_ != nullptr) device_->Free(data_);
    device_ = nullptr;
    data_ = nullptr;
    bytes_ = 0;
  }

 private:
  DeviceBuffer(Device* device, void* data, int64_t bytes)
      : device_(device), data_(data), bytes_(bytes) {}
  Device* device_ = nullptr;
  void* data_ = nullptr;
  int64_t bytes_ = 0;
};

// Makes `buffer` hold at least `bytes` (the timing protocol's flush buffer): kept when large
// enough, else released and allocated anew (contents undefined).
[[nodiscard]] inline absl::Status GrowBuffer(Device& device, DeviceBuffer& buffer, int64_t bytes) {
  if (buffer.data() != nullptr && buffer.bytes() >= bytes) return absl::OkStatus();
  buffer = DeviceBuffer();
  absl::StatusOr<DeviceBuffer> fresh = DeviceBuffer::Allocate(device, bytes);
  if (!fresh.ok()) return fresh.status();
  buffer = *std::move(fresh);
  return absl::OkStatus();
}

}  // namespace kiln

#endif  // KILN_HARNESS_BACKEND_DEVICE_H_
