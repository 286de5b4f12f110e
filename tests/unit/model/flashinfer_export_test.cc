// Exported traces against flashinfer-bench's Trace schema (flashinfer_trace_schema.h), and back
// through kiln's own Trace reader.
#include <catch2/catch.hpp>
#include <cmath>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "absl/strings/str_join.h"
#include "harness/model/json_interop.h"
#include "tests/unit/model/flashinfer_trace_schema.h"

namespace kiln {
namespace {

using Json = nlohmann::ordered_json;
using testing::FlashinferTraceViolations;

constexpr v1::EvaluationStatus kAllStatuses[] = {
    v1::PASSED,        v1::INCORRECT_SHAPE, v1::INCORRECT_NUMERICAL, v1::INCORRECT_DTYPE,
    v1::RUNTIME_ERROR, v1::COMPILE_ERROR,   v1::TIMEOUT,             v1::REJECTED,
    v1::CANCELLED,     v1::INTERRUPTED};

// A trace as kiln archives it: metrics set whatever the status (the export must sort them out),
// the kiln detail filled.
v1::Trace ArchivedTrace(v1::EvaluationStatus status) {
  v1::Trace t;
  t.set_definition("vector_add_f32");
  t.set_solution("vector_add_simd");
  v1::Workload* w = t.mutable_workload();
  w->set_uuid("1d7c9e35-2f4a-4b6c-8d9e-0f1a2b3c4d01");
  v1::AxisValue* n = w->add_axes();
  n->set_name("n");
  n->set_value(4096);
  v1::WorkloadInput* a = w->add_inputs();
  a->set_name("a");
  a->set_kind(v1::WorkloadInput::RANDOM);
  v1::WorkloadInput* eps = w->add_inputs();
  eps->set_name("eps");
  eps->set_kind(v1::WorkloadInput::SCALAR);
  eps->set_value_json("1e-06");
  v1::WorkloadInput* b = w->add_inputs();
  b->set_name("b");
  b->set_kind(v1::WorkloadInput::SAFETENSORS);
  b->set_path("./blob/workloads/b.safetensors");
  b->set_tensor_key("b");
  v1::Evaluation* e = t.mutable_evaluation();
  e->set_status(status);
  e->mutable_environment()->set_hardware("AMD EPYC 7B13");
  (*e->mutable_environment()->mutable_libs())["g++"] = "12.2.0";
  e->set_timestamp("2026-11-29T10:00:00.000000Z");
  e->set_log(status == v1::PASSED ? "" : "why it failed");
  e->mutable_correctness()->set_max_relative_error(std::nan(""));
  e->mutable_correctness()->set_max_absolute_error(0.25);
  e->mutable_correctness()->set_extra_json(R"({"mismatched": 3, "checked": 4096})");
  e->mutable_performance()->set_latency_ms(0.0042);
  e->mutable_performance()->set_reference_latency_ms(0.0123);
  e->mutable_performance()->set_speedup_factor(0.0123 / 0.0042);
  t.mutable_kiln()->set_workload_index(0);
  t.mutable_kiln()->set_reason("integrity.stale_output: timed call 3 differs");
  t.mutable_kiln()->mutable_timing()->set_mode("official");
  t.mutable_kiln()->add_warnings("integrity.degenerate_definition: zeros pass");
  return t;
}

TEST_CASE("every exported status conforms to flashinfer-bench's Trace schema") {
  for (v1::EvaluationStatus status : kAllStatuses) {
    for (bool with_metrics : {true, false}) {
      v1::Trace t = ArchivedTrace(status);
      if (!with_metrics) {
        t.mutable_evaluation()->clear_correctness();
        t.mutable_evaluation()->clear_performance();
        t.mutable_evaluation()->mutable_environment()->clear_hardware();
        t.mutable_evaluation()->clear_timestamp();
      }
      const std::string line = TraceToJson(t, /*export_kiln_extensions=*/false);
      INFO(line);
      CHECK(line.find('\n') == std::string::npos);  // one JSONL line
      const Json doc = Json::parse(line);
      const std::vector<std::string> violations = FlashinferTraceViolations(doc);
      INFO(absl::StrJoin(violations, "\n"));
      CHECK(violations.empty());
      // Required keys are present, in flashinfer-bench's order, and no kiln extension leaks.
      std::vector<std::string> keys;
      for (const auto& [k, unused] : doc.items()) keys.push_back(k);
      CHECK(keys == std::vector<std::string>{"definition", "workload", "solution", "evaluation"});
      CHECK(doc["evaluation"]["status"] ==
            std::string(StatusName(FlashinferStatus(status))));
      CHECK(doc["workload"]["inputs"]["eps"]["value"] == 1e-06);
      CHECK(doc["workload"]["axes"]["n"] == 4096);
    }
  }
}

TEST_CASE("the schema check catches what flashinfer-bench refuses") {
  // kiln's own documents (extensions on) are not exports: they fail for the right reasons.
  Json own = Json::parse(TraceToJson(ArchivedTrace(v1::REJECTED), /*export_kiln_extensions=*/true));
  std::string violations = absl::StrJoin(FlashinferTraceViolations(own), "\n");
  CHECK(violations.find("trace: unknown key 'kiln'") != std::string::npos);
  CHECK(violations.find("'REJECTED' is not a flashinfer-bench status") != std::string::npos);

  Json runtime = Json::parse(
      TraceToJson(ArchivedTrace(v1::RUNTIME_ERROR), /*export_kiln_extensions=*/true));
  violations = absl::StrJoin(FlashinferTraceViolations(runtime), "\n");
  CHECK(violations.find("correctness: must be null for RUNTIME_ERROR") != std::string::npos);
  CHECK(violations.find("performance: must be null for RUNTIME_ERROR") != std::string::npos);

  Json exported = Json::parse(TraceToJson(ArchivedTrace(v1::PASSED), false));
  REQUIRE(FlashinferTraceViolations(exported).empty());
  exported["evaluation"]["performance"]["latency_ms"] = "NaN";
  exported["evaluation"]["environment"]["hardware"] = "";
  exported["workload"]["axes"]["n"] = -1;
  exported["evaluation"]["correctness"]["max_absolute_error"] = -0.5;
  violations = absl::StrJoin(FlashinferTraceViolations(exported), "\n");
  CHECK(violations.find("performance.latency_ms: must be a float >= 0") != std::string::npos);
  CHECK(violations.find("environment.hardware: must be a non-empty string") != std::string::npos);
  CHECK(violations.find("axes.n: must be a non-negative integer") != std::string::npos);
  CHECK(violations.find("max_absolute_error: must be a float >= 0 or NaN") != std::string::npos);
}

TEST_CASE("exported traces read back through kiln's reader with the same statuses and latencies") {
  for (v1::EvaluationStatus status : kAllStatuses) {
    INFO(StatusName(status));
    const v1::Trace t = ArchivedTrace(status);
    const std::string line = TraceToJson(t, /*export_kiln_extensions=*/false);
    absl::StatusOr<v1::Trace> back = ParseTraceJson(line);
    REQUIRE(back.ok());
    // kiln's exact status comes back, from correctness.extra or the log's first line.
    CHECK(back->evaluation().status() == status);
    CHECK(back->definition() == t.definition());
    CHECK(back->solution() == t.solution());
    CHECK(back->workload().uuid() == t.workload().uuid());
    CHECK_FALSE(back->has_kiln());
    if (status == v1::PASSED) {
      CHECK(back->evaluation().performance().latency_ms() == 0.0042);
      CHECK(back->evaluation().performance().reference_latency_ms() == 0.0123);
      CHECK(back->evaluation().performance().speedup_factor() ==
            t.evaluation().performance().speedup_factor());
    } else {
      CHECK_FALSE(back->evaluation().has_performance());
    }
    if (status == v1::PASSED || status == v1::INCORRECT_NUMERICAL || status == v1::REJECTED) {
      CHECK(back->evaluation().correctness().max_absolute_error() == 0.25);
      CHECK(std::isnan(back->evaluation().correctness().max_relative_error()));
    }
    // Exporting what was read gives the same line (the log head is not repeated).
    CHECK(TraceToJson(*back, /*export_kiln_extensions=*/false) == line);
  }
}

TEST_CASE("a flashinfer-bench trace whose log merely mentions a kiln status keeps its status") {
  v1::Trace t = ArchivedTrace(v1::COMPILE_ERROR);
  t.mutable_evaluation()->set_log("kiln status: CANCELLED: copied from elsewhere");
  absl::StatusOr<v1::Trace> back =
      ParseTraceJson(TraceToJson(t, /*export_kiln_extensions=*/false));
  REQUIRE(back.ok());
  // CANCELLED is exported as TIMEOUT, never as COMPILE_ERROR: the line is not kiln's.
  CHECK(back->evaluation().status() == v1::COMPILE_ERROR);
}

}  // namespace
}  // namespace kiln
