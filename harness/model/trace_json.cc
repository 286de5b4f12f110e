// Trace documents as flashinfer-bench writes them: {"definition", "workload", "solution",
// "evaluation"}, unset parts as null, non-finite metrics as "NaN" / "Infinity" / "-Infinity".
// kiln's TraceDetail rides along under "kiln" (protobuf JSON mapping, proto field names).
#include <map>

#include "absl/strings/str_cat.h"
#include "google/protobuf/util/json_util.h"
#include "harness/model/json_interop.h"
#include "harness/model/json_objects.h"

namespace kiln {
namespace json_internal {
namespace {

absl::Status ReadEnvironment(const Json& j, absl::string_view path, v1::Environment* out) {
  KILN_JSON_RETURN_IF_ERROR(ExpectObject(j, path));
  KILN_JSON_RETURN_IF_ERROR(ReadOptionalStringMember(j, "hardware", path, out->mutable_hardware()));
  const Json* libs = Find(j, "libs");
  if (libs == nullptr || libs->is_null()) return absl::OkStatus();
  const std::string libs_path = Child(path, "libs");
  KILN_JSON_RETURN_IF_ERROR(ExpectObject(*libs, libs_path));
  for (const auto& [name, version] : libs->items()) {
    KILN_JSON_RETURN_IF_ERROR(
        ReadString(version, Child(libs_path, name), &(*out->mutable_libs())[name]));
  }
  return absl::OkStatus();
}

// Reads number members `keys` of object `j` into `values` (absent ones stay 0, as in
// flashinfer-bench's defaults).
template <size_t N>
absl::Status ReadMetrics(const Json& j, absl::string_view path,
                         const std::array<const char*, N>& keys, std::array<double, N>* values) {
  KILN_JSON_RETURN_IF_ERROR(ExpectObject(j, path));
  for (size_t i = 0; i < N; ++i) {
    (*values)[i] = 0;
    if (const Json* v = Find(j, keys[i]); v != nullptr) {
      KILN_JSON_RETURN_IF_ERROR(ReadMetric(*v, Child(path, keys[i]), &(*values)[i]));
    }
  }
  return absl::OkStatus();
}

constexpr std::array<const char*, 2> kCorrectnessKeys = {"max_relative_error",
                                                         "max_absolute_error"};
constexpr std::array<const char*, 3> kPerformanceKeys = {"latency_ms", "reference_latency_ms",
                                                         "speedup_factor"};

absl::Status ReadCorrectness(const Json& j, absl::string_view path, v1::Correctness* out) {
  std::array<double, 2> values;
  KILN_JSON_RETURN_IF_ERROR(ReadMetrics(j, path, kCorrectnessKeys, &values));
  out->set_max_relative_error(values[0]);
  out->set_max_absolute_error(values[1]);
  const Json* extra = Find(j, "extra");
  if (extra == nullptr || extra->is_null()) return absl::OkStatus();
  KILN_JSON_RETURN_IF_ERROR(ExpectObject(*extra, Child(path, "extra")));
  out->set_extra_json(Dump(*extra, -1));
  return absl::OkStatus();
}

absl::Status ReadPerformance(const Json& j, absl::string_view path, v1::Performance* out) {
  std::array<double, 3> values;
  KILN_JSON_RETURN_IF_ERROR(ReadMetrics(j, path, kPerformanceKeys, &values));
  out->set_latency_ms(values[0]);
  out->set_reference_latency_ms(values[1]);
  out->set_speedup_factor(values[2]);
  return absl::OkStatus();
}

absl::Status ReadEvaluation(const Json& j, absl::string_view path, v1::Evaluation* out) {
  KILN_JSON_RETURN_IF_ERROR(ExpectObject(j, path));
  std::string status_name;
  KILN_JSON_RETURN_IF_ERROR(ReadStringMember(j, "status", path, &status_name));
  absl::StatusOr<v1::EvaluationStatus> status = ParseStatusName(status_name);
  if (!status.ok()) return FieldError(Child(path, "status"), status.status().message());
  out->set_status(*status);
  if (const Json* env = Find(j, "environment"); env != nullptr && !env->is_null()) {
    KILN_JSON_RETURN_IF_ERROR(
        ReadEnvironment(*env, Child(path, "environment"), out->mutable_environment()));
  }
  KILN_JSON_RETURN_IF_ERROR(
      ReadOptionalStringMember(j, "timestamp", path, out->mutable_timestamp()));
  KILN_JSON_RETURN_IF_ERROR(ReadOptionalStringMember(j, "log", path, out->mutable_log()));
  if (const Json* c = Find(j, "correctness"); c != nullptr && !c->is_null()) {
    KILN_JSON_RETURN_IF_ERROR(
        ReadCorrectness(*c, Child(path, "correctness"), out->mutable_correctness()));
  }
  if (const Json* p = Find(j, "performance"); p != nullptr && !p->is_null()) {
    KILN_JSON_RETURN_IF_ERROR(
        ReadPerformance(*p, Child(path, "performance"), out->mutable_performance()));
  }
  return absl::OkStatus();
}

absl::Status ReadTraceDetail(const Json& j, absl::string_view path, v1::TraceDetail* out) {
  KILN_JSON_RETURN_IF_ERROR(ExpectObject(j, path));
  google::protobuf::util::JsonParseOptions options;
  options.ignore_unknown_fields = true;  // a newer kiln may add fields
  google::protobuf::util::Status s =
      google::protobuf::util::JsonStringToMessage(Dump(j, -1), out, options);
  if (!s.ok()) return FieldError(path, s.message().ToString());
  return absl::OkStatus();
}

absl::Status ReadTrace(const Json& j, v1::Trace* out) {
  constexpr absl::string_view kPath = "trace";
  KILN_JSON_RETURN_IF_ERROR(ExpectObject(j, kPath));
  KILN_JSON_RETURN_IF_ERROR(ReadStringMember(j, "definition", kPath, out->mutable_definition()));
  const Json* workload = nullptr;
  KILN_JSON_RETURN_IF_ERROR(Require(j, "workload", kPath, &workload));
  KILN_JSON_RETURN_IF_ERROR(
      ReadWorkload(*workload, Child(kPath, "workload"), out->mutable_workload()));
  KILN_JSON_RETURN_IF_ERROR(
      ReadOptionalStringMember(j, "solution", kPath, out->mutable_solution()));
  if (const Json* e = Find(j, "evaluation"); e != nullptr && !e->is_null()) {
    KILN_JSON_RETURN_IF_ERROR(
        ReadEvaluation(*e, Child(kPath, "evaluation"), out->mutable_evaluation()));
  }
  if (const Json* k = Find(j, "kiln"); k != nullptr && !k->is_null()) {
    KILN_JSON_RETURN_IF_ERROR(ReadTraceDetail(*k, Child(kPath, "kiln"), out->mutable_kiln()));
  }
  return absl::OkStatus();
}

Json WriteCorrectness(const v1::Correctness& c) {
  Json j = Json::object();
  j["max_relative_error"] = WriteMetric(c.max_relative_error());
  j["max_absolute_error"] = WriteMetric(c.max_absolute_error());
  if (!c.extra_json().empty()) {
    Json extra = Json::parse(c.extra_json(), nullptr, /*allow_exceptions=*/false);
    // extra_json is written by kiln; text that is not an object is kept, not dropped.
    j["extra"] = extra.is_object() ? std::move(extra) : Json{{"text", c.extra_json()}};
  }
  return j;
}

Json WritePerformance(const v1::Performance& p) {
  Json j = Json::object();
  j["latency_ms"] = WriteMetric(p.latency_ms());
  j["reference_latency_ms"] = WriteMetric(p.reference_latency_ms());
  j["speedup_factor"] = WriteMetric(p.speedup_factor());
  return j;
}

bool IsKilnOnlyStatus(v1::EvaluationStatus s) {
  return s == v1::REJECTED || s == v1::CANCELLED || s == v1::INTERRUPTED;
}

// flashinfer-bench knows seven statuses and refuses a RUNTIME_ERROR that carries correctness or
// performance: kiln's own statuses are written as RUNTIME_ERROR without them, and the exact
// status and its reason lead the log so that nothing is lost and the file still loads there.
void MapKilnOnlyStatus(const v1::Trace& t, Json* evaluation) {
  (*evaluation)["status"] = std::string(StatusName(v1::RUNTIME_ERROR));
  (*evaluation)["correctness"] = nullptr;
  (*evaluation)["performance"] = nullptr;
  std::string head = "kiln status: " + std::string(StatusName(t.evaluation().status()));
  if (!t.kiln().reason().empty()) head += ": " + t.kiln().reason();
  const std::string& log = t.evaluation().log();
  (*evaluation)["log"] = log.empty() ? head : head + "\n" + log;
}

Json WriteEvaluation(const v1::Trace& t, bool export_kiln_extensions) {
  const v1::Evaluation& e = t.evaluation();
  Json libs = Json::object();
  // Protobuf maps have no order; sorted keys keep the output deterministic.
  for (const auto& [name, version] : std::map<std::string, std::string>(
           e.environment().libs().begin(), e.environment().libs().end())) {
    libs[name] = version;
  }
  Json j = Json::object();
  j["status"] = std::string(StatusName(e.status()));
  j["environment"] = Json{{"hardware", e.environment().hardware()}, {"libs", std::move(libs)}};
  j["timestamp"] = e.timestamp();
  j["log"] = e.log();
  j["correctness"] = e.has_correctness() ? WriteCorrectness(e.correctness()) : Json(nullptr);
  j["performance"] = e.has_performance() ? WritePerformance(e.performance()) : Json(nullptr);
  if (!export_kiln_extensions && IsKilnOnlyStatus(e.status())) MapKilnOnlyStatus(t, &j);
  return j;
}

Json WriteTraceDetail(const v1::TraceDetail& detail) {
  google::protobuf::util::JsonPrintOptions options;
  options.preserve_proto_field_names = true;
  std::string text;
  // Printing a message this binary compiled cannot fail.
  (void)google::protobuf::util::MessageToJsonString(detail, &text, options);
  Json j = Json::parse(text, nullptr, /*allow_exceptions=*/false);
  return j.is_discarded() ? Json::object() : j;
}

Json WriteTrace(const v1::Trace& t, bool export_kiln_extensions) {
  Json j = Json::object();
  j["definition"] = t.definition();
  j["workload"] = WriteWorkload(t.workload());
  j["solution"] = t.solution().empty() ? Json(nullptr) : Json(t.solution());
  j["evaluation"] = t.has_evaluation() ? WriteEvaluation(t, export_kiln_extensions) : Json(nullptr);
  if (export_kiln_extensions && t.has_kiln()) j["kiln"] = WriteTraceDetail(t.kiln());
  return j;
}

}  // namespace
}  // namespace json_internal

absl::StatusOr<v1::Trace> ParseTraceJson(std::string_view json) {
  absl::StatusOr<json_internal::Json> doc =
      json_internal::ParseDocument(json_internal::AsAbsl(json));
  if (!doc.ok()) return doc.status();
  v1::Trace t;
  KILN_JSON_RETURN_IF_ERROR(json_internal::ReadTrace(*doc, &t));
  return t;
}

std::string TraceToJson(const v1::Trace& t, bool export_kiln_extensions, int indent) {
  return json_internal::Dump(json_internal::WriteTrace(t, export_kiln_extensions), indent);
}

}  // namespace kiln
