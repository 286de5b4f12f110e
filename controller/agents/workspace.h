// The private folder of one agent request: TASK.md (definition, reference, ABI, constraints,
// target, skills, incumbent source, evidence and the request itself), definition.json,
// incumbent/ (solution.json and its sources) and skills/. The agent writes solution.json (and
// optionally its sources as files beside it); the controller reads the candidate back from there.
#ifndef KILN_CONTROLLER_AGENTS_WORKSPACE_H_
#define KILN_CONTROLLER_AGENTS_WORKSPACE_H_

#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "controller/agents/agent.h"
#include "controller/spec/campaign_spec.h"

namespace kiln::controller {

// Creates `request.workspace` and writes the files; returns TASK.md's text.
absl::StatusOr<std::string> PrepareWorkspace(const CampaignSpec& spec, const AgentRequest& request,
                                             const std::string& evidence_markdown);

// The candidate the agent left in `dir`: solution.json, where a source with empty content is
// read from the file at its path. Errors name the file and field.
absl::StatusOr<v1::Solution> ReadWorkspaceSolution(const std::string& dir,
                                                   const CampaignSpec& spec);

// The spec (language, hardware, entry point) a candidate written from scratch gets: the
// incumbent's, else the template's or the campaign target's.
v1::BuildSpec DefaultBuildSpec(const CampaignSpec& spec, const std::optional<v1::Solution>& inc);

// The instruction given to command agents.
inline constexpr char kWorkspacePrompt[] =
    "Read TASK.md in the current directory and follow it. Write the complete candidate as "
    "solution.json (and its source files) in the current directory.";

}  // namespace kiln::controller

#endif  // KILN_CONTROLLER_AGENTS_WORKSPACE_H_
