// The solution registry (PutSolution, ListSolutions) and the baselines that name its entries
// ("solution:NAME"), against an in-process kiln-harness and admission itself.
#include <catch2/catch.hpp>
#include <fstream>
#include <memory>
#include <optional>
#include <string>

#include "harness/common/files.h"
#include "harness/common/sha256.h"
#include "harness/definitions/builtins.h"
#include "server/evaluation/admission.h"
#include "tests/unit/server/test_node.h"
#include "tests/unit/server/token_node.h"

namespace kiln {
namespace {

using testing::TestNode;
using testing::VectorAddRequest;
using testing::VectorAddSolution;

using RegistryNode = testing::TokenNode;
using testing::As;
using testing::kOpsToken;
using testing::kTeamToken;

grpc::Status Put(v1::Harness::Stub& stub, const v1::Solution& solution,
                 const std::string& name = "", bool replace = false,
                 v1::PutSolutionResponse* response = nullptr,
                 const std::string& token = kOpsToken) {
  v1::PutSolutionRequest request;
  *request.mutable_solution() = solution;
  request.set_name(name);
  request.set_replace(replace);
  v1::PutSolutionResponse ignored;
  return stub.PutSolution(As(token).get(), request, response ? response : &ignored);
}

v1::ListSolutionsResponse List(v1::Harness::Stub& stub, const std::string& definition = "") {
  v1::ListSolutionsRequest request;
  request.set_definition(definition);
  v1::ListSolutionsResponse response;
  grpc::Status status = stub.ListSolutions(As(kTeamToken).get(), request, &response);
  INFO(status.error_message());
  REQUIRE(status.ok());
  return response;
}

v1::Solution Adder(const std::string& name) {
  return VectorAddSolution(name, "c[i] = a[i] + b[i];");
}

// A flashinfer-bench baseline as the dataset ships them: Python, value-returning.
v1::Solution PythonBaseline() {
  v1::Solution s;
  s.set_name("flashinfer_wrapper_9c4b1e");
  s.set_definition("vector_add_f32");
  s.set_author("flashinfer");
  s.mutable_spec()->set_language("python");
  s.mutable_spec()->set_entry_point("main.py::run");
  s.mutable_spec()->set_destination_passing_style(false);
  v1::SourceFile* f = s.add_sources();
  f->set_path("main.py");
  f->set_content("def run(a, b):\n    return a + b\n");
  return s;
}

TEST_CASE("an operator registers a solution once; the same content again changes nothing") {
  RegistryNode node;
  v1::PutSolutionResponse first;
  REQUIRE(Put(node.stub(), Adder("adder"), "", false, &first).ok());
  CHECK(first.outcome() == "created");
  CHECK(first.solution().name() == "adder");
  CHECK(first.solution().definition() == "vector_add_f32");
  CHECK(first.solution().language() == "cpp");
  CHECK(first.solution().author() == "tests");
  CHECK(IsSha256Hex(first.solution().sha256()));
  CHECK(first.solution().created_unix_ms() > 0);

  v1::PutSolutionResponse again;
  REQUIRE(Put(node.stub(), Adder("adder"), "", false, &again).ok());
  CHECK(again.outcome() == "unchanged");
  CHECK(again.solution().sha256() == first.solution().sha256());

  // Other content under the name: ALREADY_EXISTS, unless replaced explicitly.
  const v1::Solution other = VectorAddSolution("adder", "c[i] = b[i] + a[i];");
  grpc::Status conflict = Put(node.stub(), other);
  CHECK(conflict.error_code() == grpc::StatusCode::ALREADY_EXISTS);
  CHECK(conflict.error_message().rfind("name: solution 'adder'", 0) == 0);
  CHECK(List(node.stub()).solutions(0).sha256() == first.solution().sha256());
  v1::PutSolutionResponse replaced;
  REQUIRE(Put(node.stub(), other, "", true, &replaced).ok());
  CHECK(replaced.outcome() == "replaced");
  CHECK(List(node.stub()).solutions(0).sha256() == replaced.solution().sha256());

  // Registered under a name of the operator's choosing.
  REQUIRE(Put(node.stub(), Adder("adder"), "flashinfer").ok());
  const v1::ListSolutionsResponse listed = List(node.stub(), "vector_add_f32");
  REQUIRE(listed.solutions_size() == 2);
  CHECK(listed.solutions(0).name() == "adder");
  CHECK(listed.solutions(1).name() == "flashinfer");
  CHECK(List(node.stub(), "no_such_definition").solutions_size() == 0);
}

TEST_CASE("only operators register solutions") {
  RegistryNode node;
  grpc::Status status = Put(node.stub(), Adder("adder"), "", false, nullptr, kTeamToken);
  CHECK(status.error_code() == grpc::StatusCode::PERMISSION_DENIED);
  CHECK(List(node.stub()).solutions_size() == 0);
}

TEST_CASE("a registered solution is validated as a submitted one, errors naming the field") {
  RegistryNode node;
  auto refused = [&node](const v1::Solution& s, const std::string& name = "") {
    grpc::Status status = Put(node.stub(), s, name);
    INFO(status.error_message());
    CHECK_FALSE(status.ok());
    return status;
  };
  v1::Solution s = Adder("adder");
  s.mutable_sources(0)->set_path("/etc/solution.cc");
  CHECK(refused(s).error_message().rfind("solution.sources[0].path:", 0) == 0);
  s = Adder("adder");
  s.mutable_sources(0)->set_path("../solution.cc");
  CHECK(refused(s).error_message().rfind("solution.sources[0].path:", 0) == 0);
  s = Adder("adder");
  s.mutable_spec()->set_entry_point("other.cc::run");
  CHECK(refused(s).error_message().rfind("solution.spec.entry_point:", 0) == 0);
  s = Adder("adder");
  s.mutable_spec()->set_language("tilelang");
  CHECK(refused(s).error_message().rfind("solution.spec.language:", 0) == 0);
  s = Adder("adder");
  s.mutable_sources(0)->set_content(std::string(2 << 20, ' '));
  CHECK(refused(s).error_message().rfind("solution.sources:", 0) == 0);
  s = Adder("adder");
  s.clear_definition();
  CHECK(refused(s).error_message().rfind("solution.definition: required", 0) == 0);
  s = Adder("adder");
  s.set_definition("no_such_definition");
  CHECK(refused(s).error_code() == grpc::StatusCode::NOT_FOUND);
  CHECK(refused(Adder("adder"), "a/b").error_message().rfind("name:", 0) == 0);
  CHECK(refused(Adder("")).error_message().rfind("solution.name: empty", 0) == 0);
  CHECK(List(node.stub()).solutions_size() == 0);
}

TEST_CASE("solutions in languages this node does not run are registered all the same") {
  RegistryNode node;  // host only: it runs cpp
  v1::PutSolutionResponse python;
  REQUIRE(Put(node.stub(), PythonBaseline(), "", false, &python).ok());
  CHECK(python.solution().language() == "python");
  v1::Solution triton = PythonBaseline();
  triton.set_name("triton_add");
  triton.mutable_spec()->set_language("triton");
  REQUIRE(Put(node.stub(), triton).ok());
  CHECK(List(node.stub()).solutions_size() == 2);
}

TEST_CASE("the registry survives a restart") {
  RegistryNode node;
  v1::PutSolutionResponse first;
  REQUIRE(Put(node.stub(), PythonBaseline(), "", false, &first).ok());
  node.Restart();
  const v1::ListSolutionsResponse listed = List(node.stub());
  REQUIRE(listed.solutions_size() == 1);
  CHECK(listed.solutions(0).sha256() == first.solution().sha256());
  CHECK(listed.solutions(0).created_unix_ms() == first.solution().created_unix_ms());
  v1::PutSolutionResponse again;
  REQUIRE(Put(node.stub(), PythonBaseline(), "", false, &again).ok());
  CHECK(again.outcome() == "unchanged");
}

TEST_CASE("an unregistered solution baseline is refused at admission naming baselines[i]") {
  RegistryNode node;
  REQUIRE(Put(node.stub(), Adder("adder")).ok());
  v1::EvaluateRequest request = VectorAddRequest(Adder("candidate"));
  request.add_baselines("solution:adder");
  request.add_baselines("solution:not_registered");
  auto ctx = As(kTeamToken);
  auto reader = node.stub().Evaluate(ctx.get(), request);
  v1::EvaluateEvent event;
  while (reader->Read(&event)) {
  }
  grpc::Status status = reader->Finish();
  CHECK(status.error_code() == grpc::StatusCode::INVALID_ARGUMENT);
  CHECK(status.error_message() ==
        "baselines[1]: no solution 'not_registered' is registered for definition "
        "'vector_add_f32' (kiln solutions list --definition vector_add_f32)");
  v1::ListRunsResponse runs;
  REQUIRE(node.stub().ListRuns(As(kOpsToken).get(), v1::ListRunsRequest(), &runs).ok());
  CHECK(runs.runs().empty());
}

TEST_CASE("a registered solution baseline is admitted and recorded with the run") {
  RegistryNode node;
  REQUIRE(Put(node.stub(), Adder("adder")).ok());
  v1::EvaluateRequest request = VectorAddRequest(Adder("candidate"));
  request.add_baselines("solution:adder");
  auto ctx = As(kTeamToken);
  auto reader = node.stub().Evaluate(ctx.get(), request);
  v1::EvaluateEvent event, last;
  while (reader->Read(&event)) last = event;
  grpc::Status status = reader->Finish();
  INFO(status.error_message());
  REQUIRE(status.ok());
  REQUIRE(last.has_run());
  CHECK(last.run().status() == v1::PASSED);
  REQUIRE(last.run().baselines_size() == 1);
  CHECK(last.run().baselines(0) == "solution:adder");
}

// Admission itself: what the run's workload jobs receive.
class AdmissionArchive {
 public:
  AdmissionArchive() : dir_(*MakeTempDir("", "kiln-admission-test")) {
    archive_ = *Archive::Open(dir_);
    auto builtins = LoadBuiltinDefinitions();
    REQUIRE(builtins.ok());
    for (const BuiltinDefinition& b : *builtins) {
      REQUIRE(archive_->PutDefinition(b.definition, b.workloads, true).ok());
    }
    backends_ = *ResolveNodeBackends("host");
    policy_.backends = &backends_;
    policy_.python = &python_;
  }
  ~AdmissionArchive() {
    archive_.reset();
    (void)RemoveTree(dir_);
  }
  Archive& archive() { return *archive_; }
  absl::StatusOr<AdmittedRun> Admit(const v1::EvaluateRequest& request) {
    return AdmitRequest(request, *archive_, policy_);
  }

