// Every way a worker can end badly becomes a verdict of RunWorker, never a hang or a crash of
// the caller: crashes, hangs, cancellation, hostile writes to the event pipe, early exits.
#include <atomic>
#include <catch2/catch.hpp>

#include "tests/unit/worker/worker_fixture.h"

namespace kiln {
namespace {

using testing::RandomWorkload;
using testing::ReadFloats;
using testing::VectorAddDefinition;
using testing::WorkerJob;

TEST_CASE("a segfaulting solution is a runtime error naming SIGSEGV, the stage and the log") {
  WorkerJob job;
  v1::Definition def = VectorAddDefinition();
  v1::WorkerResult result = job.Run(job.Request(def, RandomWorkload(def, 32), "segfault"));
  CHECK(result.status() == v1::RUNTIME_ERROR);
  CHECK_THAT(result.error(), Catch::Contains("worker killed by SIGSEGV"));
  CHECK_THAT(result.error(), Catch::Contains("during verify, trial 0"));
  // The solution's last line, from the worker log.
  CHECK_THAT(result.error(), Catch::Contains("solution: about to write through a null pointer"));
}

TEST_CASE("a solution that never returns times out at the wall-clock limit") {
  WorkerJob job;
  v1::Definition def = VectorAddDefinition();
  v1::WorkerResult result = job.Run(job.Request(def, RandomWorkload(def, 32), "spin"), 2.0);
  CHECK(result.status() == v1::TIMEOUT);
  CHECK_THAT(result.error(), Catch::StartsWith("timed out after 2 s (stage: verify, trial 0)"));
}

TEST_CASE("cancelling stops a running worker") {
  WorkerJob job;
  v1::Definition def = VectorAddDefinition();
  std::atomic<bool> cancel{false};
  // Cancel once the worker is inside the (endless) call.
  auto on_status = [&cancel](const v1::WorkerStatus& status) {
    if (status.stage() == "verify") cancel = true;
  };
  v1::WorkerResult result =
      job.Run(job.Request(def, RandomWorkload(def, 32), "spin"), 120, on_status, &cancel);
  CHECK(cancel.load());
  CHECK(result.status() == v1::CANCELLED);
}

TEST_CASE("a solution's prints go to the worker log and leave the protocol intact") {
  WorkerJob job;
  v1::Definition def = VectorAddDefinition();
  v1::WorkerResult result = job.Run(job.Request(def, RandomWorkload(def, 100), "chatty_add"));
  INFO(result.error());
  REQUIRE(result.status() == v1::PASSED);
  REQUIRE(result.trials_size() == 2);
  CHECK(ReadFloats(result.trials(1).outputs(0).path()).size() == 100);
  std::string log = job.ReadLog();
  CHECK_THAT(log, Catch::Contains("chatter 1999"));
  CHECK_THAT(log, Catch::Contains("stderr chatter 1999"));
}

TEST_CASE("garbage a solution writes to the event pipe is reported as a malformed message") {
  WorkerJob job;
  v1::Definition def = VectorAddDefinition();
  v1::WorkerResult result = job.Run(job.Request(def, RandomWorkload(def, 16), "forge_event"));
  CHECK(result.status() == v1::RUNTIME_ERROR);
  CHECK_THAT(result.error(), Catch::StartsWith("worker sent a malformed message"));
}

TEST_CASE("a result forged by the solution ahead of the worker's is a malformed message") {
  WorkerJob job;
  v1::Definition def = VectorAddDefinition();
  v1::WorkerResult result = job.Run(job.Request(def, RandomWorkload(def, 16), "forge_result"));
  CHECK(result.status() == v1::RUNTIME_ERROR);
  CHECK_THAT(result.error(), Catch::StartsWith("worker sent a malformed message"));
}

TEST_CASE("a forged PASSED result without the trials' outputs is rejected") {
  WorkerJob job;
  v1::Definition def = VectorAddDefinition();
  v1::WorkerResult result =
      job.Run(job.Request(def, RandomWorkload(def, 16), "forge_result_and_exit"));
  CHECK(result.status() == v1::REJECTED);
  CHECK_THAT(result.error(), Catch::Contains("0 trials for 2 trial seeds"));
}

TEST_CASE("a worker that exits without a result is a runtime error") {
  WorkerJob job;
  v1::Definition def = VectorAddDefinition();
  v1::WorkerResult result = job.Run(job.Request(def, RandomWorkload(def, 16), "exit_early"));
  CHECK(result.status() == v1::RUNTIME_ERROR);
  CHECK_THAT(result.error(), Catch::Contains("without sending a result"));
}

TEST_CASE("a worker binary that does not exist cannot be started") {
  WorkerJob job;
  v1::Definition def = VectorAddDefinition();
  WorkerLaunch launch = job.Launch();
  launch.worker_path = job.dir() + "/no-such-worker";
  absl::StatusOr<v1::WorkerResult> result =
      RunWorker(launch, job.Request(def, RandomWorkload(def, 16), "add"), nullptr, nullptr);
  // Either Start refuses, or the child fails to exec and that is a runtime error.
  if (result.ok()) {
    CHECK(result->status() == v1::RUNTIME_ERROR);
  } else {
    CHECK_THAT(std::string(result.status().message()), Catch::Contains("no-such-worker"));
  }
}

}  // namespace
}  // namespace kiln
