#include "harness/model/definition_settings.h"

#include <catch2/catch.hpp>
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

namespace kiln {
namespace {

std::string Message(const v1::DefinitionSettings& s, SettingNames names) {
  return std::string(ValidateDefinitionSettings(s, names).message());
}

TEST_CASE("an out-of-range setting is refused naming its field or its flag") {
  v1::DefinitionSettings s;
  s.set_atol(-1);
  CHECK(Message(s, SettingNames::kFlag) == "--atol: must be a finite number >= 0, got -1");
  CHECK(Message(s, SettingNames::kField) == "settings.atol: must be a finite number >= 0, got -1");
  s.Clear();
  s.set_rtol(std::numeric_limits<double>::quiet_NaN());
  CHECK_THAT(Message(s, SettingNames::kFlag), Catch::StartsWith("--rtol: must be"));
  s.Clear();
  s.set_required_matched_ratio(0);
  CHECK(Message(s, SettingNames::kFlag) == "--required-matched-ratio: must be in (0, 1], got 0");
  s.set_required_matched_ratio(1.5);
  CHECK_THAT(Message(s, SettingNames::kFlag), Catch::StartsWith("--required-matched-ratio:"));
  s.Clear();
  s.set_warmup(-1);
  CHECK(Message(s, SettingNames::kFlag) == "--warmup: must be >= 0, got -1");
  s.Clear();
  s.set_iterations(0);
  CHECK(Message(s, SettingNames::kFlag) == "--iterations: must be >= 1, got 0");
  s.set_iterations(kMaxIterations + 1);
  CHECK(Message(s, SettingNames::kField) == "settings.iterations: must be <= 10000, got 10001");
  s.Clear();
  s.set_trials(0);
  CHECK(Message(s, SettingNames::kFlag) == "--trials: must be >= 1, got 0");
  s.Clear();
  s.set_min_own_kernel_share(1.5);
  CHECK(Message(s, SettingNames::kFlag) == "--min-own-kernel-share: must be in [0, 1], got 1.5");
  s.set_min_own_kernel_share(-0.1);
  CHECK_THAT(Message(s, SettingNames::kField),
             Catch::StartsWith("settings.min_own_kernel_share: must be in [0, 1]"));
}

TEST_CASE("the own-kernel share minimum: set, else KernelBench's default, else none") {
  v1::Definition plain, kernelbench;
  kernelbench.mutable_kernelbench()->set_level(2);
  CHECK(MinOwnKernelShare(plain) == 0);
  CHECK(MinOwnKernelShare(kernelbench) == kKernelBenchMinOwnKernelShare);
  v1::DefinitionSettings s;
  s.set_min_own_kernel_share(0);
  CHECK(ValidateDefinitionSettings(s, SettingNames::kFlag).ok());
  ApplyDefinitionSettings(s, &kernelbench);
  CHECK(MinOwnKernelShare(kernelbench) == 0);  // turned off
  s.set_min_own_kernel_share(0.25);
  ApplyDefinitionSettings(s, &plain);
  CHECK(MinOwnKernelShare(plain) == 0.25);
  CHECK(DefinitionSettingsText(s) == "min_own_kernel_share=0.25");
}

TEST_CASE("allow_torch_only adds or removes the allow-library:torch tag, once") {
  v1::Definition kernelbench;
  kernelbench.mutable_kernelbench()->set_level(1);
  kernelbench.add_tags("kernelbench");
  v1::DefinitionSettings s;
  s.set_allow_torch_only(true);
  ApplyDefinitionSettings(s, &kernelbench);
  ApplyDefinitionSettings(s, &kernelbench);
  CHECK(std::count(kernelbench.tags().begin(), kernelbench.tags().end(),
                   std::string(kAllowTorchOnlyTag)) == 1);
  CHECK(DefinitionSettingsText(s) == "allow_torch_only=true");
  s.set_allow_torch_only(false);
  ApplyDefinitionSettings(s, &kernelbench);
  CHECK(std::count(kernelbench.tags().begin(), kernelbench.tags().end(),
                   std::string(kAllowTorchOnlyTag)) == 0);
  CHECK(kernelbench.tags_size() == 1);  // its own tag stays
}

TEST_CASE("the contest's settings are valid, and so are zero tolerances and warmups") {
  v1::DefinitionSettings moe;
  moe.set_atol(1);
  moe.set_rtol(0.3);
  moe.set_required_matched_ratio(0.9);
  CHECK(ValidateDefinitionSettings(moe, SettingNames::kField).ok());
  v1::DefinitionSettings gdn;
  gdn.set_warmup(0);
  gdn.set_iterations(5);
  gdn.set_trials(3);
  CHECK(ValidateDefinitionSettings(gdn, SettingNames::kField).ok());
  v1::DefinitionSettings exact;
  exact.set_atol(0);
  exact.set_rtol(0);
  CHECK(ValidateDefinitionSettings(exact, SettingNames::kField).ok());
}

TEST_CASE("merging changes only the fields an update sets") {
  v1::DefinitionSettings stored;
  stored.set_atol(1);
  stored.set_iterations(5);
  v1::DefinitionSettings update;
  update.set_rtol(0.3);
  update.set_iterations(7);
  const v1::DefinitionSettings merged = MergeDefinitionSettings(stored, update);
  CHECK(merged.atol() == 1);
  CHECK(merged.rtol() == 0.3);
  CHECK(merged.iterations() == 7);
  CHECK_FALSE(merged.has_trials());
  CHECK(DefinitionSettingsText(merged) == "atol=1 rtol=0.3 iterations=7");
  CHECK(DefinitionSettingsText(v1::DefinitionSettings()).empty());
}

TEST_CASE("applied settings complete a tolerance with the defaults and set the counts") {
  v1::Definition def;
  v1::DefinitionSettings s;
  ApplyDefinitionSettings(s, &def);
  CHECK_FALSE(def.has_tolerance());  // nothing set: the definition as it is
  CHECK_FALSE(def.has_timing_overrides());

  s.set_atol(1);
  s.set_iterations(5);
  ApplyDefinitionSettings(s, &def);
  REQUIRE(def.has_tolerance());
  CHECK(def.tolerance().atol() == 1);
  CHECK(def.tolerance().rtol() == kDefaultRtol);
  CHECK(def.tolerance().required_matched_ratio() == kDefaultRequiredMatchedRatio);
  CHECK(def.timing_overrides().iterations() == 5);
  CHECK_FALSE(def.timing_overrides().has_warmup());
}

TEST_CASE("a set tolerance replaces the definition's own field by field") {
  v1::Definition def;
  def.mutable_tolerance()->set_atol(0.5);
  def.mutable_tolerance()->set_rtol(0.25);
  def.mutable_tolerance()->set_required_matched_ratio(0.99);
  v1::DefinitionSettings s;
  s.set_rtol(0.3);
  ApplyDefinitionSettings(s, &def);
  CHECK(def.tolerance().atol() == 0.5);
  CHECK(def.tolerance().rtol() == 0.3);
  CHECK(def.tolerance().required_matched_ratio() == 0.99);
}

TEST_CASE("a setting's flag is its name with dashes") {
  CHECK(SettingFlag("required_matched_ratio") == "--required-matched-ratio");
  CHECK(SettingFlag("atol") == "--atol");
}

}  // namespace
}  // namespace kiln
