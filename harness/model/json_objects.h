// Conversions between parsed JSON objects and the kiln protobuf messages, for documents that
// nest inside one another (a Solution inside a Definition's native_reference, a Workload inside a
// Trace). Internal to harness/model; json_interop.h has the string-level entry points.
#ifndef KILN_HARNESS_MODEL_JSON_OBJECTS_H_
#define KILN_HARNESS_MODEL_JSON_OBJECTS_H_

#include <string_view>

#include "absl/status/status.h"
#include "harness/model/json_fields.h"
#include "kiln/v1/types.pb.h"

namespace kiln::json_internal {

// Each reader fills `*out` from `j`; `path` names `j` in error messages ("solution",
// "definition.native_reference", "trace.workload").
absl::Status ReadSolution(const Json& j, absl::string_view path, v1::Solution* out);
Json WriteSolution(const v1::Solution& s);

absl::Status ReadWorkload(const Json& j, absl::string_view path, v1::Workload* out);
Json WriteWorkload(const v1::Workload& w);

}  // namespace kiln::json_internal

#endif  // KILN_HARNESS_MODEL_JSON_OBJECTS_H_
