// kiln-worker's checked calls: inputs from the seeds, fresh poisoned outputs written per trial,
// input-mutation and return-code checks.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstring>

#include "harness/model/dtype.h"
#include "harness/sandbox/process.h"
#include "tests/unit/worker/worker_fixture.h"

namespace kiln {
namespace {

using testing::GeneratedInput;
using testing::RandomWorkload;
using testing::ReadBytes;
using testing::ReadFloats;
using testing::VectorAddDefinition;
using testing::WorkerJob;

std::vector<float> AsFloats(const std::string& bytes) {
  std::vector<float> out(bytes.size() / sizeof(float));
  std::memcpy(out.data(), bytes.data(), out.size() * sizeof(float));
  return out;
}

TEST_CASE("a correct solution's outputs are written per trial and match its seeded inputs") {
  WorkerJob job;
  v1::Definition def = VectorAddDefinition();
  v1::Workload workload = RandomWorkload(def, 1000);
  v1::WorkerResult result = job.Run(job.Request(def, workload, "add", {11, 22}));
  INFO(result.error());
  REQUIRE(result.status() == v1::PASSED);
  REQUIRE(result.trials_size() == 2);
  for (int t = 0; t < 2; ++t) {
    uint64_t seed = t == 0 ? 11 : 22;
    const v1::TrialOutputs& trial = result.trials(t);
    CHECK(trial.trial() == t);
    REQUIRE(trial.outputs_size() == 1);
    const v1::OutputTensor& c = trial.outputs(0);
    CHECK(c.name() == "c");
    CHECK(c.dtype() == v1::DTYPE_FLOAT32);
    CHECK(std::vector<int64_t>(c.shape().begin(), c.shape().end()) == std::vector<int64_t>{1000});
    CHECK(c.path() == job.output_dir() + "/t" + std::to_string(t) + "_c.bin");
    std::vector<float> a = AsFloats(GeneratedInput(def, workload, 0, seed));
    std::vector<float> b = AsFloats(GeneratedInput(def, workload, 1, seed));
    std::vector<float> got = ReadFloats(c.path());
    REQUIRE(got.size() == 1000);
    int wrong = 0;
    for (size_t i = 0; i < got.size(); ++i) wrong += got[i] != a[i] + b[i];
    CHECK(wrong == 0);
  }
  // Fresh inputs per trial.
  CHECK(ReadBytes(result.trials(0).outputs(0).path()) !=
        ReadBytes(result.trials(1).outputs(0).path()));
}

TEST_CASE("the reference and candidate roles see identical inputs for the same seed") {
  v1::Definition def = VectorAddDefinition();
  v1::Workload workload = RandomWorkload(def, 257);
  WorkerJob reference, candidate, other_seed;
  v1::WorkerResult r = reference.Run(reference.Request(def, workload, "copy_a", {7}, "reference"));
  v1::WorkerResult c = candidate.Run(candidate.Request(def, workload, "copy_a", {7}, "candidate"));
  v1::WorkerResult o = other_seed.Run(other_seed.Request(def, workload, "copy_a", {8}));
  REQUIRE(r.status() == v1::PASSED);
  REQUIRE(c.status() == v1::PASSED);
  REQUIRE(o.status() == v1::PASSED);
  std::string r_bytes = ReadBytes(r.trials(0).outputs(0).path());
  CHECK(r_bytes.size() == 257 * sizeof(float));
  CHECK(r_bytes == ReadBytes(c.trials(0).outputs(0).path()));
  CHECK(r_bytes == GeneratedInput(def, workload, 0, 7));
  CHECK(r_bytes != ReadBytes(o.trials(0).outputs(0).path()));
}

TEST_CASE("a bfloat16 input and a scalar input reach the solution as generated") {
  WorkerJob job;
  v1::Definition def = testing::WidenBf16Definition();
  v1::Workload workload = RandomWorkload(def, 300, "2.5");
  v1::WorkerResult result = job.Run(job.Request(def, workload, "widen_bf16", {5}));
  INFO(result.error());
  REQUIRE(result.status() == v1::PASSED);
  std::string x = GeneratedInput(def, workload, 0, 5);
  REQUIRE(x.size() == 300 * 2);
  std::vector<float> y = ReadFloats(result.trials(0).outputs(0).path());
  REQUIRE(y.size() == 300);
  int wrong = 0;
  for (int i = 0; i < 300; ++i) {
    float expected = 2.5f * static_cast<float>(LoadAsDouble(v1::DTYPE_BFLOAT16, x.data(), i));
    wrong += y[i] != expected;
  }
  CHECK(wrong == 0);
}

TEST_CASE("an unwritten output is caught by poisoning") {
  WorkerJob job;
  v1::Definition def = VectorAddDefinition();
  v1::WorkerResult result =
      job.Run(job.Request(def, RandomWorkload(def, 64), "leave_unwritten", {1, 2}));
  REQUIRE(result.status() == v1::PASSED);  // ran cleanly; the harness judges the values
  REQUIRE(result.trials_size() == 2);
  for (const v1::TrialOutputs& trial : result.trials()) {
    std::vector<float> c = ReadFloats(trial.outputs(0).path());
    REQUIRE(c.size() == 64);
    int nans = 0;
    for (float v : c) nans += std::isnan(v);
    CHECK(nans == 64);
  }
}

TEST_CASE("a solution that mutates an input is rejected naming the input") {
  WorkerJob job;
  v1::Definition def = VectorAddDefinition();
  v1::WorkerResult result = job.Run(job.Request(def, RandomWorkload(def, 128), "mutate_b"));
  CHECK(result.status() == v1::REJECTED);
  CHECK(result.error() == "integrity.input_mutation: input 'b' was modified by the call");
}

TEST_CASE("a non-zero return code is a runtime error") {
  WorkerJob job;
  v1::Definition def = VectorAddDefinition();
  v1::WorkerResult result = job.Run(job.Request(def, RandomWorkload(def, 16), "return_3"));
  CHECK(result.status() == v1::RUNTIME_ERROR);
  // The end of the worker log follows: what the solution printed before returning explains it.
  CHECK_THAT(result.error(),
             Catch::StartsWith("entry point returned 3\nworker log (last 4 KiB):\n"));
  CHECK(result.trials_size() == 0);
}

TEST_CASE("a missing entry point is a runtime error naming the symbol") {
  WorkerJob job;
  v1::Definition def = VectorAddDefinition();
  v1::WorkerResult result = job.Run(job.Request(def, RandomWorkload(def, 16), "no_such_kernel"));
  CHECK(result.status() == v1::RUNTIME_ERROR);
  CHECK_THAT(result.error(), Catch::Contains("'no_such_kernel'"));
}

TEST_CASE("a workload without a definition's input is a runtime error naming it") {
  WorkerJob job;
  v1::Definition def = VectorAddDefinition();
  v1::Workload workload = RandomWorkload(def, 16);
  workload.mutable_inputs()->RemoveLast();
  v1::WorkerResult result = job.Run(job.Request(def, workload, "add"));
  CHECK(result.status() == v1::RUNTIME_ERROR);
  CHECK_THAT(result.error(), Catch::Contains("'b'"));
}

TEST_CASE("kiln-worker started without its pipes prints its usage and exits 2") {
  ProcessOptions opts;
  opts.argv = {KILN_BINARY_DIR "/bin/kiln-worker"};
  opts.timeout_s = 30;
  absl::StatusOr<ProcessResult> result = RunProcess(opts);
  REQUIRE(result.ok());
  CHECK(result->exit_code == 2);
  CHECK_THAT(result->output, Catch::Contains("kiln-worker is started by kiln-harness"));
}

}  // namespace
}  // namespace kiln

