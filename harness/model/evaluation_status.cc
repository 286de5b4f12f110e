// Run state names, and evaluation status names: flashinfer-bench's seven plus kiln's REJECTED, CANCELLED and
// INTERRUPTED, spelled exactly as the enum values of kiln.v1.EvaluationStatus.
#include <array>
#include <utility>

#include "absl/strings/str_cat.h"
#include "harness/model/json_interop.h"

namespace kiln {
namespace {

constexpr std::array<std::pair<v1::EvaluationStatus, std::string_view>, 10> kStatusNames = {{
    {v1::PASSED, "PASSED"},
    {v1::INCORRECT_SHAPE, "INCORRECT_SHAPE"},
    {v1::INCORRECT_NUMERICAL, "INCORRECT_NUMERICAL"},
    {v1::INCORRECT_DTYPE, "INCORRECT_DTYPE"},
    {v1::RUNTIME_ERROR, "RUNTIME_ERROR"},
    {v1::COMPILE_ERROR, "COMPILE_ERROR"},
    {v1::TIMEOUT, "TIMEOUT"},
    {v1::REJECTED, "REJECTED"},
    {v1::CANCELLED, "CANCELLED"},
    {v1::INTERRUPTED, "INTERRUPTED"},
}};

}  // namespace

std::string_view StatusName(v1::EvaluationStatus s) {
  for (const auto& [status, name] : kStatusNames) {
    if (status == s) return name;
  }
  return "STATUS_UNSPECIFIED";
}

absl::StatusOr<v1::EvaluationStatus> ParseStatusName(std::string_view name) {
  for (const auto& [status, status_name] : kStatusNames) {
    if (status_name == name) return status;
  }
  return absl::InvalidArgumentError(absl::StrCat("unknown status '", std::string(name), "'"));
}

const char* RunStateName(v1::RunState state) {
  switch (state) {
    case v1::RUN_QUEUED:
      return "queued";
    case v1::RUN_COMPILING:
      return "compiling";
    case v1::RUN_VERIFYING:
      return "verifying";
    case v1::RUN_TIMING:
      return "timing";
    case v1::RUN_DONE:
      return "done";
    default:
      return "unknown";
  }
}

}  // namespace kiln
