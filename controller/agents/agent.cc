#include "controller/agents/agent.h"

#include <algorithm>

#include "controller/agents/command_agent.h"
#include "controller/agents/http_agent.h"
#include "controller/agents/sweep_agent.h"
#include "harness/common/sha256.h"

namespace kiln::controller {

std::unique_ptr<Agent> MakeAgent(const AgentSpec& agent, const CampaignSpec& campaign) {
  if (agent.type == "sweep") return std::make_unique<SweepAgent>(agent.sweep);
  if (agent.type == "command") return std::make_unique<CommandAgent>(agent.command, campaign);
  return std::make_unique<HttpAgent>(agent.type, agent.http, campaign);
}

std::string ContentHash(const v1::Solution& s) {
  std::vector<std::pair<std::string, std::string>> sources;
  for (const v1::SourceFile& f : s.sources()) sources.emplace_back(f.path(), f.content());
  std::sort(sources.begin(), sources.end());
  // Length-prefixed fields, so no two different solutions serialise alike.
  std::string canonical;
  auto add = [&canonical](const std::string& field) {
    canonical += std::to_string(field.size());
    canonical += ':';
    canonical += field;
  };
  add(s.spec().language());
  add(s.spec().entry_point());
  for (const std::string& d : s.spec().dependencies()) add(d);
  add("sources");
  for (const auto& [path, content] : sources) {
    add(path);
    add(content);
  }
  return Sha256Hex(canonical);
}

}  // namespace kiln::controller
