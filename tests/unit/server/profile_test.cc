// The Profile RPC's refusals, on a node without a GPU: a node that cannot profile says why, bad
// requests name their field, a profile on a backend other than cuda is refused, and a
// principal's profiles per hour are limited. Nothing refused is archived. (Profiles themselves
// need a GPU and Nsight Compute: tests/gpu/profile_gpu.sh.)
#include <catch2/catch.hpp>
#include <string>

#include "harness/archive/archive.h"
#include "tests/unit/server/test_node.h"

namespace kiln {
namespace {

using testing::TestNode;
using testing::TestOptions;
using testing::VectorAddSolution;

struct ProfileCall {
  grpc::Status status;
  v1::Run run;
};

ProfileCall Profile(v1::Harness::Stub& stub, const v1::ProfileRequest& request) {
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::minutes(2));
  auto reader = stub.Profile(&ctx, request);
  ProfileCall out;
  v1::EvaluateEvent event;
  while (reader->Read(&event)) {
    if (event.has_run()) out.run = event.run();
  }
  out.status = reader->Finish();
  return out;
}

v1::ProfileRequest AddRequest() {
  v1::ProfileRequest request;
  request.set_definition("vector_add_f32");
  *request.mutable_solution() = VectorAddSolution("add", "c[i] = a[i] + b[i];");
  return request;
}

int ProfileRuns(v1::Harness::Stub& stub) {
  grpc::ClientContext ctx;
  v1::ListRunsRequest request;
  request.set_kind("profile");
  v1::ListRunsResponse response;
  REQUIRE(stub.ListRuns(&ctx, request, &response).ok());
  return response.runs_size();
}

// A node that claims it can profile (ncu never runs in these tests: every request is refused
// before a device slot).
HarnessOptions ProfilingOptions(const std::string& dir, int per_hour) {
  HarnessOptions o = TestOptions(dir);
  ProfilingSupport support;
  support.available = true;
  support.ncu = "/bin/false";
  o.profiling = support;
  o.max_profiles_per_hour = per_hour;
  return o;
}

TEST_CASE("a node without a GPU refuses profiles, saying why") {
  TestNode node;
  ProfileCall call = Profile(node.stub(), AddRequest());
  CHECK(call.status.error_code() == grpc::StatusCode::FAILED_PRECONDITION);
  CHECK_THAT(call.status.error_message(), Catch::StartsWith("this node cannot take profiles: "));
  CHECK_THAT(call.status.error_message(), Catch::Contains("CUDA"));
  CHECK(ProfileRuns(node.stub()) == 0);
}

TEST_CASE("bad profile requests name their field and archive nothing") {
  auto dir = MakeTempDir("", "kiln-profile-test");
  REQUIRE(dir.ok());
  TestNode node(ProfilingOptions(*dir + "/data", 30));
  auto refused = [&](v1::ProfileRequest request, grpc::StatusCode code, const std::string& text) {
    ProfileCall call = Profile(node.stub(), request);
    INFO(call.status.error_message());
    CHECK(call.status.error_code() == code);
    CHECK_THAT(call.status.error_message(), Catch::Contains(text));
  };
  v1::ProfileRequest r = AddRequest();
  r.set_section("fast");
  refused(r, grpc::StatusCode::INVALID_ARGUMENT,
          "section: 'fast' is not one of basic, memory, compute, full");
  r = AddRequest();
  r.set_workload_uuid("no-such-workload");
  refused(r, grpc::StatusCode::NOT_FOUND, "workload_uuid: 'no-such-workload'");
  r = AddRequest();
  r.set_definition("no_such_definition");
  refused(r, grpc::StatusCode::NOT_FOUND, "no_such_definition");
  r = AddRequest();
  r.clear_solution();
  refused(r, grpc::StatusCode::INVALID_ARGUMENT, "solution: required");
  r = AddRequest();
  r.add_also("reference");
  r.add_also("reference");
  refused(r, grpc::StatusCode::INVALID_ARGUMENT, "also[1]: 'reference' given twice");
  r = AddRequest();
  r.add_also("solution");
  refused(r, grpc::StatusCode::INVALID_ARGUMENT, "also[0]: the solution is always profiled");
  r = AddRequest();
  r.add_also("torch_fast");
  refused(r, grpc::StatusCode::INVALID_ARGUMENT, "torch_fast");
  // A well-formed request on a node whose only backend is host.
  refused(AddRequest(), grpc::StatusCode::FAILED_PRECONDITION,
          "backend: profiles are taken on the cuda backend, not 'host'");
  CHECK(ProfileRuns(node.stub()) == 0);
  (void)RemoveTree(*dir);
}

TEST_CASE("a principal's profiles are limited per hour, naming the limit and the wait") {
  auto dir = MakeTempDir("", "kiln-profile-test");
  REQUIRE(dir.ok());
  TestNode node(ProfilingOptions(*dir + "/data", 2));
  // Below the limit the request goes on to the backend check.
  ProfileCall first = Profile(node.stub(), AddRequest());
  CHECK(first.status.error_code() == grpc::StatusCode::FAILED_PRECONDITION);
  {
    // Two profiles of "local" (the loopback operator) in the last hour, and older ones and
    // other principals' that do not count.
    auto archive = Archive::Open(*dir + "/data");
    REQUIRE(archive.ok());
    const int64_t now = absl::ToUnixMillis(absl::Now());
    int n = 0;
    auto add = [&](const std::string& principal, int64_t created) {
      v1::Run run;
      run.set_run_id(absl::StrCat("profile-", n++));
      run.set_definition("vector_add_f32");
      run.set_principal(principal);
      run.set_kind("profile");
      run.set_mode("official");
      run.set_backend("cuda");
      run.set_created_unix_ms(created);
      run.mutable_solution()->set_name("add");
      REQUIRE((*archive)->CreateRun(run).ok());
    };
    add("local", now - 2 * 3600 * 1000);
    add("team-b", now - 60 * 1000);
    add("local", now - 30 * 60 * 1000);
    ProfileCall one_left = Profile(node.stub(), AddRequest());
    CHECK(one_left.status.error_code() == grpc::StatusCode::FAILED_PRECONDITION);
    add("local", now - 10 * 60 * 1000);
  }
  ProfileCall limited = Profile(node.stub(), AddRequest());
  INFO(limited.status.error_message());
  CHECK(limited.status.error_code() == grpc::StatusCode::RESOURCE_EXHAUSTED);
  CHECK_THAT(limited.status.error_message(),
             Catch::Contains("'local' took 2 profiles in the last hour"));
  CHECK_THAT(limited.status.error_message(), Catch::Contains("--max-profiles-per-hour 2"));
  // The older of the two leaves the hour in about 30 minutes.
  CHECK_THAT(limited.status.error_message(), Catch::Contains("can start in 30 min"));
  (void)RemoveTree(*dir);
}

}  // namespace
}  // namespace kiln
