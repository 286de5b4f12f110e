// Pieces shared by the validators of definitions (validate.cc) and solutions
// (validate_solution.cc). Internal to harness/model.
#ifndef KILN_HARNESS_MODEL_VALIDATE_INTERNAL_H_
#define KILN_HARNESS_MODEL_VALIDATE_INTERNAL_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "harness/model/validate.h"
#include "kiln/v1/types.pb.h"

namespace kiln::validate_internal {

// INVALID_ARGUMENT "<path>: <message>".
absl::Status Invalid(absl::string_view path, absl::string_view message);

// Source paths relative, without "..", unique; the entry point "file::function" names one of
// them. With `limits`, the number and total size of the sources are bounded too. `path` names
// the solution ("solution", "definition.native_reference").
absl::Status ValidateSourcesAndEntryPoint(const v1::Solution& s, absl::string_view path,
                                          const Limits* limits);

}  // namespace kiln::validate_internal

#endif  // KILN_HARNESS_MODEL_VALIDATE_INTERNAL_H_
