#include "harness/backend/cuda/cuda_device.h"

#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>

#include "absl/strings/str_cat.h"

namespace kiln {
namespace {

// Used when the GPU does not report its L2 size (2x this is flushed).
constexpr int64_t kFallbackL2Bytes = int64_t{64} << 20;

int64_t RoundUpToAlignment(int64_t bytes) {
  int64_t a = Device::kAlignment;
  return bytes <= 0 ? a : (bytes + a - 1) / a * a;
}

std::string VersionText(int version) {
  return absl::StrCat(version / 1000, ".", (version % 1000) / 10);
}

absl::Status NoDevice(absl::string_view reason) {
  return absl::FailedPreconditionError(absl::StrCat("no CUDA device: ", reason));
}

}  // namespace

absl::StatusOr<std::unique_ptr<CudaDevice>> CudaDevice::Open(int index) {
  if (index < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("request.device_index: ", index, " is not a GPU index"));
  }
  absl::StatusOr<const CudaRuntimeApi*> rt = LoadCudaRuntime();
  if (!rt.ok()) return NoDevice(rt.status().message());
  int count = 0;
  if (cudaError_t err = (*rt)->GetDeviceCount(&count); err != cudaSuccess) {
    (void)(*rt)->GetLastError();
    std::string reason = absl::StrCat("cudaGetDeviceCount: ", CudaErrorText(**rt, err));
    // The runtime says "insufficient driver" also when there is no driver at all.
    if (err == cudaErrorInsufficientDriver &&
        dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL) == nullptr) {
      absl::StrAppend(&reason, "; no NVIDIA driver is installed (libcuda.so.1 cannot be loaded)");
    }
    return NoDevice(reason);
  }
  if (count <= 0) return NoDevice("the driver reports no GPU");
  if (index >= count) {
    return absl::InvalidArgumentError(absl::StrCat("request.device_index: GPU ", index,
                                                   " does not exist (this node has ", count, ")"));
  }
  std::unique_ptr<CudaDevice> device(new CudaDevice(**rt, index));
  if (absl::Status s = device->Initialize(); !s.ok()) return NoDevice(s.message());
  // The worker log records the device, the timer and the clocks before the run.
  std::string timer = device->TimerName();
  if (!device->timer_fallback_reason_.empty()) {
    absl::StrAppend(&timer, " (", device->timer_fallback_reason_, ")");
  }
  std::fprintf(stderr, "kiln-worker: CUDA device %d: %s, L2 %lld MiB, timer %s; %s; clocks: %s\n",
               index, device->name_.c_str(), static_cast<long long>(device->l2_bytes_ >> 20),
               timer.c_str(), device->VersionReport().c_str(), device->ClockReport().c_str());
  return device;
}

absl::Status CudaDevice::Initialize() {
  if (absl::Status s = Check(rt_.SetDevice(ordinal_), "cudaSetDevice"); !s.ok()) return s;
  // Creates the primary context now rather than inside the first call.
  if (absl::Status s = Check(rt_.Free(nullptr), "cudaFree(nullptr)"); !s.ok()) return s;
  if (absl::Status s = ReadProperties(); !s.ok()) return s;
  // A blocking stream: work a solution launches on the legacy default stream (`<<<grid,
  // block>>>` with no stream, as most KernelBench and load_inline files do) is ordered with it,
  // exactly as flashinfer-bench and KernelBench, which time on torch's default stream (the legacy
  // one), order it. kiln's events and its read of the outputs then wait for that work, so it is
  // timed and checked as theirs is. Streams a solution creates (torch's pool, cudaStreamCreate)
  // are not ordered with it; work left there is still work after return.
  if (absl::Status s = Check(rt_.StreamCreateWithFlags(&stream_, cudaStreamDefault),
                             "cudaStreamCreateWithFlags");
      !s.ok()) {
    return s;
  }
  FindPrimaryContext();
  char bus_id[32] = {};
  if (rt_.DeviceGetPCIBusId(bus_id, sizeof bus_id, ordinal_) == cudaSuccess) {
    clocks_ = NvmlClocks::Open(bus_id, &clocks_unavailable_);
  } else {
    (void)rt_.GetLastError();
    clocks_unavailable_ = "the GPU's PCI bus id is unknown";
  }
  // Under Nsight Compute (a profile's worker) the profiler owns CUPTI; nothing is timed there.
  const char* profiling = std::getenv("KILN_WORKER_UNDER_PROFILER");
  absl::StatusOr<std::unique_ptr<CuptiTimer>> cupti =
      profiling != nullptr && *profiling != '\0'
          ? absl::StatusOr<std::unique_ptr<CuptiTimer>>(absl::FailedPreconditionError(
                "CUPTI left to Nsight Compute, which profiles this worker"))
          : CuptiTimer::Create(rt_.cudart_dir);
  if (cupti.ok()) {
    cupti_ = *std::move(cupti);
    return absl::OkStatus();
  }
  timer_fallback_reason_ = std::string(cupti.status().message());
  absl::StatusOr<std::unique_ptr<EventTimer>> events = EventTimer::Create(
      rt_, stream_, [this](cudaError_t err, absl::string_view call) { return Check(err, call); });
  if (!events.ok()) return events.status();
  events_ = *std::move(events);
  return absl::OkStatus();
}

