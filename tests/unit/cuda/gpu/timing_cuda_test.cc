// kiln-worker timing on the CUDA backend: CUPTI spans, as flashinfer-bench measures.
#include <catch2/catch.hpp>
#include <string>

#include "tests/unit/cuda/gpu/gpu_fixture.h"

namespace kiln {
namespace {

using testing::CudaJob;
using testing::QuickOfficialTiming;

constexpr int64_t kN = int64_t{1} << 22;

TEST_CASE("official timing on the GPU uses CUPTI: 3 x 50 samples and a positive latency",
          "[cuda]") {
  CudaJob job;
  v1::WorkerRequest request = job.Request("add", kN, {1, 2, 3});
  request.set_measure(true);  // an empty TimingConfig is the official default
  v1::WorkerResult result = job.Run(request, 300);
  INFO(result.error());
  INFO(job.ReadLog());
  REQUIRE(result.status() == v1::PASSED);
  const v1::TimingResult& timing = result.timing();
  CHECK(timing.mode() == "official");
  CHECK(timing.timer() == "cupti");
  CHECK(timing.sample_count() == 150);
  // Every CUPTI span is sent back, within the statistics' range.
  REQUIRE(timing.samples_ms_size() == 150);
  for (double ms : timing.samples_ms()) {
    CHECK(ms >= timing.min_ms());
    CHECK(ms <= timing.max_ms());
  }
  CHECK(timing.trial_medians_ms_size() == 3);
  CHECK(timing.latency_ms() > 0);
  CHECK(timing.flush_bytes() > 0);
  CHECK_FALSE(timing.device().empty());
  CHECK(result.trials_size() == 3);
  // The worker's cost line says how far apart the timed calls ran on the GPU: at least the
  // flush between them (2 x L2 zeroed), and far below a millisecond-scale timer.
  const std::string log = job.ReadLog();
  const size_t at = log.find("the device between timed calls: median ");
  REQUIRE(at != std::string::npos);
  const double gap_ms = std::stod(log.substr(at + std::string("the device between timed calls: median ").size()));
  CHECK(gap_ms > 0.001);
  CHECK(gap_ms < 50);
  // The flush before each timed call (kiln_fill_zero) is outside every span: the timed work is
  // the solution's kernel alone.
  REQUIRE(timing.gpu_work_size() > 0);
  for (const v1::GpuWork& w : timing.gpu_work()) {
    INFO(w.signature());
    CHECK(w.signature().find("kiln_fill_zero") == std::string::npos);
    CHECK(w.signature().rfind("memset", 0) != 0);
  }
}

TEST_CASE("a timed call that launches no GPU work is an error", "[cuda]") {
  CudaJob job;
  v1::WorkerRequest request = job.Request("noop", 1000, {1});
  request.set_measure(true);
  *request.mutable_timing() = QuickOfficialTiming();
  v1::WorkerResult result = job.Run(request);
  CHECK(result.status() == v1::RUNTIME_ERROR);
  CHECK_THAT(result.error(), Catch::Contains("no GPU work"));
}

TEST_CASE("work on a private stream the call does not wait for is inside the CUPTI span",
          "[cuda]") {
  // The kernel holds the GPU for 2 ms of global-timer time on a stream of its own; an event
  // timer on the worker's stream would read almost nothing. The timer itself is what is tested
  // here, so the per-call checks (which reject unjoined work) are off.
  CudaJob job;
  v1::WorkerRequest request = job.Request("private_stream_add", 4096, {1});
  request.set_measure(true);
  request.set_disable_call_checks(true);
  *request.mutable_timing() = QuickOfficialTiming();
  v1::WorkerResult result = job.Run(request);
  INFO(result.error());
  REQUIRE(result.status() == v1::PASSED);
  CHECK(result.timing().timer() == "cupti");
  CHECK(result.timing().min_ms() >= 1.9);
}

TEST_CASE("with the checks on, work on a private stream never joined to ctx->stream is rejected",
          "[cuda]") {
  CudaJob job;
  v1::WorkerRequest request = job.Request("private_stream_add", 4096, {1});
  request.set_measure(true);
  *request.mutable_timing() = QuickOfficialTiming();
  v1::WorkerResult result = job.Run(request);
  CHECK(result.status() == v1::REJECTED);
  CHECK_THAT(result.error(), Catch::StartsWith("integrity.work_after_return"));
}

TEST_CASE("a call launching different kernels than the first timed call is an error", "[cuda]") {
  CudaJob job;
  v1::WorkerRequest request = job.Request("changing_work", 4096, {1});
  request.set_measure(true);
  *request.mutable_timing() = QuickOfficialTiming();
  v1::WorkerResult result = job.Run(request);
  CHECK(result.status() == v1::RUNTIME_ERROR);
  CHECK_THAT(result.error(), Catch::Contains("different GPU work"));
}

TEST_CASE("kernelbench and robust modes run on the GPU too", "[cuda]") {
  for (const char* mode : {"kernelbench", "robust"}) {
    INFO(mode);
    CudaJob job;
    v1::WorkerRequest request = job.Request("add", kN, {1});
    request.set_measure(true);
    request.mutable_timing()->set_mode(mode);
    request.mutable_timing()->set_trials(1);
    request.mutable_timing()->set_warmup(2);
    request.mutable_timing()->set_iterations(std::string(mode) == "robust" ? 0 : 20);
    request.mutable_timing()->set_min_samples(10);
    request.mutable_timing()->set_target_rel_stdev(0.05);
    request.mutable_timing()->set_max_seconds(3);
    v1::WorkerResult result = job.Run(request);
    INFO(result.error());
    REQUIRE(result.status() == v1::PASSED);
    CHECK(result.timing().sample_count() + result.timing().samples_dropped() >= 10);
    CHECK(result.timing().latency_ms() > 0);
  }
}

}  // namespace
}  // namespace kiln
