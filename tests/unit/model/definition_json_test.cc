#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "harness/model/json_interop.h"

namespace kiln {
namespace {

using Json = nlohmann::ordered_json;

void CheckInvalid(const absl::Status& s, const std::string& message_part) {
  INFO(s.ToString());
  CHECK(s.code() == absl::StatusCode::kInvalidArgument);
  CHECK(absl::StrContains(std::string(s.message()), message_part));
}

// A small definition in the layout of the flashinfer-trace files.
Json RmsNorm() {
  return Json::parse(R"({
    "name": "rmsnorm_h8",
    "op_type": "rmsnorm",
    "description": "RMSNorm, hidden size 8.",
    "tags": ["status:verified"],
    "axes": {
      "batch_size": {"type": "var", "description": "rows"},
      "hidden_size": {"type": "const", "value": 8}
    },
    "inputs": {
      "hidden_states": {"shape": ["batch_size", "hidden_size"], "dtype": "bfloat16"},
      "weight": {"shape": ["hidden_size"], "dtype": "bfloat16", "description": "gain"},
      "eps": {"shape": null, "dtype": "float32"}
    },
    "outputs": {
      "output": {"shape": ["batch_size", "hidden_size"], "dtype": "bfloat16"}
    },
    "reference": "import torch\ndef run(hidden_states, weight, eps):\n    return hidden_states\n"
  })");
}

std::vector<std::string> Keys(const Json& j) {
  std::vector<std::string> keys;
  for (const auto& [k, v] : j.items()) keys.push_back(k);
  return keys;
}

TEST_CASE("a definition is read field for field") {
  absl::StatusOr<v1::Definition> def = ParseDefinitionJson(RmsNorm().dump());
  REQUIRE(def.ok());
  CHECK(def->name() == "rmsnorm_h8");
  CHECK(def->op_type() == "rmsnorm");
  REQUIRE(def->axes_size() == 2);
  CHECK_FALSE(def->axes(0).is_const());
  CHECK(def->axes(0).description() == "rows");
  CHECK(def->axes(1).is_const());
  CHECK(def->axes(1).value() == 8);
  REQUIRE(def->inputs_size() == 3);
  CHECK(def->inputs(0).dtype() == v1::DTYPE_BFLOAT16);
  CHECK(def->inputs(0).shape_size() == 2);
  CHECK(def->inputs(1).description() == "gain");
  CHECK(def->inputs(2).scalar());
  CHECK(def->inputs(2).shape_size() == 0);
  CHECK(def->inputs(2).dtype() == v1::DTYPE_FLOAT32);
  REQUIRE(def->outputs_size() == 1);
  CHECK(def->tags_size() == 1);
  CHECK(def->json_keys_size() == 8);
  CHECK(absl::StartsWith(def->reference(), "import torch"));
}

TEST_CASE("input key order is the calling order, not alphabetical order") {
  Json doc = RmsNorm();
  doc["inputs"] = Json::parse(R"({
    "zeta": {"shape": ["hidden_size"], "dtype": "float32"},
    "alpha": {"shape": ["hidden_size"], "dtype": "float32"},
    "mid": {"shape": null, "dtype": "int32"}
  })");
  absl::StatusOr<v1::Definition> def = ParseDefinitionJson(doc.dump());
  REQUIRE(def.ok());
  REQUIRE(def->inputs_size() == 3);
  CHECK(def->inputs(0).name() == "zeta");
  CHECK(def->inputs(1).name() == "alpha");
  CHECK(def->inputs(2).name() == "mid");
  Json out = Json::parse(DefinitionToJson(*def));
  CHECK(Keys(out["inputs"]) == std::vector<std::string>{"zeta", "alpha", "mid"});
  CHECK(out == doc);
}

TEST_CASE("a parsed definition is written back with its own top-level key order") {
  Json doc = Json::object();
  // "description" after "op_type" and "constraints" after "outputs", as some dataset files have.
  for (const char* key : {"name", "op_type", "description", "tags", "axes", "inputs", "outputs"}) {
    doc[key] = RmsNorm()[key];
  }
  doc["constraints"] = {"batch_size > 0"};
  doc["reference"] = RmsNorm()["reference"];
  absl::StatusOr<v1::Definition> def = ParseDefinitionJson(doc.dump());
  REQUIRE(def.ok());
  Json out = Json::parse(DefinitionToJson(*def));
  CHECK(Keys(out) == Keys(doc));
  CHECK(out == doc);
}