absl::Status CudaDevice::ReadProperties() {
  cudaDeviceProp prop{};
  if (absl::Status s = Check(rt_.GetDeviceProperties(&prop, ordinal_), "cudaGetDeviceProperties");
      !s.ok()) {
    return s;
  }
  name_ = prop.name;
  int l2 = 0, persisting = 0;
  if (absl::Status s = Check(rt_.DeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, ordinal_),
                             "cudaDeviceGetAttribute(L2CacheSize)");
      !s.ok()) {
    return s;
  }
  l2_bytes_ = l2 > 0 ? l2 : kFallbackL2Bytes;
  if (absl::Status s =
          Check(rt_.DeviceGetAttribute(&persisting, cudaDevAttrMaxPersistingL2CacheSize, ordinal_),
                "cudaDeviceGetAttribute(MaxPersistingL2CacheSize)");
      !s.ok()) {
    return s;
  }
  persisting_l2_ = persisting > 0;
  return absl::OkStatus();
}

void CudaDevice::FindPrimaryContext() {
  // Through the driver entry point the runtime hands out (libcuda is never linked). Optional:
  // kiln_context.context stays null when it cannot be had.
  using CtxGetCurrent = int (*)(void**);  // CUresult cuCtxGetCurrent(CUcontext*)
  void* fn = nullptr;
  cudaDriverEntryPointQueryResult found = cudaDriverEntryPointSymbolNotFound;
  if (rt_.GetDriverEntryPointByVersion("cuCtxGetCurrent", &fn, CUDART_VERSION, cudaEnableDefault,
                                       &found) != cudaSuccess ||
      found != cudaDriverEntryPointSuccess || fn == nullptr) {
    (void)rt_.GetLastError();
    return;
  }
  if (reinterpret_cast<CtxGetCurrent>(fn)(&primary_context_) != 0) primary_context_ = nullptr;
}

CudaDevice::~CudaDevice() {
  if (!failure_.ok()) {
    // A faulted context may hang or fail every call; the process is about to exit anyway.
    if (events_ != nullptr) events_->Abandon();
    (void)kernels_.release();  // freeing its buffer could hang too
    return;
  }
  if (stream_ != nullptr) {
    std::fprintf(stderr, "kiln-worker: CUDA device %d clocks at exit: %s\n", ordinal_,
                 ClockReport().c_str());
  }
  flush_buffer_ = DeviceBuffer();
  kernels_.reset();
  events_.reset();
  if (stream_ != nullptr) {
    if (cudaError_t err = rt_.StreamDestroy(stream_); err != cudaSuccess) {
      std::fprintf(stderr, "kiln-worker: cudaStreamDestroy: %s\n", CudaErrorText(rt_, err).c_str());
    }
  }
}

absl::Status CudaDevice::Check(cudaError_t err, absl::string_view call) {
  if (err == cudaSuccess) return absl::OkStatus();
  absl::Status status = CudaCallStatus(rt_, err, call);
  if (err == cudaErrorMemoryAllocation) {
    (void)rt_.GetLastError();  // not sticky: later calls work, and Synchronize must not see it
    return status;
  }
  if (failure_.ok()) failure_ = status;
  return status;
}

absl::StatusOr<void*> CudaDevice::Allocate(int64_t bytes) {
  if (!failure_.ok()) return failure_;
  if (bytes < 0) return absl::InvalidArgumentError(absl::StrCat("negative allocation ", bytes));
  void* ptr = nullptr;
  absl::Status s = Check(rt_.Malloc(&ptr, static_cast<size_t>(RoundUpToAlignment(bytes))),
                         absl::StrCat("cudaMalloc(", bytes, " bytes)"));
  if (!s.ok()) return s;
  return ptr;
}

