// The "kernelbench" key of a definition (a KernelBench problem imported by
// `kiln defs import --format kernelbench`): read, validated field by field, written back in every
// copy of the definition (it says how inputs are made), and what a solution of one must be.
#include <catch2/catch.hpp>
#include <string>

#include "absl/strings/match.h"
#include "harness/model/json_interop.h"
#include "harness/model/validate.h"

namespace kiln {
namespace {

std::string ProblemJson(const std::string& kernelbench) {
  return R"({"name": "kernelbench_l1_19_ReLU", "op_type": "kernelbench_level1",
    "axes": {"x_dim0": {"type": "const", "value": 16}, "output_dim0": {"type": "const", "value": 16}},
    "inputs": {"x": {"shape": ["x_dim0"], "dtype": "float32"}},
    "outputs": {"output": {"shape": ["output_dim0"], "dtype": "float32"}},
    "reference": "import torch\nclass Model(torch.nn.Module):\n    pass\n",
    "kernelbench": )" +
         kernelbench + "}";
}

constexpr char kProblem[] = R"({"level": 1, "problem_id": 19, "problem_name": "ReLU",
    "file": "level1/19_ReLU.py", "inputs_source": "def get_inputs():\n    return []\n"})";

v1::Solution ModelNew(bool dps, const std::string& language = "python") {
  v1::Solution s;
  s.set_name("relu_new");
  s.mutable_spec()->set_language(language);
  s.mutable_spec()->set_entry_point("model_new.py::ModelNew");
  s.mutable_spec()->set_destination_passing_style(dps);
  v1::SourceFile* f = s.add_sources();
  f->set_path("model_new.py");
  f->set_content("class ModelNew: pass\n");
  return s;
}

TEST_CASE("a KernelBench problem's definition keeps its kernelbench key through every copy") {
  absl::StatusOr<v1::Definition> def = ParseDefinitionJson(ProblemJson(kProblem));
  INFO(def.status().message());
  REQUIRE(def.ok());
  REQUIRE(def->has_kernelbench());
  CHECK(def->kernelbench().level() == 1);
  CHECK(def->kernelbench().problem_id() == 19);
  CHECK(def->kernelbench().problem_name() == "ReLU");
  CHECK(def->kernelbench().file() == "level1/19_ReLU.py");
  CHECK(absl::StrContains(def->kernelbench().inputs_source(), "get_inputs"));
  CHECK(ValidateDefinition(*def).ok());
  // Written with and without kiln's extensions: workers read the JSON without them.
  for (bool extensions : {true, false}) {
    absl::StatusOr<v1::Definition> again =
        ParseDefinitionJson(DefinitionToJson(*def, extensions));
    REQUIRE(again.ok());
    CHECK(again->kernelbench().SerializeAsString() == def->kernelbench().SerializeAsString());
  }
}

TEST_CASE("a malformed kernelbench key is refused, naming the field") {
  auto error = [](const std::string& kernelbench) {
    absl::StatusOr<v1::Definition> def = ParseDefinitionJson(ProblemJson(kernelbench));
    REQUIRE_FALSE(def.ok());
    return std::string(def.status().message());
  };
  CHECK(absl::StrContains(error(R"({"level": 1, "problem_id": 19})"),
                          "definition.kernelbench.inputs_source"));
  CHECK(absl::StrContains(error(R"({"level": 7, "problem_id": 19, "inputs_source": ""})"),
                          "definition.kernelbench.level"));
  CHECK(absl::StrContains(error(R"({"level": 1, "problem_id": -2, "inputs_source": ""})"),
                          "definition.kernelbench.problem_id"));
  CHECK(absl::StrContains(error(R"("level1/19_ReLU.py")"), "definition.kernelbench"));
}

TEST_CASE("a KernelBench problem is solved by a value-returning Python or Triton ModelNew") {
  absl::StatusOr<v1::Definition> def = ParseDefinitionJson(ProblemJson(kProblem));
  REQUIRE(def.ok());
  CHECK(ValidateSolution(*def, ModelNew(false), Limits{}).ok());
  CHECK(ValidateSolution(*def, ModelNew(false, "triton"), Limits{}).ok());
  absl::Status dps = ValidateSolution(*def, ModelNew(true), Limits{});
  CHECK(absl::StrContains(dps.message(), "solution.spec.destination_passing_style"));
  v1::Solution cuda = ModelNew(false, "cuda");
  cuda.mutable_spec()->set_entry_point("kernel.cu::run");
  cuda.mutable_sources(0)->set_path("kernel.cu");
  absl::Status language = ValidateSolution(*def, cuda, Limits{});
  CHECK(absl::StrContains(language.message(), "solution.spec.language"));
  CHECK(absl::StrContains(language.message(), "KernelBench problem"));
}

}  // namespace
}  // namespace kiln
