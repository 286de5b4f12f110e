// The built-in `sweep` agent: no LLM, a solution template whose sources hold {{PARAM}}
// placeholders and a list of values per parameter. Each request returns the next untried points
// of the grid, nearest first to the incumbent's point (a coordinate search around the best so
// far), until the grid is exhausted.
#ifndef KILN_CONTROLLER_AGENTS_SWEEP_AGENT_H_
#define KILN_CONTROLLER_AGENTS_SWEEP_AGENT_H_

#include <map>
#include <string>
#include <vector>

#include "controller/agents/agent.h"

namespace kiln::controller {

class SweepAgent : public Agent {
 public:
  explicit SweepAgent(SweepAgentSpec spec) : spec_(std::move(spec)) {}
  AgentResponse Generate(const AgentRequest& request) override;

  // The candidate for one point of the grid ({"BLOCK": "32", ...}).
  v1::Solution Instantiate(const std::map<std::string, std::string>& point) const;
  // Every point of the grid in enumeration order (last parameter varies fastest).
  std::vector<std::map<std::string, std::string>> Grid() const;

 private:
  SweepAgentSpec spec_;
};

// `text` with every {{NAME}} of `values` replaced.
std::string Substitute(const std::string& text, const std::map<std::string, std::string>& values);

}  // namespace kiln::controller

#endif  // KILN_CONTROLLER_AGENTS_SWEEP_AGENT_H_
