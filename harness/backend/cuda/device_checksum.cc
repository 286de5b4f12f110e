#include "harness/backend/cuda/device_checksum.h"

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

absl::StatusOr<std::unique_ptr<DeviceChecksum>> DeviceChecksum::Create(const CudaRuntimeApi& rt,
                                                                      cudaStream_t stream,
                                                                      int ordinal, Check check) {
#if KILN_HAVE_CUDA_INTEGRITY_KERNELS
  if (kCudaIntegrityKernels_count < 1) return absl::UnimplementedError("no integrity kernels");
  // The embedded bytes have no alignment guarantee; the fatbin loader wants 8.
  const EmbeddedFile& fatbin = kCudaIntegrityKernels[0];
  std::vector<uint64_t> image((fatbin.size + 7) / 8 + 1, 0);
  std::memcpy(image.data(), fatbin.data, fatbin.size);
  std::unique_ptr<DeviceChecksum> checksum(new DeviceChecksum(rt, stream, std::move(check)));
  cudaLibrary_t library = nullptr;
  cudaError_t err =
      rt.LibraryLoadData(&library, image.data(), nullptr, nullptr, 0, nullptr, nullptr, 0);
  if (err == cudaSuccess) err = rt.LibraryGetKernel(&checksum->kernel_, library, "kiln_checksum64");
  if (err != cudaSuccess) {
    (void)rt.GetLastError();  // not the solution's error
    return absl::UnimplementedError(
        absl::StrCat("cannot load the integrity kernels: ", CudaErrorText(rt, err)));
  }
  int sms = 0;
  if (rt.DeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, ordinal) == cudaSuccess &&
      sms > 0) {
    checksum->sm_count_ = sms;
  }
  (void)rt.GetLastError();
  checksum->key_ = RandomKey();
  return checksum;
#else
  (void)rt;
  (void)stream;
  (void)ordinal;
  (void)check;
  return absl::UnimplementedError("kiln was built without nvcc, so without integrity kernels");
#endif
}

DeviceChecksum::~DeviceChecksum() {
  if (sums_ != nullptr) (void)rt_.Free(sums_);
}

absl::StatusOr<std::vector<uint64_t>> DeviceChecksum::Compute(
    const std::vector<MemoryRegion>& regions) {
  std::vector<uint64_t> result(regions.size(), 0);
  if (regions.empty()) return result;
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
    unsigned long long key = key_ + i;
    unsigned long long* out = sums_ + i;
    unsigned long long words = bytes / 8;
    unsigned long long blocks = (words + kThreadsPerBlock - 1) / kThreadsPerBlock;
    unsigned long long cap = static_cast<unsigned long long>(sm_count_) * kBlocksPerSm;
    dim3 grid(static_cast<unsigned>(blocks < 1 ? 1 : (blocks > cap ? cap : blocks)));
    void* args[] = {&data, &bytes, &key, &out};
    s = check_(rt_.LaunchKernel(reinterpret_cast<const void*>(kernel_), grid,
                                dim3(kThreadsPerBlock), args, 0, stream_),
               "cudaLaunchKernel(kiln_checksum64)");
  }
  if (s.ok()) {
    s = check_(rt_.MemcpyAsync(result.data(), sums_, regions.size() * sizeof(uint64_t),
                               cudaMemcpyDeviceToHost, stream_),
               "cudaMemcpyAsync(input checksums)");
  }
  if (s.ok()) s = check_(rt_.StreamSynchronize(stream_), "cudaStreamSynchronize");
  if (!s.ok()) return s;
  return result;
}

}  // namespace kiln