namespace kiln {
namespace {

// Elements of the recheck's copy of input a that differ from the trial's generated a.
int PerturbedElements(const v1::WorkerResult& r, const v1::Definition& def,
                      const v1::Workload& workload, int trial, uint64_t seed) {
  REQUIRE(r.rechecks_size() > trial);
  const std::vector<float> got = testing::ReadFloats(r.rechecks(trial).outputs(0).path());
  const std::vector<float> a = AsFloats(testing::GeneratedInput(def, workload, 0, seed));
  REQUIRE(got.size() == a.size());
  int differ = 0;
  for (size_t i = 0; i < a.size(); ++i) differ += std::memcmp(&got[i], &a[i], sizeof(float)) != 0;
  return differ;
}

TEST_CASE("a recheck's inputs are the trial's except at a few elements, after timed calls too") {
  v1::Definition def = VectorAddDefinition();
  // 200000 elements: 1 + 200000 / 65536 = 4 perturbed positions (fewer if two coincide).
  v1::Workload workload = RandomWorkload(def, 200000);
  WorkerJob verify;
  v1::WorkerResult v = verify.Run(verify.Request(def, workload, "copy_a", {7, 9}));
  INFO(v.error());
  REQUIRE(v.status() == v1::PASSED);
  for (int t = 0; t < 2; ++t) {
    const int n = PerturbedElements(v, def, workload, t, t == 0 ? 7 : 9);
    CHECK(n >= 1);
    CHECK(n <= 4);
  }
  WorkerJob timed;
  v1::WorkerRequest request = timed.Request(def, workload, "copy_a", {7, 9});
  request.set_measure(true);
  v1::TimingConfig* config = request.mutable_timing();
  config->set_mode("official");
  config->set_trials(2);
  config->set_warmup(1);
  config->set_iterations(3);
  config->set_flush_bytes(1 << 20);
  v1::WorkerResult m = timed.Run(request);
  INFO(m.error());
  REQUIRE(m.status() == v1::PASSED);
  for (int t = 0; t < 2; ++t) {
    // The same elements as without timing: the timed calls left the inputs as generated.
    CHECK(PerturbedElements(m, def, workload, t, t == 0 ? 7 : 9) ==
          PerturbedElements(v, def, workload, t, t == 0 ? 7 : 9));
    CHECK(testing::ReadBytes(m.rechecks(t).outputs(0).path()) ==
          testing::ReadBytes(v.rechecks(t).outputs(0).path()));
  }
}

}  // namespace
}  // namespace kiln
