#include "harness/model/definition_settings.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"

namespace kiln {

namespace {

std::string Named(const char* field, SettingNames names) {
  return names == SettingNames::kFlag ? SettingFlag(field) : absl::StrCat("settings.", field);
}

absl::Status OutOfRange(const char* field, SettingNames names, const std::string& rule,
                        double got) {
  return absl::InvalidArgumentError(
      absl::StrCat(Named(field, names), ": must be ", rule, ", got ", got));
}

absl::Status CheckCount(const char* field, SettingNames names, int value, int low, int high) {
  if (value >= low && value <= high) return absl::OkStatus();
  return OutOfRange(field, names,
                    value < low ? absl::StrCat(">= ", low) : absl::StrCat("<= ", high), value);
}

}  // namespace

std::string SettingFlag(const std::string& name) {
  return absl::StrCat("--", absl::StrReplaceAll(name, {{"_", "-"}}));
}

absl::Status ValidateDefinitionSettings(const v1::DefinitionSettings& s, SettingNames names) {
  // NaN fails every comparison, so it is caught by the same tests as a negative value.
  if (s.has_atol() && !(std::isfinite(s.atol()) && s.atol() >= 0)) {
    return OutOfRange("atol", names, "a finite number >= 0", s.atol());
  }
  if (s.has_rtol() && !(std::isfinite(s.rtol()) && s.rtol() >= 0)) {
    return OutOfRange("rtol", names, "a finite number >= 0", s.rtol());
  }
  if (s.has_required_matched_ratio() &&
      !(s.required_matched_ratio() > 0 && s.required_matched_ratio() <= 1)) {
    return OutOfRange("required_matched_ratio", names, "in (0, 1]", s.required_matched_ratio());
  }
  if (s.has_warmup()) {
    if (absl::Status st = CheckCount("warmup", names, s.warmup(), 0, kMaxWarmup); !st.ok()) {
      return st;
    }
  }
  if (s.has_iterations()) {
    if (absl::Status st = CheckCount("iterations", names, s.iterations(), 1, kMaxIterations);
        !st.ok()) {
      return st;
    }
  }
  if (s.has_trials()) {
    if (absl::Status st = CheckCount("trials", names, s.trials(), 1, kMaxTrials); !st.ok()) {
      return st;
    }
  }
  if (s.has_min_own_kernel_share() &&
      !(s.min_own_kernel_share() >= 0 && s.min_own_kernel_share() <= 1)) {
    return OutOfRange("min_own_kernel_share", names, "in [0, 1]", s.min_own_kernel_share());
  }
  return absl::OkStatus();
}

v1::DefinitionSettings MergeDefinitionSettings(const v1::DefinitionSettings& stored,
                                               const v1::DefinitionSettings& update) {
  v1::DefinitionSettings merged = stored;
  // Every field is `optional`: MergeFrom copies exactly the ones set.
  merged.MergeFrom(update);
  return merged;
}

void ApplyDefinitionSettings(const v1::DefinitionSettings& s, v1::Definition* def) {
  if (s.has_atol() || s.has_rtol() || s.has_required_matched_ratio()) {
    const bool had_tolerance = def->has_tolerance();
    v1::Tolerance* t = def->mutable_tolerance();
    if (!had_tolerance) {
      t->set_atol(kDefaultAtol);
      t->set_rtol(kDefaultRtol);
      t->set_required_matched_ratio(kDefaultRequiredMatchedRatio);
    }
    if (s.has_atol()) t->set_atol(s.atol());
    if (s.has_rtol()) t->set_rtol(s.rtol());
    if (s.has_required_matched_ratio()) t->set_required_matched_ratio(s.required_matched_ratio());
  }
  if (s.has_warmup()) def->mutable_timing_overrides()->set_warmup(s.warmup());
  if (s.has_iterations()) def->mutable_timing_overrides()->set_iterations(s.iterations());
  if (s.has_trials()) def->mutable_timing_overrides()->set_trials(s.trials());
  if (s.has_min_own_kernel_share()) def->set_min_own_kernel_share(s.min_own_kernel_share());
  if (s.has_allow_torch_only()) {
    auto* tags = def->mutable_tags();
    tags->erase(std::remove(tags->begin(), tags->end(), kAllowTorchOnlyTag), tags->end());
    if (s.allow_torch_only()) def->add_tags(kAllowTorchOnlyTag);
  }
}

double MinOwnKernelShare(const v1::Definition& def) {
  if (def.has_min_own_kernel_share()) return def.min_own_kernel_share();
  return def.has_kernelbench() ? kKernelBenchMinOwnKernelShare : 0;
}

std::string DefinitionSettingsText(const v1::DefinitionSettings& s) {
  std::vector<std::string> parts;
  if (s.has_atol()) parts.push_back(absl::StrCat("atol=", s.atol()));
  if (s.has_rtol()) parts.push_back(absl::StrCat("rtol=", s.rtol()));
  if (s.has_required_matched_ratio()) {
    parts.push_back(absl::StrCat("required_matched_ratio=", s.required_matched_ratio()));
  }
  if (s.has_warmup()) parts.push_back(absl::StrCat("warmup=", s.warmup()));
  if (s.has_iterations()) parts.push_back(absl::StrCat("iterations=", s.iterations()));
  if (s.has_trials()) parts.push_back(absl::StrCat("trials=", s.trials()));
  if (s.has_min_own_kernel_share()) {
    parts.push_back(absl::StrCat("min_own_kernel_share=", s.min_own_kernel_share()));
  }
  if (s.has_allow_torch_only()) {
    parts.push_back(absl::StrCat("allow_torch_only=", s.allow_torch_only() ? "true" : "false"));
  }
  return absl::StrJoin(parts, " ");
}

}  // namespace kiln
