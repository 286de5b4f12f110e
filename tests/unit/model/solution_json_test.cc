#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "google/protobuf/util/message_differencer.h"
#include "harness/model/json_interop.h"

namespace kiln {
namespace {

using Json = nlohmann::ordered_json;

void CheckInvalid(const absl::Status& s, const std::string& message_part) {
  INFO(s.ToString());
  CHECK(s.code() == absl::StatusCode::kInvalidArgument);
  CHECK(absl::StrContains(std::string(s.message()), message_part));
}

v1::Solution CudaSolution() {
  v1::Solution s;
  s.set_name("rmsnorm_cuda_v1");
  s.set_definition("rmsnorm_h2048");
  s.set_author("team-a");
  s.set_description("one block per row");
  v1::BuildSpec* spec = s.mutable_spec();
  spec->set_language("cuda");
  spec->add_target_hardware("NVIDIA_H100");
  spec->add_target_hardware("NVIDIA_B200");
  spec->set_entry_point("kernel.cu::rmsnorm");
  spec->add_dependencies("CUTLASS_3_7");
  spec->set_destination_passing_style(true);
  v1::SourceFile* kernel = s.add_sources();
  kernel->set_path("kernel.cu");
  kernel->set_content("extern \"C\" int rmsnorm() { return 0; }\n");
  v1::SourceFile* header = s.add_sources();
  header->set_path("include/util.cuh");
  header->set_content("#pragma once\n// \xc3\xa9\n");
  return s;
}

std::vector<std::string> Keys(const Json& j) {
  std::vector<std::string> keys;
  for (const auto& [k, v] : j.items()) keys.push_back(k);
  return keys;
}

TEST_CASE("a solution round-trips through JSON") {
  const v1::Solution s = CudaSolution();
  const std::string text = SolutionToJson(s);
  absl::StatusOr<v1::Solution> back = ParseSolutionJson(text);
  REQUIRE(back.ok());
  CHECK(google::protobuf::util::MessageDifferencer::Equals(*back, s));
  CHECK(Json::parse(SolutionToJson(*back)) == Json::parse(text));
}

TEST_CASE("solution keys are written in a fixed order, spec fields as flashinfer-bench has them") {
  Json out = Json::parse(SolutionToJson(CudaSolution()));
  CHECK(Keys(out) ==
        std::vector<std::string>{"name", "definition", "author", "description", "spec", "sources"});
  CHECK(Keys(out["spec"]) == std::vector<std::string>{"language", "target_hardware", "entry_point",
                                                      "dependencies", "destination_passing_style"});
  CHECK(Keys(out["sources"][0]) == std::vector<std::string>{"path", "content"});
}

TEST_CASE("destination_passing_style is kept only when it was given") {
  v1::Solution s = CudaSolution();
  s.mutable_spec()->clear_destination_passing_style();
  s.clear_description();
  Json out = Json::parse(SolutionToJson(s));
  CHECK_FALSE(out["spec"].contains("destination_passing_style"));
  CHECK_FALSE(out.contains("description"));
  absl::StatusOr<v1::Solution> back = ParseSolutionJson(out.dump());
  REQUIRE(back.ok());
  CHECK_FALSE(back->spec().has_destination_passing_style());

  s.mutable_spec()->set_destination_passing_style(false);
  back = ParseSolutionJson(SolutionToJson(s));
  REQUIRE(back.ok());
  REQUIRE(back->spec().has_destination_passing_style());
  CHECK_FALSE(back->spec().destination_passing_style());
}

TEST_CASE("a flashinfer-bench solution with keys kiln does not model parses") {
  absl::StatusOr<v1::Solution> s = ParseSolutionJson(R"({
    "name": "gemm_triton_h100_v1", "definition": "gemm",
    "description": "C = A @ B.T", "author": "agent",
    "spec": {"language": "triton", "target_hardware": ["NVIDIA_H100"],
             "dependencies": ["triton >= 2.3", "torch"], "entry_point": "main.py::run",
             "destination_passing_style": false, "binding": null},
    "sources": [{"path": "main.py", "content": "def run(A, B): pass"}]
  })");
  REQUIRE(s.ok());
  CHECK(s->spec().language() == "triton");
  CHECK(s->spec().dependencies_size() == 2);
  CHECK(s->description() == "C = A @ B.T");
}

TEST_CASE("solution parse errors name the offending field") {
  Json doc = Json::parse(SolutionToJson(CudaSolution()));
  SECTION("source path not a string") {
    doc["sources"].push_back(Json::parse(R"({"path": 7, "content": ""})"));
    CheckInvalid(ParseSolutionJson(doc.dump()).status(),
                 "solution.sources[2].path: expected a string, got an integer");
  }
  SECTION("source content missing") {
    doc["sources"][1].erase("content");
    CheckInvalid(ParseSolutionJson(doc.dump()).status(), "solution.sources[1].content: missing");
  }
  SECTION("sources not an array") {
    doc["sources"] = Json::object();
    CheckInvalid(ParseSolutionJson(doc.dump()).status(), "solution.sources: expected an array");
  }
  SECTION("spec missing") {
    doc.erase("spec");
    CheckInvalid(ParseSolutionJson(doc.dump()).status(), "solution.spec: missing");
  }
  SECTION("language not a string") {
    doc["spec"]["language"] = Json::array();
    CheckInvalid(ParseSolutionJson(doc.dump()).status(),
                 "solution.spec.language: expected a string");
  }
  SECTION("entry point missing") {
    doc["spec"].erase("entry_point");
    CheckInvalid(ParseSolutionJson(doc.dump()).status(), "solution.spec.entry_point: missing");
  }
  SECTION("destination passing style not a bool") {
    doc["spec"]["destination_passing_style"] = "yes";
    CheckInvalid(ParseSolutionJson(doc.dump()).status(),
                 "solution.spec.destination_passing_style: expected a bool");
  }
  SECTION("target hardware entries not strings") {
    doc["spec"]["target_hardware"] = {1};
    CheckInvalid(ParseSolutionJson(doc.dump()).status(),
                 "solution.spec.target_hardware[0]: expected a string");
  }
  SECTION("author not a string") {
    doc["author"] = 5;
    CheckInvalid(ParseSolutionJson(doc.dump()).status(), "solution.author: expected a string");
  }
}

TEST_CASE("a flashinfer-bench solution.json keeps spec.binding through a round trip") {
  const char* kOfficial = R"({
    "name": "gemm_cuda_tvm_v1", "definition": "gemm_n128_k2048", "author": "team-b",
    "spec": {"language": "cuda", "target_hardware": ["B200"], "entry_point": "kernel.cu::run",
             "dependencies": [], "destination_passing_style": true, "binding": "tvm-ffi"},
    "sources": [{"path": "kernel.cu", "content": "// k"}],
    "description": "tiled"
  })";
  absl::StatusOr<v1::Solution> s = ParseSolutionJson(kOfficial);
  REQUIRE(s.ok());
  REQUIRE(s->spec().has_binding());
  CHECK(s->spec().binding() == "tvm-ffi");
  CHECK(s->spec().destination_passing_style());
  CHECK(s->description() == "tiled");
  const Json written = Json::parse(SolutionToJson(*s));
  CHECK(written["spec"]["binding"] == "tvm-ffi");
  // Without a binding none is written (null and absent read the same).
  absl::StatusOr<v1::Solution> none = ParseSolutionJson(R"({"name": "x", "spec": {
    "language": "python", "entry_point": "main.py::run", "binding": null},
    "sources": [{"path": "main.py", "content": "def run(): pass"}]})");
  REQUIRE(none.ok());
  CHECK_FALSE(none->spec().has_binding());
  CHECK_FALSE(Json::parse(SolutionToJson(*none))["spec"].contains("binding"));
  CheckInvalid(ParseSolutionJson(R"({"spec": {"language": "cuda", "entry_point": "a.cu::f",
    "binding": 3}, "sources": []})").status(),
               "solution.spec.binding");
}

}  // namespace
}  // namespace kiln