void CudaDevice::Free(void* ptr) {
  if (ptr == nullptr || !failure_.ok()) return;
  absl::Status s = Check(rt_.Free(ptr), "cudaFree");
  if (!s.ok()) std::fprintf(stderr, "kiln-worker: %s\n", s.ToString().c_str());
}

absl::Status CudaDevice::CopyToDevice(void* dst, const void* src, int64_t bytes) {
  if (!failure_.ok()) return failure_;
  if (bytes <= 0) return absl::OkStatus();
  absl::Status s =
      Check(rt_.MemcpyAsync(dst, src, static_cast<size_t>(bytes), cudaMemcpyHostToDevice, stream_),
            "cudaMemcpyAsync(host to device)");
  if (!s.ok()) return s;
  return Check(rt_.StreamSynchronize(stream_), "cudaStreamSynchronize");
}

absl::Status CudaDevice::SynchronizeStream() {
  if (!failure_.ok()) return failure_;
  return Check(rt_.StreamSynchronize(stream_), "cudaStreamSynchronize");
}

absl::Status CudaDevice::CopyOnDevice(void* dst, const void* src, int64_t bytes) {
  if (!failure_.ok()) return failure_;
  if (bytes <= 0) return absl::OkStatus();
  absl::Status s = Check(
      rt_.MemcpyAsync(dst, src, static_cast<size_t>(bytes), cudaMemcpyDeviceToDevice, stream_),
      "cudaMemcpyAsync(device to device)");
  if (!s.ok()) return s;
  return Check(rt_.StreamSynchronize(stream_), "cudaStreamSynchronize");
}

absl::Status CudaDevice::CopyToHost(void* dst, const void* src, int64_t bytes) {
  if (!failure_.ok()) return failure_;
  if (bytes <= 0) return absl::OkStatus();
  absl::Status s =
      Check(rt_.MemcpyAsync(dst, src, static_cast<size_t>(bytes), cudaMemcpyDeviceToHost, stream_),
            "cudaMemcpyAsync(device to host)");
  if (!s.ok()) return s;
  return Check(rt_.StreamSynchronize(stream_), "cudaStreamSynchronize");
}

void* CudaDevice::AllocateStaging(int64_t bytes) {
  if (!failure_.ok() || bytes <= 0 || rt_.HostAlloc == nullptr) return nullptr;
  void* ptr = nullptr;
  if (rt_.HostAlloc(&ptr, static_cast<size_t>(bytes), cudaHostAllocDefault) != cudaSuccess) {
    (void)rt_.GetLastError();  // not the solution's error: the caller uses ordinary memory
    return nullptr;
  }
  return ptr;
}

void CudaDevice::FreeStaging(void* ptr) {
  if (ptr != nullptr) (void)rt_.FreeHost(ptr);
}

absl::Status CudaDevice::Fill(void* dst, uint8_t value, int64_t bytes) {
  if (!failure_.ok()) return failure_;
  if (bytes <= 0) return absl::OkStatus();
  absl::Status s =
      Check(rt_.MemsetAsync(dst, value, static_cast<size_t>(bytes), stream_), "cudaMemsetAsync");
  if (!s.ok()) return s;
  return Check(rt_.StreamSynchronize(stream_), "cudaStreamSynchronize");
}

absl::Status CudaDevice::QueueFill(void* dst, uint8_t value, int64_t bytes) {
  if (!failure_.ok()) return failure_;
  if (bytes <= 0) return absl::OkStatus();
  return Check(rt_.MemsetAsync(dst, value, static_cast<size_t>(bytes), stream_),
               "cudaMemsetAsync");
}

absl::Status CudaDevice::SynchronizeDevice() {
  if (!failure_.ok()) return failure_;
  return Check(rt_.DeviceSynchronize(), "cudaDeviceSynchronize");
}

absl::Status CudaDevice::Synchronize() {
  if (absl::Status s = SynchronizeDevice(); !s.ok()) return s;
  // A launch that failed (bad configuration, too many resources) leaves no fault behind, only
  // the thread's last error.
  return Check(rt_.GetLastError(), "a CUDA call of the solution");
}

absl::Status CudaDevice::StartProfiler() {
  if (!failure_.ok()) return failure_;
  return Check(rt_.ProfilerStart(), "cudaProfilerStart");
}

