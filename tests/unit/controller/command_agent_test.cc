#include "controller/agents/command_agent.h"

#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

namespace kiln::controller {
namespace {

std::string Workspace() {
  std::string dir =
      std::filesystem::temp_directory_path() /
      ("kiln-command-agent-" + std::to_string(getpid()) + "-" + std::to_string(std::rand()));
  std::filesystem::create_directories(dir);
  return dir;
}

TEST_CASE("a command agent's solution is read back from its workspace") {
  CampaignSpec campaign;
  campaign.definition_name = "scale_add_f32";
  CommandAgentSpec spec;
  spec.argv = {"/bin/sh", "-c",
               "printf 'int x;' > kernel.cc && printf '%s' '{\"name\":\"s\",\"definition\":"
               "\"scale_add_f32\",\"author\":\"a\",\"spec\":{\"language\":\"cpp\","
               "\"target_hardware\":[\"cpu\"],\"entry_point\":\"kernel.cc::run\"},\"sources\":"
               "[{\"path\":\"kernel.cc\",\"content\":\"\"}]}' > solution.json && echo '{}' && "
               "test \"$KILN_WORKSPACE\" = \"$(pwd)\" && test \"$1\" = hello",
               "sh", "{prompt}"};
  spec.cost_per_request_usd = 0.5;
  CommandAgent agent(spec, campaign);
  AgentRequest request;
  request.workspace = Workspace();
  request.prompt = "hello";
  AgentResponse response = agent.Generate(request);
  REQUIRE(response.error.empty());
  REQUIRE(response.candidates.size() == 1);
  CHECK(response.candidates[0].solution.sources(0).content() == "int x;");
  CHECK(response.cost_usd == 0.5);
  std::filesystem::remove_all(request.workspace);
}

TEST_CASE("a command agent gets kiln mcp in its workspace, and its own evaluations are counted") {
  CampaignSpec campaign;
  campaign.definition_name = "scale_add_f32";
  CommandAgentSpec spec;
  // Two evaluations through kiln mcp (their run ids in the ledger), then a solution.
  spec.argv = {"/bin/sh", "-c",
               "printf 'r1\\nr2\\n' >> kiln-evaluations.log && printf 'int x;' > kernel.cc && "
               "printf '%s' '{\"name\":\"s\",\"definition\":\"scale_add_f32\",\"author\":\"a\","
               "\"spec\":{\"language\":\"cpp\",\"target_hardware\":[\"cpu\"],\"entry_point\":"
               "\"kernel.cc::run\"},\"sources\":[{\"path\":\"kernel.cc\",\"content\":\"\"}]}' > "
               "solution.json && test \"$1\" = \"$(pwd)/.mcp.json\" && echo \"$2\" > codex-args",
               "sh", "{mcp_config}", "{kiln_mcp_args_toml}"};
  CommandAgent agent(spec, campaign);
  AgentRequest request;
  request.workspace = Workspace();
  request.kiln_mcp.kiln_binary = "/opt/kiln/bin/kiln";
  request.kiln_mcp.harness = "10.0.0.5:50051";
  request.kiln_mcp.token = "secret";
  request.kiln_mcp.max_evaluations = 3;
  AgentResponse response = agent.Generate(request);
  INFO(response.error);
  REQUIRE(response.error.empty());
  CHECK(response.agent_evaluations == 2);
  std::ifstream config_file(request.workspace + "/.mcp.json");
  const nlohmann::json config = nlohmann::json::parse(config_file);
  const nlohmann::json& kiln = config["mcpServers"]["kiln"];
  CHECK(kiln["command"] == "/opt/kiln/bin/kiln");
  CHECK(kiln["args"] == nlohmann::json::array({"mcp", "--server", "10.0.0.5:50051", "--ledger",
                                               request.workspace + "/kiln-evaluations.log",
                                               "--max-evaluations", "3"}));
  CHECK(kiln["env"]["KILN_TOKEN"] == "secret");
  // The file holds the token: only the controller's user reads it.
  CHECK((std::filesystem::status(request.workspace + "/.mcp.json").permissions() &
         std::filesystem::perms::others_read) == std::filesystem::perms::none);
  std::ifstream codex(request.workspace + "/codex-args");
  std::string toml;
  std::getline(codex, toml);
  CHECK(toml == "[\"mcp\", \"--server\", \"10.0.0.5:50051\", \"--ledger\", \"" + request.workspace +
                    "/kiln-evaluations.log\", \"--max-evaluations\", \"3\"]");
  std::filesystem::remove_all(request.workspace);

  // Without a kiln binary the configuration names no server.
  AgentRequest bare;
  bare.workspace = Workspace();
  spec.argv = {"/bin/true"};
  CommandAgent silent(spec, campaign);
  (void)silent.Generate(bare);
  std::ifstream bare_file(bare.workspace + "/.mcp.json");
  CHECK(nlohmann::json::parse(bare_file)["mcpServers"].empty());
  std::filesystem::remove_all(bare.workspace);
}

TEST_CASE("a command agent that runs too long is killed with its children") {
  std::string dir = Workspace();
  auto start = std::chrono::steady_clock::now();
  ProcessResult r = RunInWorkspace({"/bin/sh", "-c", "sleep 30 & sleep 30; echo never"}, dir, 0.5);
  double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  CHECK(r.timed_out);
  CHECK(took < 25);  // not waiting for the background child either
  CHECK(r.out.find("never") == std::string::npos);
  std::filesystem::remove_all(dir);
}

TEST_CASE("a failing program or a missing solution.json is an error") {
  CampaignSpec campaign;
  CommandAgentSpec spec;
  spec.argv = {"/bin/sh", "-c", "echo oops >&2; exit 3"};
  CommandAgent failing(spec, campaign);
  AgentRequest request;
  request.workspace = Workspace();
  CHECK_THAT(failing.Generate(request).error, Catch::Contains("exited 3"));
  spec.argv = {"/bin/true"};
  CommandAgent silent(spec, campaign);
  CHECK_THAT(silent.Generate(request).error, Catch::Contains("solution.json"));
  std::filesystem::remove_all(request.workspace);
}

TEST_CASE("Claude Code and Codex output is parsed for cost, turns and errors") {
  AgentResponse claude;
  ParseAgentOutput("claude",
                   R"({"type":"result","subtype":"success","is_error":false,"result":"done",)"
                   R"("total_cost_usd":0.42,"num_turns":7})",
                   &claude);
  CHECK(claude.cost_usd == Approx(0.42));
  CHECK(claude.turns == 7);
  CHECK(claude.error.empty());
  AgentResponse claude_error;
  ParseAgentOutput("claude",
                   R"({"subtype":"error_max_turns","is_error":true,"result":"","num_turns":30})",
                   &claude_error);
  CHECK_THAT(claude_error.error, Catch::Contains("error_max_turns"));
  AgentResponse codex;
  ParseAgentOutput("codex",
                   "{\"type\":\"thread.started\"}\n{\"type\":\"turn.completed\",\"usage\":"
                   "{\"input_tokens\":5}}\n{\"type\":\"turn.completed\"}\n",
                   &codex);
  CHECK(codex.turns == 2);
  CHECK(codex.error.empty());
  AgentResponse codex_error;
  ParseAgentOutput("codex", "{\"type\":\"turn.failed\",\"error\":{\"message\":\"quota\"}}\n",
                   &codex_error);
  CHECK_THAT(codex_error.error, Catch::Contains("quota"));
}

}  // namespace
}  // namespace kiln::controller

namespace kiln::controller {
namespace {

TEST_CASE("agent output with fields of unexpected types is an error, not a crash") {
  AgentResponse r;
  ParseAgentOutput("claude", R"({"is_error":"yes","total_cost_usd":"free"})", &r);
  CHECK_THAT(r.error, Catch::Contains("malformed"));
}

}  // namespace
}  // namespace kiln::controller
