#include <catch2/catch.hpp>
#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
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

std::vector<std::string> Keys(const Json& j) {
  std::vector<std::string> keys;
  for (const auto& [k, v] : j.items()) keys.push_back(k);
  return keys;
}

v1::Trace PassedTrace() {
  v1::Trace t;
  t.set_definition("rmsnorm_h2048");
  t.set_solution("rmsnorm_cuda_v1");
  v1::Workload* w = t.mutable_workload();
  w->set_uuid("6120f144");
  v1::AxisValue* a = w->add_axes();
  a->set_name("batch_size");
  a->set_value(32);
  v1::WorkloadInput* in = w->add_inputs();
  in->set_name("hidden_states");
  in->set_kind(v1::WorkloadInput::RANDOM);
  v1::Evaluation* e = t.mutable_evaluation();
  e->set_status(v1::PASSED);
  e->mutable_environment()->set_hardware("NVIDIA_H100");
  (*e->mutable_environment()->mutable_libs())["cuda"] = "12.6";
  (*e->mutable_environment()->mutable_libs())["torch"] = "2.6.0";
  e->set_timestamp("2025-06-27T12:45:00Z");
  e->set_log("ok\n");
  e->mutable_correctness()->set_max_relative_error(1.15e-05);
  e->mutable_correctness()->set_max_absolute_error(0.89e-05);
  e->mutable_correctness()->set_extra_json(R"({"matched_ratio":1.0,"worst":"output"})");
  e->mutable_performance()->set_latency_ms(0.008);
  e->mutable_performance()->set_reference_latency_ms(0.019);
  e->mutable_performance()->set_speedup_factor(2.375);
  return t;
}

TEST_CASE("a trace round-trips through JSON") {
  const v1::Trace t = PassedTrace();
  const std::string text = TraceToJson(t);
  absl::StatusOr<v1::Trace> back = ParseTraceJson(text);
  REQUIRE(back.ok());
  CHECK(google::protobuf::util::MessageDifferencer::Equals(*back, t));
  CHECK(Json::parse(TraceToJson(*back)) == Json::parse(text));
}

TEST_CASE("trace keys follow flashinfer-bench's field order") {
  Json out = Json::parse(TraceToJson(PassedTrace()));
  CHECK(Keys(out) == std::vector<std::string>{"definition", "workload", "solution", "evaluation"});
  CHECK(Keys(out["evaluation"]) == std::vector<std::string>{"status", "environment", "timestamp",
                                                            "log", "correctness", "performance"});
  CHECK(out["evaluation"]["status"] == "PASSED");
  CHECK(out["evaluation"]["environment"]["libs"] ==
        Json::parse(R"({"cuda":"12.6","torch":"2.6.0"})"));
  CHECK(out["evaluation"]["correctness"]["extra"] ==
        Json::parse(R"({"matched_ratio":1.0,"worst":"output"})"));
}

TEST_CASE("non-finite correctness and performance values are written as strings") {
  v1::Trace t = PassedTrace();
  t.mutable_evaluation()->set_status(v1::INCORRECT_NUMERICAL);
  t.mutable_evaluation()->clear_performance();
  t.mutable_evaluation()->mutable_correctness()->set_max_relative_error(
      std::numeric_limits<double>::quiet_NaN());
  t.mutable_evaluation()->mutable_correctness()->set_max_absolute_error(
      std::numeric_limits<double>::infinity());
  Json out = Json::parse(TraceToJson(t));
  CHECK(out["evaluation"]["correctness"]["max_relative_error"] == "NaN");
  CHECK(out["evaluation"]["correctness"]["max_absolute_error"] == "Infinity");
  CHECK(out["evaluation"]["performance"].is_null());

  absl::StatusOr<v1::Trace> back = ParseTraceJson(out.dump());
  REQUIRE(back.ok());
  CHECK(std::isnan(back->evaluation().correctness().max_relative_error()));
  CHECK(std::isinf(back->evaluation().correctness().max_absolute_error()));
  CHECK(back->evaluation().correctness().max_absolute_error() > 0);
  CHECK_FALSE(back->evaluation().has_performance());

  t.mutable_evaluation()->mutable_performance()->set_speedup_factor(
      -std::numeric_limits<double>::infinity());
  out = Json::parse(TraceToJson(t));
  CHECK(out["evaluation"]["performance"]["speedup_factor"] == "-Infinity");
  back = ParseTraceJson(out.dump());
  REQUIRE(back.ok());
  CHECK(back->evaluation().performance().speedup_factor() ==
        -std::numeric_limits<double>::infinity());
}

