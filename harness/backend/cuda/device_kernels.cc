#include "harness/backend/cuda/device_kernels.h"

#include <sys/random.h>

#include <cstring>
#include <string>

#include "absl/strings/str_cat.h"

#if KILN_HAVE_CUDA_INTEGRITY_KERNELS
#include "harness/common/embedded_file.h"
namespace kiln {
extern const EmbeddedFile kCudaIntegrityKernels[];
extern const int kCudaIntegrityKernels_count;
}  // namespace kiln
#endif

namespace kiln {
namespace {

constexpr int kThreadsPerBlock = 256;
constexpr int kBlocksPerSm = 4;

uint64_t RandomKey() {
  uint64_t key = 0;
  if (getrandom(&key, sizeof key, 0) != static_cast<ssize_t>(sizeof key)) {
    key = reinterpret_cast<uintptr_t>(&key) ^ 0x9e3779b97f4a7c15ull;  // still differs per process
  }
  return key;
}

}  // namespace

absl::StatusOr<std::unique_ptr<DeviceKernels>> DeviceKernels::Create(const CudaRuntimeApi& rt,
                                                                    cudaStream_t stream,
                                                                    int ordinal, Check check) {
#if KILN_HAVE_CUDA_INTEGRITY_KERNELS
  if (kCudaIntegrityKernels_count < 1) return absl::UnimplementedError("no integrity kernels");
  // The embedded bytes have no alignment guarantee; the fatbin loader wants 8.
  const EmbeddedFile& fatbin = kCudaIntegrityKernels[0];
  std::vector<uint64_t> image((fatbin.size + 7) / 8 + 1, 0);
  std::memcpy(image.data(), fatbin.data, fatbin.size);
  std::unique_ptr<DeviceKernels> kernels(new DeviceKernels(rt, stream, std::move(check)));
  cudaLibrary_t library = nullptr;
  cudaError_t err =
      rt.LibraryLoadData(&library, image.data(), nullptr, nullptr, 0, nullptr, nullptr, 0);
  if (err == cudaSuccess) {
    err = rt.LibraryGetKernel(&kernels->checksum_kernel_, library, "kiln_checksum64");
  }
  if (err == cudaSuccess) {
    err = rt.LibraryGetKernel(&kernels->fill_kernel_, library, "kiln_fill_random");
  }
  if (err == cudaSuccess) {
    err = rt.LibraryGetKernel(&kernels->zero_kernel_, library, "kiln_fill_zero");
  }
  if (err != cudaSuccess) {
    (void)rt.GetLastError();  // not the solution's error
    return absl::UnimplementedError(
        absl::StrCat("cannot load the integrity kernels: ", CudaErrorText(rt, err)));
  }
  int sms = 0;
  if (rt.DeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, ordinal) == cudaSuccess &&
      sms > 0) {
    kernels->sm_count_ = sms;
  }
  (void)rt.GetLastError();
  kernels->key_ = RandomKey();
  return kernels;
#else
  (void)rt;
  (void)stream;
  (void)ordinal;
  (void)check;
  return absl::UnimplementedError("kiln was built without nvcc, so without integrity kernels");
#endif
}

DeviceKernels::~DeviceKernels() {
  if (sums_ != nullptr) (void)rt_.Free(sums_);
  if (host_sums_ != nullptr) (void)rt_.FreeHost(host_sums_);
}

unsigned DeviceKernels::GridFor(unsigned long long items) const {
  const unsigned long long blocks = (items + kThreadsPerBlock - 1) / kThreadsPerBlock;
  const unsigned long long cap = static_cast<unsigned long long>(sm_count_) * kBlocksPerSm;
  return static_cast<unsigned>(blocks < 1 ? 1 : (blocks > cap ? cap : blocks));
}

absl::Status DeviceKernels::LaunchChecksums(const std::vector<MemoryRegion>& regions) {
  if (regions.size() > capacity_) {
    if (sums_ != nullptr) (void)rt_.Free(sums_);
    sums_ = nullptr;
    capacity_ = 0;
    void* fresh = nullptr;
    absl::Status s = check_(rt_.Malloc(&fresh, regions.size() * sizeof(uint64_t)),
                            "cudaMalloc(input checksums)");
    if (!s.ok()) return s;
    sums_ = static_cast<unsigned long long*>(fresh);
    capacity_ = regions.size();
  }
  absl::Status s = check_(
      rt_.MemsetAsync(sums_, 0, regions.size() * sizeof(uint64_t), stream_), "cudaMemsetAsync");
  for (size_t i = 0; s.ok() && i < regions.size(); ++i) {
    const unsigned char* data = static_cast<const unsigned char*>(regions[i].data);
    unsigned long long bytes = static_cast<unsigned long long>(regions[i].bytes);
    unsigned long long key = key_ + regions[i].key;
    unsigned long long* out = sums_ + i;
    // One thread per kChecksumUnroll (4) pairs of words, at most kBlocksPerSm blocks per SM.
    dim3 grid(GridFor((bytes / 16 + 3) / 4));
    void* args[] = {&data, &bytes, &key, &out};
    s = check_(rt_.LaunchKernel(reinterpret_cast<const void*>(checksum_kernel_), grid,
                                dim3(kThreadsPerBlock), args, 0, stream_),
               "cudaLaunchKernel(kiln_checksum64)");
  }
  return s;
}

