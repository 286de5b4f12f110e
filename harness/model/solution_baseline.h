// Baselines that name a registered solution: "solution:NAME" in EvaluateRequest.baselines,
// `kiln submit --baseline`, `kiln report --baseline` and a campaign's `baseline:`. NAME is the
// name the solution is registered under for the run's definition (PutSolution).
#ifndef KILN_HARNESS_MODEL_SOLUTION_BASELINE_H_
#define KILN_HARNESS_MODEL_SOLUTION_BASELINE_H_

#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace kiln {

inline constexpr absl::string_view kSolutionBaselinePrefix = "solution:";

// NAME of "solution:NAME" (possibly empty), or nullopt when `baseline` does not start with
// "solution:".
std::optional<std::string> SolutionBaselineName(absl::string_view baseline);

// "solution:" + name.
std::string SolutionBaseline(absl::string_view name);

// A registry name: 1 to 128 letters, digits and "_.+-" (flashinfer-bench's names, e.g.
// "flashinfer_wrapper_9c4b1e" or "gpt-5.2_gemm_n128_k2048_cuda_optimized_r7_c0_high").
// INVALID_ARGUMENT "<where>: ..." otherwise.
absl::Status ValidateSolutionName(absl::string_view name, absl::string_view where);

}  // namespace kiln

#endif  // KILN_HARNESS_MODEL_SOLUTION_BASELINE_H_
