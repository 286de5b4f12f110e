// Trace documents as flashinfer-bench writes them: {"definition", "workload", "solution",
// "evaluation"}, unset parts as null, non-finite metrics as "NaN" / "Infinity" / "-Infinity".
// kiln's TraceDetail rides along under "kiln" (protobuf JSON mapping, proto field names).
//
// Export (export_kiln_extensions = false) writes what flashinfer-bench's own parser accepts
// (flashinfer-ai/flashinfer-bench, flashinfer_bench/data/trace.py: Trace, Evaluation,
// EvaluationStatus, Environment, Correctness, Performance; flashinfer_bench/data/workload.py):
//   - status one of its seven; kiln's REJECTED, CANCELLED and INTERRUPTED mapped by
//     FlashinferStatus(), the exact status at the head of the log ("kiln status: REJECTED:
//     <reason>") and, where the status admits correctness, in correctness.extra.kiln_status;
//   - Evaluation's model validator: correctness required for PASSED and INCORRECT_NUMERICAL and
//     null otherwise, performance required for PASSED and null otherwise;
//   - environment.hardware and timestamp are non-empty strings ("unknown" when kiln has none);
//   - Performance fields are >= 0 (non-finite or negative values are written as 0, its default);
//     Correctness errors are >= 0 or NaN;
//   - no "kiln" member (pydantic would ignore it; kiln extensions are not exported).
#include <cmath>
#include <map>
#include <optional>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "google/protobuf/util/json_util.h"
#include "harness/model/json_interop.h"
#include "harness/model/json_objects.h"