TEST_CASE("a workload-only trace has null solution and evaluation") {
  v1::Trace t = PassedTrace();
  t.clear_solution();
  t.clear_evaluation();
  Json out = Json::parse(TraceToJson(t));
  CHECK(out["solution"].is_null());
  CHECK(out["evaluation"].is_null());
  absl::StatusOr<v1::Trace> back = ParseTraceJson(out.dump());
  REQUIRE(back.ok());
  CHECK_FALSE(back->has_evaluation());
  CHECK(back->solution().empty());
}

TEST_CASE("the kiln trace detail travels under \"kiln\" only when extensions are exported") {
  v1::Trace t = PassedTrace();
  t.mutable_kiln()->set_workload_index(3);
  t.mutable_kiln()->mutable_timing()->set_mode("official");
  t.mutable_kiln()->mutable_timing()->set_flush_bytes(int64_t{1} << 33);
  t.mutable_kiln()->mutable_timing()->add_trial_medians_ms(0.5);
  Json out = Json::parse(TraceToJson(t, /*export_kiln_extensions=*/true));
  REQUIRE(out.contains("kiln"));
  CHECK(out["kiln"]["workload_index"] == 3);
  absl::StatusOr<v1::Trace> back = ParseTraceJson(out.dump());
  REQUIRE(back.ok());
  CHECK(google::protobuf::util::MessageDifferencer::Equals(back->kiln(), t.kiln()));

  Json exported = Json::parse(TraceToJson(t, /*export_kiln_extensions=*/false));
  CHECK_FALSE(exported.contains("kiln"));
  CHECK(exported["evaluation"]["status"] == "PASSED");
}

TEST_CASE("kiln-only statuses are exported as their nearest official status, the exact one in "
          "the log") {
  const std::vector<std::pair<v1::EvaluationStatus, std::string>> cases = {
      {v1::REJECTED, "INCORRECT_NUMERICAL"},
      {v1::CANCELLED, "TIMEOUT"},
      {v1::INTERRUPTED, "RUNTIME_ERROR"}};
  for (const auto& [status, official] : cases) {
    INFO(StatusName(status));
    v1::Trace t = PassedTrace();
    t.mutable_evaluation()->set_status(status);
    t.mutable_evaluation()->clear_correctness();
    t.mutable_evaluation()->clear_performance();
    t.mutable_evaluation()->set_log("worker log");
    t.mutable_kiln()->set_reason("integrity.input_mutation: input a changed");
    CHECK(std::string(StatusName(FlashinferStatus(status))) == official);
    Json out = Json::parse(TraceToJson(t, /*export_kiln_extensions=*/false));
    CHECK(out["evaluation"]["status"] == official);
    CHECK(out["evaluation"]["log"] == "kiln status: " + std::string(StatusName(status)) +
                                          ": integrity.input_mutation: input a changed\nworker log");
    CHECK(out["evaluation"]["performance"].is_null());

    // With extensions the exact status is written as is.
    Json own = Json::parse(TraceToJson(t, /*export_kiln_extensions=*/true));
    CHECK(own["evaluation"]["status"] == std::string(StatusName(status)));
    CHECK(own["evaluation"]["correctness"].is_null());
  }
}

