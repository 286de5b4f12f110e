#include "server/evaluation/output_comparison.h"

#include <unistd.h>

#include <catch2/catch.hpp>
#include <climits>
#include <cstdlib>
#include <string>
#include <vector>

#include "harness/common/files.h"

namespace kiln {
namespace {

// A float32 vector definition with one output "y" of n elements.
v1::Definition VectorDefinition() {
  v1::Definition def;
  def.set_name("vec");
  v1::Axis* n = def.add_axes();
  n->set_name("n");
  v1::TensorSpec* x = def.add_inputs();
  x->set_name("x");
  x->add_shape("n");
  x->set_dtype(v1::DTYPE_FLOAT32);
  v1::TensorSpec* y = def.add_outputs();
  y->set_name("y");
  y->add_shape("n");
  y->set_dtype(v1::DTYPE_FLOAT32);
  return def;
}

v1::Workload VectorWorkload(int64_t n) {
  v1::Workload w;
  v1::AxisValue* a = w.add_axes();
  a->set_name("n");
  a->set_value(n);
  return w;
}

class JobFolders {
 public:
  JobFolders() {
    root_ = *MakeTempDir("", "kiln-compare-test");
    char resolved[PATH_MAX];
    root_ = ::realpath(root_.c_str(), resolved);
    REQUIRE(MakeDirs(root_ + "/ref").ok());
    REQUIRE(MakeDirs(root_ + "/cand").ok());
  }
  ~JobFolders() { (void)RemoveTree(root_); }

  std::string ref() const { return root_ + "/ref"; }
  std::string cand() const { return root_ + "/cand"; }

  // Writes `values` as output "y" of `trial` and records it in `result`.
  static void AddOutput(v1::WorkerResult& result, const std::string& path, int trial,
                        const std::vector<float>& values, int64_t claimed_n = -1) {
    if (!values.empty()) {
      REQUIRE(WriteFile(path, std::string(reinterpret_cast<const char*>(values.data()),
                                          values.size() * sizeof(float)))
                  .ok());
    }
    v1::TrialOutputs* t = result.add_trials();
    t->set_trial(trial);
    v1::OutputTensor* o = t->add_outputs();
    o->set_name("y");
    o->set_dtype(v1::DTYPE_FLOAT32);
    o->add_shape(claimed_n >= 0 ? claimed_n : static_cast<int64_t>(values.size()));
    o->set_path(path);
  }

