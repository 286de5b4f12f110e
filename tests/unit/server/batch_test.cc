// EvaluateBatch: N candidates of one definition, each its own run and verdict, all on the
// batch's inputs; all admitted or none.
#include <catch2/catch.hpp>
#include <map>
#include <regex>
#include <set>
#include <string>

#include "tests/unit/server/test_node.h"

namespace kiln {
namespace {

using testing::Evaluate;
using testing::EvaluateOutcome;
using testing::TestNode;
using testing::VectorAddRequest;
using testing::VectorAddSolution;
using testing::VectorAddWorkload;

// Prints the first element of input `a` (exactly, as a hex float) on every call.
v1::Solution InputReporter(const std::string& name, const std::string& extra = "") {
  return VectorAddSolution(name, R"(
    if (i == 0) { std::printf("kiln-test input %a\n", (double)a[0]); std::fflush(stdout); }
    c[i] = a[i] + b[i])" + extra + ";",
                           "#include <cstdio>\n");
}

v1::EvaluateRequest TwoWorkloads() {
  v1::EvaluateRequest request = VectorAddRequest(v1::Solution(), 1024);
  request.clear_solution();
  *request.add_workloads() = VectorAddWorkload(2048, "test-n2048");
  return request;
}

struct BatchOutcome {
  grpc::Status status;
  std::vector<v1::Run> runs;  // final events, in the order they came
  std::set<std::string> progress_run_ids;
};

BatchOutcome EvaluateBatch(TestNode& node, const v1::EvaluateBatchRequest& request) {
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::minutes(5));
  BatchOutcome out;
  auto reader = node.stub().EvaluateBatch(&ctx, request);
  v1::EvaluateEvent event;
  while (reader->Read(&event)) {
    if (event.has_run()) out.runs.push_back(event.run());
    if (event.has_progress()) out.progress_run_ids.insert(event.progress().run_id());
  }
  out.status = reader->Finish();
  return out;
}

// The first input element each workload's worker log reports, by workload ("w0", "w1").
std::map<std::string, std::string> Inputs(TestNode& node, const v1::Run& run) {
  std::map<std::string, std::string> out;
  const std::regex marker("kiln-test input (\\S+)");
  for (const auto& [name, text] : testing::WorkerLogs(node.stub(), run.run_id())) {
    std::smatch m;
    if (std::regex_search(text, m, marker)) out[name] = m[1].str();
  }
  return out;
}

TEST_CASE("a batch gives each solution its own run and verdict, all on the batch's inputs") {
  TestNode node;
  v1::EvaluateBatchRequest batch;
  *batch.mutable_request() = TwoWorkloads();
  *batch.add_solutions() = InputReporter("right_1");
  *batch.add_solutions() = InputReporter("wrong", " + 1.0f");
  *batch.add_solutions() = InputReporter("right_2");
  BatchOutcome out = EvaluateBatch(node, batch);
  INFO(out.status.error_message());
  REQUIRE(out.status.ok());
  REQUIRE(out.runs.size() == 3);
  CHECK(out.progress_run_ids.size() == 3);
  std::map<std::string, v1::Run> by_name;
  std::set<std::string> batch_ids, run_ids;
  for (const v1::Run& run : out.runs) {
    by_name[run.solution_name()] = run;
    run_ids.insert(run.run_id());
    REQUIRE(run.traces_size() == 2);
    for (const v1::Trace& t : run.traces()) batch_ids.insert(t.kiln().batch_id());
  }
  CHECK(run_ids.size() == 3);
  REQUIRE(batch_ids.size() == 1);
  CHECK_FALSE(batch_ids.begin()->empty());
  CHECK(by_name["right_1"].status() == v1::PASSED);
  CHECK(by_name["right_2"].status() == v1::PASSED);
  CHECK(by_name["wrong"].status() == v1::INCORRECT_NUMERICAL);
  // One seed for the batch: every run saw the same inputs, workload by workload.
  auto a = Inputs(node, by_name["right_1"]);
  auto b = Inputs(node, by_name["right_2"]);
  auto c = Inputs(node, by_name["wrong"]);
  REQUIRE(a.size() == 2);
  CHECK(a == b);
  CHECK(a == c);
  CHECK(a["w0"] != a["w1"]);
  // A run of its own draws inputs of its own.
  EvaluateOutcome alone = Evaluate(node.stub(), [] {
    v1::EvaluateRequest r = TwoWorkloads();
    *r.mutable_solution() = InputReporter("alone");
    return r;
  }());
  REQUIRE(alone.status.ok());
  REQUIRE(alone.run().status() == v1::PASSED);
  CHECK(Inputs(node, alone.run())["w0"] != a["w0"]);
  CHECK(alone.run().traces(0).kiln().batch_id().empty());
}

TEST_CASE("a batch with one bad solution is refused whole, naming it, and creates no run") {
  TestNode node;
  const int64_t before = testing::RunsArchived(node.stub());
  v1::EvaluateBatchRequest batch;
  *batch.mutable_request() = TwoWorkloads();
  *batch.add_solutions() = InputReporter("fine");
  v1::Solution bad = InputReporter("bad");
  bad.mutable_spec()->set_language("fortran");
  *batch.add_solutions() = bad;
  BatchOutcome out = EvaluateBatch(node, batch);
  CHECK(out.status.error_code() == grpc::StatusCode::INVALID_ARGUMENT);
  CHECK_THAT(out.status.error_message(), Catch::StartsWith("solutions[1]: "));
  CHECK(out.runs.empty());
  CHECK(testing::RunsArchived(node.stub()) == before);

  v1::EvaluateBatchRequest empty;
  *empty.mutable_request() = TwoWorkloads();
  out = EvaluateBatch(node, empty);
  CHECK(out.status.error_code() == grpc::StatusCode::INVALID_ARGUMENT);
  CHECK_THAT(out.status.error_message(), Catch::StartsWith("solutions: "));

  v1::EvaluateBatchRequest with_solution;
  *with_solution.mutable_request() = TwoWorkloads();
  *with_solution.mutable_request()->mutable_solution() = InputReporter("misplaced");
  *with_solution.add_solutions() = InputReporter("fine");
  out = EvaluateBatch(node, with_solution);
  CHECK(out.status.error_code() == grpc::StatusCode::INVALID_ARGUMENT);
  CHECK_THAT(out.status.error_message(), Catch::StartsWith("request.solution: "));
  CHECK(testing::RunsArchived(node.stub()) == before);
}

}  // namespace
}  // namespace kiln
