// The `command` agent: any program run non-interactively in the request's workspace, with a
// templated argv ({prompt}, {workspace}, {max_turns}, {model}), a wall-clock limit that kills
// its whole process group, and presets for Claude Code and Codex whose JSON output is parsed for
// cost, turns and errors. The program leaves solution.json in the workspace.
#ifndef KILN_CONTROLLER_AGENTS_COMMAND_AGENT_H_
#define KILN_CONTROLLER_AGENTS_COMMAND_AGENT_H_

#include <string>
#include <vector>

#include "controller/agents/agent.h"

namespace kiln::controller {

// The files a command agent's workspace holds for kiln mcp: its configuration (Claude Code's
// .mcp.json format: {"mcpServers": {"kiln": {"command", "args", "env"}}}) and the ledger where
// kiln mcp appends the run id of each evaluation the agent makes.
inline constexpr char kKilnMcpConfig[] = ".mcp.json";
inline constexpr char kKilnMcpLedger[] = "kiln-evaluations.log";

// kiln mcp's arguments for `mcp` in `workspace`: the harness, the ledger, the budget left.
std::vector<std::string> KilnMcpArgs(const KilnMcpAccess& mcp, const std::string& workspace);

struct ProcessResult {
  int exit_code = -1;  // -1: killed by a signal
  bool timed_out = false;
  std::string out, err;
};

// Runs argv in `cwd` (own process group, stdin /dev/null) and waits at most `timeout_s`, then
// kills the group. Output is kept in `cwd`/agent.stdout and agent.stderr.
ProcessResult RunInWorkspace(const std::vector<std::string>& argv, const std::string& cwd,
                             double timeout_s);

// Cost, turns and error from a program's stdout: Claude Code's JSON result object, Codex's JSONL
// events, or nothing for other programs.
void ParseAgentOutput(const std::string& preset, const std::string& out, AgentResponse* response);

class CommandAgent : public Agent {
 public:
  CommandAgent(CommandAgentSpec spec, const CampaignSpec& campaign)
      : spec_(std::move(spec)), campaign_(campaign) {}
  AgentResponse Generate(const AgentRequest& request) override;

 private:
  CommandAgentSpec spec_;
  const CampaignSpec& campaign_;
};

}  // namespace kiln::controller

#endif  // KILN_CONTROLLER_AGENTS_COMMAND_AGENT_H_
