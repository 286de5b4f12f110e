// The non-evaluating RPCs of kiln.v1.Harness and Evaluate's admission errors.
#include <grpcpp/generic/generic_stub.h>

#include <catch2/catch.hpp>
#include <set>
#include <string>

#include "tests/unit/server/test_node.h"

namespace kiln {
namespace {

using testing::Evaluate;
using testing::RunsArchived;
using testing::TestNode;
using testing::VectorAddRequest;
using testing::VectorAddSolution;

v1::EvaluateRequest GoodRequest() {
  return VectorAddRequest(VectorAddSolution("add", "c[i] = a[i] + b[i];"));
}

// Evaluate must fail with `code` and a message containing `needle`, and archive nothing.
void ExpectRefused(TestNode& node, const v1::EvaluateRequest& request, grpc::StatusCode code,
                   const std::string& needle) {
  const int64_t before = RunsArchived(node.stub());
  testing::EvaluateOutcome out = Evaluate(node.stub(), request);
  CHECK(out.status.error_code() == code);
  CHECK_THAT(out.status.error_message(), Catch::Contains(needle));
  CHECK(out.events.empty());
  CHECK(RunsArchived(node.stub()) == before);
}

v1::ListRunsResponse ListRuns(v1::Harness::Stub& stub, int limit, const std::string& token) {
  grpc::ClientContext ctx;
  v1::ListRunsRequest request;
  request.set_limit(limit);
  request.set_page_token(token);
  v1::ListRunsResponse response;
  REQUIRE(stub.ListRuns(&ctx, request, &response).ok());
  return response;
}

v1::Definition ScaledCopyDefinition(const std::string& name) {
  v1::Definition def;
  def.set_name(name);
  def.set_op_type("elementwise");
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
  def.set_reference("def run(x):\n    return x\n");
  return def;
}

v1::Workload ScaledCopyWorkload(const std::string& uuid, int64_t n) {
  v1::Workload w;
  w.set_uuid(uuid);
  v1::AxisValue* axis = w.add_axes();
  axis->set_name("n");
  axis->set_value(n);
  v1::WorkloadInput* x = w.add_inputs();
  x->set_name("x");
  x->set_kind(v1::WorkloadInput::RANDOM);
  return w;
}

TEST_CASE("an unregistered definition is NOT_FOUND and nothing is archived") {
  TestNode node;
  v1::EvaluateRequest request = GoodRequest();
  request.set_definition("no_such_op");
  request.mutable_solution()->set_definition("no_such_op");
  ExpectRefused(node, request, grpc::StatusCode::NOT_FOUND, "no_such_op");
}

TEST_CASE("a source path escaping the solution is INVALID_ARGUMENT naming the field") {
  TestNode node;
  v1::EvaluateRequest request = GoodRequest();
  request.mutable_solution()->mutable_sources(0)->set_path("../solution.cc");
  request.mutable_solution()->mutable_spec()->set_entry_point("../solution.cc::run");
  ExpectRefused(node, request, grpc::StatusCode::INVALID_ARGUMENT, "sources[0].path");
}

TEST_CASE("an unknown mode is INVALID_ARGUMENT listing the modes") {
  TestNode node;
  v1::EvaluateRequest request = GoodRequest();
  request.set_mode("fast");
  ExpectRefused(node, request, grpc::StatusCode::INVALID_ARGUMENT,
                "mode: 'fast' is not one of official, kernelbench, robust");
}

TEST_CASE("a bad workload is INVALID_ARGUMENT naming its index") {
  TestNode node;
  v1::EvaluateRequest request = GoodRequest();
  request.mutable_workloads(0)->clear_axes();
  ExpectRefused(node, request, grpc::StatusCode::INVALID_ARGUMENT, "workloads[0]");
}

TEST_CASE("an unavailable backend is refused by name") {
  TestNode node;
  v1::EvaluateRequest request = GoodRequest();
  request.set_backend("level_zero");
  ExpectRefused(node, request, grpc::StatusCode::FAILED_PRECONDITION,
                "backend 'level_zero' is not available on this node");
}

TEST_CASE("a definition no backend here can compute the reference of is refused, or registered "
          "knowingly and listed as not evaluable") {
  TestNode node;
  v1::PutDefinitionRequest put;
  *put.mutable_definition() = ScaledCopyDefinition("python_only");
  *put.add_workloads() = ScaledCopyWorkload("w0", 16);
  {
    v1::PutDefinitionResponse refused;
    grpc::ClientContext ctx;
    grpc::Status status = node.stub().PutDefinition(&ctx, put, &refused);
    CHECK(status.error_code() == grpc::StatusCode::FAILED_PRECONDITION);
    CHECK_THAT(status.error_message(),
               Catch::Contains("definition 'python_only' cannot be evaluated on this node (host: "
                               "no native_reference, and its Python reference cannot run"));
    CHECK_THAT(status.error_message(), Catch::Contains("allow_unevaluable"));
    // Nothing changed: the name is still unknown.
    v1::GetDefinitionRequest get;
    get.set_name("python_only");
    v1::DefinitionDetail detail;
    grpc::ClientContext get_ctx;
    CHECK(node.stub().GetDefinition(&get_ctx, get, &detail).error_code() ==
          grpc::StatusCode::NOT_FOUND);
  }
  put.set_allow_unevaluable(true);
  v1::PutDefinitionResponse put_response;
  grpc::ClientContext put_ctx;
  REQUIRE(node.stub().PutDefinition(&put_ctx, put, &put_response).ok());
  CHECK_THAT(put_response.cannot_evaluate(), Catch::Contains("host: no native_reference"));
  CHECK(put_response.reference_check_run_id().empty());
  grpc::ClientContext list_ctx;
  v1::ListDefinitionsResponse list;
  REQUIRE(node.stub().ListDefinitions(&list_ctx, v1::ListDefinitionsRequest(), &list).ok());
  for (const v1::DefinitionSummary& d : list.definitions()) {
    INFO(d.name());
    CHECK(d.cannot_evaluate().empty() == (d.name() != "python_only"));
  }
  v1::EvaluateRequest request = GoodRequest();
  request.set_definition("python_only");
  request.mutable_solution()->set_definition("python_only");
  request.clear_workloads();
  ExpectRefused(node, request, grpc::StatusCode::FAILED_PRECONDITION, "native_reference");
}

TEST_CASE("PutDefinition registers a definition that ListDefinitions then shows") {
  TestNode node;
  v1::PutDefinitionRequest put;
  *put.mutable_definition() = ScaledCopyDefinition("copy_f32");
  *put.add_workloads() = ScaledCopyWorkload("w0", 16);
  *put.add_workloads() = ScaledCopyWorkload("w1", 32);
  put.set_allow_unevaluable(true);  // a Python reference on a host-only node
  grpc::ClientContext ctx;
  v1::PutDefinitionResponse response;
  grpc::Status status = node.stub().PutDefinition(&ctx, put, &response);
  INFO(status.error_message());
  REQUIRE(status.ok());
  CHECK(response.name() == "copy_f32");
  CHECK(response.workload_count() == 2);

  grpc::ClientContext list_ctx;
  v1::ListDefinitionsResponse list;
  REQUIRE(node.stub().ListDefinitions(&list_ctx, v1::ListDefinitionsRequest(), &list).ok());
  bool found = false, builtin_found = false;
  for (const auto& d : list.definitions()) {
    if (d.name() == "copy_f32") {
      found = true;
      CHECK(d.workload_count() == 2);
      CHECK(!d.builtin());
      CHECK(!d.has_native_reference());
    }
    if (d.name() == "vector_add_f32") {
      builtin_found = true;
      CHECK(d.builtin());
      CHECK(d.has_native_reference());
    }
  }
  CHECK(found);
  CHECK(builtin_found);
}

TEST_CASE("re-registering a definition without workloads keeps the workloads it had") {
  TestNode node;
  v1::PutDefinitionRequest put;
  *put.mutable_definition() = ScaledCopyDefinition("copy_f32");
  *put.add_workloads() = ScaledCopyWorkload("w0", 16);
  *put.add_workloads() = ScaledCopyWorkload("w1", 32);
  put.set_allow_unevaluable(true);
  {
    grpc::ClientContext ctx;
    v1::PutDefinitionResponse response;
    REQUIRE(node.stub().PutDefinition(&ctx, put, &response).ok());
  }
  put.clear_workloads();
  grpc::ClientContext ctx;
  v1::PutDefinitionResponse response;
  REQUIRE(node.stub().PutDefinition(&ctx, put, &response).ok());
  CHECK(response.workload_count() == 2);
}

TEST_CASE("registering the same definition again changes nothing and starts no second check") {
  TestNode node;
  // The built-in vector add under another name: a native (C++) reference the host checks.
  v1::GetDefinitionRequest get;
  get.set_name("vector_add_f32");
  v1::DefinitionDetail builtin;
  grpc::ClientContext get_ctx;
  REQUIRE(node.stub().GetDefinition(&get_ctx, get, &builtin).ok());
  v1::PutDefinitionRequest put;
  *put.mutable_definition() = builtin.definition();
  put.mutable_definition()->set_name("my_add");
  put.mutable_definition()->mutable_native_reference()->set_definition("my_add");
  *put.add_workloads() = testing::VectorAddWorkload(64, "w-small");
  auto put_once = [&](const v1::PutDefinitionRequest& request) {
    grpc::ClientContext ctx;
    v1::PutDefinitionResponse response;
    grpc::Status status = node.stub().PutDefinition(&ctx, request, &response);
    INFO(status.error_message());
    REQUIRE(status.ok());
    return response;
  };
  const v1::PutDefinitionResponse first = put_once(put);
  CHECK_FALSE(first.unchanged());
  CHECK_FALSE(first.reference_check_run_id().empty());
  const int64_t runs = RunsArchived(node.stub());
  const v1::PutDefinitionResponse again = put_once(put);
  CHECK(again.unchanged());
  CHECK(again.reference_check_run_id().empty());
  CHECK(again.reference_check_note() == "unchanged since it was registered");
  CHECK(RunsArchived(node.stub()) == runs);
  // Other workloads are a change: registered, and checked again.
  put.mutable_workloads(0)->mutable_axes(0)->set_value(128);
  const v1::PutDefinitionResponse changed = put_once(put);
  CHECK_FALSE(changed.unchanged());
  CHECK_FALSE(changed.reference_check_run_id().empty());
}

TEST_CASE("PutDefinition refuses built-in names and names the bad field") {
  TestNode node;
  SECTION("built in") {
    v1::PutDefinitionRequest put;
    *put.mutable_definition() = ScaledCopyDefinition("vector_add_f32");
    grpc::ClientContext ctx;
    v1::PutDefinitionResponse response;
    grpc::Status status = node.stub().PutDefinition(&ctx, put, &response);
    CHECK(status.error_code() == grpc::StatusCode::FAILED_PRECONDITION);
    CHECK_THAT(status.error_message(), Catch::Contains("definition 'vector_add_f32' is built in"));
  }
  SECTION("bad workload") {
    v1::PutDefinitionRequest put;
    *put.mutable_definition() = ScaledCopyDefinition("copy_f32");
    *put.add_workloads() = ScaledCopyWorkload("w0", 16);
    *put.add_workloads() = ScaledCopyWorkload("w1", 16);
    put.mutable_workloads(1)->mutable_inputs(0)->set_name("z");
    put.set_allow_unevaluable(true);
    grpc::ClientContext ctx;
    v1::PutDefinitionResponse response;
    grpc::Status status = node.stub().PutDefinition(&ctx, put, &response);
    CHECK(status.error_code() == grpc::StatusCode::INVALID_ARGUMENT);
    CHECK_THAT(status.error_message(), Catch::Contains("workloads[1]"));
  }
  SECTION("bad definition") {
    v1::PutDefinitionRequest put;
    *put.mutable_definition() = ScaledCopyDefinition("copy_f32");
    put.mutable_definition()->mutable_outputs(0)->set_dtype(v1::DTYPE_UNSPECIFIED);
    grpc::ClientContext ctx;
    v1::PutDefinitionResponse response;
    grpc::Status status = node.stub().PutDefinition(&ctx, put, &response);
    CHECK(status.error_code() == grpc::StatusCode::INVALID_ARGUMENT);
    CHECK_THAT(status.error_message(), Catch::Contains("outputs"));
  }
}

TEST_CASE("GetNodeInfo describes the host node") {
  TestNode node;
  grpc::ClientContext ctx;
  v1::NodeInfo info;
  REQUIRE(node.stub().GetNodeInfo(&ctx, v1::GetNodeInfoRequest(), &info).ok());
  CHECK(!info.version().empty());
  REQUIRE(info.backends_size() == 1);
  CHECK(info.backends(0) == "host");
  REQUIRE(info.devices_size() == 1);
  CHECK(info.devices(0).backend() == "host");
  CHECK(info.devices(0).index() == 0);
  CHECK(!info.devices(0).name().empty());
  CHECK(!info.devices(0).busy());
  CHECK(!info.toolchains().empty());
  CHECK(info.default_mode() == "kernelbench");
  CHECK(info.default_backend() == "host");
  CHECK(info.queue_depth() == 0);
  CHECK(info.running() == 0);
  CHECK(info.runs_archived() == 0);
}

TEST_CASE("the standard health service reports SERVING") {
  TestNode node;
  CHECK(testing::HealthStatus(node.server().address()) == 1);  // SERVING
}

TEST_CASE("GetRun of an unknown id is NOT_FOUND naming the id") {
  TestNode node;
  grpc::ClientContext ctx;
  v1::GetRunRequest request;
  request.set_run_id("0123456789abcdef");
  v1::Run run;
  grpc::Status status = node.stub().GetRun(&ctx, request, &run);
  CHECK(status.error_code() == grpc::StatusCode::NOT_FOUND);
  CHECK_THAT(status.error_message(), Catch::Contains("0123456789abcdef"));
}

TEST_CASE("GetArtifact checks the digest and returns stored content") {
  TestNode node;
  testing::EvaluateOutcome out =
      Evaluate(node.stub(), VectorAddRequest(VectorAddSolution("broken", "c[i] = ;")));
  REQUIRE(out.status.ok());
  std::string sha;
  const v1::Run run = out.run();
  for (const auto& a : run.artifacts()) {
    if (a.kind() == "compiler_log") sha = a.sha256();
  }
  REQUIRE(!sha.empty());
  grpc::ClientContext ctx;
  v1::GetArtifactRequest request;
  request.set_sha256(sha);
  v1::Artifact artifact;
  REQUIRE(node.stub().GetArtifact(&ctx, request, &artifact).ok());
  CHECK_THAT(artifact.content(), Catch::Contains("solution.cc:"));

  grpc::ClientContext bad_ctx;
  request.set_sha256("not-a-digest");
  grpc::Status bad = node.stub().GetArtifact(&bad_ctx, request, &artifact);
  CHECK(bad.error_code() == grpc::StatusCode::INVALID_ARGUMENT);
  CHECK_THAT(bad.error_message(), Catch::Contains("sha256"));
}

TEST_CASE("ListRuns pages through every run, newest first, without repeats") {
  TestNode node;
  std::set<std::string> created;
  for (int i = 0; i < 3; ++i) {
    // Compile errors: archived runs without the cost of timing.
    testing::EvaluateOutcome out = Evaluate(
        node.stub(), VectorAddRequest(VectorAddSolution("broken" + std::to_string(i), "c[i] = ;")));
    REQUIRE(out.status.ok());
    created.insert(out.run().run_id());
  }
  REQUIRE(created.size() == 3);
  v1::ListRunsResponse page1 = ListRuns(node.stub(), 2, "");
  REQUIRE(page1.runs_size() == 2);
  REQUIRE(!page1.next_page_token().empty());
  CHECK(page1.runs(0).created_unix_ms() >= page1.runs(1).created_unix_ms());
  v1::ListRunsResponse page2 = ListRuns(node.stub(), 2, page1.next_page_token());
  REQUIRE(page2.runs_size() == 1);
  CHECK(page2.next_page_token().empty());
  std::set<std::string> listed = {page1.runs(0).run_id(), page1.runs(1).run_id(),
                                  page2.runs(0).run_id()};
  CHECK(listed == created);
  CHECK(page2.runs(0).status() == v1::COMPILE_ERROR);
}

TEST_CASE("ListRuns passes a bad page token back as INVALID_ARGUMENT") {
  TestNode node;
  grpc::ClientContext ctx;
  v1::ListRunsRequest request;
  request.set_page_token("garbage!");
  v1::ListRunsResponse response;
  CHECK(node.stub().ListRuns(&ctx, request, &response).error_code() ==
        grpc::StatusCode::INVALID_ARGUMENT);
}

TEST_CASE("a full queue answers RESOURCE_EXHAUSTED") {
  HarnessOptions options;
  options.max_queue = 1;
  TestNode node(options);
  v1::EvaluateRequest slow = VectorAddRequest(VectorAddSolution(
      "slow", "c[i] = a[i] + b[i]; if (i == 0) usleep(200000);", "#include <unistd.h>\n"));
  grpc::ClientContext ctx;
  auto reader = node.stub().Evaluate(&ctx, slow);
  v1::EvaluateEvent first;
  REQUIRE(reader->Read(&first));  // admitted: the queue is now full
  testing::EvaluateOutcome refused = Evaluate(node.stub(), GoodRequest());
  CHECK(refused.status.error_code() == grpc::StatusCode::RESOURCE_EXHAUSTED);
  ctx.TryCancel();
  v1::EvaluateEvent ignored;
  while (reader->Read(&ignored)) {
  }
  (void)reader->Finish();
}

}  // namespace
}  // namespace kiln
