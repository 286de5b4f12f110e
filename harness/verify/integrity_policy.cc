#include "harness/verify/integrity_policy.h"

#include <algorithm>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace kiln::integrity {
namespace {

bool HasTag(const v1::Definition& def, const std::string& tag) {
  return std::find(def.tags().begin(), def.tags().end(), tag) != def.tags().end();
}

}  // namespace

std::string Reason(const char* check, const std::string& detail) {
  return absl::StrCat(check, ": ", detail);
}

std::string CheckOfReason(const std::string& reason) {
  if (!absl::StartsWith(reason, "integrity.")) return "";
  return reason.substr(0, reason.find(':'));
}

std::string DefinitionWarningKey(const std::string& definition) {
  return absl::StrCat("integrity_warning:", definition);
}

bool AllowsNondeterminism(const v1::Definition& def) {
  return HasTag(def, "kiln:nondeterministic");
}

bool RequiresOwnKernel(const v1::Definition& def) {
  return def.has_kernelbench() || HasTag(def, "kiln:require-own-kernel");
}

bool AllowsTorchOnly(const v1::Definition& def) {
  return HasTag(def, "kiln:allow-library:torch");
}

std::vector<std::string> InplaceInputs(const v1::Definition& def) {
  static constexpr char kPrefix[] = "kiln:inplace-input:";
  std::vector<std::string> names;
  for (const std::string& tag : def.tags()) {
    if (absl::StartsWith(tag, kPrefix)) names.push_back(tag.substr(sizeof(kPrefix) - 1));
  }
  return names;
}

bool CountsTowardFloor(const v1::Definition& def, const v1::TensorSpec& input) {
  if (HasTag(def, absl::StrCat("kiln:dense-input:", input.name()))) return true;
  if (HasTag(def, absl::StrCat("kiln:sparse-input:", input.name()))) return false;
  if (input.scalar()) return false;
  for (const std::string& axis : input.shape()) {
    bool in_output = std::any_of(def.outputs().begin(), def.outputs().end(),
                                 [&](const v1::TensorSpec& out) {
                                   return std::find(out.shape().begin(), out.shape().end(),
                                                    axis) != out.shape().end();
                                 });
    if (!in_output) return false;
  }
  return true;
}

}  // namespace kiln::integrity