TEST_CASE("an exported REJECTED trace keeps kiln's status and reason in correctness.extra") {
  v1::Trace t = PassedTrace();
  t.mutable_evaluation()->set_status(v1::REJECTED);
  t.mutable_kiln()->set_reason("integrity.faster_than_memory: latency below the floor");
  Json out = Json::parse(TraceToJson(t, /*export_kiln_extensions=*/false));
  CHECK(out["evaluation"]["status"] == "INCORRECT_NUMERICAL");
  // INCORRECT_NUMERICAL carries correctness and never performance (flashinfer-bench's validator).
  CHECK(out["evaluation"]["performance"].is_null());
  const Json& c = out["evaluation"]["correctness"];
  CHECK(c["max_relative_error"] == 1.15e-05);
  CHECK(c["extra"]["kiln_status"] == "REJECTED");
  CHECK(c["extra"]["kiln_reason"] == "integrity.faster_than_memory: latency below the floor");
  CHECK(c["extra"]["worst"] == "output");  // kiln's own extra stays

  // Rejected before anything was compared: the errors are NaN ("not measured").
  t.mutable_evaluation()->clear_correctness();
  out = Json::parse(TraceToJson(t, /*export_kiln_extensions=*/false));
  CHECK(out["evaluation"]["correctness"]["max_absolute_error"] == "NaN");
  CHECK(out["evaluation"]["correctness"]["extra"]["kiln_status"] == "REJECTED");
}

TEST_CASE("export drops metrics flashinfer-bench refuses for a status and fills what it requires") {
  SECTION("INCORRECT_SHAPE with a comparison loses its correctness") {
    v1::Trace t = PassedTrace();
    t.mutable_evaluation()->set_status(v1::INCORRECT_SHAPE);
    Json out = Json::parse(TraceToJson(t, /*export_kiln_extensions=*/false));
    CHECK(out["evaluation"]["correctness"].is_null());
    CHECK(out["evaluation"]["performance"].is_null());
  }
  SECTION("INCORRECT_NUMERICAL loses its performance") {
    v1::Trace t = PassedTrace();
    t.mutable_evaluation()->set_status(v1::INCORRECT_NUMERICAL);
    Json out = Json::parse(TraceToJson(t, /*export_kiln_extensions=*/false));
    CHECK(out["evaluation"]["correctness"].is_object());
    CHECK(out["evaluation"]["performance"].is_null());
  }
  SECTION("PASSED without metrics gets both; bad latencies become 0") {
    v1::Trace t = PassedTrace();
    t.mutable_evaluation()->clear_correctness();
    t.mutable_evaluation()->mutable_performance()->set_speedup_factor(std::nan(""));
    t.mutable_evaluation()->mutable_performance()->set_reference_latency_ms(-1);
    Json out = Json::parse(TraceToJson(t, /*export_kiln_extensions=*/false));
    CHECK(out["evaluation"]["correctness"]["max_absolute_error"] == "NaN");
    CHECK(out["evaluation"]["performance"]["latency_ms"] == 0.008);
    CHECK(out["evaluation"]["performance"]["speedup_factor"] == 0.0);
    CHECK(out["evaluation"]["performance"]["reference_latency_ms"] == 0.0);
  }
  SECTION("empty hardware and timestamp are written as \"unknown\"") {
    v1::Trace t = PassedTrace();
    t.mutable_evaluation()->mutable_environment()->clear_hardware();
    t.mutable_evaluation()->clear_timestamp();
    Json out = Json::parse(TraceToJson(t, /*export_kiln_extensions=*/false));
    CHECK(out["evaluation"]["environment"]["hardware"] == "unknown");
    CHECK(out["evaluation"]["timestamp"] == "unknown");
  }
  SECTION("a trace without a verdict has a null evaluation") {
    v1::Trace t = PassedTrace();
    t.mutable_evaluation()->set_status(v1::STATUS_UNSPECIFIED);
    Json out = Json::parse(TraceToJson(t, /*export_kiln_extensions=*/false));
    CHECK(out["evaluation"].is_null());
  }
}