namespace kiln {
namespace json_internal {
namespace {

// Where an exported trace keeps kiln's exact status (see FlashinferStatus).
constexpr char kKilnStatusKey[] = "kiln_status";
constexpr char kKilnReasonKey[] = "kiln_reason";
constexpr char kKilnStatusLogPrefix[] = "kiln status: ";

// The kiln-only status `name` when an exported trace of that status would carry `official`.
std::optional<v1::EvaluationStatus> KilnOnlyStatus(std::string_view name,
                                                   v1::EvaluationStatus official) {
  absl::StatusOr<v1::EvaluationStatus> s = ParseStatusName(name);
  if (!s.ok() || *s == official || FlashinferStatus(*s) != official) return std::nullopt;
  return *s;
}

// A trace that kiln exported comes back with kiln's exact status: from correctness.extra's
// kiln_status, else from the log's first line "kiln status: NAME[: reason]".
void RestoreKilnStatus(const Json* extra, v1::Evaluation* out) {
  if (extra != nullptr && extra->is_object()) {
    if (const Json* name = Find(*extra, kKilnStatusKey); name != nullptr && name->is_string()) {
      if (auto s = KilnOnlyStatus(name->get<std::string>(), out->status())) {
        out->set_status(*s);
        return;
      }
    }
  }
  std::string_view log = out->log();
  const std::string_view prefix = kKilnStatusLogPrefix;
  if (log.substr(0, prefix.size()) != prefix) return;
  log.remove_prefix(prefix.size());
  std::string_view name = log.substr(0, log.find_first_of(":\n"));
  if (auto s = KilnOnlyStatus(name, out->status())) out->set_status(*s);
}

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
  const Json* extra = nullptr;
  if (const Json* c = Find(j, "correctness"); c != nullptr && !c->is_null()) {
    KILN_JSON_RETURN_IF_ERROR(
        ReadCorrectness(*c, Child(path, "correctness"), out->mutable_correctness()));
    extra = Find(*c, "extra");
  }
  if (const Json* p = Find(j, "performance"); p != nullptr && !p->is_null()) {
    KILN_JSON_RETURN_IF_ERROR(
        ReadPerformance(*p, Child(path, "performance"), out->mutable_performance()));
  }
  RestoreKilnStatus(extra, out);
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

// The statuses an exported trace may carry its metrics with (flashinfer-bench's Evaluation
// validator: correctness for PASSED and INCORRECT_NUMERICAL, performance for PASSED only).
bool AdmitsCorrectness(v1::EvaluationStatus s) {
  return s == v1::PASSED || s == v1::INCORRECT_NUMERICAL;
}

Json WriteLibs(const v1::Environment& env) {
  Json libs = Json::object();
  // Protobuf maps have no order; sorted keys keep the output deterministic.
  for (const auto& [name, version] :
       std::map<std::string, std::string>(env.libs().begin(), env.libs().end())) {
    libs[name] = version;
  }
  return libs;
}

// kiln's own evaluation, statuses and metrics as they are.
Json WriteEvaluation(const v1::Evaluation& e) {
  Json j = Json::object();
  j["status"] = std::string(StatusName(e.status()));
  j["environment"] = Json{{"hardware", e.environment().hardware()},
                          {"libs", WriteLibs(e.environment())}};
  j["timestamp"] = e.timestamp();
  j["log"] = e.log();
  j["correctness"] = e.has_correctness() ? WriteCorrectness(e.correctness()) : Json(nullptr);
  j["performance"] = e.has_performance() ? WritePerformance(e.performance()) : Json(nullptr);
  return j;
}

// Performance for export: Performance's fields are `ge=0.0` floats in flashinfer-bench.
double NonNegativeFinite(double v) { return std::isfinite(v) && v > 0 ? v : 0.0; }

// The evaluation as flashinfer-bench accepts it (see the file comment).
Json WriteExportedEvaluation(const v1::Trace& t) {
  const v1::Evaluation& e = t.evaluation();
  const v1::EvaluationStatus official = FlashinferStatus(e.status());
  const bool kiln_only = official != e.status();
  Json j = Json::object();
  j["status"] = std::string(StatusName(official));
  const std::string& hardware = e.environment().hardware();
  j["environment"] = Json{{"hardware", hardware.empty() ? "unknown" : hardware},
                          {"libs", WriteLibs(e.environment())}};
  j["timestamp"] = e.timestamp().empty() ? "unknown" : e.timestamp();
  std::string log = e.log();
  if (kiln_only) {
    std::string head = absl::StrCat(kKilnStatusLogPrefix, std::string(StatusName(e.status())));
    if (!t.kiln().reason().empty()) absl::StrAppend(&head, ": ", t.kiln().reason());
    // A trace read back from an export already starts with it.
    if (!absl::StartsWith(log, head)) log = log.empty() ? head : absl::StrCat(head, "\n", log);
  }
  j["log"] = log;
  if (AdmitsCorrectness(official)) {
    // Required here; NaN says "not measured" (flashinfer-bench accepts NaN errors).
    Json c = e.has_correctness()
                 ? WriteCorrectness(e.correctness())
                 : Json{{"max_relative_error", WriteMetric(std::nan(""))},
                        {"max_absolute_error", WriteMetric(std::nan(""))}};
    if (kiln_only) {
      if (!c.contains("extra")) c["extra"] = Json::object();
      c["extra"][kKilnStatusKey] = std::string(StatusName(e.status()));
      if (!t.kiln().reason().empty()) c["extra"][kKilnReasonKey] = t.kiln().reason();
    }
    j["correctness"] = std::move(c);
  } else {
    j["correctness"] = nullptr;
  }
  if (official == v1::PASSED) {
    const v1::Performance& p = e.performance();  // all 0 when absent: flashinfer's defaults
    j["performance"] = Json{{"latency_ms", NonNegativeFinite(p.latency_ms())},
                            {"reference_latency_ms", NonNegativeFinite(p.reference_latency_ms())},
                            {"speedup_factor", NonNegativeFinite(p.speedup_factor())}};
  } else {
    j["performance"] = nullptr;
  }
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
  if (!t.has_evaluation()) {
    j["evaluation"] = nullptr;
  } else if (export_kiln_extensions) {
    j["evaluation"] = WriteEvaluation(t.evaluation());
  } else {
    // A trace without a verdict is no evaluation flashinfer-bench knows.
    j["evaluation"] = t.evaluation().status() == v1::STATUS_UNSPECIFIED
                          ? Json(nullptr)
                          : WriteExportedEvaluation(t);
  }
  if (export_kiln_extensions && t.has_kiln()) j["kiln"] = WriteTraceDetail(t.kiln());
  return j;
}

}  // namespace
}  // namespace json_internal

// Why each kiln-only status maps where it does: docs/flashinfer-export.md.
v1::EvaluationStatus FlashinferStatus(v1::EvaluationStatus s) {
  switch (s) {
    case v1::REJECTED:  // outputs kiln cannot credit; the one failure status with correctness
      return v1::INCORRECT_NUMERICAL;
    case v1::CANCELLED:  // stopped from outside before it finished, as by a deadline
      return v1::TIMEOUT;
    case v1::INTERRUPTED:  // the evaluating process died mid-run
      return v1::RUNTIME_ERROR;
    default:
      return s;
  }
}

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