absl::Status CudaDevice::StopProfiler() {
  if (!failure_.ok()) return failure_;
  return Check(rt_.ProfilerStop(), "cudaProfilerStop");
}

absl::Status CudaDevice::CheckAfterTimedCall() {
  if (!failure_.ok()) return failure_;
  // TimeCall synchronized the device (a fault of the call was its error); what is left is a
  // launch that failed without running. Waiting for the device again would wait for nothing of
  // the call, only for work launched after the timer stopped (which the output checksums that
  // follow must not wait for either).
  return Check(rt_.GetLastError(), "a CUDA call of the solution");
}

kiln_context CudaDevice::Context() const {
  kiln_context ctx{};
  ctx.abi_version = KILN_ABI_VERSION;
  ctx.backend = KILN_BACKEND_CUDA;
  ctx.stream = stream_;
  ctx.device = const_cast<int*>(&ordinal_);
  ctx.context = primary_context_;
  return ctx;
}

DeviceKernels* CudaDevice::Kernels() {
  if (!kernels_tried_) {
    kernels_tried_ = true;
    absl::StatusOr<std::unique_ptr<DeviceKernels>> kernels = DeviceKernels::Create(
        rt_, stream_, ordinal_,
        [this](cudaError_t err, absl::string_view call) { return Check(err, call); });
    if (kernels.ok()) {
      kernels_ = *std::move(kernels);
    } else {
      std::fprintf(stderr, "kiln-worker: input checksums and generation on the host: %s\n",
                   std::string(kernels.status().message()).c_str());
    }
  }
  return kernels_.get();
}

absl::StatusOr<std::vector<uint64_t>> CudaDevice::ChecksumOnDevice(
    const std::vector<MemoryRegion>& regions) {
  if (!failure_.ok()) return failure_;
  DeviceKernels* kernels = Kernels();
  if (kernels == nullptr) return absl::UnimplementedError("no integrity kernels");
  return kernels->Checksums(regions);
}

absl::Status CudaDevice::QueueChecksums(const std::vector<MemoryRegion>& regions) {
  if (!failure_.ok()) return failure_;
  DeviceKernels* kernels = Kernels();
  if (kernels == nullptr) return absl::UnimplementedError("no integrity kernels");
  return kernels->QueueChecksums(regions);
}

absl::StatusOr<std::vector<uint64_t>> CudaDevice::TakeQueuedChecksums() {
  if (!failure_.ok()) return failure_;
  DeviceKernels* kernels = Kernels();
  if (kernels == nullptr) return absl::UnimplementedError("no integrity kernels");
  return kernels->TakeQueued();
}

absl::Status CudaDevice::FillRandomOnDevice(void* dst, kiln_dtype dtype, int64_t numel,
                                            uint64_t seed, int input_index) {
  if (!failure_.ok()) return failure_;
  DeviceKernels* kernels = Kernels();
  if (kernels == nullptr) return absl::UnimplementedError("no integrity kernels");
  return kernels->FillRandom(dst, dtype, numel, seed, input_index);
}

void CudaDevice::ResetPersistingL2() {
  if (!persisting_l2_) return;
  size_t limit = 0;
  cudaError_t err = rt_.DeviceGetLimit(&limit, cudaLimitPersistingL2CacheSize);
  if (err == cudaSuccess && limit != 0) {
    err = rt_.DeviceSetLimit(cudaLimitPersistingL2CacheSize, 0);
  }
  if (err == cudaSuccess) err = rt_.CtxResetPersistingL2Cache();
  if (err == cudaSuccess) {
    cudaStreamAttrValue value{};
    value.accessPolicyWindow.base_ptr = nullptr;
    value.accessPolicyWindow.num_bytes = 0;
    value.accessPolicyWindow.hitRatio = 0;
    value.accessPolicyWindow.hitProp = cudaAccessPropertyNormal;
    value.accessPolicyWindow.missProp = cudaAccessPropertyStreaming;
    err = rt_.StreamSetAttribute(stream_, cudaStreamAttributeAccessPolicyWindow, &value);
  }
  if (err != cudaSuccess) {
    (void)rt_.GetLastError();  // keep it from being blamed on the solution
    std::fprintf(stderr, "kiln-worker: cannot reset persisting L2 (%s); not trying again\n",
                 CudaErrorText(rt_, err).c_str());
    persisting_l2_ = false;
  }
}

