// kiln runs show takes back what people see: the start of a run id, or the 8 characters of its
// random part that progress lines show; an ambiguous fragment is an error that says so.
#include <catch2/catch.hpp>
#include <string>

#include "tests/unit/server/test_node.h"

namespace kiln {
namespace {

using testing::Evaluate;
using testing::EvaluateOutcome;
using testing::TestNode;
using testing::VectorAddRequest;
using testing::VectorAddSolution;

grpc::Status Get(TestNode& node, const std::string& id, v1::Run* run) {
  grpc::ClientContext ctx;
  v1::GetRunRequest request;
  request.set_run_id(id);
  return node.stub().GetRun(&ctx, request, run);
}

std::string Submit(TestNode& node, const std::string& name) {
  EvaluateOutcome out = Evaluate(node.stub(), VectorAddRequest(VectorAddSolution(name, "c[i] = a[i] + b[i];"), 256));
  REQUIRE(out.status.ok());
  REQUIRE(out.run().run_id().size() == 20);
  return out.run().run_id();
}

TEST_CASE("a run is found by the start of its id or by its random part") {
  TestNode node;
  const std::string first = Submit(node, "first");
  const std::string second = Submit(node, "second");
  v1::Run run;
  // The random part (as progress lines show it).
  REQUIRE(Get(node, first.substr(12), &run).ok());
  CHECK(run.run_id() == first);
  // The start, long enough to be unique: the whole id but its last character.
  REQUIRE(Get(node, second.substr(0, 19), &run).ok());
  CHECK(run.run_id() == second);
  // The creation time alone is shared by both (made seconds apart).
  grpc::Status ambiguous = Get(node, first.substr(0, 6), &run);
  CHECK(ambiguous.error_code() == grpc::StatusCode::INVALID_ARGUMENT);
  CHECK_THAT(ambiguous.error_message(), Catch::StartsWith("run_id: '" + first.substr(0, 6) +
                                                          "' is the start or end of 2 runs ("));
  CHECK_THAT(ambiguous.error_message(), Catch::Contains(first));
  // Nothing matches: NOT_FOUND, as for a whole id; not hex: NOT_FOUND too.
  CHECK(Get(node, "ffffffffffff", &run).error_code() == grpc::StatusCode::NOT_FOUND);
  CHECK(Get(node, "%", &run).error_code() == grpc::StatusCode::NOT_FOUND);
}

}  // namespace
}  // namespace kiln
