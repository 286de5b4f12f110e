// A node without Level Zero says so plainly and refuses Level Zero work with the reason.
#include <catch2/catch.hpp>

#include "server/backend.h"
#include "tests/unit/server/test_node.h"

namespace kiln {
namespace {

using testing::TestNode;

bool NodeHasLevelZero() {
  if (LevelZeroBackendStatus().ok()) {
    WARN("SKIPPED: this node has a Level Zero GPU; the no-driver behaviour cannot be checked");
    return true;
  }
  return false;
}

v1::EvaluateRequest LevelZeroRequest(const std::string& language, const std::string& backend) {
  v1::Solution s = testing::VectorAddSolution("add", "c[i] = a[i] + b[i];");
  if (language == "opencl") {
    s.mutable_spec()->set_language("opencl");
    s.mutable_spec()->set_entry_point("kernel.cl::run");
    s.mutable_sources(0)->set_path("kernel.cl");
    s.mutable_sources(0)->set_content("__kernel void run(__global float* c) {}\n");
    v1::SourceFile* launch = s.add_sources();
    launch->set_path("launch.json");
    launch->set_content("{\"args\": [{\"output\": \"c\"}], \"global\": [\"n\"]}");
  }
  v1::EvaluateRequest request = testing::VectorAddRequest(s, 1024);
  request.set_backend(backend);
  return request;
}

void ExpectNoDriver(TestNode& node, const v1::EvaluateRequest& request) {
  testing::EvaluateOutcome out = testing::Evaluate(node.stub(), request);
  CHECK(out.status.error_code() == grpc::StatusCode::FAILED_PRECONDITION);
  CHECK_THAT(out.status.error_message(), Catch::Contains("level_zero"));
  CHECK_THAT(out.status.error_message(), Catch::Contains("driver"));
  CHECK(out.events.empty());
}

TEST_CASE("an opencl solution on a node without a Level Zero driver is refused naming the driver") {
  if (NodeHasLevelZero()) return;
  TestNode node;
  ExpectNoDriver(node, LevelZeroRequest("opencl", ""));
  ExpectNoDriver(node, LevelZeroRequest("opencl", "level_zero"));
}

TEST_CASE("a cpp run asking for level_zero on a node without the driver is refused") {
  if (NodeHasLevelZero()) return;
  TestNode node;
  ExpectNoDriver(node, LevelZeroRequest("cpp", "level_zero"));
  // The same solution on the host is unaffected.
  testing::EvaluateOutcome host = testing::Evaluate(node.stub(), LevelZeroRequest("cpp", ""));
  CHECK(host.status.ok());
}

TEST_CASE("GetNodeInfo says plainly that there is no Level Zero driver") {
  if (NodeHasLevelZero()) return;
  TestNode node;
  grpc::ClientContext ctx;
  v1::NodeInfo info;
  REQUIRE(node.stub().GetNodeInfo(&ctx, v1::GetNodeInfoRequest(), &info).ok());
  REQUIRE(info.unavailable_backends().count("level_zero") == 1);
  CHECK_THAT(info.unavailable_backends().at("level_zero"), Catch::Contains("driver"));
  for (const std::string& b : info.backends()) CHECK(b != "level_zero");
}

TEST_CASE("--backend level_zero on a node without the driver fails with the reason") {
  if (NodeHasLevelZero()) return;
  absl::StatusOr<std::vector<NodeBackend>> backends = ResolveNodeBackends("level_zero");
  REQUIRE_FALSE(backends.ok());
  CHECK(backends.status().code() == absl::StatusCode::kFailedPrecondition);
  CHECK_THAT(std::string(backends.status().message()), Catch::Contains("Level Zero"));
}

}  // namespace
}  // namespace kiln
