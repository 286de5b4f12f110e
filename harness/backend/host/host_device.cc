#include "harness/backend/host/host_device.h"

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "harness/backend/host/cpu_info.h"

namespace kiln {
namespace {

int64_t RoundUpToAlignment(int64_t bytes) {
  int64_t a = Device::kAlignment;
  return bytes <= 0 ? a : (bytes + a - 1) / a * a;
}

// Keeps the compiler from treating stores to `p` as dead: the flush must really write memory.
inline void ClobberMemory(void* p) { asm volatile("" : : "r"(p) : "memory"); }

}  // namespace

HostDevice::HostDevice() : device_name_(CpuModelName()) {
  int64_t llc = LastLevelCacheBytes();
  default_flush_bytes_ = llc > 0 ? 2 * llc : kFallbackFlushBytes;
}

HostDevice::~HostDevice() { flush_buffer_ = DeviceBuffer(); }

absl::StatusOr<void*> HostDevice::Allocate(int64_t bytes) {
  if (bytes < 0) return absl::InvalidArgumentError(absl::StrCat("negative allocation ", bytes));
  void* p = std::aligned_alloc(kAlignment, static_cast<size_t>(RoundUpToAlignment(bytes)));
  if (p == nullptr) {
    return absl::ResourceExhaustedError(
        absl::StrCat("out of host memory allocating ", bytes, " bytes"));
  }
  return p;
}

void HostDevice::Free(void* ptr) { std::free(ptr); }

absl::Status HostDevice::CopyToDevice(void* dst, const void* src, int64_t bytes) {
  if (bytes > 0) std::memcpy(dst, src, static_cast<size_t>(bytes));
  return absl::OkStatus();
}

absl::Status HostDevice::CopyToHost(void* dst, const void* src, int64_t bytes) {
  if (bytes > 0) std::memcpy(dst, src, static_cast<size_t>(bytes));
  return absl::OkStatus();
}

absl::Status HostDevice::Fill(void* dst, uint8_t value, int64_t bytes) {
  if (bytes > 0) std::memset(dst, value, static_cast<size_t>(bytes));
  return absl::OkStatus();
}

kiln_context HostDevice::Context() const {
  kiln_context ctx{};
  ctx.abi_version = KILN_ABI_VERSION;
  ctx.backend = KILN_BACKEND_HOST;
  ctx.stream = nullptr;
  ctx.device = nullptr;
  ctx.context = nullptr;
  return ctx;
}

namespace {
constexpr int64_t kCacheLineBytes = 64;
}  // namespace

absl::Status HostDevice::Flush(int64_t bytes) {
  if (bytes <= 0) return absl::OkStatus();
  if (absl::Status s = GrowBuffer(*this, flush_buffer_, bytes); !s.ok()) return s;
  // One ordinary store per cache line. Not memset: for buffers this large glibc uses
  // non-temporal stores, which bypass the caches and so would evict nothing.
  volatile uint8_t* lines = static_cast<volatile uint8_t*>(flush_buffer_.data());
  for (int64_t off = 0; off < bytes; off += kCacheLineBytes) lines[off] = 0;
  ClobberMemory(flush_buffer_.data());
  return absl::OkStatus();
}

absl::StatusOr<double> HostDevice::TimeCall(const std::function<absl::Status()>& call,
                                            bool* throttled) {
  if (throttled != nullptr) *throttled = false;  // the host timer cannot tell
  std::atomic_signal_fence(std::memory_order_seq_cst);
  auto start = std::chrono::steady_clock::now();
  std::atomic_signal_fence(std::memory_order_seq_cst);
  absl::Status status = call();
  std::atomic_signal_fence(std::memory_order_seq_cst);
  auto end = std::chrono::steady_clock::now();
  std::atomic_signal_fence(std::memory_order_seq_cst);
  if (!status.ok()) return status;
  return std::chrono::duration<double, std::milli>(end - start).count();
}

}  // namespace kiln