absl::StatusOr<std::vector<uint64_t>> DeviceKernels::Checksums(
    const std::vector<MemoryRegion>& regions) {
  std::vector<uint64_t> result(regions.size(), 0);
  if (regions.empty()) return result;
  absl::Status s = LaunchChecksums(regions);
  if (s.ok()) {
    s = check_(rt_.MemcpyAsync(result.data(), sums_, regions.size() * sizeof(uint64_t),
                               cudaMemcpyDeviceToHost, stream_),
               "cudaMemcpyAsync(input checksums)");
  }
  if (s.ok()) s = check_(rt_.StreamSynchronize(stream_), "cudaStreamSynchronize");
  if (!s.ok()) return s;
  return result;
}

absl::Status DeviceKernels::QueueChecksums(const std::vector<MemoryRegion>& regions) {
  has_queued_ = false;  // sums queued and not taken (a request that failed meanwhile) are dropped
  if (regions.size() > host_capacity_) {
    if (host_sums_ != nullptr) (void)rt_.FreeHost(host_sums_);
    host_sums_ = nullptr;
    host_capacity_ = 0;
    void* fresh = nullptr;
    // Pinned: a copy to pageable memory would make the host wait for the kernels before it.
    absl::Status s = check_(rt_.HostAlloc(&fresh, regions.size() * sizeof(uint64_t),
                                          cudaHostAllocDefault),
                            "cudaHostAlloc(checksums)");
    if (!s.ok()) return s;
    host_sums_ = static_cast<uint64_t*>(fresh);
    host_capacity_ = regions.size();
  }
  absl::Status s = regions.empty() ? absl::OkStatus() : LaunchChecksums(regions);
  if (s.ok() && !regions.empty()) {
    s = check_(rt_.MemcpyAsync(host_sums_, sums_, regions.size() * sizeof(uint64_t),
                               cudaMemcpyDeviceToHost, stream_),
               "cudaMemcpyAsync(checksums)");
  }
  if (!s.ok()) return s;
  queued_ = regions.size();
  has_queued_ = true;
  return absl::OkStatus();
}

absl::StatusOr<std::vector<uint64_t>> DeviceKernels::TakeQueued() {
  if (!has_queued_) return absl::InternalError("no checksums were queued");
  has_queued_ = false;
  absl::Status s = check_(rt_.StreamSynchronize(stream_), "cudaStreamSynchronize");
  if (!s.ok()) return s;
  return std::vector<uint64_t>(host_sums_, host_sums_ + queued_);
}

bool DeviceKernels::CanFill(kiln_dtype dtype) {
  switch (dtype) {
    case KILN_FLOAT32:
    case KILN_FLOAT16:
    case KILN_BFLOAT16:
    case KILN_FLOAT8_E4M3FN:
    case KILN_FLOAT8_E5M2:
    case KILN_FLOAT64:
    case KILN_INT64:
    case KILN_INT32:
    case KILN_INT16:
    case KILN_INT8:
    case KILN_BOOL:
      return true;
    default:
      return false;
  }
}

absl::Status DeviceKernels::FillRandom(void* dst, kiln_dtype dtype, int64_t numel, uint64_t seed,
                                       int input_index) {
  if (!CanFill(dtype)) return absl::UnimplementedError("no device generator for this dtype");
  if (numel <= 0) return absl::OkStatus();
  unsigned char* data = static_cast<unsigned char*>(dst);
  unsigned long long count = static_cast<unsigned long long>(numel);
  unsigned long long key = seed;
  unsigned long long index = static_cast<unsigned long long>(input_index);
  int code = static_cast<int>(dtype);
  // One thread per Philox block of 4 elements.
  dim3 grid(GridFor((count + 3) / 4));
  void* args[] = {&data, &count, &key, &index, &code};
  absl::Status s = check_(rt_.LaunchKernel(reinterpret_cast<const void*>(fill_kernel_), grid,
                                           dim3(kThreadsPerBlock), args, 0, stream_),
                          "cudaLaunchKernel(kiln_fill_random)");
  if (s.ok()) s = check_(rt_.StreamSynchronize(stream_), "cudaStreamSynchronize");
  return s;
}

absl::Status DeviceKernels::Zero(void* dst, int64_t bytes) {
  if (bytes <= 0) return absl::OkStatus();
  unsigned char* data = static_cast<unsigned char*>(dst);
  unsigned long long count = static_cast<unsigned long long>(bytes);
  // One thread per 16 bytes, plus the one that writes the tail: no grid-stride loop.
  const unsigned long long threads = count / 16 + 1;
  dim3 grid(static_cast<unsigned>((threads + kThreadsPerBlock - 1) / kThreadsPerBlock));
  void* args[] = {&data, &count};
  return check_(rt_.LaunchKernel(reinterpret_cast<const void*>(zero_kernel_), grid,
                                 dim3(kThreadsPerBlock), args, 0, stream_),
                "cudaLaunchKernel(kiln_fill_zero)");
}

}  // namespace kiln