TEST_CASE("a definition built in code is written in flashinfer-bench's canonical key order") {
  v1::Definition def;
  def.set_name("vadd");
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
  def.set_reference("def run(x): return x");
  Json out = Json::parse(DefinitionToJson(def));
  CHECK(Keys(out) == std::vector<std::string>{"name", "op_type", "description", "tags", "axes",
                                              "inputs", "outputs", "reference"});
  def.add_constraints("n % 4 == 0");
  out = Json::parse(DefinitionToJson(def));
  CHECK(Keys(out) == std::vector<std::string>{"name", "op_type", "description", "tags", "axes",
                                              "constraints", "inputs", "outputs", "reference"});
  CHECK(out["axes"]["n"] == Json::parse(R"({"type": "var"})"));
}

Json NativeReference() {
  return Json::parse(R"({
    "name": "rmsnorm_h8_native", "definition": "rmsnorm_h8", "author": "kiln",
    "spec": {"language": "cpp", "target_hardware": ["cpu"], "entry_point": "ref.cc::run",
             "dependencies": [], "destination_passing_style": true},
    "sources": [{"path": "ref.cc", "content": "int run() { return 0; }"}]
  })");
}

TEST_CASE("kiln extensions round-trip and are dropped for a flashinfer-bench export") {
  Json doc = RmsNorm();
  doc["native_reference"] = NativeReference();
  doc["tolerance"] = Json::parse(R"({"atol": 0.02, "rtol": 0.05, "required_matched_ratio": 0.99})");
  absl::StatusOr<v1::Definition> def = ParseDefinitionJson(doc.dump());
  REQUIRE(def.ok());
  REQUIRE(def->has_native_reference());
  CHECK(def->native_reference().spec().entry_point() == "ref.cc::run");
  REQUIRE(def->has_tolerance());
  CHECK(def->tolerance().rtol() == 0.05);
  CHECK(def->tolerance().required_matched_ratio() == 0.99);

  CHECK(Json::parse(DefinitionToJson(*def, /*export_kiln_extensions=*/true)) == doc);
  Json exported = Json::parse(DefinitionToJson(*def, /*export_kiln_extensions=*/false));
  CHECK_FALSE(exported.contains("native_reference"));
  CHECK_FALSE(exported.contains("tolerance"));
  CHECK(exported == RmsNorm());
}

TEST_CASE("extensions set in code are appended after the flashinfer-bench keys") {
  absl::StatusOr<v1::Definition> def = ParseDefinitionJson(RmsNorm().dump());
  REQUIRE(def.ok());
  def->mutable_tolerance()->set_atol(0.1);
  Json out = Json::parse(DefinitionToJson(*def));
  CHECK(Keys(out).back() == "tolerance");
  CHECK(out["tolerance"]["atol"] == 0.1);
}

TEST_CASE("tolerance keys left out take kiln's defaults") {
  Json doc = RmsNorm();
  doc["tolerance"] = Json::parse(R"({"atol": 0.5})");
  absl::StatusOr<v1::Definition> def = ParseDefinitionJson(doc.dump());
  REQUIRE(def.ok());
  CHECK(def->tolerance().atol() == 0.5);
  CHECK(def->tolerance().rtol() == 1e-2);
  CHECK(def->tolerance().required_matched_ratio() == 1.0);
}

TEST_CASE("unknown top-level keys and null optional fields are accepted") {
  Json doc = RmsNorm();
  doc["website_rank"] = 3;
  doc["constraints"] = nullptr;
  doc["description"] = nullptr;
  absl::StatusOr<v1::Definition> def = ParseDefinitionJson(doc.dump());
  REQUIRE(def.ok());
  CHECK(def->description().empty());
  for (const std::string& key : def->json_keys()) {
    CHECK(key != "website_rank");
    CHECK(key != "constraints");
  }
}

TEST_CASE("an optional input keeps its flag") {
  Json doc = RmsNorm();
  doc["inputs"]["weight"]["optional"] = true;
  absl::StatusOr<v1::Definition> def = ParseDefinitionJson(doc.dump());
  REQUIRE(def.ok());
  CHECK(def->inputs(1).has_optional());
  CHECK(def->inputs(1).optional());
  CHECK_FALSE(def->inputs(0).has_optional());
  CHECK(Json::parse(DefinitionToJson(*def)) == doc);
}

