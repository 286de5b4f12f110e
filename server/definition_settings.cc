#include "server/definition_settings.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "harness/model/definition_settings.h"
#include "harness/timing/protocol.h"

namespace kiln {

namespace {

v1::EffectiveSetting Setting(const std::string& name, double value, const std::string& source,
                             double default_value) {
  v1::EffectiveSetting s;
  s.set_name(name);
  s.set_value(value);
  s.set_source(source);
  s.set_default_value(default_value);
  return s;
}

// A tolerance field: set, else the definition's own, else the default.
v1::EffectiveSetting ToleranceSetting(const std::string& name, bool set, double set_value, bool own,
                                      double own_value, double default_value) {
  if (set) return Setting(name, set_value, "set", default_value);
  if (own) return Setting(name, own_value, "definition", default_value);
  return Setting(name, default_value, "default", default_value);
}

v1::EffectiveSetting CountSetting(const std::string& name, bool set, int value, int default_value) {
  return Setting(name, set ? value : default_value, set ? "set" : "default", default_value);
}

// Set, else the KernelBench default for a KernelBench problem ("default"), else none.
v1::EffectiveSetting OwnShareSetting(const v1::Definition& def, const v1::DefinitionSettings& s) {
  v1::Definition unset = def;
  unset.clear_min_own_kernel_share();
  const double default_value = MinOwnKernelShare(unset);
  if (s.has_min_own_kernel_share()) {
    return Setting("min_own_kernel_share", s.min_own_kernel_share(), "set", default_value);
  }
  return Setting("min_own_kernel_share", default_value, "default", default_value);
}

// Set, else whether the definition's own tags allow torch-only work ("definition"), else 0.
v1::EffectiveSetting AllowTorchOnlySetting(const v1::Definition& def,
                                           const v1::DefinitionSettings& s) {
  const bool tagged = std::find(def.tags().begin(), def.tags().end(), kAllowTorchOnlyTag) !=
                      def.tags().end();
  if (s.has_allow_torch_only()) {
    return Setting("allow_torch_only", s.allow_torch_only() ? 1 : 0, "set", 0);
  }
  return Setting("allow_torch_only", tagged ? 1 : 0, tagged ? "definition" : "default", 0);
}

}  // namespace

absl::StatusOr<v1::Definition> DefinitionForRuns(Archive& archive, const std::string& name) {
  absl::StatusOr<v1::Definition> def = archive.GetDefinition(name);
  if (!def.ok()) return def.status();
  absl::StatusOr<v1::DefinitionSettings> settings = archive.GetDefinitionSettings(name);
  if (!settings.ok()) return settings.status();
  ApplyDefinitionSettings(*settings, &*def);
  return def;
}

std::vector<v1::EffectiveSetting> EffectiveSettings(const v1::Definition& def,
                                                    const v1::DefinitionSettings& s) {
  const bool own = def.has_tolerance();
  const v1::Tolerance& t = def.tolerance();
  // Official mode's counts are flashinfer-bench's defaults (DESIGN §5).
  const v1::TimingConfig official = *DefaultTimingConfig("official");
  return {
      ToleranceSetting("atol", s.has_atol(), s.atol(), own, t.atol(), kDefaultAtol),
      ToleranceSetting("rtol", s.has_rtol(), s.rtol(), own, t.rtol(), kDefaultRtol),
      ToleranceSetting("required_matched_ratio", s.has_required_matched_ratio(),
                       s.required_matched_ratio(), own, t.required_matched_ratio(),
                       kDefaultRequiredMatchedRatio),
      CountSetting("warmup", s.has_warmup(), s.warmup(), official.warmup()),
      CountSetting("iterations", s.has_iterations(), s.iterations(), official.iterations()),
      CountSetting("trials", s.has_trials(), s.trials(), official.trials()),
      OwnShareSetting(def, s),
      AllowTorchOnlySetting(def, s),
  };
}

absl::StatusOr<v1::DefinitionDetail> DescribeDefinition(Archive& archive, const std::string& name) {
  v1::DefinitionDetail detail;
  absl::StatusOr<v1::Definition> def = archive.GetDefinition(name);
  if (!def.ok()) return def.status();
  absl::StatusOr<v1::ListDefinitionsResponse> listed = archive.ListDefinitions();
  if (!listed.ok()) return listed.status();
  for (const v1::DefinitionSummary& summary : listed->definitions()) {
    if (summary.name() == name) *detail.mutable_summary() = summary;
  }
  for (v1::EffectiveSetting& s : EffectiveSettings(*def, detail.summary().settings())) {
    *detail.add_effective() = std::move(s);
  }
  *detail.mutable_definition() = *std::move(def);
  return detail;
}

}  // namespace kiln
