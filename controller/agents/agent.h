// A source of candidate solutions. The loop sends one request per round (a functional repair
// with feedback, or one optimisation direction) into a private workspace folder that already
// holds TASK.md (see workspace.h); the agent answers with zero or more candidates and what the
// answer cost. Agents never evaluate anything themselves.
#ifndef KILN_CONTROLLER_AGENTS_AGENT_H_
#define KILN_CONTROLLER_AGENTS_AGENT_H_

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "controller/spec/campaign_spec.h"
#include "kiln/v1/types.pb.h"

namespace kiln::controller {

// How an agent that runs programs may evaluate on its own: `kiln mcp` on one of the campaign's
// harnesses, limited to what the budget leaves.
struct KilnMcpAccess {
  std::string kiln_binary;   // "" when there is no kiln next to kiln-controller
  std::string harness;       // HOST:PORT
  std::string token;         // the controller's token for the harness ("" for none)
  int max_evaluations = -1;  // -1: no limit
};

struct AgentRequest {
  std::string campaign_id;
  int64_t request_id = 0;
  int round = 0;
  std::string pass;       // functional | optimization
  std::string direction;  // optimisation: the one direction to follow
  std::string feedback;   // functional: what was wrong with the last candidate
  std::string workspace;  // private folder with TASK.md
  std::string prompt;     // the instruction (TASK.md says the rest)
  int max_candidates = 1;
  std::optional<v1::Solution> incumbent;
  std::string incumbent_params_json = "{}";  // the incumbent's sweep parameters, if any
  // True for a content hash this campaign has already seen (the sweep skips those).
  std::function<bool(const std::string&)> seen = [](const std::string&) { return false; };
  KilnMcpAccess kiln_mcp;
};

struct AgentCandidate {
  v1::Solution solution;
  std::string params_json = "{}";
};

struct AgentResponse {
  std::vector<AgentCandidate> candidates;
  double cost_usd = 0;
  int turns = 0;
  std::string transcript;  // what the agent said (kept in the archive, truncated)
  std::string error;       // non-empty: the request failed
  bool exhausted = false;  // the agent has nothing further to offer (a finished sweep)
  int agent_evaluations = 0;  // evaluations it made itself through kiln mcp (its ledger)
};

class Agent {
 public:
  virtual ~Agent() = default;
  virtual AgentResponse Generate(const AgentRequest& request) = 0;
};

// The agent an `agents:` entry describes.
std::unique_ptr<Agent> MakeAgent(const AgentSpec& agent, const CampaignSpec& campaign);

// Content hash of a candidate: language, entry point, dependencies and the sources (by path),
// not its name or description, so a renamed copy is a duplicate.
std::string ContentHash(const v1::Solution& solution);

}  // namespace kiln::controller

#endif  // KILN_CONTROLLER_AGENTS_AGENT_H_