 private:
  std::string dir_;
  std::unique_ptr<Archive> archive_;
  std::vector<NodeBackend> backends_;
  // A node whose Python runs solutions on the host (torch on the CPU), as probed.
  PythonRuntime python_{[] {
    PythonReference p;
    p.torch = true;
    p.python = "python3";
    p.torch_version = "test";
    return p;
  }()};
  AdmissionPolicy policy_;
};

TEST_CASE("admission refuses a solution baseline the node's Python cannot run") {
  AdmissionArchive a;
  v1::Solution triton = PythonBaseline();
  triton.mutable_spec()->set_language("triton");
  REQUIRE(a.archive().PutSolution("tr", triton, false).ok());
  v1::EvaluateRequest request = VectorAddRequest(Adder("candidate"));
  request.add_baselines("solution:tr");
  absl::StatusOr<AdmittedRun> run = a.Admit(request);
  CHECK(absl::IsFailedPrecondition(run.status()));
  CHECK(std::string(run.status().message()).rfind("baselines[0]: solution 'tr' (triton) cannot run here", 0) == 0);
}

TEST_CASE("admission resolves solution:NAME into the solution the jobs receive") {
  AdmissionArchive a;
  REQUIRE(a.archive().PutSolution("fi", PythonBaseline(), false).ok());
  v1::EvaluateRequest request = VectorAddRequest(Adder("candidate"));
  request.add_baselines("solution:fi");
  absl::StatusOr<AdmittedRun> run = a.Admit(request);
  INFO(run.status().ToString());
  REQUIRE(run.ok());
  CHECK(run->baselines == std::vector<std::string>{"solution:fi"});
  REQUIRE(run->solution_baselines.count("solution:fi") == 1);
  const v1::Solution& resolved = run->solution_baselines.at("solution:fi");
  CHECK(resolved.spec().language() == "python");
  CHECK(resolved.sources(0).content() == PythonBaseline().sources(0).content());

  SECTION("a solution of another definition is not this run's") {
    v1::Definition other = run->definition;
    other.set_name("vector_add_copy");
    other.clear_tolerance();
    REQUIRE(a.archive().PutDefinition(other, {}, false).ok());
    v1::Solution elsewhere = PythonBaseline();
    elsewhere.set_definition("vector_add_copy");
    REQUIRE(a.archive().PutSolution("only_there", elsewhere, false).ok());
    v1::EvaluateRequest wrong = VectorAddRequest(Adder("candidate"));
    wrong.add_baselines("solution:only_there");
    absl::StatusOr<AdmittedRun> refused = a.Admit(wrong);
    CHECK(absl::IsInvalidArgument(refused.status()));
    CHECK(std::string(refused.status().message()).rfind("baselines[0]: no solution", 0) == 0);
  }
  SECTION("an empty or malformed name") {
    v1::EvaluateRequest bad = VectorAddRequest(Adder("candidate"));
    bad.add_baselines("solution:");
    CHECK(std::string(a.Admit(bad).status().message()) == "baselines[0]: solution name: empty");
  }
  SECTION("named twice") {
    request.add_baselines("solution:fi");
    CHECK(std::string(a.Admit(request).status().message()) ==
          "baselines[1]: 'solution:fi' is named twice");
  }
}

TEST_CASE("admission gives the run the definition with its settings applied") {
  AdmissionArchive a;
  v1::DefinitionSettings s;
  s.set_atol(1);
  s.set_iterations(5);
  REQUIRE(a.archive().UpdateDefinitionSettings("vector_add_f32", s, false).ok());
  absl::StatusOr<AdmittedRun> run = a.Admit(VectorAddRequest(Adder("candidate")));
  REQUIRE(run.ok());
  CHECK(run->definition.tolerance().atol() == 1);
  CHECK(run->definition.tolerance().rtol() == 1e-2);
  CHECK(run->definition.timing_overrides().iterations() == 5);
  CHECK_FALSE(run->definition.timing_overrides().has_trials());
}

}  // namespace
}  // namespace kiln
