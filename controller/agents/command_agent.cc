#include "controller/agents/command_agent.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "controller/agents/workspace.h"

namespace kiln::controller {

namespace {

std::string Slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream b;
  b << in.rdbuf();
  return b.str();
}

}  // namespace

// ParseAgentOutput without the guard; nlohmann's exceptions propagate.
void ParseAgentOutputOrThrow(const std::string& preset, const std::string& out,
                             AgentResponse* response);

ProcessResult RunInWorkspace(const std::vector<std::string>& argv, const std::string& cwd,
                             double timeout_s) {
  ProcessResult result;
  const std::string out_path = cwd + "/agent.stdout", err_path = cwd + "/agent.stderr";
  pid_t pid = fork();
  if (pid < 0) {
    result.err = "fork failed";
    return result;
  }
  if (pid == 0) {
    setpgid(0, 0);
    int in = open("/dev/null", O_RDONLY);
    int out = open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    int err = open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (in < 0 || out < 0 || err < 0 || chdir(cwd.c_str()) != 0) _exit(127);
    dup2(in, 0);
    dup2(out, 1);
    dup2(err, 2);
    setenv("KILN_WORKSPACE", cwd.c_str(), 1);
    std::vector<char*> args;
    for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    execvp(args[0], args.data());
    _exit(127);
  }
  setpgid(pid, pid);
  auto deadline = std::chrono::steady_clock::now() +
                  std::chrono::milliseconds(static_cast<int64_t>(timeout_s * 1000));
  int status = 0;
  while (true) {
    pid_t r = waitpid(pid, &status, WNOHANG);
    if (r == pid) break;
    if (std::chrono::steady_clock::now() > deadline) {
      result.timed_out = true;
      kill(-pid, SIGKILL);
      waitpid(pid, &status, 0);
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  // Whatever the program left running in its group ends with it.
  kill(-pid, SIGKILL);
  if (WIFEXITED(status)) result.exit_code = WEXITSTATUS(status);
  result.out = Slurp(out_path);
  result.err = Slurp(err_path);
  return result;
}

void ParseAgentOutput(const std::string& preset, const std::string& out, AgentResponse* response) {
  // The output is untrusted: a field of an unexpected type is an error, not a crash.
  try {
    ParseAgentOutputOrThrow(preset, out, response);
  } catch (const nlohmann::json::exception& e) {
    response->error = absl::StrCat("malformed agent output: ", e.what());
  }
}

void ParseAgentOutputOrThrow(const std::string& preset, const std::string& out,
                             AgentResponse* response) {
  if (preset == "codex") {
    std::istringstream lines(out);
    std::string line;
    while (std::getline(lines, line)) {
      nlohmann::json event = nlohmann::json::parse(line, nullptr, false);
      if (!event.is_object()) continue;
      std::string type = event.value("type", "");
      if (type == "turn.completed") ++response->turns;
      if (type == "error" || type == "turn.failed") {
        std::string message = event.value("message", "");
        if (message.empty() && event.contains("error") && event["error"].is_object()) {
          message = event["error"].value("message", "");
        }
        response->error = absl::StrCat("codex: ", type, message.empty() ? "" : ": ", message);
      }
    }
    return;
  }
  // Claude Code's --output-format json result (and any program that answers alike).
  nlohmann::json result = nlohmann::json::parse(out, nullptr, false);
  if (!result.is_object()) return;
  if (result.contains("total_cost_usd") && result["total_cost_usd"].is_number()) {
    response->cost_usd = result["total_cost_usd"].get<double>();
  }
  if (result.contains("num_turns") && result["num_turns"].is_number()) {
    response->turns = result["num_turns"].get<int>();
  }
  if (result.value("is_error", false)) {
    response->error = absl::StrCat("agent reported an error (", result.value("subtype", "error"),
                                   "): ", result.value("result", ""));
  }
  if (result.contains("result") && result["result"].is_string()) {
    response->transcript = result["result"].get<std::string>();
  }
}

std::vector<std::string> KilnMcpArgs(const KilnMcpAccess& mcp, const std::string& workspace) {
  std::vector<std::string> args = {"mcp", "--server", mcp.harness, "--ledger",
                                   absl::StrCat(workspace, "/", kKilnMcpLedger)};
  if (mcp.max_evaluations >= 0) {
    args.push_back("--max-evaluations");
    args.push_back(std::to_string(mcp.max_evaluations));
  }
  return args;
}

namespace {

absl::Status WriteKilnMcpConfig(const KilnMcpAccess& mcp, const std::string& workspace) {
  nlohmann::json servers = nlohmann::json::object();
  if (!mcp.kiln_binary.empty() && !mcp.harness.empty()) {
    nlohmann::json server = {{"command", mcp.kiln_binary},
                             {"args", KilnMcpArgs(mcp, workspace)}};
    if (!mcp.token.empty()) server["env"] = {{"KILN_TOKEN", mcp.token}};
    servers["kiln"] = std::move(server);
  }
  const std::string path = absl::StrCat(workspace, "/", kKilnMcpConfig);
  std::ofstream out(path);
  out << nlohmann::json{{"mcpServers", servers}}.dump(2) << "\n";
  if (!out) return absl::InternalError(absl::StrCat("cannot write ", path));
  ::chmod(path.c_str(), 0600);  // it may hold the controller's token
  return absl::OkStatus();
}

int CountLedger(const std::string& workspace) {
  std::ifstream in(absl::StrCat(workspace, "/", kKilnMcpLedger));
  int lines = 0;
  for (std::string line; std::getline(in, line);) {
    if (!line.empty()) ++lines;
  }
  return lines;
}

}  // namespace

AgentResponse CommandAgent::Generate(const AgentRequest& request) {
  AgentResponse response;
  // The agent may evaluate on its own: kiln mcp, configured in its workspace.
  if (absl::Status s = WriteKilnMcpConfig(request.kiln_mcp, request.workspace); !s.ok()) {
    response.error = std::string(s.message());
    return response;
  }
  std::string args_toml = "[";
  for (const std::string& a : KilnMcpArgs(request.kiln_mcp, request.workspace)) {
    absl::StrAppend(&args_toml, args_toml.size() > 1 ? ", " : "", nlohmann::json(a).dump());
  }
  args_toml += "]";
  std::vector<std::string> argv;
  for (const std::string& a : spec_.argv) {
    argv.push_back(absl::StrReplaceAll(
        a, {{"{prompt}", request.prompt},
            {"{workspace}", request.workspace},
            {"{max_turns}", std::to_string(spec_.max_turns)},
            {"{model}", spec_.model},
            {"{mcp_config}", absl::StrCat(request.workspace, "/", kKilnMcpConfig)},
            {"{kiln}", request.kiln_mcp.kiln_binary.empty() ? "kiln"
                                                            : request.kiln_mcp.kiln_binary},
            {"{kiln_mcp_args_toml}", args_toml}}));
  }
  ProcessResult run = RunInWorkspace(argv, request.workspace, spec_.timeout_s);
  response.agent_evaluations = CountLedger(request.workspace);
  response.cost_usd = spec_.cost_per_request_usd;
  ParseAgentOutput(spec_.preset, run.out, &response);
  if (response.transcript.empty()) response.transcript = run.out.substr(0, 4000);
  if (run.timed_out) {
    response.error = absl::StrCat("timed out after ", spec_.timeout_s, " s (process group killed)");
  } else if (run.exit_code != 0 && response.error.empty()) {
    response.error =
        absl::StrCat(argv[0], " exited ", run.exit_code, ": ", run.err.substr(0, 2000));
  }
  if (!response.error.empty()) return response;
  absl::StatusOr<v1::Solution> solution = ReadWorkspaceSolution(request.workspace, campaign_);
  if (!solution.ok()) {
    response.error = std::string(solution.status().message());
    return response;
  }
  response.candidates.push_back({*solution, "{}"});
  return response;
}

}  // namespace kiln::controller
