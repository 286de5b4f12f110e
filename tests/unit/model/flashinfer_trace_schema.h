// flashinfer-bench's Trace schema, transcribed as a checker for the documents kiln exports.
//
// Source: flashinfer-ai/flashinfer-bench, flashinfer_bench/data/trace.py (Trace, Evaluation,
// EvaluationStatus, Environment, Correctness, Performance) and flashinfer_bench/data/workload.py
// (Workload, RandomInput, ScalarInput, SafetensorsInput); docs/flashinfer-trace/trace.mdx.
//   Trace:       definition NonEmptyString; workload Workload; solution Optional[str] = None;
//                evaluation Optional[Evaluation] = None.
//   Workload:    axes Dict[str, NonNegativeInt]; inputs Dict[str, InputSpec]; uuid NonEmptyString.
//   InputSpec:   {type: "random"} | {type: "scalar", value: int|float|bool} |
//                {type: "safetensors", path: NonEmptyString, tensor_key: NonEmptyString}.
//   Evaluation:  status EvaluationStatus; environment Environment; timestamp NonEmptyString (ISO
//                8601 recommended); log str = ""; correctness Optional[Correctness];
//                performance Optional[Performance]. Model validator: PASSED needs both;
//                INCORRECT_NUMERICAL needs correctness and no performance; every other status
//                neither.
//   EvaluationStatus: PASSED INCORRECT_SHAPE INCORRECT_NUMERICAL INCORRECT_DTYPE RUNTIME_ERROR
//                COMPILE_ERROR TIMEOUT.
//   Environment: hardware NonEmptyString; libs Dict[str, str].
//   Correctness: max_relative_error, max_absolute_error float >= 0 or NaN (written "NaN":
//                ser_json_inf_nan="strings"); extra Optional[Dict[str, Any]].
//   Performance: latency_ms, reference_latency_ms, speedup_factor float ge=0.0; profile
//                Optional[List[KernelProfile]].
// Its models do not set extra="forbid" (pydantic ignores unknown keys); kiln exports none, and the
// checker reports any as a violation so that no kiln-only data leaks into an export.
#ifndef KILN_TESTS_UNIT_MODEL_FLASHINFER_TRACE_SCHEMA_H_
#define KILN_TESTS_UNIT_MODEL_FLASHINFER_TRACE_SCHEMA_H_

#include <cmath>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