 private:
  std::string root_;
};

OutputVerdict Compare(const JobFolders& dirs, const v1::WorkerResult& ref,
                      const v1::WorkerResult& cand, int64_t n) {
  return CompareOutputs(VectorDefinition(), VectorWorkload(n), 1, {&ref, dirs.ref()},
                        {&cand, dirs.cand()});
}

TEST_CASE("equal outputs pass and are counted") {
  JobFolders dirs;
  v1::WorkerResult ref, cand;
  JobFolders::AddOutput(ref, dirs.ref() + "/y", 0, {1, 2, 3, 4});
  JobFolders::AddOutput(cand, dirs.cand() + "/y", 0, {1, 2, 3, 4});
  OutputVerdict v = Compare(dirs, ref, cand, 4);
  CHECK(v.status == v1::PASSED);
  CHECK(v.compared);
  CHECK(v.checked == 4);
  CHECK(v.mismatched == 0);
}

TEST_CASE("a wrong value is INCORRECT_NUMERICAL naming the output and the trial") {
  JobFolders dirs;
  v1::WorkerResult ref, cand;
  JobFolders::AddOutput(ref, dirs.ref() + "/y", 0, {1, 2, 3, 4});
  JobFolders::AddOutput(cand, dirs.cand() + "/y", 0, {1, 2, 30, 4});
  OutputVerdict v = Compare(dirs, ref, cand, 4);
  CHECK(v.status == v1::INCORRECT_NUMERICAL);
  CHECK_THAT(v.reason, Catch::Contains("output 'y' trial 0"));
  CHECK(v.mismatched == 1);
  CHECK(v.max_abs_error == Approx(27));
}

TEST_CASE("over several trials the reason gives the figures the trace carries, not trial 0's") {
  JobFolders dirs;
  v1::WorkerResult ref, cand;
  JobFolders::AddOutput(ref, dirs.ref() + "/y0", 0, {1, 2, 3, 4});
  JobFolders::AddOutput(ref, dirs.ref() + "/y1", 1, {1, 2, 3, 4});
  JobFolders::AddOutput(cand, dirs.cand() + "/y0", 0, {1, 2, 30, 4});   // abs error 27
  JobFolders::AddOutput(cand, dirs.cand() + "/y1", 1, {1, 2, 3, 104});  // abs error 100
  OutputVerdict v = CompareOutputs(VectorDefinition(), VectorWorkload(4), 2, {&ref, dirs.ref()},
                                   {&cand, dirs.cand()});
  CHECK(v.status == v1::INCORRECT_NUMERICAL);
  CHECK(v.max_abs_error == Approx(100));
  // The first failure is trial 0's (max abs 27); the reason also gives the workload's 100.
  CHECK_THAT(v.reason, Catch::Contains("output 'y' trial 0"));
  CHECK_THAT(v.reason, Catch::Contains("max abs 27"));
  CHECK_THAT(v.reason, Catch::Contains("over every trial and output compared: max abs 100"));
}

TEST_CASE("a later trial that returns an earlier trial's answer is REJECTED as output caching") {
  JobFolders dirs;
  v1::WorkerResult ref, cand;
  JobFolders::AddOutput(ref, dirs.ref() + "/y0", 0, {1, 2, 3, 4});
  JobFolders::AddOutput(ref, dirs.ref() + "/y1", 1, {5, 6, 7, 8});
  JobFolders::AddOutput(cand, dirs.cand() + "/y0", 0, {1, 2, 3, 4});
  JobFolders::AddOutput(cand, dirs.cand() + "/y1", 1, {1, 2, 3, 4});  // trial 0's, replayed
  OutputVerdict v = CompareOutputs(VectorDefinition(), VectorWorkload(4), 2, {&ref, dirs.ref()},
                                   {&cand, dirs.cand()});
  CHECK(v.status == v1::REJECTED);
  CHECK_THAT(v.reason, Catch::StartsWith("integrity.output_caching: output 'y' trial 1: ") &&
                           Catch::Contains("it is trial 0's expected output"));

  // A later trial that is simply wrong (not an earlier answer) stays INCORRECT_NUMERICAL.
  v1::WorkerResult wrong;
  JobFolders::AddOutput(wrong, dirs.cand() + "/w0", 0, {1, 2, 3, 4});
  JobFolders::AddOutput(wrong, dirs.cand() + "/w1", 1, {5, 6, 7, 80});
  OutputVerdict w = CompareOutputs(VectorDefinition(), VectorWorkload(4), 2, {&ref, dirs.ref()},
                                   {&wrong, dirs.cand()});
  CHECK(w.status == v1::INCORRECT_NUMERICAL);
  CHECK_THAT(w.reason, Catch::Contains("output 'y' trial 1"));
}

TEST_CASE("large outputs are read in parallel parts, every byte of every trial compared") {
  // 3 trials of 6M floats (24 MiB: read by several threads), reusing the candidate's buffer from
  // trial to trial: a wrong element in the last part of the last trial is still found, and
  // trial 0's bytes do not linger in trial 1's comparison.
  JobFolders dirs;
  v1::WorkerResult ref, cand;
  const int64_t n = 6 << 20;
  for (int trial = 0; trial < 3; ++trial) {
    std::vector<float> values(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) values[i] = static_cast<float>((i * 7 + trial) % 1000);
    const std::string name = "/y" + std::to_string(trial);
    JobFolders::AddOutput(ref, dirs.ref() + name, trial, values);
    if (trial == 2) values[n - 3] += 50;
    JobFolders::AddOutput(cand, dirs.cand() + name, trial, values);
  }
  OutputVerdict v = CompareOutputs(VectorDefinition(), VectorWorkload(n), 3,
                                   {&ref, dirs.ref()}, {&cand, dirs.cand()});
  CHECK(v.status == v1::INCORRECT_NUMERICAL);
  CHECK(v.checked == 3 * n);
  CHECK(v.mismatched == 1);
  CHECK_THAT(v.reason, Catch::Contains("output 'y' trial 2"));
  CHECK(v.max_abs_error == Approx(50));
}

TEST_CASE("an output file of the wrong size is INCORRECT_SHAPE") {
  JobFolders dirs;
  v1::WorkerResult ref, cand;
  JobFolders::AddOutput(ref, dirs.ref() + "/y", 0, {1, 2, 3, 4});
  JobFolders::AddOutput(cand, dirs.cand() + "/y", 0, {1, 2, 3}, /*claimed_n=*/4);
  OutputVerdict v = Compare(dirs, ref, cand, 4);
  CHECK(v.status == v1::INCORRECT_SHAPE);
  CHECK_THAT(v.reason, Catch::Contains("bytes"));
}

TEST_CASE("a candidate output pointing at the reference's file is REJECTED") {
  JobFolders dirs;
  v1::WorkerResult ref, cand;
  JobFolders::AddOutput(ref, dirs.ref() + "/y", 0, {1, 2, 3, 4});
  SECTION("by path") { JobFolders::AddOutput(cand, dirs.ref() + "/y", 0, {}, 4); }
  SECTION("by symlink") {
    REQUIRE(::symlink((dirs.ref() + "/y").c_str(), (dirs.cand() + "/y").c_str()) == 0);
    JobFolders::AddOutput(cand, dirs.cand() + "/y", 0, {}, 4);
  }
  SECTION("by hard link") {
    REQUIRE(::link((dirs.ref() + "/y").c_str(), (dirs.cand() + "/y").c_str()) == 0);
    JobFolders::AddOutput(cand, dirs.cand() + "/y", 0, {}, 4);
  }
  OutputVerdict v = Compare(dirs, ref, cand, 4);
  INFO(v.reason);
  CHECK(v.status == v1::REJECTED);
}

TEST_CASE("a missing reference output is a reference failure") {
  JobFolders dirs;
  v1::WorkerResult ref, cand;
  JobFolders::AddOutput(cand, dirs.cand() + "/y", 0, {1, 2, 3, 4});
  OutputVerdict v = Compare(dirs, ref, cand, 4);
  CHECK(v.status == v1::RUNTIME_ERROR);
  CHECK(v.reference_failed);
  CHECK_THAT(v.reason, Catch::StartsWith("reference failed"));
}

}  // namespace
}  // namespace kiln
