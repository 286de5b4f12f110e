// One worker serving requests one after the other (WorkerSession): a run's candidate serves all
// its workloads in one process; any ending other than a PASSED result ends the process.
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

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

// "stage:trial" of every status event and "gate:T" / "recheck:T" of every gate, in order.
struct EventLog {
  std::vector<std::string> events;
  std::function<void(const v1::WorkerStatus&)> status() {
    return [this](const v1::WorkerStatus& s) {
      events.push_back(s.stage() + ":" + std::to_string(s.trial()));
    };
  }
  void Gate(const v1::TrialOutputs& outputs, bool recheck) {
    events.push_back((recheck ? "recheck:" : "gate:") + std::to_string(outputs.trial()));
  }
};

// A measured request whose trials are judged at gates (WorkerRequest.gate_trials).
v1::WorkerRequest Gated(v1::WorkerRequest request) {
  request.set_measure(true);
  request.set_gate_trials(true);
  v1::TimingConfig* config = request.mutable_timing();
  config->set_mode("official");
  config->set_trials(request.trial_seeds_size());
  config->set_warmup(1);
  config->set_iterations(3);
  config->set_flush_bytes(1 << 20);
  return request;
}

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

TEST_CASE("a gated request is timed only after the harness judged each trial's outputs, and "
          "goes on to the next trial only after it judged the recheck") {
  WorkerJob job;
  v1::Definition def = VectorAddDefinition();
  auto session = StartSession(job);
  EventLog log;
  auto go = [&log](const v1::TrialOutputs& outputs, bool recheck) {
    // The pass's outputs are written when the gate is reached.
    CHECK(ReadFloats(outputs.outputs(0).path()).size() == 32);
    CHECK_THAT(outputs.outputs(0).path(),
               Catch::EndsWith((recheck ? "/r" : "/t") + std::to_string(outputs.trial()) +
                               "_c.bin"));
    log.Gate(outputs, recheck);
    return true;
  };
  v1::WorkerResult result = session->Call(
      Into(Gated(job.Request(def, RandomWorkload(def, 32), "add", {5, 6})), job, "w0"),
      log.status(), nullptr, /*last=*/false, go);
  INFO(result.error());
  REQUIRE(result.status() == v1::PASSED);
  CHECK(result.trials_size() == 2);
  CHECK(result.rechecks_size() == 2);
  CHECK(result.timing().sample_count() == 2 * 3);
  CHECK(log.events == std::vector<std::string>{"inputs:0", "verify:0", "gate:0", "warmup:0",
                                               "timing:0", "recheck:0", "inputs:1", "verify:1",
                                               "gate:1", "warmup:1", "timing:1", "recheck:1"});
  CHECK(session->open());
}

TEST_CASE("a worker stopped at a recheck's gate makes no more inputs and answers untimed") {
  WorkerJob job;
  v1::Definition def = VectorAddDefinition();
  auto session = StartSession(job);
  EventLog log;
  auto stop_at_recheck = [&log](const v1::TrialOutputs& outputs, bool recheck) {
    log.Gate(outputs, recheck);
    return !recheck;
  };
  v1::WorkerResult stopped = session->Call(
      Into(Gated(job.Request(def, RandomWorkload(def, 32), "add", {5, 6, 7})), job, "w0"),
      log.status(), nullptr, /*last=*/false, stop_at_recheck);
  INFO(stopped.error());
  REQUIRE(stopped.status() == v1::PASSED);
  CHECK(stopped.trials_size() == 1);
  CHECK(stopped.rechecks_size() == 1);
  CHECK_FALSE(stopped.has_timing());
  CHECK(log.events == std::vector<std::string>{"inputs:0", "verify:0", "gate:0", "warmup:0",
                                               "timing:0", "recheck:0"});
  CHECK(session->open());
  CHECK_THAT(job.ReadLog(), Catch::Contains("trial 0 recheck judged: incorrect, stop"));
}