TEST_CASE("definition parse errors name the offending field") {
  SECTION("unknown dtype") {
    Json doc = RmsNorm();
    doc["inputs"]["weight"]["dtype"] = "float13";
    CheckInvalid(ParseDefinitionJson(doc.dump()).status(),
                 "definition.inputs.weight.dtype: unknown dtype 'float13'");
  }
  SECTION("axis type") {
    Json doc = RmsNorm();
    doc["axes"]["batch_size"]["type"] = "variable";
    CheckInvalid(ParseDefinitionJson(doc.dump()).status(),
                 "definition.axes.batch_size.type: expected 'const' or 'var'");
  }
  SECTION("const axis without a value") {
    Json doc = RmsNorm();
    doc["axes"]["hidden_size"].erase("value");
    CheckInvalid(ParseDefinitionJson(doc.dump()).status(),
                 "definition.axes.hidden_size.value: missing");
  }
  SECTION("const axis with a fractional value") {
    Json doc = RmsNorm();
    doc["axes"]["hidden_size"]["value"] = 8.5;
    CheckInvalid(ParseDefinitionJson(doc.dump()).status(),
                 "definition.axes.hidden_size.value: expected an integer");
  }
  SECTION("shape entry not a string") {
    Json doc = RmsNorm();
    doc["inputs"]["hidden_states"]["shape"][1] = 8;
    CheckInvalid(ParseDefinitionJson(doc.dump()).status(),
                 "definition.inputs.hidden_states.shape[1]: expected a string");
  }
  SECTION("shape missing") {
    Json doc = RmsNorm();
    doc["outputs"]["output"].erase("shape");
    CheckInvalid(ParseDefinitionJson(doc.dump()).status(),
                 "definition.outputs.output.shape: missing");
  }
  SECTION("inputs not an object") {
    Json doc = RmsNorm();
    doc["inputs"] = Json::array();
    CheckInvalid(ParseDefinitionJson(doc.dump()).status(),
                 "definition.inputs: expected an object, got an array");
  }
  SECTION("name missing") {
    Json doc = RmsNorm();
    doc.erase("name");
    CheckInvalid(ParseDefinitionJson(doc.dump()).status(), "definition.name: missing");
  }
  SECTION("name null") {
    Json doc = RmsNorm();
    doc["name"] = nullptr;
    CheckInvalid(ParseDefinitionJson(doc.dump()).status(), "definition.name: expected a string");
  }
  SECTION("tags not a list of strings") {
    Json doc = RmsNorm();
    doc["tags"] = {"ok", 3};
    CheckInvalid(ParseDefinitionJson(doc.dump()).status(), "definition.tags[1]: expected a string");
  }
  SECTION("native reference source") {
    Json doc = RmsNorm();
    doc["native_reference"] = NativeReference();
    doc["native_reference"]["sources"][0]["path"] = false;
    CheckInvalid(ParseDefinitionJson(doc.dump()).status(),
                 "definition.native_reference.sources[0].path: expected a string");
  }
  SECTION("tolerance not a number") {
    Json doc = RmsNorm();
    doc["tolerance"] = Json::parse(R"({"atol": "tight"})");
    CheckInvalid(ParseDefinitionJson(doc.dump()).status(), "definition.tolerance.atol: ");
  }
  SECTION("not an object") {
    CheckInvalid(ParseDefinitionJson("[1, 2]").status(), "definition: expected an object");
  }
}

TEST_CASE("malformed JSON is reported with its byte offset") {
  absl::Status s = ParseDefinitionJson(R"({"name": "x", "axes": {)").status();
  CheckInvalid(s, "malformed JSON at byte ");
  s = ParseDefinitionJson(R"({"name": "x",, })").status();
  CheckInvalid(s, "malformed JSON at byte 14");
  CheckInvalid(ParseDefinitionJson("").status(), "malformed JSON at byte ");
  CheckInvalid(ParseDefinitionJson(R"({"name": "x"} trailing)").status(), "malformed JSON");
}

TEST_CASE("absurdly nested JSON is refused before it is parsed") {
  std::string deep = std::string(100000, '[') + std::string(100000, ']');
  CheckInvalid(ParseDefinitionJson(deep).status(), "nested deeper than");
  // Brackets inside strings do not count as nesting.
  Json doc = RmsNorm();
  doc["description"] = std::string(1000, '[');
  CHECK(ParseDefinitionJson(doc.dump()).ok());
}

}  // namespace
}  // namespace kiln
