// Semantic checks of definitions, workloads and solutions before anything is accepted. Every
// error is INVALID_ARGUMENT and its message starts with the path of the offending field, e.g.
// "workload[3].axes: missing var axis 'batch_size'" or "solution.sources[1].path: '..' not allowed".
#ifndef KILN_HARNESS_MODEL_VALIDATE_H_
#define KILN_HARNESS_MODEL_VALIDATE_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "kiln/v1/types.pb.h"

namespace kiln {

struct Limits {
  int64_t max_source_bytes = 1 << 20;           // sum of all source contents
  int64_t max_source_files = 64;
  int64_t max_workload_bytes = int64_t{4} << 30;  // inputs + outputs of one workload
  int64_t max_workloads = 1024;
};

// Names unique, dtypes known, every shape entry names an axis, const axes have value >= 0 (and
// > 0 when used in a shape), at least one output, native_reference (when present) has language
// cpp or cuda and an entry point.
absl::Status ValidateDefinition(const v1::Definition& def);

// Every var axis given exactly once with a value >= 0, no extra or const axes, every input named
// by the definition given (random | scalar | safetensors) and no unknown ones, scalars only for
// scalar inputs, total tensor bytes within limits. `where` prefixes messages ("workload[2]").
absl::Status ValidateWorkload(const v1::Definition& def, const v1::Workload& w,
                              const Limits& limits, const std::string& where = "workload");

// Definition matches (when set), language known, entry point "file::function" naming one of the
// sources, paths relative without "..", no duplicates, sizes within limits.
absl::Status ValidateSolution(const v1::Definition& def, const v1::Solution& s,
                              const Limits& limits);

// Concrete shape of a tensor for a workload ({} for a scalar).
absl::StatusOr<std::vector<int64_t>> ResolveShape(const v1::Definition& def,
                                                  const v1::TensorSpec& t,
                                                  const v1::Workload& w);
// Product of dims (1 for a scalar).
int64_t NumElements(const std::vector<int64_t>& shape);
// Total bytes of all inputs and outputs of the workload.
absl::StatusOr<int64_t> WorkloadBytes(const v1::Definition& def, const v1::Workload& w);
// The same in floating point, never saturating: the figure an error message gives.
double WorkloadBytesApprox(const v1::Definition& def, const v1::Workload& w);
// Total bytes of its outputs alone.
absl::StatusOr<int64_t> OutputBytes(const v1::Definition& def, const v1::Workload& w);

// "512 B", "1.2 MiB", "4.0 GiB".
std::string FormatBytes(int64_t bytes);
std::string FormatBytes(double bytes);  // past 2^63 too (ZiB, YiB)

// True for the spec.language values kiln evaluates (ValidateSolution refuses the others, e.g.
// flashinfer-bench's "tilelang" or "cutedsl").
bool IsSupportedSolutionLanguage(std::string_view language);

// "file::function" -> {"file", "function"}.
absl::StatusOr<std::pair<std::string, std::string>> SplitEntryPoint(const std::string& ep);

}  // namespace kiln

#endif  // KILN_HARNESS_MODEL_VALIDATE_H_
