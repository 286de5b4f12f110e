// CheckResultClaims: what a PASSED worker result must look like to be believed.
#include <catch2/catch.hpp>

#include "absl/strings/str_cat.h"
#include "harness/worker/worker_client.h"
#include "tests/unit/worker/worker_fixture.h"

namespace kiln {
namespace {

v1::WorkerRequest TwoTrialRequest() {
  v1::WorkerRequest request;
  *request.mutable_definition() = testing::VectorAddDefinition();
  request.add_trial_seeds(1);
  request.add_trial_seeds(2);
  request.set_output_dir("/jobs/7/out");
  return request;
}

v1::WorkerResult HonestResult(const v1::WorkerRequest& request) {
  v1::WorkerResult result;
  result.set_status(v1::PASSED);
  for (int t = 0; t < request.trial_seeds_size(); ++t) {
    v1::TrialOutputs* trial = result.add_trials();
    trial->set_trial(t);
    v1::OutputTensor* c = trial->add_outputs();
    c->set_name("c");
    c->set_dtype(v1::DTYPE_FLOAT32);
    c->add_shape(8);
    c->set_path(WorkerOutputPath(request.output_dir(), t, "c"));
  }
  return result;
}

TEST_CASE("output files are named by trial and output inside the output folder") {
  CHECK(WorkerOutputPath("/jobs/7/out", 2, "c") == "/jobs/7/out/t2_c.bin");
  CHECK(WorkerOutputPath("", 0, "y") == "./t0_y.bin");
  CHECK(WorkerOutputPath("/jobs/7/out", 2, "c", /*recheck=*/true) == "/jobs/7/out/r2_c.bin");
  CHECK(WorkerOutputFile(1, "y", /*recheck=*/true) == "r1_y.bin");
}

TEST_CASE("an honest result's claims hold") {
  v1::WorkerRequest request = TwoTrialRequest();
  CHECK(CheckResultClaims(request, HonestResult(request)).ok());
}

TEST_CASE("a result pointing an output at another file is refused") {
  v1::WorkerRequest request = TwoTrialRequest();
  v1::WorkerResult result = HonestResult(request);
  result.mutable_trials(1)->mutable_outputs(0)->set_path("/jobs/6/out/t1_c.bin");
  absl::Status s = CheckResultClaims(request, result);
  CHECK_FALSE(s.ok());
  CHECK_THAT(std::string(s.message()), Catch::Contains("trials[1].outputs[0]"));
}

TEST_CASE("a result missing a trial or an output is refused") {
  v1::WorkerRequest request = TwoTrialRequest();
  v1::WorkerResult missing_trial = HonestResult(request);
  missing_trial.mutable_trials()->RemoveLast();
  CHECK_FALSE(CheckResultClaims(request, missing_trial).ok());
  v1::WorkerResult missing_output = HonestResult(request);
  missing_output.mutable_trials(0)->clear_outputs();
  CHECK_FALSE(CheckResultClaims(request, missing_output).ok());
}

TEST_CASE("a measured result must carry its timing") {
  v1::WorkerRequest request = TwoTrialRequest();
  request.set_measure(true);
  v1::WorkerResult result = HonestResult(request);
  CHECK_FALSE(CheckResultClaims(request, result).ok());
  result.mutable_timing()->set_latency_ms(0.5);
  result.mutable_timing()->set_trials(2);
  CHECK(CheckResultClaims(request, result).ok());
  result.mutable_timing()->set_trials(3);
  CHECK_FALSE(CheckResultClaims(request, result).ok());
}

// A measured, gated request of two trials and an honest result of it, timed.
v1::WorkerRequest GatedRequest() {
  v1::WorkerRequest request = TwoTrialRequest();
  request.set_measure(true);
  request.set_gate_trials(true);
  return request;
}

v1::WorkerResult TimedResult(const v1::WorkerRequest& request) {
  v1::WorkerResult result = HonestResult(request);
  result.mutable_timing()->set_latency_ms(0.5);
  result.mutable_timing()->set_trials(request.trial_seeds_size());
  return result;
}

TEST_CASE("a gated result's trials are those reported at its gates") {
  v1::WorkerRequest request = GatedRequest();
  v1::WorkerResult result = TimedResult(request);
  GateRecord gates;
  gates.reported = {result.trials(0), result.trials(1)};
  CHECK(CheckResultClaims(request, result, gates).ok());
  // One trial the harness never saw at a gate.
  GateRecord one;
  one.reported = {result.trials(0)};
  absl::Status s = CheckResultClaims(request, result, one);
  CHECK_THAT(std::string(s.message()), Catch::Contains("2 trials, 1 reported at the gates"));
  // A trial that says other than what its gate was shown.
  GateRecord changed = gates;
  changed.reported[1].mutable_outputs(0)->set_path("/jobs/7/out/elsewhere.bin");
  s = CheckResultClaims(request, result, changed);
  CHECK_THAT(std::string(s.message()), Catch::Contains("trials[1] differs"));
}

TEST_CASE("a gated result's rechecks are those reported at its gates") {
  v1::WorkerRequest request = GatedRequest();
  v1::WorkerResult result = TimedResult(request);
  for (int t = 0; t < 2; ++t) {
    v1::TrialOutputs* recheck = result.add_rechecks();
    *recheck = result.trials(t);
    recheck->mutable_outputs(0)->set_path(absl::StrCat(request.output_dir(), "/r", t, "_c.bin"));
  }
  GateRecord gates;
  gates.reported = {result.trials(0), result.trials(1)};
  gates.rechecks = {result.rechecks(0), result.rechecks(1)};
  CHECK(CheckResultClaims(request, result, gates).ok());
  // A recheck the harness never saw at a gate.
  GateRecord one = gates;
  one.rechecks.pop_back();
  absl::Status s = CheckResultClaims(request, result, one);
  CHECK_THAT(std::string(s.message()), Catch::Contains("2 rechecks, 1 reported at the gates"));
  // A recheck that says other than what its gate was shown.
  GateRecord changed = gates;
  changed.rechecks[0].mutable_outputs(0)->set_path("/jobs/7/out/elsewhere.bin");
  s = CheckResultClaims(request, result, changed);
  CHECK_THAT(std::string(s.message()), Catch::Contains("rechecks[0] differs"));
}

TEST_CASE("a result stopped at a gate has the trials up to it and no timing") {
  v1::WorkerRequest request = TwoTrialRequest();
  request.set_measure(true);
  request.set_gate_trials(true);
  v1::WorkerResult result = HonestResult(request);
  result.mutable_trials()->RemoveLast();
  GateRecord gates;
  gates.reported = {result.trials(0)};
  gates.stopped = true;
  CHECK(CheckResultClaims(request, result, gates).ok());
  // Not stopped, it would need its timing.
  gates.stopped = false;
  CHECK_FALSE(CheckResultClaims(request, result, gates).ok());
  // Timed after the stop.
  gates.stopped = true;
  result.mutable_timing()->set_latency_ms(0.5);
  result.mutable_timing()->set_trials(1);
  absl::Status s = CheckResultClaims(request, result, gates);
  CHECK_THAT(std::string(s.message()), Catch::Contains("timed after the harness stopped it"));
}

}  // namespace
}  // namespace kiln
