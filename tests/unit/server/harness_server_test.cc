// HarnessServer::Start and its refusals.
#include "server/harness_server.h"

#include <catch2/catch.hpp>
#include <string>

#include "harness/common/files.h"
#include "tests/unit/server/test_node.h"

namespace kiln {
namespace {

struct TempDir {
  TempDir() : path(*MakeTempDir("", "kiln-start-test")) {}
  ~TempDir() { (void)RemoveTree(path); }
  std::string path;
};

TEST_CASE("Start binds a free port when asked for port 0") {
  TempDir dir;
  auto server = HarnessServer::Start(testing::TestOptions(dir.path + "/data"));
  REQUIRE(server.ok());
  const std::string address = (*server)->address();
  CHECK(address.rfind("127.0.0.1:", 0) == 0);
  CHECK(address != "127.0.0.1:0");
  (*server)->Drain();
  (*server)->Wait();  // returns: the server has stopped
}

TEST_CASE("Start refuses a backend this node does not have") {
  TempDir dir;
  HarnessOptions options = testing::TestOptions(dir.path + "/data");
  options.backend = "level_zero";
  auto server = HarnessServer::Start(options);
  REQUIRE(!server.ok());
  CHECK(server.status().code() == absl::StatusCode::kFailedPrecondition);
  // The reason follows: on nodes without a driver, what Level Zero itself said.
  CHECK_THAT(std::string(server.status().message()),
             Catch::StartsWith("backend 'level_zero' is not available on this node: "));
}

TEST_CASE("Start refuses a data dir that cannot be created") {
  TempDir dir;
  REQUIRE(WriteFile(dir.path + "/file", "x").ok());
  auto server = HarnessServer::Start(testing::TestOptions(dir.path + "/file/data"));
  REQUIRE(!server.ok());
  CHECK_THAT(std::string(server.status().message()), Catch::Contains("data dir"));
}

TEST_CASE("Start refuses an unknown default mode") {
  TempDir dir;
  HarnessOptions options = testing::TestOptions(dir.path + "/data");
  options.default_mode = "fast";
  auto server = HarnessServer::Start(options);
  REQUIRE(!server.ok());
  CHECK_THAT(std::string(server.status().message()), Catch::Contains("mode: 'fast'"));
}

TEST_CASE("Start refuses a --compile-nice outside 0 to 19, naming the flag") {
  TempDir dir;
  for (int nice : {-1, 20}) {
    HarnessOptions options = testing::TestOptions(dir.path + "/data");
    options.compile_nice = nice;
    auto server = HarnessServer::Start(options);
    REQUIRE(!server.ok());
    CHECK(server.status().code() == absl::StatusCode::kInvalidArgument);
    CHECK_THAT(std::string(server.status().message()),
               Catch::StartsWith("--compile-nice: must be between 0 and 19"));
  }
}

TEST_CASE("a second node cannot take a port that is in use") {
  TempDir dir;
  auto first = HarnessServer::Start(testing::TestOptions(dir.path + "/a"));
  REQUIRE(first.ok());
  HarnessOptions options = testing::TestOptions(dir.path + "/b");
  options.listen = (*first)->address();
  auto second = HarnessServer::Start(options);
  REQUIRE(!second.ok());
  CHECK_THAT(std::string(second.status().message()), Catch::Contains(options.listen));
}

TEST_CASE("a restarted node keeps its archive") {
  TempDir dir;
  const std::string data = dir.path + "/data";
  std::string run_id;
  {
    auto server = HarnessServer::Start(testing::TestOptions(data));
    REQUIRE(server.ok());
    auto channel = grpc::CreateChannel((*server)->address(), grpc::InsecureChannelCredentials());
    auto stub = v1::Harness::NewStub(channel);
    auto out = testing::Evaluate(
        *stub, testing::VectorAddRequest(testing::VectorAddSolution("broken", "c[i] = ;")));
    REQUIRE(out.status.ok());
    run_id = out.run().run_id();
  }
  auto server = HarnessServer::Start(testing::TestOptions(data));
  REQUIRE(server.ok());
  auto channel = grpc::CreateChannel((*server)->address(), grpc::InsecureChannelCredentials());
  auto stub = v1::Harness::NewStub(channel);
  grpc::ClientContext ctx;
  v1::GetRunRequest request;
  request.set_run_id(run_id);
  v1::Run run;
  REQUIRE(stub->GetRun(&ctx, request, &run).ok());
  CHECK(run.status() == v1::COMPILE_ERROR);
}

}  // namespace
}  // namespace kiln
