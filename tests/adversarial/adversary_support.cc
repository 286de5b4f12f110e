#include "tests/adversarial/adversary_support.h"

#include <catch2/catch.hpp>
#include <memory>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "harness/definitions/builtins.h"
#include "tests/unit/python/python_test_support.h"
#include "tests/unit/server/test_node.h"

namespace kiln::adversarial {

v1::Harness::Stub& Node() {
  // Lives until the process exits. Its Python (for the Python adversaries) is the build's
  // python3 with torch, when there is one.
  static auto* node = [] {
    HarnessOptions options;
    options.python = std::string(KILN_TEST_PYTHON).empty() ? "none" : KILN_TEST_PYTHON;
    return new testing::TestNode(options);
  }();
  return node->stub();
}

bool HasTorch() { return !std::string(KILN_TEST_PYTHON).empty(); }

v1::Solution PythonSolution(const std::string& name, const std::string& source, bool dps,
                            const std::string& definition) {
  v1::Solution s = testing::PythonSolution(name, source, dps);
  s.set_definition(definition);
  s.set_author("adversary");
  return s;
}

v1::Solution CppSolution(const std::string& name, const std::string& source,
                         const std::string& definition) {
  v1::Solution s;
  s.set_name(name);
  s.set_definition(definition);
  s.set_author("adversary");
  s.mutable_spec()->set_language("cpp");
  s.mutable_spec()->add_target_hardware("cpu");
  s.mutable_spec()->set_entry_point("solution.cc::run");
  v1::SourceFile* f = s.add_sources();
  f->set_path("solution.cc");
  f->set_content(source);
  return s;
}

v1::Run Evaluate(const v1::Solution& solution, int64_t n, const std::string& mode) {
  v1::EvaluateRequest request;
  request.set_definition(solution.definition());
  *request.mutable_solution() = solution;
  *request.add_workloads() = testing::VectorAddWorkload(n, absl::StrCat("adversary-n", n));
  request.set_mode(mode);
  testing::EvaluateOutcome out = testing::Evaluate(Node(), request);
  INFO(out.status.error_message());
  REQUIRE(out.status.ok());
  v1::Run run = out.run();
  REQUIRE(run.traces_size() == 1);
  return run;
}

void PutScaledAddDefinition(const std::string& name, double scale,
                            const std::vector<std::string>& tags) {
  auto builtins = LoadBuiltinDefinitions();
  REQUIRE(builtins.ok());
  v1::PutDefinitionRequest put;
  for (const BuiltinDefinition& b : *builtins) {
    if (b.definition.name() == "vector_add_f32") *put.mutable_definition() = b.definition;
  }
  v1::Definition* def = put.mutable_definition();
  def->set_name(name);
  def->clear_tags();
  for (const std::string& tag : tags) def->add_tags(tag);
  def->mutable_native_reference()->set_definition(name);
  def->mutable_native_reference()->mutable_sources(0)->set_content(absl::StrFormat(R"(
#include <kiln/abi.h>
extern "C" int run(const kiln_tensor* args, int32_t nargs, const kiln_context* ctx) {
  const float* a = (const float*)args[0].data;
  const float* b = (const float*)args[1].data;
  float* c = (float*)args[2].data;
  for (int64_t i = 0; i < args[0].shape[0]; ++i) c[i] = (a[i] + b[i]) * %.9g;
  return 0;
}
)",
                                                                                  scale));
  grpc::ClientContext ctx;
  v1::PutDefinitionResponse response;
  grpc::Status status = Node().PutDefinition(&ctx, put, &response);
  INFO(status.error_message());
  REQUIRE(status.ok());
}

std::string DefinitionWarning(const std::string& definition) {
  grpc::ClientContext ctx;
  v1::ListDefinitionsResponse response;
  REQUIRE(Node().ListDefinitions(&ctx, v1::ListDefinitionsRequest(), &response).ok());
  for (const v1::DefinitionSummary& d : response.definitions()) {
    if (d.name() == definition) return d.integrity_warning();
  }
  FAIL("definition " << definition << " not listed");
  return "";
}

std::string Warnings(const v1::Run& run) {
  std::string out;
  for (const v1::Trace& t : run.traces()) {
    for (const std::string& w : t.kiln().warnings()) absl::StrAppend(&out, w, "\n");
  }
  return out;
}

}  // namespace kiln::adversarial
