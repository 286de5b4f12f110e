// Solution baselines (`--baseline solution:NAME`): a registered solution timed beside the
// reference on the run's device slot, with the candidate's protocol and inputs, its outputs
// checked against the reference's, its latency cached by its build. C++ and Python solutions
// on the host backend.
#include <catch2/catch.hpp>
#include <string>

#include "tests/unit/python/python_test_support.h"
#include "tests/unit/server/test_node.h"

namespace kiln::testing {
namespace {

void Register(TestNode& node, const v1::Solution& solution) {
  grpc::ClientContext ctx;
  v1::PutSolutionRequest put;
  *put.mutable_solution() = solution;
  put.set_replace(true);
  v1::PutSolutionResponse response;
  grpc::Status status = node.stub().PutSolution(&ctx, put, &response);
  INFO(status.error_message());
  REQUIRE(status.ok());
}

v1::Run SubmitWithBaselines(TestNode& node, const std::vector<std::string>& baselines) {
  v1::EvaluateRequest request = VectorAddRequest(VectorAddSolution("candidate", "c[i] = a[i] + b[i];"));
  for (const std::string& b : baselines) request.add_baselines(b);
  v1::Run run = EvaluatedRun(node, request);
  INFO(run.reason());
  REQUIRE(run.status() == v1::PASSED);
  return run;
}

const v1::BaselineResult& Named(const v1::Run& run, const std::string& name) {
  for (const v1::BaselineResult& b : run.traces(0).kiln().baselines()) {
    if (b.name() == name) return b;
  }
  FAIL("no baseline " << name);
  static v1::BaselineResult none;
  return none;
}

TEST_CASE("a registered C++ solution is timed as a baseline, then served from the cache") {
  TestNode node;
  // Two passes over the data: slower than the candidate, same result.
  Register(node, VectorAddSolution("two_pass", "c[i] = a[i]; c[i] += b[i];"));
  v1::Run first = SubmitWithBaselines(node, {"solution:two_pass"});
  const v1::BaselineResult& b = Named(first, "solution:two_pass");
  INFO(b.note());
  CHECK(b.source() == "solution");
  CHECK(b.latency_ms() > 0);
  CHECK(b.speedup() > 0);
  CHECK_FALSE(b.cached());
  CHECK(b.timing().mode() == "kernelbench");
  CHECK(b.note().empty());

  v1::Run second = SubmitWithBaselines(node, {"solution:two_pass"});
  const v1::BaselineResult& again = Named(second, "solution:two_pass");
  CHECK(again.cached());
  CHECK(again.latency_ms() == b.latency_ms());
}

TEST_CASE("a solution baseline that computes something else is reported, not cached") {
  TestNode node;
  Register(node, VectorAddSolution("off_by_one", "c[i] = a[i] + b[i] + 1.0f;"));
  v1::Run run = SubmitWithBaselines(node, {"solution:off_by_one"});
  const v1::BaselineResult& b = Named(run, "solution:off_by_one");
  CHECK_THAT(b.note(), Catch::Contains("its outputs differ from the reference's"));
  v1::Run again = SubmitWithBaselines(node, {"solution:off_by_one"});
  CHECK_FALSE(Named(again, "solution:off_by_one").cached());
}

TEST_CASE("a solution baseline that does not compile is a note, and the run still PASSES") {
  TestNode node;
  Register(node, VectorAddSolution("broken", "c[i] = a[i] + ;"));
  v1::Run run = SubmitWithBaselines(node, {"solution:broken"});
  const v1::BaselineResult& b = Named(run, "solution:broken");
  CHECK(b.latency_ms() == 0);
  CHECK_THAT(b.note(), Catch::StartsWith("not measured: solution:broken failed to compile: "));
}

TEST_CASE("a Python solution baseline runs through the Python runner") {
  SKIP_WITHOUT_TORCH();
  TestNode& node = PythonNode();
  Register(node, PythonSolution("torch_add", "def run(a, b):\n    return a + b\n", false));
  v1::Run run = SubmitWithBaselines(node, {"solution:torch_add"});
  const v1::BaselineResult& b = Named(run, "solution:torch_add");
  INFO(b.note());
  CHECK(b.latency_ms() > 0);
  CHECK(b.note().empty());
}

TEST_CASE("a solution baseline in a language the run's backend cannot run is refused at admission") {
  TestNode node;
  v1::Solution triton = PythonSolution("triton_add", "def run(a, b, c):\n    pass\n", true, "triton");
  Register(node, triton);
  v1::EvaluateRequest request = VectorAddRequest(VectorAddSolution("candidate", "c[i] = a[i] + b[i];"));
  request.add_baselines("solution:triton_add");
  EvaluateOutcome out = Evaluate(node.stub(), request);
  CHECK(out.status.error_code() == grpc::StatusCode::FAILED_PRECONDITION);
  CHECK_THAT(out.status.error_message(),
             Catch::StartsWith("baselines[0]: solution 'triton_add' (triton) cannot run here"));
}

}  // namespace
}  // namespace kiln::testing
