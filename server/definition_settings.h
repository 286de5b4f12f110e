// The settings a definition is evaluated with, as the harness serves them: the definition a run
// is admitted with (the operator's settings applied, harness/model/definition_settings.h) and
// the effective value and source of every setting (`kiln defs show`).
#ifndef KILN_SERVER_DEFINITION_SETTINGS_H_
#define KILN_SERVER_DEFINITION_SETTINGS_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "harness/archive/archive.h"
#include "kiln/v1/harness.pb.h"
#include "kiln/v1/types.pb.h"

namespace kiln {

// The registered definition `name` with its stored settings applied: what a run admitted now is
// evaluated with. NOT_FOUND for an unknown definition.
absl::StatusOr<v1::Definition> DefinitionForRuns(Archive& archive, const std::string& name);

// Every setting (atol, rtol, required_matched_ratio, then official mode's warmup, iterations,
// trials) with its value and source: "set" by an operator, the "definition"'s own tolerance, or
// flashinfer-bench's "default".
std::vector<v1::EffectiveSetting> EffectiveSettings(const v1::Definition& def,
                                                    const v1::DefinitionSettings& settings);

// GetDefinition's answer: the definition as registered, its summary and EffectiveSettings.
absl::StatusOr<v1::DefinitionDetail> DescribeDefinition(Archive& archive, const std::string& name);

}  // namespace kiln

#endif  // KILN_SERVER_DEFINITION_SETTINGS_H_
