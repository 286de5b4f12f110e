// One worker serving requests one after the other (WorkerSession): a run's candidate serves all
// its workloads in one process; any ending other than a PASSED result ends the process.
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <memory>
#include <thread>

#include "harness/common/files.h"
#include "tests/unit/worker/worker_fixture.h"

namespace kiln {
namespace {

using testing::RandomWorkload;
using testing::ReadFloats;
using testing::VectorAddDefinition;
using testing::WorkerJob;

std::unique_ptr<WorkerSession> StartSession(const WorkerJob& job, double timeout_s = 60) {
  auto session = WorkerSession::Start(job.Launch(timeout_s));
  INFO(session.status().ToString());
  REQUIRE(session.ok());
  return *std::move(session);
}

// `request` writing its outputs to <job>/<folder>.
v1::WorkerRequest Into(v1::WorkerRequest request, const WorkerJob& job, const std::string& folder) {
  const std::string dir = job.dir() + "/" + folder;
  REQUIRE(MakeDirs(dir).ok());
  request.set_output_dir(dir);
  return request;
}

bool Alive(int pid) { return pid > 0 && ::kill(pid, 0) == 0; }

TEST_CASE("one worker serves a run's workloads one request after the other") {
  WorkerJob job;
  v1::Definition def = VectorAddDefinition();
  auto session = StartSession(job);
  const int pid = session->pid();
  v1::WorkerResult first = session->Call(
      Into(job.Request(def, RandomWorkload(def, 32), "add"), job, "w0"), nullptr, nullptr,
      /*last=*/false);
  INFO(first.error());
  REQUIRE(first.status() == v1::PASSED);
  CHECK(session->open());
  CHECK(Alive(pid));  // waiting for the next request
  v1::WorkerResult second = session->Call(
      Into(job.Request(def, RandomWorkload(def, 64), "add"), job, "w1"), nullptr, nullptr,
      /*last=*/true);
  INFO(second.error());
  REQUIRE(second.status() == v1::PASSED);
  CHECK(session->pid() == pid);
  CHECK_FALSE(session->open());  // the last request: the worker has exited
  CHECK(ReadFloats(first.trials(0).outputs(0).path()).size() == 32);
  CHECK(ReadFloats(second.trials(0).outputs(0).path()).size() == 64);
}

TEST_CASE("a result that is not PASSED ends the worker: the next request needs a new one") {
  WorkerJob job;
  v1::Definition def = VectorAddDefinition();
  auto session = StartSession(job);
  v1::WorkerResult failed = session->Call(
      Into(job.Request(def, RandomWorkload(def, 32), "return_3"), job, "w0"), nullptr, nullptr,
      /*last=*/false);
  CHECK(failed.status() == v1::RUNTIME_ERROR);
  CHECK_FALSE(session->open());
  v1::WorkerResult refused = session->Call(
      Into(job.Request(def, RandomWorkload(def, 32), "add"), job, "w1"), nullptr, nullptr,
      /*last=*/true);
  CHECK(refused.status() == v1::RUNTIME_ERROR);
  CHECK_THAT(refused.error(), Catch::Contains("the worker has ended"));
}

TEST_CASE("a crash in a later request is that request's verdict, with the signal") {
  WorkerJob job;
  v1::Definition def = VectorAddDefinition();
  auto session = StartSession(job);
  REQUIRE(session->Call(Into(job.Request(def, RandomWorkload(def, 32), "add"), job, "w0"), nullptr,
                        nullptr, /*last=*/false)
              .status() == v1::PASSED);
  v1::WorkerResult crashed = session->Call(
      Into(job.Request(def, RandomWorkload(def, 32), "segfault"), job, "w1"), nullptr, nullptr,
      /*last=*/false);
  CHECK(crashed.status() == v1::RUNTIME_ERROR);
  CHECK_THAT(crashed.error(), Catch::Contains("worker killed by SIGSEGV"));
  CHECK_FALSE(session->open());
}

TEST_CASE("each request has its own time limit; time between requests does not count") {
  WorkerJob job;
  v1::Definition def = VectorAddDefinition();
  auto session = StartSession(job, /*timeout_s=*/1.5);
  REQUIRE(session->Call(Into(job.Request(def, RandomWorkload(def, 32), "add"), job, "w0"), nullptr,
                        nullptr, /*last=*/false)
              .status() == v1::PASSED);
  std::this_thread::sleep_for(std::chrono::milliseconds(2000));  // longer than the limit
  v1::WorkerResult second = session->Call(
      Into(job.Request(def, RandomWorkload(def, 32), "add"), job, "w1"), nullptr, nullptr,
      /*last=*/false);
  INFO(second.error());
  REQUIRE(second.status() == v1::PASSED);
  const int pid = session->pid();
  v1::WorkerResult endless = session->Call(
      Into(job.Request(def, RandomWorkload(def, 32), "spin"), job, "w2"), nullptr, nullptr,
      /*last=*/false);
  CHECK(endless.status() == v1::TIMEOUT);
  CHECK_THAT(endless.error(), Catch::StartsWith("timed out after 1.5 s (stage: verify, trial 0)"));
  CHECK_FALSE(session->open());
  CHECK_FALSE(Alive(pid));
}

TEST_CASE("ending a session ends an idle worker") {
  WorkerJob job;
  v1::Definition def = VectorAddDefinition();
  auto session = StartSession(job);
  REQUIRE(session->Call(Into(job.Request(def, RandomWorkload(def, 32), "add"), job, "w0"), nullptr,
                        nullptr, /*last=*/false)
              .status() == v1::PASSED);
  const int pid = session->pid();
  REQUIRE(Alive(pid));
  session.reset();
  CHECK_FALSE(Alive(pid));
}

TEST_CASE("cancelling a request stops the worker") {
  WorkerJob job;
  v1::Definition def = VectorAddDefinition();
  auto session = StartSession(job);
  std::atomic<bool> cancel{false};
  auto on_status = [&cancel](const v1::WorkerStatus& status) {
    if (status.stage() == "verify") cancel = true;
  };
  v1::WorkerResult result = session->Call(
      Into(job.Request(def, RandomWorkload(def, 32), "spin"), job, "w0"), on_status, &cancel,
      /*last=*/false);
  CHECK(result.status() == v1::CANCELLED);
  CHECK_FALSE(session->open());
}

}  // namespace
}  // namespace kiln
