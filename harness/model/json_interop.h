// Reading and writing flashinfer-bench's JSON documents (Definition, Workload, Solution, Trace)
// exactly: field names, key order (= positional calling order for inputs/outputs), status names,
// NaN/Inf written as strings in correctness. Parse errors name the offending field with a JSON
// path, e.g. "definition.inputs.weight.dtype: unknown dtype 'float13'".
#ifndef KILN_HARNESS_MODEL_JSON_INTEROP_H_
#define KILN_HARNESS_MODEL_JSON_INTEROP_H_

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "kiln/v1/types.pb.h"

namespace kiln {

// Definitions. The kiln extensions native_reference and tolerance are read when present;
// `export_kiln_extensions=false` drops them (flashinfer-bench export).
absl::StatusOr<v1::Definition> ParseDefinitionJson(std::string_view json);
std::string DefinitionToJson(const v1::Definition& def, bool export_kiln_extensions = true,
                             int indent = 2);

// A Workload: accepts either a bare workload object {"uuid","axes","inputs"} or a trace line
// {"definition","solution","workload":{...},"evaluation"} as found in workloads/*.jsonl.
absl::StatusOr<v1::Workload> ParseWorkloadJson(std::string_view json);
std::string WorkloadToJson(const v1::Workload& w, int indent = -1);
// A JSONL file's content: one workload (or trace line) per non-empty line. Errors name the line.
// `definition_name`, when non-empty, must match each trace line's "definition".
absl::StatusOr<std::vector<v1::Workload>> ParseWorkloadsJsonl(std::string_view content,
                                                              std::string_view definition_name);

absl::StatusOr<v1::Solution> ParseSolutionJson(std::string_view json);
std::string SolutionToJson(const v1::Solution& s, int indent = 2);

// Traces. With `export_kiln_extensions` false the document is one flashinfer-bench's parser
// accepts (flashinfer_bench/data/trace.py): no "kiln" member, kiln-only statuses mapped by
// FlashinferStatus() with the exact one at the head of the log ("kiln status: REJECTED:
// <reason>") and, for REJECTED, in correctness.extra {"kiln_status", "kiln_reason"};
// correctness only on PASSED / INCORRECT_NUMERICAL and performance only on PASSED (as its
// Evaluation validator requires); empty hardware or timestamp written as "unknown"; a trace
// without a verdict gets a null evaluation. ParseTraceJson restores the exact kiln status of
// such an exported trace.
absl::StatusOr<v1::Trace> ParseTraceJson(std::string_view json);
std::string TraceToJson(const v1::Trace& t, bool export_kiln_extensions = true, int indent = -1);

// The flashinfer-bench status a kiln status is exported as: itself for the seven official ones,
// REJECTED -> INCORRECT_NUMERICAL, CANCELLED -> TIMEOUT, INTERRUPTED -> RUNTIME_ERROR.
v1::EvaluationStatus FlashinferStatus(v1::EvaluationStatus s);

// Status names as flashinfer-bench spells them ("PASSED", "INCORRECT_NUMERICAL", ...).
std::string_view StatusName(v1::EvaluationStatus s);
absl::StatusOr<v1::EvaluationStatus> ParseStatusName(std::string_view name);

// The stage a run is in, as people read it: "queued", "compiling", "verifying", "timing",
// "done"; "unknown" for anything else.
const char* RunStateName(v1::RunState state);

}  // namespace kiln

#endif  // KILN_HARNESS_MODEL_JSON_INTEROP_H_
