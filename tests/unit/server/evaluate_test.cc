// Evaluate end to end: a real kiln-harness in-process, real compiles and kiln-worker processes.
#include <algorithm>
#include <catch2/catch.hpp>
#include <map>
#include <string>
#include <thread>

#include "harness/definitions/builtins.h"
#include "tests/unit/server/test_node.h"

namespace kiln {
namespace {

using testing::Evaluate;
using testing::EvaluateOutcome;
using testing::TestNode;
using testing::VectorAddRequest;
using testing::VectorAddSolution;

v1::Run GetRun(v1::Harness::Stub& stub, const std::string& run_id, grpc::Status* status) {
  grpc::ClientContext ctx;
  v1::GetRunRequest request;
  request.set_run_id(run_id);
  v1::Run run;
  *status = stub.GetRun(&ctx, request, &run);
  return run;
}

TEST_CASE("the demo solution passes with a latency and a speedup") {
  TestNode node;
  auto solution = BuiltinDemoSolution();
  REQUIRE(solution.ok());
  auto builtins = LoadBuiltinDefinitions();
  REQUIRE(builtins.ok());
  v1::EvaluateRequest request;
  request.set_definition(kDemoDefinitionName);
  *request.mutable_solution() = *solution;
  request.set_mode("kernelbench");
  for (const BuiltinDefinition& b : *builtins) {
    if (b.definition.name() == kDemoDefinitionName) *request.add_workloads() = b.workloads.front();
  }
  REQUIRE(request.workloads_size() == 1);

  EvaluateOutcome out = Evaluate(node.stub(), request);
  INFO(out.status.error_message());
  REQUIRE(out.status.ok());
  REQUIRE(out.events.size() >= 3);
  const v1::Progress& first = out.events.front().progress();
  CHECK(first.stage() == v1::RUN_QUEUED);
  CHECK(!first.run_id().empty());

  v1::Run run = out.run();
  INFO(run.reason());
  CHECK(run.run_id() == first.run_id());
  CHECK(run.state() == v1::RUN_DONE);
  REQUIRE(run.status() == v1::PASSED);
  REQUIRE(run.traces_size() == 1);
  const v1::Evaluation& evaluation = run.traces(0).evaluation();
  CHECK(evaluation.status() == v1::PASSED);
  CHECK(evaluation.performance().latency_ms() > 0);
  CHECK(evaluation.performance().speedup_factor() > 0);
  CHECK(!evaluation.environment().hardware().empty());
  CHECK(evaluation.environment().libs().count("kiln") == 1);
  CHECK(!evaluation.timestamp().empty());
  CHECK(run.traces(0).kiln().checked_elements() > 0);
  CHECK(run.traces(0).kiln().timing().latency_ms() > 0);
  CHECK(run.traces(0).kiln().reference_timing().latency_ms() > 0);
  // --host-flush-mb 16 replaces kernelbench's 256 MiB on the host backend, for both.
  CHECK(run.traces(0).kiln().timing().flush_bytes() == 16 << 20);
  CHECK(run.traces(0).kiln().reference_timing().flush_bytes() == 16 << 20);
  // Every stage was timed.
  CHECK(run.compile_s() > 0);
  CHECK(run.verify_s() > 0);
  CHECK(run.timing_s() > 0);

  // The archive agrees with what the stream said.
  grpc::Status status;
  v1::Run archived = GetRun(node.stub(), run.run_id(), &status);
  REQUIRE(status.ok());
  CHECK(archived.status() == v1::PASSED);
  CHECK(archived.traces_size() == 1);
  bool has_worker_log = false;
  for (const auto& a : archived.artifacts()) has_worker_log |= a.kind() == "worker_log";
  CHECK(has_worker_log);
}

TEST_CASE("a trace names its reference source and carries the reference as a baseline") {
  TestNode node;
  EvaluateOutcome out = Evaluate(node.stub(), VectorAddRequest(VectorAddSolution("add", "c[i] = a[i] + b[i];")));
  REQUIRE(out.status.ok());
  v1::Run run = out.run();
  REQUIRE(run.status() == v1::PASSED);
  const v1::Trace& trace = run.traces(0);
  // The host backend has no Python reference runner: the native reference computed it.
  CHECK(trace.kiln().reference_source() == "native_reference");
  REQUIRE(trace.kiln().baselines_size() == 1);
  const v1::BaselineResult& ref = trace.kiln().baselines(0);
  CHECK(ref.name() == "reference");
  CHECK(ref.source() == "native_reference");
  CHECK(ref.latency_ms() == trace.evaluation().performance().reference_latency_ms());
  CHECK(ref.speedup() == Approx(trace.evaluation().performance().speedup_factor()));
}

TEST_CASE("the raw timing samples are archived beside the run, not in its traces") {
  TestNode node;
  EvaluateOutcome out = Evaluate(node.stub(), VectorAddRequest(VectorAddSolution("add", "c[i] = a[i] + b[i];")));
  REQUIRE(out.status.ok());
  REQUIRE(out.run().status() == v1::PASSED);
  grpc::Status status;
  v1::Run run = GetRun(node.stub(), out.run().run_id(), &status);
  REQUIRE(status.ok());
  const v1::TraceDetail& detail = run.traces(0).kiln();
  CHECK(detail.timing().samples_ms_size() == 0);
  CHECK(detail.reference_timing().samples_ms_size() == 0);
  std::map<std::string, std::string> samples =
      testing::Artifacts(node.stub(), run.run_id(), "samples");
  REQUIRE(samples.count("w0") == 1);
  REQUIRE(samples.count("w0_reference") == 1);
  // kernelbench mode: 100 timed calls, each a sample; the statistics come from the same ones.
  const std::string& w0 = samples["w0"];
  CHECK_THAT(w0, Catch::StartsWith("{\"unit\": \"ms\", \"samples_ms\": ["));
  // One comma after "ms", then one between each two samples: as many commas as samples.
  CHECK(std::count(w0.begin(), w0.end(), ',') == detail.timing().sample_count());
  CHECK(detail.timing().sample_count() == 100);
}

TEST_CASE("baselines are validated at admission, naming the field") {
  TestNode node;
  v1::EvaluateRequest request = VectorAddRequest(VectorAddSolution("add", "c[i] = a[i] + b[i];"));
  SECTION("an unknown baseline") {
    request.add_baselines("torch_jit");
    EvaluateOutcome out = Evaluate(node.stub(), request);
    CHECK(out.status.error_code() == grpc::StatusCode::INVALID_ARGUMENT);
    CHECK(out.status.error_message() ==
          "baselines[0]: 'torch_jit' is not one of torch_eager, torch_compile or solution:NAME");
  }
  SECTION("a baseline named twice") {
    request.add_baselines("torch_compile");
    request.add_baselines("torch_compile");
    EvaluateOutcome out = Evaluate(node.stub(), request);
    CHECK(out.status.error_code() == grpc::StatusCode::INVALID_ARGUMENT);
    CHECK(out.status.error_message().find("baselines[1]") == 0);
  }
  SECTION("a torch baseline where torch cannot run") {
    request.add_baselines("torch_compile");
    EvaluateOutcome out = Evaluate(node.stub(), request);
    CHECK(out.status.error_code() == grpc::StatusCode::FAILED_PRECONDITION);
    INFO(out.status.error_message());
    CHECK(out.status.error_message().find("baselines[0]: torch_compile") == 0);
    CHECK(out.status.error_message().find("cannot run here") != std::string::npos);
  }
  // Nothing was admitted.
  CHECK(testing::RunsArchived(node.stub()) == 0);
}

TEST_CASE("a definition with only a Python reference is refused where torch cannot run it") {
  TestNode node;
  v1::Definition def = testing::BuiltinCopy("vector_add_f32");
  REQUIRE(!def.name().empty());
  def.set_name("vector_add_python_only");
  def.clear_native_reference();
  def.set_reference("import torch\n\ndef run(a, b):\n    return a + b\n");
  {
    // Registered knowingly; its runs are still refused.
    grpc::Status status = testing::PutDefinition(node.stub(), def, /*allow_unevaluable=*/true);
    INFO(status.error_message());
    REQUIRE(status.ok());
  }
  v1::EvaluateRequest request = VectorAddRequest(VectorAddSolution("add", "c[i] = a[i] + b[i];"));
  request.set_definition(def.name());
  request.mutable_solution()->set_definition(def.name());
  EvaluateOutcome out = Evaluate(node.stub(), request);
  CHECK(out.status.error_code() == grpc::StatusCode::FAILED_PRECONDITION);
  INFO(out.status.error_message());
  CHECK(out.status.error_message() ==
        "definition 'vector_add_python_only' has no native_reference, and its Python reference "
        "cannot run here: Python references run on the cuda backend, not 'host'");
}

TEST_CASE("a trace is streamed for each workload as it finishes") {
  TestNode node;
  v1::EvaluateRequest request = VectorAddRequest(VectorAddSolution("add", "c[i] = a[i] + b[i];"));
  *request.add_workloads() = testing::VectorAddWorkload(100, "second");
  EvaluateOutcome out = Evaluate(node.stub(), request);
  REQUIRE(out.status.ok());
  int traces = 0;
  for (const auto& e : out.events) {
    if (e.has_progress() && e.progress().has_trace()) {
      CHECK(e.progress().workload_count() == 2);
      CHECK(e.progress().workload_index() == traces);
      ++traces;
    }
  }
  CHECK(traces == 2);
  CHECK(out.run().status() == v1::PASSED);
}

TEST_CASE("progress says whose work on each workload it is: the reference's or the candidate's") {
  TestNode node;
  v1::EvaluateRequest request = VectorAddRequest(VectorAddSolution("add", "c[i] = a[i] + b[i];"));
  *request.add_workloads() = testing::VectorAddWorkload(100, "second");
  EvaluateOutcome out = Evaluate(node.stub(), request);
  REQUIRE(out.status.ok());
  std::vector<std::pair<std::string, std::string>> lines;  // (role, message)
  for (const auto& e : out.events) {
    if (e.has_progress() && !e.progress().has_trace()) {
      lines.emplace_back(e.progress().role(), e.progress().message());
    }
  }
  auto index_of = [&lines](const std::string& role, const std::string& message) {
    for (size_t i = 0; i < lines.size(); ++i) {
      if (lines[i].first == role && lines[i].second == message) return static_cast<int>(i);
    }
    return -1;
  };
  std::string all;
  for (const auto& [role, message] : lines) all += role + " | " + message + "\n";
  INFO(all);
  // Both workloads' references run first, each labelled; then the candidate's, named by the
  // workload alone as its verdict lines are.
  const int ref1 = index_of("reference", "reference for workload 1/2: verifying");
  const int ref2 = index_of("reference", "reference for workload 2/2: verifying");
  const int cand1 = index_of("candidate", "workload 1/2: verifying");
  const int cand2 = index_of("candidate", "workload 2/2: verifying");
  CHECK(ref1 >= 0);
  CHECK(ref2 > ref1);
  CHECK(cand1 > ref2);
  CHECK(cand2 > cand1);
  CHECK(index_of("candidate", "workload 1/2: timing") > cand1);
  for (const auto& [role, message] : lines) {
    if (role == "reference") CHECK(message.rfind("reference for workload ", 0) == 0);
    if (role.empty()) CHECK(message.find("workload") == std::string::npos);
  }
  CHECK(out.run().status() == v1::PASSED);
  // A finished run read back has no progress line: the node forgot it when the run was done.
  grpc::Status read;
  const v1::Run finished = GetRun(node.stub(), out.run().run_id(), &read);
  REQUIRE(read.ok());
  CHECK(finished.state() == v1::RUN_DONE);
  CHECK(finished.progress().empty());
}

TEST_CASE("GetRun of a run in flight carries its last progress line") {
  TestNode node;
  v1::EvaluateRequest request = VectorAddRequest(VectorAddSolution(
      "slow", "c[i] = a[i] + b[i]; if (i == 0) usleep(100000);", "#include <unistd.h>\n"));
  grpc::ClientContext ctx;
  auto reader = node.stub().Evaluate(&ctx, request);
  v1::EvaluateEvent event;
  std::string run_id;
  std::string seen;
  while (reader->Read(&event)) {
    if (!event.has_progress()) continue;
    run_id = event.progress().run_id();
    if (event.progress().role() != "candidate") continue;
    // The candidate is at work: GetRun says so until the run is done.
    grpc::Status status;
    const v1::Run run = GetRun(node.stub(), run_id, &status);
    REQUIRE(status.ok());
    if (run.state() != v1::RUN_DONE) {
      seen = run.progress();
      break;
    }
  }
  ctx.TryCancel();
  while (reader->Read(&event)) {
  }
  (void)reader->Finish();
  CHECK_THAT(seen, Catch::StartsWith("workload 1/1: "));
}

TEST_CASE("the reference is timed once per workload and mode, then its timing is reused") {
  TestNode node;
  v1::EvaluateRequest request = VectorAddRequest(VectorAddSolution("add", "c[i] = a[i] + b[i];"));
  const v1::Run first = Evaluate(node.stub(), request).run();
  const v1::Run second = Evaluate(node.stub(), request).run();
  REQUIRE(first.status() == v1::PASSED);
  REQUIRE(second.status() == v1::PASSED);
  const v1::TimingResult& a = first.traces(0).kiln().reference_timing();
  const v1::TimingResult& b = second.traces(0).kiln().reference_timing();
  CHECK(a.latency_ms() > 0);
  CHECK(a.SerializeAsString() == b.SerializeAsString());
  // The candidate is timed afresh every time.
  CHECK(second.traces(0).kiln().timing().sample_count() > 0);
}

// Registers a copy of vector_add_f32 named `name` whose native reference has `source`.
void PutVectorAddWithReference(v1::Harness::Stub& stub, const std::string& name,
                               const std::string& source) {
  v1::Definition def = testing::BuiltinCopy("vector_add_f32");
  REQUIRE(!def.name().empty());
  def.set_name(name);
  def.mutable_native_reference()->set_definition(name);
  def.mutable_native_reference()->mutable_sources(0)->set_content(source);
  grpc::Status status = testing::PutDefinition(stub, def);
  INFO(status.error_message());
  REQUIRE(status.ok());
}

TEST_CASE("a failing reference fails the workload, not the candidate") {
  TestNode node;
  SECTION("at run time") {
    PutVectorAddWithReference(node.stub(), "add_bad_ref",
                              "#include <kiln/abi.h>\n"
                              "extern \"C\" int run(const kiln_tensor*, int32_t, "
                              "const kiln_context*) { return 7; }\n");
    v1::EvaluateRequest request = VectorAddRequest(VectorAddSolution("add", "c[i] = a[i] + b[i];"));
    request.set_definition("add_bad_ref");
    request.mutable_solution()->set_definition("add_bad_ref");
    const v1::Run run = Evaluate(node.stub(), request).run();
    CHECK(run.status() == v1::RUNTIME_ERROR);
    CHECK_THAT(run.reason(), Catch::StartsWith("reference failed: "));
  }
  SECTION("at compile time") {
    PutVectorAddWithReference(node.stub(), "add_broken_ref", "this is not C++\n");
    v1::EvaluateRequest request = VectorAddRequest(VectorAddSolution("add", "c[i] = a[i] + b[i];"));
    request.set_definition("add_broken_ref");
    request.mutable_solution()->set_definition("add_broken_ref");
    const v1::Run run = Evaluate(node.stub(), request).run();
    CHECK(run.status() == v1::RUNTIME_ERROR);
    CHECK_THAT(run.reason(), Catch::StartsWith("native reference failed to compile: "));
    REQUIRE(run.traces_size() == 1);
    CHECK(run.traces(0).evaluation().status() == v1::RUNTIME_ERROR);
  }
}

TEST_CASE("a wrong result is INCORRECT_NUMERICAL and the reason names the output") {
  TestNode node;
  EvaluateOutcome out =
      Evaluate(node.stub(), VectorAddRequest(VectorAddSolution("sub", "c[i] = a[i] - b[i];")));
  REQUIRE(out.status.ok());
  v1::Run run = out.run();
  CHECK(run.status() == v1::INCORRECT_NUMERICAL);
  CHECK_THAT(run.reason(), Catch::Contains("output 'c'"));
  REQUIRE(run.traces_size() == 1);
  const v1::Trace& trace = run.traces(0);
  CHECK(trace.evaluation().status() == v1::INCORRECT_NUMERICAL);
  CHECK(trace.evaluation().correctness().max_absolute_error() > 0);
  CHECK(trace.kiln().mismatched_elements() > 0);
  CHECK(!trace.evaluation().has_performance());
}

TEST_CASE("a compile error fails every workload and keeps the compiler's file:line") {
  TestNode node;
  EvaluateOutcome out =
      Evaluate(node.stub(), VectorAddRequest(VectorAddSolution("broken", "c[i] = a[i] + ;")));
  REQUIRE(out.status.ok());
  v1::Run run = out.run();
  CHECK(run.status() == v1::COMPILE_ERROR);
  CHECK_THAT(run.compile_log(), Catch::Contains("solution.cc:"));
  REQUIRE(run.traces_size() == 1);
  CHECK(run.traces(0).evaluation().status() == v1::COMPILE_ERROR);
  CHECK_THAT(run.traces(0).evaluation().log(), Catch::Contains("solution.cc:"));
}

TEST_CASE("a crashing candidate is a RUNTIME_ERROR and the harness keeps serving") {
  TestNode node;
  EvaluateOutcome out = Evaluate(
      node.stub(), VectorAddRequest(VectorAddSolution("crash", "c[i] = *(volatile float*)0;")));
  REQUIRE(out.status.ok());
  CHECK(out.run().status() == v1::RUNTIME_ERROR);
  CHECK(!out.run().traces(0).evaluation().log().empty());
  // The node is still healthy.
  CHECK(testing::RunsArchived(node.stub()) == 1);
}

TEST_CASE("cancelling Evaluate after the first event archives the run CANCELLED") {
  TestNode node;
  // Slow enough that the cancel always lands before the verdict.
  v1::EvaluateRequest request = VectorAddRequest(VectorAddSolution(
      "slow", "c[i] = a[i] + b[i]; if (i == 0) usleep(200000);", "#include <unistd.h>\n"));
  grpc::ClientContext ctx;
  auto reader = node.stub().Evaluate(&ctx, request);
  v1::EvaluateEvent first;
  REQUIRE(reader->Read(&first));
  const std::string run_id = first.progress().run_id();
  REQUIRE(!run_id.empty());
  ctx.TryCancel();
  v1::EvaluateEvent ignored;
  while (reader->Read(&ignored)) {
  }
  CHECK(reader->Finish().error_code() == grpc::StatusCode::CANCELLED);

  // The run still finishes, as CANCELLED, in the archive.
  v1::Run run;
  for (int attempt = 0; attempt < 600; ++attempt) {
    grpc::Status status;
    run = GetRun(node.stub(), run_id, &status);
    REQUIRE(status.ok());
    if (run.state() == v1::RUN_DONE) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  REQUIRE(run.state() == v1::RUN_DONE);
  CHECK(run.status() == v1::CANCELLED);
  REQUIRE(run.traces_size() == 1);
  CHECK(run.traces(0).evaluation().status() == v1::CANCELLED);
}

TEST_CASE("a draining node refuses new evaluations and finishes the admitted ones") {
  TestNode node;
  v1::EvaluateRequest slow = VectorAddRequest(VectorAddSolution(
      "slow", "c[i] = a[i] + b[i]; if (i == 0) usleep(20000);", "#include <unistd.h>\n"));
  EvaluateOutcome admitted;
  std::thread client([&] { admitted = Evaluate(node.stub(), slow); });
  // Wait until the run is admitted, then drain while it runs.
  while (testing::RunsArchived(node.stub()) < 1) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  std::thread drain([&] { node.server().Drain(); });
  v1::EvaluateRequest probe;
  probe.set_definition("no_such_definition");
  grpc::Status refused;
  for (int attempt = 0; attempt < 1000; ++attempt) {
    refused = Evaluate(node.stub(), probe).status;
    if (refused.error_code() != grpc::StatusCode::NOT_FOUND) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  // Readiness turns NOT_SERVING as soon as the drain starts, while the admitted run finishes.
  // (StopAdmitting comes just before it, so poll briefly.)
  int health_while_draining = testing::HealthStatus(node.server().address());
  for (int attempt = 0; attempt < 100 && health_while_draining == 1; ++attempt) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    health_while_draining = testing::HealthStatus(node.server().address());
  }
  drain.join();
  client.join();
  CHECK(refused.error_code() == grpc::StatusCode::UNAVAILABLE);
  CHECK(health_while_draining == 2);  // NOT_SERVING
  CHECK(admitted.status.ok());
  CHECK(admitted.run().status() == v1::PASSED);
}

}  // namespace
}  // namespace kiln
