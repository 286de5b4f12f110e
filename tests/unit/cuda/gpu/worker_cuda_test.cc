// kiln-worker on the CUDA backend: verify-only runs of the test kernels on GPU 0.
#include <catch2/catch.hpp>
#include <cmath>
#include <string>
#include <vector>

#include "tests/unit/cuda/gpu/gpu_fixture.h"

namespace kiln {
namespace {

using testing::CudaJob;
using testing::QuickOfficialTiming;
using testing::GeneratedInput;
using testing::ReadFloats;

constexpr int64_t kN = (int64_t{1} << 20) + 3;  // not a multiple of the block size

// Index of the first element where c != a + b for trial `trial` of `result`, or -1.
int64_t FirstWrongSum(const v1::WorkerResult& result, int trial, uint64_t seed) {
  std::vector<float> a = GeneratedInput(kN, 0, seed);
  std::vector<float> b = GeneratedInput(kN, 1, seed);
  std::vector<float> c = ReadFloats(result.trials(trial).outputs(0).path());
  REQUIRE(c.size() == static_cast<size_t>(kN));
  for (int64_t i = 0; i < kN; ++i) {
    if (!(c[i] == a[i] + b[i])) return i;
  }
  return -1;
}

TEST_CASE("a correct CUDA kernel run through kiln-worker writes correct outputs", "[cuda]") {
  CudaJob job;
  v1::WorkerResult result = job.Run(job.Request("add", kN, {11, 22}));
  INFO(result.error());
  INFO(job.ReadLog());
  REQUIRE(result.status() == v1::PASSED);
  REQUIRE(result.trials_size() == 2);
  CHECK(FirstWrongSum(result, 0, 11) == -1);
  CHECK(FirstWrongSum(result, 1, 22) == -1);
}

TEST_CASE("a wrong CUDA kernel runs cleanly and its outputs differ from the sum", "[cuda]") {
  CudaJob job;
  v1::WorkerResult result = job.Run(job.Request("sub", kN, {5}));
  INFO(result.error());
  REQUIRE(result.status() == v1::PASSED);  // the harness, not the worker, judges correctness
  REQUIRE(result.trials_size() == 1);
  CHECK(FirstWrongSum(result, 0, 5) >= 0);
  std::vector<float> a = GeneratedInput(kN, 0, 5), b = GeneratedInput(kN, 1, 5);
  std::vector<float> c = ReadFloats(result.trials(0).outputs(0).path());
  CHECK(c[kN - 1] == a[kN - 1] - b[kN - 1]);
}

TEST_CASE("an output the kernel never writes stays poisoned on the GPU", "[cuda]") {
  CudaJob job;
  v1::WorkerResult result = job.Run(job.Request("noop", 1000, {5}));
  REQUIRE(result.status() == v1::PASSED);
  std::vector<float> c = ReadFloats(result.trials(0).outputs(0).path());
  REQUIRE(c.size() == 1000);
  int not_nan = 0;
  for (float x : c) not_nan += std::isnan(x) ? 0 : 1;
  CHECK(not_nan == 0);
}

TEST_CASE("a kernel writing through a null pointer is a runtime error naming it", "[cuda]") {
  CudaJob job;
  v1::WorkerResult result = job.Run(job.Request("write_null", 1000, {5}));
  CHECK(result.status() == v1::RUNTIME_ERROR);
  CHECK_THAT(result.error(), Catch::Contains("illegal"));
}

TEST_CASE("a launch the GPU refuses is a runtime error", "[cuda]") {
  CudaJob job;
  v1::WorkerResult result = job.Run(job.Request("bad_launch", 1000, {5}));
  CHECK(result.status() == v1::RUNTIME_ERROR);
  // The runtime's words differ between versions ("invalid configuration argument" before CUDA
  // 13, "invalid argument" in 13.0); what matters is that its error is reported.
  CHECK_THAT(result.error(), Catch::Contains("cudaError"));
}

TEST_CASE("a launch the GPU refuses during the timed calls is a runtime error", "[cuda]") {
  // The timer has waited for the device; the refused launch left only the runtime's last error,
  // which the check after each timed call reads without waiting again.
  CudaJob job;
  v1::WorkerRequest request = job.Request("bad_launch_later", 1000, {5});
  request.set_measure(true);
  *request.mutable_timing() = QuickOfficialTiming();
  v1::WorkerResult result = job.Run(request);
  CHECK(result.status() == v1::RUNTIME_ERROR);
  CHECK_THAT(result.error(), Catch::Contains("cudaError"));
  // Caught after the timed call itself, not later by the recheck.
  CHECK_THAT(result.error(), Catch::Contains("(timed call"));
}

TEST_CASE("an input changed on the GPU is rejected as input mutation", "[cuda]") {
  CudaJob job;
  v1::WorkerResult result = job.Run(job.Request("mutate_b", 1000, {5}));
  CHECK(result.status() == v1::REJECTED);
  CHECK_THAT(result.error(), Catch::Contains("input 'b'"));
}

TEST_CASE("inputs are checksummed on the GPU, and one flipped bit in an input's last byte is caught",
          "[cuda]") {
  CudaJob job;
  // 1001 floats: 4004 bytes, so the flipped byte is in the part after the last 8-byte word.
  v1::WorkerResult result = job.Run(job.Request("flip_last_byte_of_b", 1001, {5}));
  CHECK(result.status() == v1::REJECTED);
  CHECK_THAT(result.error(), Catch::Contains("input 'b'"));
  // The worker says when it falls back to host checksums; the GPU path must have been used.
  CHECK_THAT(job.ReadLog(), !Catch::Contains("input checksums on the host"));
}

TEST_CASE("an input changed only during the timed calls is rejected", "[cuda]") {
  CudaJob job;
  v1::WorkerRequest request = job.Request("mutate_b_later", 1 << 20, {5});
  request.set_measure(true);
  *request.mutable_timing() = QuickOfficialTiming();
  v1::WorkerResult result = job.Run(request);
  CHECK(result.status() == v1::REJECTED);
  CHECK_THAT(result.error(), Catch::Contains("input 'b'"));
}

TEST_CASE("an endless kernel times out, and a fresh worker on the same GPU then passes", "[cuda]") {
  {
    CudaJob job;
    v1::WorkerResult result = job.Run(job.Request("spin", 1000, {5}), /*timeout_s=*/20);
    CHECK(result.status() == v1::TIMEOUT);
  }
  CudaJob job;
  v1::WorkerResult result = job.Run(job.Request("add", kN, {7}));
  INFO(result.error());
  REQUIRE(result.status() == v1::PASSED);
  CHECK(FirstWrongSum(result, 0, 7) == -1);
}

}  // namespace
}  // namespace kiln
