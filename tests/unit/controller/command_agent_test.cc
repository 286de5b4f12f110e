#include "controller/agents/command_agent.h"

#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>

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