namespace kiln::testing {

inline const std::set<std::string>& FlashinferStatuses() {
  static const std::set<std::string> kStatuses = {
      "PASSED",        "INCORRECT_SHAPE", "INCORRECT_NUMERICAL", "INCORRECT_DTYPE",
      "RUNTIME_ERROR", "COMPILE_ERROR",   "TIMEOUT"};
  return kStatuses;
}

// Every way `trace` departs from flashinfer-bench's Trace schema; empty when it conforms.
inline std::vector<std::string> FlashinferTraceViolations(const nlohmann::ordered_json& trace) {
  using Json = nlohmann::ordered_json;
  std::vector<std::string> v;
  auto only_keys = [&v](const Json& j, const std::string& path, const std::set<std::string>& keys) {
    for (const auto& [k, unused] : j.items()) {
      if (keys.count(k) == 0) v.push_back(path + ": unknown key '" + k + "'");
    }
  };
  auto non_empty_string = [&v](const Json& j, const std::string& key, const std::string& path) {
    if (!j.contains(key) || !j[key].is_string() || j[key].get<std::string>().empty()) {
      v.push_back(path + "." + key + ": must be a non-empty string");
    }
  };
  // A float field: a JSON number, or one of the strings pydantic reads as a float.
  auto float_value = [](const Json& j, double* out) {
    if (j.is_number()) {
      *out = j.get<double>();
      return true;
    }
    if (j.is_string()) {
      const std::string s = j.get<std::string>();
      if (s == "NaN") *out = std::nan("");
      else if (s == "Infinity") *out = INFINITY;
      else if (s == "-Infinity") *out = -INFINITY;
      else return false;
      return true;
    }
    return false;
  };

  if (!trace.is_object()) return {"trace: must be an object"};
  only_keys(trace, "trace", {"definition", "workload", "solution", "evaluation"});
  non_empty_string(trace, "definition", "trace");
  if (trace.contains("solution") && !trace["solution"].is_null() && !trace["solution"].is_string()) {
    v.push_back("trace.solution: must be a string or null");
  }

  if (!trace.contains("workload") || !trace["workload"].is_object()) {
    v.push_back("trace.workload: must be an object");
  } else {
    const Json& w = trace["workload"];
    only_keys(w, "trace.workload", {"uuid", "axes", "inputs"});
    non_empty_string(w, "uuid", "trace.workload");
    if (!w.contains("axes") || !w["axes"].is_object()) {
      v.push_back("trace.workload.axes: must be an object");
    } else {
      for (const auto& [name, value] : w["axes"].items()) {
        if (!value.is_number_integer() || value.get<long long>() < 0) {
          v.push_back("trace.workload.axes." + name + ": must be a non-negative integer");
        }
      }
    }
    if (!w.contains("inputs") || !w["inputs"].is_object()) {
      v.push_back("trace.workload.inputs: must be an object");
    } else {
      for (const auto& [name, in] : w["inputs"].items()) {
        const std::string path = "trace.workload.inputs." + name;
        const std::string type = in.is_object() && in.contains("type") && in["type"].is_string()
                                     ? in["type"].get<std::string>()
                                     : "";
        if (type == "random") {
          only_keys(in, path, {"type"});
        } else if (type == "scalar") {
          only_keys(in, path, {"type", "value"});
          if (!in.contains("value") || !(in["value"].is_number() || in["value"].is_boolean())) {
            v.push_back(path + ".value: must be an int, float or bool");
          }
        } else if (type == "safetensors") {
          only_keys(in, path, {"type", "path", "tensor_key"});
          non_empty_string(in, "path", path);
          non_empty_string(in, "tensor_key", path);
        } else {
          v.push_back(path + ".type: must be random, scalar or safetensors");
        }
      }
    }
  }

  if (!trace.contains("evaluation") || trace["evaluation"].is_null()) return v;
  const Json& e = trace["evaluation"];
  if (!e.is_object()) {
    v.push_back("trace.evaluation: must be an object or null");
    return v;
  }
  only_keys(e, "trace.evaluation",
            {"status", "environment", "timestamp", "log", "correctness", "performance"});
  const std::string status =
      e.contains("status") && e["status"].is_string() ? e["status"].get<std::string>() : "";
  if (FlashinferStatuses().count(status) == 0) {
    v.push_back("trace.evaluation.status: '" + status + "' is not a flashinfer-bench status");
  }
  non_empty_string(e, "timestamp", "trace.evaluation");
  if (e.contains("log") && !e["log"].is_string()) v.push_back("trace.evaluation.log: not a string");
  if (!e.contains("environment") || !e["environment"].is_object()) {
    v.push_back("trace.evaluation.environment: required object");
  } else {
    const Json& env = e["environment"];
    only_keys(env, "trace.evaluation.environment", {"hardware", "libs"});
    non_empty_string(env, "hardware", "trace.evaluation.environment");
    if (env.contains("libs")) {
      if (!env["libs"].is_object()) {
        v.push_back("trace.evaluation.environment.libs: must be an object");
      } else {
        for (const auto& [lib, version] : env["libs"].items()) {
          if (!version.is_string()) {
            v.push_back("trace.evaluation.environment.libs." + lib + ": must be a string");
          }
        }
      }
    }
  }
  const bool has_correctness = e.contains("correctness") && !e["correctness"].is_null();
  const bool has_performance = e.contains("performance") && !e["performance"].is_null();
  const bool wants_correctness = status == "PASSED" || status == "INCORRECT_NUMERICAL";
  const bool wants_performance = status == "PASSED";
  if (has_correctness != wants_correctness) {
    v.push_back("trace.evaluation.correctness: " +
                std::string(wants_correctness ? "required" : "must be null") + " for " + status);
  }
  if (has_performance != wants_performance) {
    v.push_back("trace.evaluation.performance: " +
                std::string(wants_performance ? "required" : "must be null") + " for " + status);
  }
  if (has_correctness) {
    const Json& c = e["correctness"];
    const std::string path = "trace.evaluation.correctness";
    if (!c.is_object()) {
      v.push_back(path + ": must be an object");
    } else {
      only_keys(c, path, {"max_relative_error", "max_absolute_error", "extra"});
      for (const char* key : {"max_relative_error", "max_absolute_error"}) {
        double x = 0;
        if (c.contains(key) && (!float_value(c[key], &x) || (!std::isnan(x) && x < 0))) {
          v.push_back(path + "." + key + ": must be a float >= 0 or NaN");
        }
      }
      if (c.contains("extra") && !c["extra"].is_null() && !c["extra"].is_object()) {
        v.push_back(path + ".extra: must be an object or null");
      }
    }
  }
  if (has_performance) {
    const Json& p = e["performance"];
    const std::string path = "trace.evaluation.performance";
    if (!p.is_object()) {
      v.push_back(path + ": must be an object");
    } else {
      only_keys(p, path, {"latency_ms", "reference_latency_ms", "speedup_factor", "profile"});
      for (const char* key : {"latency_ms", "reference_latency_ms", "speedup_factor"}) {
        double x = 0;
        // ge=0.0 refuses NaN and negatives.
        if (p.contains(key) && (!float_value(p[key], &x) || std::isnan(x) || x < 0)) {
          v.push_back(path + "." + key + ": must be a float >= 0");
        }
      }
    }
  }
  return v;
}

}  // namespace kiln::testing

#endif  // KILN_TESTS_UNIT_MODEL_FLASHINFER_TRACE_SCHEMA_H_