TEST_CASE("status names are the enum names and parse back") {
  for (int i = v1::PASSED; i <= v1::INTERRUPTED; ++i) {
    auto status = static_cast<v1::EvaluationStatus>(i);
    std::string_view name = StatusName(status);
    CHECK(name == v1::EvaluationStatus_Name(status));
    absl::StatusOr<v1::EvaluationStatus> back = ParseStatusName(name);
    REQUIRE(back.ok());
    CHECK(*back == status);
  }
  CHECK(StatusName(v1::INCORRECT_NUMERICAL) == "INCORRECT_NUMERICAL");
  CHECK_FALSE(ParseStatusName("passed").ok());
  CHECK_FALSE(ParseStatusName("STATUS_UNSPECIFIED").ok());
}

TEST_CASE("flashinfer-bench's documented example trace parses") {
  absl::StatusOr<v1::Trace> t = ParseTraceJson(R"({
    "definition": "rmsnorm",
    "solution": "rmsnorm_triton_v1",
    "workload": {
      "uuid": "6120f144-b973-4bd9-b884-77ecb132914e",
      "axes": {"batch_size": 32},
      "inputs": {
        "input": {"type": "safetensors", "path": "/data/b32_input.safetensors",
                  "tensor_key": "input"}
      }
    },
    "evaluation": {
      "status": "PASSED",
      "log": "...",
      "correctness": {"max_relative_error": 1.15e-05, "max_absolute_error": 0.89e-05,
                      "extra": null},
      "performance": {"latency_ms": 0.008, "reference_latency_ms": 0.019,
                      "speedup_factor": 2.375, "profile": null},
      "environment": {"hardware": "NVIDIA_H100", "libs": {"cuda": "12.6"}},
      "timestamp": "2025-06-27T12:45:00Z"
    }
  })");
  REQUIRE(t.ok());
  CHECK(t->evaluation().status() == v1::PASSED);
  CHECK(t->evaluation().performance().speedup_factor() == 2.375);
  CHECK(t->evaluation().correctness().extra_json().empty());
  CHECK(t->evaluation().environment().libs().at("cuda") == "12.6");
}

TEST_CASE("trace parse errors name the offending field") {
  Json doc = Json::parse(TraceToJson(PassedTrace()));
  SECTION("unknown status") {
    doc["evaluation"]["status"] = "BOGUS";
    CheckInvalid(ParseTraceJson(doc.dump()).status(),
                 "trace.evaluation.status: unknown status 'BOGUS'");
  }
  SECTION("metric not a number") {
    doc["evaluation"]["performance"]["latency_ms"] = "fast";
    CheckInvalid(ParseTraceJson(doc.dump()).status(),
                 "trace.evaluation.performance.latency_ms: expected a number");
  }
  SECTION("extra not an object") {
    doc["evaluation"]["correctness"]["extra"] = Json::array();
    CheckInvalid(ParseTraceJson(doc.dump()).status(),
                 "trace.evaluation.correctness.extra: expected an object");
  }
  SECTION("lib version not a string") {
    doc["evaluation"]["environment"]["libs"]["cuda"] = 12.6;
    CheckInvalid(ParseTraceJson(doc.dump()).status(),
                 "trace.evaluation.environment.libs.cuda: expected a string");
  }
  SECTION("workload axis") {
    doc["workload"]["axes"]["batch_size"] = true;
    CheckInvalid(ParseTraceJson(doc.dump()).status(), "trace.workload.axes.batch_size: ");
  }
  SECTION("definition missing") {
    doc.erase("definition");
    CheckInvalid(ParseTraceJson(doc.dump()).status(), "trace.definition: missing");
  }
  SECTION("kiln detail of the wrong shape") {
    doc["kiln"] = Json::parse(R"({"workload_index": "three"})");
    CheckInvalid(ParseTraceJson(doc.dump()).status(), "trace.kiln: ");
  }
}

}  // namespace
}  // namespace kiln
