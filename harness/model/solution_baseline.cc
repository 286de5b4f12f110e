#include "harness/model/solution_baseline.h"

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace kiln {

namespace {

constexpr size_t kMaxNameLength = 128;

bool NameChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
         c == '.' || c == '+' || c == '-';
}

}  // namespace

std::optional<std::string> SolutionBaselineName(absl::string_view baseline) {
  if (!absl::StartsWith(baseline, kSolutionBaselinePrefix)) return std::nullopt;
  return std::string(baseline.substr(kSolutionBaselinePrefix.size()));
}

std::string SolutionBaseline(absl::string_view name) {
  return absl::StrCat(kSolutionBaselinePrefix, name);
}

absl::Status ValidateSolutionName(absl::string_view name, absl::string_view where) {
  if (name.empty()) return absl::InvalidArgumentError(absl::StrCat(where, ": empty"));
  if (name.size() > kMaxNameLength) {
    return absl::InvalidArgumentError(
        absl::StrCat(where, ": ", name.size(), " characters, at most ", kMaxNameLength));
  }
  for (char c : name) {
    if (!NameChar(c)) {
      return absl::InvalidArgumentError(absl::StrCat(
          where, ": '", name, "' has a character other than letters, digits and _.+-"));
    }
  }
  return absl::OkStatus();
}

}  // namespace kiln
