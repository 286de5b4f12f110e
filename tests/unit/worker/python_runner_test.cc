// The worker core as the Python reference runner uses it (libkiln_worker_python.so): a
// value-returning solution passed in-process, its outputs collected after checked calls only,
// timed by the same protocol as kiln-worker; and the runner script's own failure path where
// python3 has no torch.
#include <filesystem>
#include <sstream>
#include <string>

#include "catch2/catch.hpp"
#include "harness/common/files.h"
#include "harness/sandbox/program_path.h"
#include "harness/timing/protocol.h"
#include "harness/worker/worker_client.h"
#include "tests/unit/worker/worker_fixture.h"

namespace kiln::testing {
namespace {

const std::string kCore = KILN_BINARY_DIR "/lib/libkiln_worker_python.so";
const std::string kStub = KILN_BINARY_DIR "/tests/python_runner_stub";
const std::string kRunner = KILN_BINARY_DIR "/share/kiln/python/kiln_python_runner.py";

v1::WorkerResult RunStub(const WorkerJob& job, const v1::WorkerRequest& request,
                         std::vector<std::string> extra = {}) {
  WorkerLaunch launch = job.Launch(60);
  launch.worker_path = kStub;
  launch.worker_args = {kCore};
  launch.worker_args.insert(launch.worker_args.end(), extra.begin(), extra.end());
  absl::StatusOr<v1::WorkerResult> result = RunWorker(launch, request, nullptr, nullptr);
  INFO(result.status().ToString());
  REQUIRE(result.ok());
  return *result;
}

std::pair<int, int> Counts(const WorkerJob& job) {
  absl::StatusOr<std::string> text = ReadFile(job.dir() + "/calls.txt");
  REQUIRE(text.ok());
  std::istringstream in(*text);
  int entries = -1, collects = -1;
  in >> entries >> collects;
  return {entries, collects};
}

void RequireSums(const WorkerJob& job, const v1::Definition& def, const v1::Workload& w,
                 const v1::TrialOutputs& trial, uint64_t seed) {
  REQUIRE(trial.outputs_size() == 1);
  std::vector<float> c = ReadFloats(trial.outputs(0).path());
  std::string a = GeneratedInput(def, w, 0, seed);
  std::string b = GeneratedInput(def, w, 1, seed);
  REQUIRE(c.size() * sizeof(float) == a.size());
  const auto* fa = reinterpret_cast<const float*>(a.data());
  const auto* fb = reinterpret_cast<const float*>(b.data());
  for (size_t i = 0; i < c.size(); ++i) REQUIRE(c[i] == fa[i] + fb[i]);
}

// A measured request of one official-mode trial (seed 7) with `warmup` and `iterations` calls.
v1::WorkerRequest TimedRequest(const WorkerJob& job, const v1::Definition& def,
                               const v1::Workload& w, const std::string& role, int warmup,
                               int iterations) {
  v1::WorkerRequest request = job.Request(def, w, "", {7}, role);
  absl::StatusOr<v1::TimingConfig> config = DefaultTimingConfig("official");
  REQUIRE(config.ok());
  config->set_trials(1);
  config->set_warmup(warmup);
  config->set_iterations(iterations);
  *request.mutable_timing() = *config;
  request.set_measure(true);
  return request;
}

}  // namespace

TEST_CASE("an in-process value-returning reference is verified through its collector") {
  WorkerJob job;
  const v1::Definition def = VectorAddDefinition();
  const v1::Workload w = RandomWorkload(def, 1000);
  v1::WorkerRequest request = job.Request(def, w, "", {5, 6}, "reference");
  v1::WorkerResult result = RunStub(job, request);
  INFO(result.error() << "\n" << job.ReadLog());
  REQUIRE(result.status() == v1::PASSED);
  REQUIRE(result.trials_size() == 2);
  RequireSums(job, def, w, result.trials(0), 5);
  RequireSums(job, def, w, result.trials(1), 6);
  // One checked call and one recheck per trial, each collected once.
  auto [entries, collects] = Counts(job);
  CHECK(entries == 4);
  CHECK(collects == 4);
  CHECK(job.ReadLog().find("solution supplied in-process") != std::string::npos);
}

TEST_CASE("timed calls of an in-process reference are not collected") {
  WorkerJob job;
  const v1::Definition def = VectorAddDefinition();
  const v1::Workload w = RandomWorkload(def, 4096);
  v1::WorkerRequest request = TimedRequest(job, def, w, "reference", 2, 5);
  v1::WorkerResult result = RunStub(job, request);
  INFO(result.error() << "\n" << job.ReadLog());
  REQUIRE(result.status() == v1::PASSED);
  REQUIRE(result.has_timing());
  CHECK(result.timing().latency_ms() > 0);
  CHECK(result.timing().trial_medians_ms_size() == 1);
  RequireSums(job, def, w, result.trials(0), 7);
  auto [entries, collects] = Counts(job);
  // checked call + 2 warmup + 5 timed + the recheck; only the checked call and recheck collect.
  CHECK(entries == 9);
  CHECK(collects == 2);
}

TEST_CASE("a value-returning candidate's outputs are collected after every call, timed ones too") {
  WorkerJob job;
  const v1::Definition def = VectorAddDefinition();
  const v1::Workload w = RandomWorkload(def, 4096);
  v1::WorkerRequest request = TimedRequest(job, def, w, "candidate", 2, 5);
  v1::WorkerResult result = RunStub(job, request, {"--solution"});
  INFO(result.error() << "\n" << job.ReadLog());
  REQUIRE(result.status() == v1::PASSED);
  RequireSums(job, def, w, result.trials(0), 7);
  auto [entries, collects] = Counts(job);
  // checked call + determinism call + 2 warmup + 5 timed + the recheck, each collected.
  CHECK(entries == 10);
  CHECK(collects == 10);
}

TEST_CASE("a collector's refusal becomes the verdict its code names, with the runner's reason") {
  WorkerJob job;
  const v1::Definition def = VectorAddDefinition();
  const v1::Workload w = RandomWorkload(def, 256);
  v1::WorkerRequest request = TimedRequest(job, def, w, "candidate", 1, 3);
  // The 4th collect is the first timed call's (checked, determinism, warmup before it).
  v1::WorkerResult rejected = RunStub(job, request, {"--solution", "--refuse-collect", "4", "2"});
  CHECK(rejected.status() == v1::REJECTED);
  CHECK(rejected.error().rfind("integrity.runner_tampered: the stub refuses this collect", 0) == 0);

  WorkerJob shape_job;
  v1::WorkerResult shape = RunStub(
      shape_job, shape_job.Request(def, w, "", {7}, "candidate"),
      {"--solution", "--refuse-collect", "1", "3"});
  CHECK(shape.status() == v1::INCORRECT_SHAPE);

  WorkerJob failed_job;
  v1::WorkerResult failed = RunStub(
      failed_job, failed_job.Request(def, w, "", {7}, "candidate"),
      {"--solution", "--refuse-collect", "1", "1"});
  CHECK(failed.status() == v1::RUNTIME_ERROR);
  CHECK(failed.error().find("the stub refuses this collect") != std::string::npos);
}

TEST_CASE("an in-process reference without a collector leaves its outputs unwritten") {
  WorkerJob job;
  const v1::Definition def = VectorAddDefinition();
  const v1::Workload w = RandomWorkload(def, 64);
  v1::WorkerResult result = RunStub(job, job.Request(def, w, "", {3}, "reference"),
                                    {"--no-collect"});
  REQUIRE(result.status() == v1::PASSED);  // the worker ran; the harness judges the outputs
  std::vector<float> c = ReadFloats(result.trials(0).outputs(0).path());
  std::string a = GeneratedInput(def, w, 0, 3);
  const auto* fa = reinterpret_cast<const float*>(a.data());
  bool any_sum = false;
  std::string b = GeneratedInput(def, w, 1, 3);
  const auto* fb = reinterpret_cast<const float*>(b.data());
  for (size_t i = 0; i < c.size(); ++i) any_sum = any_sum || c[i] == fa[i] + fb[i];
  CHECK_FALSE(any_sum);
}

TEST_CASE("a runner that cannot run reports why as a RUNTIME_ERROR result") {
  WorkerJob job;
  const v1::Definition def = VectorAddDefinition();
  v1::WorkerResult result =
      RunStub(job, job.Request(def, RandomWorkload(def, 8), "", {1}, "reference"),
              {"--fail", "the Python reference runner cannot import torch: No module named torch"});
  CHECK(result.status() == v1::RUNTIME_ERROR);
  CHECK(result.error().find("cannot import torch") != std::string::npos);
}

TEST_CASE("the Python runner script reports a python3 without torch") {
  absl::StatusOr<std::string> python = FindProgram("python3");
  if (!python.ok()) {
    WARN("skipped: no python3 on this machine");
    return;
  }
  WorkerJob job;
  const v1::Definition def = VectorAddDefinition();
  WorkerLaunch launch = job.Launch(120);
  launch.worker_path = *python;
  launch.worker_args = {"-B", kRunner, "--core", kCore, "--baseline", "reference"};
  absl::StatusOr<v1::WorkerResult> result =
      RunWorker(launch, job.Request(def, RandomWorkload(def, 8), "", {1}, "reference"), nullptr,
                nullptr);
  REQUIRE(result.ok());
  INFO(result->error() << "\n" << job.ReadLog());
  if (result->error().find("cannot import torch") == std::string::npos) {
    // torch is installed here: the definition has no Python reference, which must be said.
    CHECK(result->status() == v1::RUNTIME_ERROR);
    CHECK(result->error().find("has no Python reference") != std::string::npos);
    return;
  }
  CHECK(result->status() == v1::RUNTIME_ERROR);
}

}  // namespace kiln::testing