absl::Status CudaDevice::ZeroOnDevice(void* dst, int64_t bytes) {
  if (!failure_.ok()) return failure_;
  if (DeviceKernels* kernels = Kernels(); kernels != nullptr) return kernels->Zero(dst, bytes);
  return Check(rt_.MemsetAsync(dst, 0, static_cast<size_t>(bytes), stream_), "cudaMemsetAsync");
}

absl::Status CudaDevice::Flush(int64_t bytes) {
  if (!failure_.ok()) return failure_;
  ResetPersistingL2();
  if (bytes > 0) {
    if (absl::Status s = GrowBuffer(*this, flush_buffer_, bytes); !s.ok()) return s;
    // A fill kernel, as flashinfer-bench's `buffer.zero_()`.
    if (absl::Status s = ZeroOnDevice(flush_buffer_.data(), bytes); !s.ok()) return s;
  }
  return SynchronizeDevice();
}

absl::StatusOr<double> CudaDevice::TimeCall(const std::function<absl::Status()>& call,
                                            bool* throttled) {
  if (throttled != nullptr) *throttled = false;
  if (!failure_.ok()) return failure_;
  auto synchronize = [this] { return SynchronizeDevice(); };
  auto synchronize_stream = [this] { return SynchronizeStream(); };
  int64_t unjoined_ns = 0;
  absl::StatusOr<double> ms =
      cupti_ != nullptr ? cupti_->TimeCall(call, synchronize_stream, synchronize, &unjoined_ns)
                        : events_->TimeCall(call, synchronize);
  last_unjoined_ms_ = static_cast<double>(unjoined_ns) / 1e6;
  // Read after the call: reading NVML between the call and the end event would lengthen an
  // events sample. The clock does not drop within the microseconds since the work ended.
  if (ms.ok() && throttled != nullptr && clocks_ != nullptr) *throttled = clocks_->Throttled();
  return ms;
}

absl::Status CudaDevice::TimeCallDeferred(const std::function<absl::Status()>& call,
                                          bool* throttled) {
  if (throttled != nullptr) *throttled = false;
  if (!failure_.ok()) return failure_;
  if (cupti_ == nullptr) return TimedDevice::TimeCallDeferred(call, throttled);
  last_unjoined_ms_ = 0;  // known once the samples are taken
  absl::Status s = cupti_->TimeCallDeferred(
      call, [this] { return SynchronizeStream(); }, [this] { return SynchronizeDevice(); });
  if (s.ok() && throttled != nullptr && clocks_ != nullptr) *throttled = clocks_->Throttled();
  return s;
}

absl::StatusOr<std::vector<double>> CudaDevice::TakeDeferredSamples() {
  deferred_unjoined_ms_.clear();
  deferred_gaps_ms_.clear();
  if (cupti_ == nullptr) return TimedDevice::TakeDeferredSamples();
  absl::StatusOr<std::vector<CuptiTimer::Sample>> samples = cupti_->TakeDeferred();
  if (!samples.ok()) return samples.status();
  std::vector<double> ms;
  for (const CuptiTimer::Sample& sample : *samples) {
    ms.push_back(sample.ms);
    deferred_unjoined_ms_.push_back(static_cast<double>(sample.unjoined_ns) / 1e6);
    if (sample.gap_before_ns >= 0) {
      deferred_gaps_ms_.push_back(static_cast<double>(sample.gap_before_ns) / 1e6);
    }
  }
  return ms;
}

std::vector<TimedWork> CudaDevice::TakeTimedWork() {
  std::vector<TimedWork> work;
  if (cupti_ == nullptr) return work;
  for (const auto& [signature, time] : cupti_->TakeWork()) {
    work.push_back({signature, static_cast<double>(time.ns) / 1e6, time.records});
  }
  return work;
}

std::string CudaDevice::ClockReport() const {
  if (clocks_ == nullptr) return absl::StrCat("unavailable (", clocks_unavailable_, ")");
  return clocks_->Describe();
}

std::string CudaDevice::VersionReport() const {
  int driver = 0, runtime = 0;
  if (rt_.DriverGetVersion(&driver) != cudaSuccess) driver = 0;
  if (rt_.RuntimeGetVersion(&runtime) != cudaSuccess) runtime = 0;
  return absl::StrCat("driver ", driver != 0 ? VersionText(driver) : "?", ", runtime ",
                      runtime != 0 ? VersionText(runtime) : "?");
}

}  // namespace kiln