TEST_CASE("a worker stopped at a gate answers untimed and serves the next request") {
  WorkerJob job;
  v1::Definition def = VectorAddDefinition();
  auto session = StartSession(job);
  const int pid = session->pid();
  std::vector<std::string> stages;
  auto on_status = [&stages](const v1::WorkerStatus& s) { stages.push_back(s.stage()); };
  int gates = 0;
  auto stop = [&gates](const v1::TrialOutputs&, bool) {
    ++gates;
    return false;
  };
  v1::WorkerResult stopped = session->Call(
      Into(Gated(job.Request(def, RandomWorkload(def, 32), "add", {5, 6, 7})), job, "w0"),
      on_status, nullptr, /*last=*/false, stop);
  INFO(stopped.error());
  REQUIRE(stopped.status() == v1::PASSED);
  CHECK(gates == 1);
  CHECK(stopped.trials_size() == 1);
  CHECK_FALSE(stopped.has_timing());
  CHECK(stages == std::vector<std::string>{"inputs", "verify"});  // never "timing"
  CHECK(session->open());
  // The next request, the last one and gated too, in the same process: its gates are answered
  // on the request pipe before it is closed.
  int later = 0;
  auto go = [&later](const v1::TrialOutputs&, bool) { return ++later > 0; };
  v1::WorkerResult next = session->Call(
      Into(Gated(job.Request(def, RandomWorkload(def, 64), "add", {8})), job, "w1"), nullptr,
      nullptr, /*last=*/true, go);
  INFO(next.error());
  REQUIRE(next.status() == v1::PASSED);
  CHECK(later == 2);  // trial 0's checked outputs and its recheck's
  CHECK(next.has_timing());
  CHECK(session->pid() == pid);
  CHECK_FALSE(session->open());
  CHECK_THAT(job.ReadLog(), Catch::Contains("trial 0 judged: incorrect, stop"));
}

TEST_CASE("checked outputs reported for a trial the request does not have are a malformed message") {
  WorkerJob job;
  v1::Definition def = VectorAddDefinition();
  auto session = StartSession(job);
  int gates = 0;
  auto go = [&gates](const v1::TrialOutputs&, bool) {
    ++gates;
    return true;
  };
  v1::WorkerResult result = session->Call(
      Into(Gated(job.Request(def, RandomWorkload(def, 32), "forge_checked", {5})), job, "w0"),
      nullptr, nullptr, /*last=*/false, go);
  CHECK(result.status() == v1::RUNTIME_ERROR);
  CHECK_THAT(result.error(), Catch::Contains("malformed"));
  CHECK(gates == 1);  // trial 0's, the worker's own; never the forged trial 1
  CHECK_FALSE(session->open());
}

TEST_CASE("a recheck reported twice for a trial is a malformed message") {
  // The solution writes a recheck event of its own during trial 0's timed calls: judged as what
  // it says (nothing written: the harness would find it incorrect), and the worker's own recheck
  // of trial 0 that follows is out of order.
  WorkerJob job;
  v1::Definition def = VectorAddDefinition();
  auto session = StartSession(job);
  EventLog gates;
  auto go = [&gates](const v1::TrialOutputs& outputs, bool recheck) {
    gates.Gate(outputs, recheck);
    return true;
  };
  v1::WorkerResult result = session->Call(
      Into(Gated(job.Request(def, RandomWorkload(def, 32), "forge_recheck", {5})), job, "w0"),
      nullptr, nullptr, /*last=*/false, go);
  CHECK(result.status() == v1::RUNTIME_ERROR);
  CHECK_THAT(result.error(), Catch::Contains("malformed"));
  CHECK(gates.events == std::vector<std::string>{"gate:0", "recheck:0"});
  CHECK_FALSE(session->open());
}

TEST_CASE("a gated request needs a judge at its gates") {
  WorkerJob job;
  v1::Definition def = VectorAddDefinition();
  auto session = StartSession(job);
  v1::WorkerResult result = session->Call(
      Into(Gated(job.Request(def, RandomWorkload(def, 32), "add")), job, "w0"), nullptr,
      nullptr, /*last=*/true);
  CHECK(result.status() == v1::RUNTIME_ERROR);
  CHECK_THAT(result.error(), Catch::Contains("needs a judge at its gates"));
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
