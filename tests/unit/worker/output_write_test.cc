// A device output written to the job folder: the large ones on a tmpfs go through a shared
// mapping filled by several threads (TensorSet::WriteDeviceOutputInParallel); both paths must
// leave the same bytes, and no temporary file.
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "catch2/catch.hpp"
#include "harness/backend/host/host_device.h"
#include "harness/common/files.h"
#include "harness/worker/tensor_set.h"
#include "tests/unit/worker/worker_fixture.h"

namespace kiln {
namespace {

// Host memory the worker must treat as device memory (copied out with CopyToHost), as on a GPU;
// `staging` says whether page-locked staging buffers are offered.
class CopyOnlyDevice final : public Device {
 public:
  explicit CopyOnlyDevice(bool staging) : staging_(staging) {}
  kiln_backend Backend() const override { return KILN_BACKEND_CUDA; }
  bool HostAccessible() const override { return false; }
  absl::StatusOr<void*> Allocate(int64_t bytes) override { return host_.Allocate(bytes); }
  void Free(void* ptr) override { host_.Free(ptr); }
  absl::Status CopyToDevice(void* dst, const void* src, int64_t bytes) override {
    return host_.CopyToDevice(dst, src, bytes);
  }
  absl::Status CopyToHost(void* dst, const void* src, int64_t bytes) override {
    ++copies_;
    return host_.CopyToHost(dst, src, bytes);
  }
  void* AllocateStaging(int64_t bytes) override {
    return staging_ ? std::malloc(static_cast<size_t>(bytes)) : nullptr;
  }
  void FreeStaging(void* ptr) override { std::free(ptr); }
  absl::Status Fill(void* dst, uint8_t value, int64_t bytes) override {
    return host_.Fill(dst, value, bytes);
  }
  absl::Status Synchronize() override { return absl::OkStatus(); }
  kiln_context Context() const override { return host_.Context(); }
  absl::Status Flush(int64_t bytes) override { return host_.Flush(bytes); }
  absl::StatusOr<double> TimeCall(const std::function<absl::Status()>& call,
                                  bool* throttled) override {
    return host_.TimeCall(call, throttled);
  }
  std::string TimerName() const override { return "host"; }
  int64_t DefaultFlushBytes() const override { return host_.DefaultFlushBytes(); }
  std::string DeviceName() const override { return "copy-only test device"; }
  int copies() const { return copies_; }

 private:
  HostDevice host_;
  bool staging_;
  int copies_ = 0;
};

// Writes vector_add's output c (n float32, a pattern of its own) to `dir`; returns the file's
// bytes and whether threads wrote it.
std::string WriteOutput(CopyOnlyDevice& device, const std::string& dir, int64_t n,
                        bool* threads) {
  const v1::Definition def = testing::VectorAddDefinition();
  absl::StatusOr<std::unique_ptr<TensorSet>> set =
      TensorSet::Create(def, testing::RandomWorkload(def, n), device);
  REQUIRE(set.ok());
  const kiln_tensor& c = (*set)->args()[2];
  uint32_t* words = static_cast<uint32_t*>(c.data);
  for (int64_t i = 0; i < n; ++i) words[i] = static_cast<uint32_t>(i * 2654435761u);
  v1::TrialOutputs record;
  absl::Status s = (*set)->WriteOutputs(dir, 0, &record);
  REQUIRE(s.ok());
  *threads = (*set)->TakeUsedWriteThreads();
  CHECK_FALSE((*set)->TakeUsedWriteThreads());  // taken once
  REQUIRE(record.outputs_size() == 1);
  std::string bytes = testing::ReadBytes(record.outputs(0).path());
  REQUIRE(static_cast<int64_t>(bytes.size()) == n * 4);
  CHECK(std::memcmp(bytes.data(), words, bytes.size()) == 0);
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    CHECK(entry.path().filename().string().find(".tmp.") == std::string::npos);
  }
  return bytes;
}

TEST_CASE("a large output in a tmpfs job folder is written by threads, byte for byte",
          "[worker]") {
  const std::string shm = "/dev/shm";
  // 256 MiB (where the threads take over) and a part page more: five chunks, the last short.
  const int64_t n = (int64_t{256} << 18) + 1027;
  if (!RamBacked(shm) || FileSystemFreeBytes(shm) < 4 * n * 4) {
    WARN("SKIPPED: no tmpfs at /dev/shm with 2 GiB free; the threaded output write is not "
         "exercised here");
    return;
  }
  const std::string dir = absl::StrCat(shm, "/kiln-output-write-test-", ::getpid());
  std::filesystem::create_directories(dir);
  struct Cleanup {
    std::string dir;
    ~Cleanup() { std::filesystem::remove_all(dir); }
  } cleanup{dir};

  CopyOnlyDevice staged(/*staging=*/true);
  bool threads = false;
  const std::string a = WriteOutput(staged, dir, n, &threads);
  CHECK(threads);
  CHECK(staged.copies() == 5);  // 64 MiB staging buffers

  CopyOnlyDevice plain(/*staging=*/false);  // no page-locked memory: one thread, 64 MiB parts
  const std::string b = WriteOutput(plain, dir, n, &threads);
  CHECK_FALSE(threads);
  CHECK(a == b);

  // Below 256 MiB: one thread, whatever the folder.
  const std::string small = WriteOutput(staged, dir, 1 << 20, &threads);
  CHECK_FALSE(threads);
}

}  // namespace
}  // namespace kiln
