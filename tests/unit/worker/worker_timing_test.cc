// kiln-worker with measure=true: the timing protocol on the host backend.
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "tests/unit/worker/worker_fixture.h"

namespace kiln {
namespace {

using testing::RandomWorkload;
using testing::VectorAddDefinition;
using testing::WorkerJob;

v1::TimingConfig SmallOfficialConfig() {
  v1::TimingConfig config;
  config.set_mode("official");
  config.set_trials(2);
  config.set_warmup(1);
  config.set_iterations(3);
  config.set_flush_bytes(1 << 20);
  return config;
}

TEST_CASE("measuring runs the official protocol with the host timer") {
  WorkerJob job;
  v1::Definition def = VectorAddDefinition();
  v1::WorkerRequest request = job.Request(def, RandomWorkload(def, 4096), "add", {3, 4});
  request.set_measure(true);
  *request.mutable_timing() = SmallOfficialConfig();
  std::vector<std::string> stages;
  v1::WorkerResult result = job.Run(request, 120, [&stages](const v1::WorkerStatus& s) {
    stages.push_back(s.stage() + ":" + std::to_string(s.trial()));
  });
  INFO(result.error());
  REQUIRE(result.status() == v1::PASSED);
  const v1::TimingResult& timing = result.timing();
  CHECK(timing.latency_ms() > 0);
  CHECK(timing.sample_count() == 2 * 3);
  CHECK(timing.timer() == "host");
  CHECK_FALSE(timing.device().empty());
  // Each trial's checked call was verified and written.
  REQUIRE(result.trials_size() == 2);
  CHECK(result.trials(1).trial() == 1);
  CHECK(stages == std::vector<std::string>{"inputs:0", "verify:0", "warmup:0", "timing:0",
                                           "inputs:1", "verify:1", "warmup:1", "timing:1"});
}

TEST_CASE("an input mutation after the checked call is caught during timing") {
  WorkerJob job;
  v1::Definition def = VectorAddDefinition();
  v1::WorkerRequest request = job.Request(def, RandomWorkload(def, 64), "mutate_later", {3, 4});
  request.set_measure(true);
  *request.mutable_timing() = SmallOfficialConfig();
  v1::WorkerResult result = job.Run(request, 120);
  CHECK(result.status() == v1::REJECTED);
  CHECK_THAT(result.error(), Catch::Contains("input 'a'"));
  CHECK(result.trials_size() == 1);  // the checked call of trial 0 passed
}

TEST_CASE("without a flush size the host flushes twice its last-level cache") {
  WorkerJob job;
  v1::Definition def = VectorAddDefinition();
  v1::WorkerRequest request = job.Request(def, RandomWorkload(def, 16), "add", {9});
  request.set_measure(true);
  v1::TimingConfig config = SmallOfficialConfig();
  config.set_trials(1);
  config.set_warmup(0);
  config.set_iterations(1);
  config.set_flush_bytes(0);
  *request.mutable_timing() = config;
  v1::WorkerResult result = job.Run(request, 120);
  INFO(result.error());
  REQUIRE(result.status() == v1::PASSED);
  // 2x a cache size from sysfs (whole KiB), or the 64 MiB fallback.
  CHECK(result.timing().flush_bytes() >= (1 << 20));
  CHECK(result.timing().flush_bytes() % 2048 == 0);
  CHECK(result.timing().sample_count() == 1);
}

}  // namespace
}  // namespace kiln
