#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <string>

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

Json Workload() {
  return Json::parse(R"({
    "uuid": "55b51e96-eecc-4dc9-814a-0f1301b2951e",
    "axes": {"total_q": 33, "num_pages": 989669},
    "inputs": {
      "q_nope": {"type": "random"},
      "sm_scale": {"type": "scalar", "value": 0.1352337747812271},
      "qo_indptr": {"type": "safetensors", "path": "./blob/meta.safetensors",
                    "tensor_key": "qo_indptr"}
    }
  })");
}

Json TraceLine(const std::string& definition, const Json& workload) {
  Json line = Json::object();
  line["definition"] = definition;
  line["solution"] = nullptr;
  line["workload"] = workload;
  line["evaluation"] = nullptr;
  return line;
}

TEST_CASE("a workload is read field for field") {
  absl::StatusOr<v1::Workload> w = ParseWorkloadJson(Workload().dump());
  REQUIRE(w.ok());
  CHECK(w->uuid() == "55b51e96-eecc-4dc9-814a-0f1301b2951e");
  REQUIRE(w->axes_size() == 2);
  CHECK(w->axes(0).name() == "total_q");
  CHECK(w->axes(0).value() == 33);
  CHECK(w->axes(1).value() == 989669);
  REQUIRE(w->inputs_size() == 3);
  CHECK(w->inputs(0).kind() == v1::WorkloadInput::RANDOM);
  CHECK(w->inputs(1).kind() == v1::WorkloadInput::SCALAR);
  CHECK(w->inputs(1).value_json() == "0.1352337747812271");
  CHECK(w->inputs(2).kind() == v1::WorkloadInput::SAFETENSORS);
  CHECK(w->inputs(2).path() == "./blob/meta.safetensors");
  CHECK(w->inputs(2).tensor_key() == "qo_indptr");
}

TEST_CASE("a bare workload and a trace line wrapping it read the same") {
  absl::StatusOr<v1::Workload> bare = ParseWorkloadJson(Workload().dump());
  absl::StatusOr<v1::Workload> wrapped = ParseWorkloadJson(TraceLine("mla", Workload()).dump());
  REQUIRE(bare.ok());
  REQUIRE(wrapped.ok());
  CHECK(google::protobuf::util::MessageDifferencer::Equals(*bare, *wrapped));
}

TEST_CASE("a workload round-trips, scalar values exactly as written") {
  Json doc = Workload();
  doc["inputs"]["int_scalar"] = Json::parse(R"({"type": "scalar", "value": 1})");
  doc["inputs"]["float_scalar"] = Json::parse(R"({"type": "scalar", "value": 1.0})");
  doc["inputs"]["bool_scalar"] = Json::parse(R"({"type": "scalar", "value": true})");
  absl::StatusOr<v1::Workload> w = ParseWorkloadJson(doc.dump());
  REQUIRE(w.ok());
  CHECK(w->inputs(3).value_json() == "1");
  CHECK(w->inputs(4).value_json() == "1.0");
  CHECK(w->inputs(5).value_json() == "true");
  Json out = Json::parse(WorkloadToJson(*w));
  CHECK(out == doc);
  CHECK(out["inputs"]["int_scalar"]["value"].is_number_integer());
  CHECK(out["inputs"]["float_scalar"]["value"].is_number_float());
  CHECK(out["inputs"]["sm_scale"]["value"].get<double>() == 0.1352337747812271);
}

TEST_CASE("workload output has flashinfer-bench's keys in the order uuid, axes, inputs") {
  v1::Workload w;
  w.set_uuid("u");
  v1::AxisValue* a = w.add_axes();
  a->set_name("n");
  a->set_value(7);
  v1::WorkloadInput* in = w.add_inputs();
  in->set_name("x");
  in->set_kind(v1::WorkloadInput::RANDOM);
  CHECK(WorkloadToJson(w) == R"({"uuid":"u","axes":{"n":7},"inputs":{"x":{"type":"random"}}})");
}

TEST_CASE("a JSONL file reads one workload per non-empty line") {
  Json second = Workload();
  second["uuid"] = "second";
  std::string content =
      TraceLine("mla", Workload()).dump() + "\r\n\n   \n" + TraceLine("mla", second).dump() + "\n";
  absl::StatusOr<std::vector<v1::Workload>> ws = ParseWorkloadsJsonl(content, "mla");
  REQUIRE(ws.ok());
  REQUIRE(ws->size() == 2);
  CHECK((*ws)[1].uuid() == "second");
  CHECK(ParseWorkloadsJsonl("", "mla")->empty());
}

TEST_CASE("JSONL errors name the line") {
  Json bad = Workload();
  bad["axes"]["total_q"] = "many";
  std::string content =
      TraceLine("mla", Workload()).dump() + "\n\n" + TraceLine("mla", bad).dump() + "\n";
  CheckInvalid(ParseWorkloadsJsonl(content, "").status(),
               "line 3: workload.axes.total_q: expected an integer, got a string");
  CheckInvalid(ParseWorkloadsJsonl("{\n", "").status(), "line 1: malformed JSON at byte");
}

TEST_CASE("a JSONL line for another definition is refused") {
  std::string content = TraceLine("gemm_n128", Workload()).dump();
  CheckInvalid(ParseWorkloadsJsonl(content, "mla").status(),
               "line 1: definition: 'gemm_n128' but expected 'mla'");
  CHECK(ParseWorkloadsJsonl(content, "").ok());
}

TEST_CASE("workload parse errors name the offending field") {
  SECTION("unknown input type") {
    Json doc = Workload();
    doc["inputs"]["q_nope"]["type"] = "zeros";
    CheckInvalid(ParseWorkloadJson(doc.dump()).status(),
                 "workload.inputs.q_nope.type: expected 'random', 'scalar' or 'safetensors'");
  }
  SECTION("scalar given as a string") {
    Json doc = Workload();
    doc["inputs"]["sm_scale"]["value"] = "0.1";
    CheckInvalid(ParseWorkloadJson(doc.dump()).status(),
                 "workload.inputs.sm_scale.value: expected a number or bool, got a string");
  }
  SECTION("scalar without a value") {
    Json doc = Workload();
    doc["inputs"]["sm_scale"].erase("value");
    CheckInvalid(ParseWorkloadJson(doc.dump()).status(), "workload.inputs.sm_scale.value: missing");
  }
  SECTION("safetensors without a key") {
    Json doc = Workload();
    doc["inputs"]["qo_indptr"].erase("tensor_key");
    CheckInvalid(ParseWorkloadJson(doc.dump()).status(),
                 "workload.inputs.qo_indptr.tensor_key: missing");
  }
  SECTION("axis value out of range") {
    Json doc = Workload();
    doc["axes"]["total_q"] = 18446744073709551615ull;
    CheckInvalid(ParseWorkloadJson(doc.dump()).status(), "workload.axes.total_q: ");
  }
  SECTION("axes missing") {
    Json doc = Workload();
    doc.erase("axes");
    CheckInvalid(ParseWorkloadJson(doc.dump()).status(), "workload.axes: missing");
  }
  SECTION("wrapped workload not an object") {
    CheckInvalid(ParseWorkloadJson(R"({"definition": "x", "workload": 3})").status(),
                 "workload: expected an object");
  }
}

}  // namespace
}  // namespace kiln
