// The `agents:` list of a campaign file: each entry's type-specific fields, validated, with
// errors naming the entry ("agents[1].parameters.BLOCK: expected a non-empty list").
#ifndef KILN_CONTROLLER_SPEC_AGENT_SPEC_H_
#define KILN_CONTROLLER_SPEC_AGENT_SPEC_H_

#include <yaml-cpp/yaml.h>

#include <set>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "controller/spec/campaign_spec.h"

namespace kiln::controller {

absl::Status ReadAgents(const YAML::Node& node, CampaignFiles& files,
                        const std::string& definition_name, std::vector<AgentSpec>* out);

// The {{NAME}} placeholders in `text`.
std::set<std::string> Placeholders(const std::string& text);

// The argv of a command preset ("claude", "codex"); empty for an unknown name.
std::vector<std::string> PresetArgv(const std::string& preset);

}  // namespace kiln::controller

#endif  // KILN_CONTROLLER_SPEC_AGENT_SPEC_H_
