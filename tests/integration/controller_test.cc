// kiln-controller end to end: a real kiln-harness (host backend), a real kiln-controller and the
// kiln CLI. Campaigns use the matmul example shipped in controller/examples and scale_add_f32
// from the test data; what they recorded is read back from the controller's SQLite archive.
#include <signal.h>
#include <sqlite3.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>
#include <regex>
#include <thread>

#include "harness/common/sha256.h"
#include "tests/integration/controller_instance.h"
#include "tests/integration/harness_instance.h"
#include "tests/integration/subprocess.h"

namespace kiln::testing {
namespace {

namespace fs = std::filesystem;

TEST_CASE(
    "a sweep campaign promotes a faster variant, records every verdict, resumes after "
    "kill -9") {
  ScratchDir harness_dir, controller_dir, files;
  HarnessInstance harness(harness_dir.path(), {"--backend", "host"});
  std::string yaml = MatmulCampaign(files, {{"max_candidates: 9", "max_candidates: 6"}});
  std::string id;
  int runs_at_kill = 0;
  {
    ControllerInstance controller(controller_dir.path(), harness.address());
    Completed start = controller.Campaign({"start", yaml});
    REQUIRE(start.exit_code == 0);
    id = start.out.substr(0, start.out.find('\n'));
    REQUIRE(!id.empty());
    // Let it get a few rounds in, then kill it without warning.
    double deadline = NowSeconds() + 300;
    while (NowSeconds() < deadline) {
      Json c = ShowJson(controller, id);
      if (c["round"].get<int>() >= 3 || c["status"] != "running") break;
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
    controller.Kill();
    runs_at_kill = CountRuns(harness);
  }
  INFO("harness runs at the kill: " << runs_at_kill);
  ControllerInstance restarted(controller_dir.path(), harness.address());
  Completed watch = restarted.Campaign({"watch", id});
  REQUIRE(watch.exit_code == 0);
  CHECK_THAT(watch.out, Catch::Contains("ended: completed"));
  Json c = ShowJson(restarted, id);
  // What each round and evaluation decided, for a failure's report.
  std::string decisions;
  for (const auto& row : Query(restarted.db(), "SELECT round, pass, agent, outcome FROM rounds "
                                               "ORDER BY round")) {
    decisions += "round " + row[0] + " " + row[1] + " " + row[2] + ": " + row[3] + "\n";
  }
  for (const auto& row : Query(restarted.db(), "SELECT round, purpose, status, mean_latency_ms, "
                                               "attempts FROM evaluations ORDER BY id")) {
    decisions += "evaluation round " + row[0] + " " + row[1] + ": " + row[2] + " " + row[3] +
                 " ms, attempts " + row[4] + "\n";
  }
  for (const auto& row : Query(restarted.db(), "SELECT kind, message FROM events WHERE "
                                               "kind IN ('promotion', 'candidate', 'ended') "
                                               "ORDER BY seq")) {
    decisions += row[0] + ": " + row[1] + "\n";
  }
  INFO(decisions);
  CHECK(c["status"] == "completed");
  CHECK(c["promotions"].get<int>() >= 1);
  CHECK(c["best_latency_ms"].get<double>() < c["baseline_latency_ms"].get<double>());
  CHECK(c["candidates_evaluated"].get<int>() <= 6);
  // Every request answered, every candidate decided by a finished evaluation.
  const std::string db = restarted.db();
  CHECK(Count(db, "SELECT COUNT(*) FROM agent_requests WHERE state='pending'") == 0);
  CHECK(Count(db, "SELECT COUNT(*) FROM candidates WHERE state!='evaluated'") == 0);
  CHECK(Count(db, "SELECT COUNT(*) FROM evaluations WHERE state!='done'") == 0);
  CHECK(Count(db, "SELECT COUNT(*) FROM rounds WHERE outcome=''") == 0);
  CHECK(Count(db, "SELECT COUNT(*) FROM promotions") == c["promotions"].get<int>());
  // No finished evaluation was repeated: the harness ran each recorded evaluation once, plus at
  // most the one that was in flight when the controller died.
  int evaluations = Count(db, "SELECT COUNT(*) FROM evaluations");
  int runs = CountRuns(harness);
  CHECK(runs >= evaluations);
  CHECK(runs <= evaluations + 1);
  Completed exported = restarted.Campaign({"export", id});
  REQUIRE(exported.exit_code == 0);
  Json solution = Json::parse(exported.out);
  CHECK(solution["definition"] == "matmul_f32_k128");
  CHECK_THAT(solution["name"].get<std::string>(), Catch::Contains("blocked"));
}

TEST_CASE("a campaign stops at its candidate budget and --wait --json reports it") {
  ScratchDir harness_dir, controller_dir, files;
  HarnessInstance harness(harness_dir.path(), {"--backend", "host"});
  std::string yaml = MatmulCampaign(files, {{"max_candidates: 9", "max_candidates: 2"},
                                            {"parallel: 1", "parallel: 2"},
                                            {"plateau_rounds: 4", "plateau_rounds: 9"}});
  ControllerInstance controller(controller_dir.path(), harness.address());
  Completed start = controller.Campaign({"start", yaml, "--wait", "--json"});
  REQUIRE(start.exit_code == 0);
  Json result = Json::parse(start.out);
  std::vector<std::string> keys;
  const nlohmann::ordered_json ordered = nlohmann::ordered_json::parse(start.out);
  for (const auto& [k, v] : ordered.items()) keys.push_back(k);
  CHECK(keys == std::vector<std::string>{"campaign_id", "status", "baseline_latency_ms",
                                         "best_latency_ms", "promotions", "candidates_evaluated",
                                         "budget_used"});
  CHECK(result["status"] == "completed");
  CHECK(result["candidates_evaluated"] == 2);
  CHECK(result["budget_used"]["candidates"] == 2);
  CHECK(result["baseline_latency_ms"].get<double>() > 0);
  Json c = ShowJson(controller, result["campaign_id"]);
  CHECK_THAT(c["reason"].get<std::string>(), Catch::Contains("max_candidates"));
  // The progress lines name the round, the pass, the best latency and the budget left.
  CHECK_THAT(start.err, Catch::Contains("budget left:"));
  CHECK_THAT(start.err, Catch::Contains("optimization"));
}

TEST_CASE("a campaign without promotion for plateau_rounds rounds stops on the plateau") {
  ScratchDir harness_dir, controller_dir, files;
  HarnessInstance harness(harness_dir.path(), {"--backend", "host"});
  // The first grid point (BK 4, BJ 2) is slower than the naive baseline.
  std::string yaml = MatmulCampaign(files, {{"plateau_rounds: 4", "plateau_rounds: 1"}});
  ControllerInstance controller(controller_dir.path(), harness.address());
  Completed start = controller.Campaign({"start", yaml, "--wait", "--json"});
  REQUIRE(start.exit_code == 0);
  Json result = Json::parse(start.out);
  CHECK(result["promotions"] == 0);
  CHECK(result["candidates_evaluated"] == 1);
  Json c = ShowJson(controller, result["campaign_id"]);
  CHECK_THAT(c["reason"].get<std::string>(), Catch::StartsWith("plateau"));
}

TEST_CASE("a harness that dies mid-campaign costs a retry on another harness, not the campaign") {
  ScratchDir dir_a, dir_b, controller_dir, files;
  AdoptOrphans();
  HarnessInstance a(dir_a.path(), {"--backend", "host"});
  HarnessInstance b(dir_b.path(), {"--backend", "host"});
  std::string yaml = MatmulCampaign(files, {{"max_candidates: 9", "max_candidates: 2"}});
  ControllerInstance controller(controller_dir.path(), a.address() + "," + b.address());
  Completed start = controller.Campaign({"start", yaml});
  REQUIRE(start.exit_code == 0);
  std::string id = start.out.substr(0, start.out.find('\n'));
  // Kill the first harness as soon as it holds the baseline's run.
  double deadline = NowSeconds() + 120;
  while (NowSeconds() < deadline &&
         Count(controller.db(), "SELECT COUNT(*) FROM evaluations WHERE run_id!=''") == 0) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  auto first = Query(controller.db(), "SELECT harness FROM evaluations");
  REQUIRE(first.size() == 1);
  const bool killed_a = first[0][0] == a.address();
  if (killed_a) {
    a.Kill();
  } else {
    b.Kill();
  }
  Completed watch = controller.Campaign({"watch", id});
  REQUIRE(watch.exit_code == 0);
  Json c = ShowJson(controller, id);
  CHECK(c["status"] == "completed");
  CHECK(c["candidates_evaluated"] == 2);
  CHECK(c["baseline_latency_ms"].get<double>() > 0);
  CHECK(Count(controller.db(), "SELECT COUNT(*) FROM evaluations WHERE state!='done'") == 0);
  // The baseline was retried on the surviving harness.
  auto baseline =
      Query(controller.db(), "SELECT harness FROM evaluations WHERE purpose='baseline'");
  REQUIRE(baseline.size() == 1);
  CHECK(baseline[0][0] == (killed_a ? b.address() : a.address()));
  KillOrphans();
}

// The controller's view of harness `address` in `kiln campaign show --json`: its state.
std::string HarnessState(const Json& campaign, const std::string& address) {
  for (const auto& h : campaign["harnesses"]) {
    if (h["address"] == address) return h["state"];
  }
  return "";
}

// Waits up to `timeout_s` for `sql` (one integer) on the controller's archive to be non-zero.
bool Eventually(const std::string& db, const std::string& sql, double timeout_s) {
  const double deadline = NowSeconds() + timeout_s;
  while (NowSeconds() < deadline) {
    if (Count(db, sql) > 0) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return false;
}

TEST_CASE("a fleet: one harness hangs, the other is killed and restarted; the campaign loses and "
          "repeats no evaluation, and kiln campaign show tells each harness's state") {
  ScratchDir dir_a, dir_b, controller_dir, files;
  AdoptOrphans();
  std::optional<HarnessInstance> a, b;
  a.emplace(dir_a.path(), std::vector<std::string>{"--backend", "host"});
  b.emplace(dir_b.path(), std::vector<std::string>{"--backend", "host"});
  const std::string address_a = a->address(), address_b = b->address();
  std::string yaml = MatmulCampaign(
      files, {{"max_candidates: 9", "max_candidates: 5"}, {"parallel: 1", "parallel: 2"}});
  ControllerInstance controller(controller_dir.path(), address_a + "," + address_b,
                                {"--harness-probe-s", "0.2", "--harness-gone-s", "2"});
  Completed start = controller.Campaign({"start", yaml});
  REQUIRE(start.exit_code == 0);
  const std::string id = start.out.substr(0, start.out.find('\n'));
  const std::string db = controller.db();

  // 1. The harness that holds the first run (admitted less than a second ago, so it is still
  //    running there) stops answering: SIGSTOP, a node that hangs or is cut off.
  REQUIRE(Eventually(db,
                     "SELECT COUNT(*) FROM evaluation_attempts WHERE outcome='running' AND "
                     "started_unix_ms > CAST(strftime('%s','now') AS INTEGER)*1000 - 1000",
                     180));
  const std::string hung = Query(db, "SELECT harness FROM evaluation_attempts WHERE "
                                     "outcome='running' ORDER BY id LIMIT 1")
                               .at(0)
                               .at(0);
  const bool hung_a = hung == address_a;
  std::optional<HarnessInstance>& survivor = hung_a ? b : a;
  const std::string other = hung_a ? address_b : address_a;
  const pid_t hung_pid = hung_a ? a->pid() : b->pid();
  REQUIRE(::kill(hung_pid, SIGSTOP) == 0);
  // Suspect, then gone (no answer for 2 s); its run is abandoned and evaluated elsewhere.
  CHECK(Eventually(db,
                   "SELECT COUNT(*) FROM events WHERE kind='harness' AND message LIKE 'harness " +
                       hung + " suspect%'",
                   30));
  CHECK(Eventually(db,
                   "SELECT COUNT(*) FROM events WHERE kind='harness' AND message LIKE 'harness " +
                       hung + " gone%'",
                   30));
  REQUIRE(Eventually(db,
                     "SELECT COUNT(*) FROM evaluation_attempts WHERE outcome='abandoned' AND "
                     "harness='" + hung + "'",
                     30));
  Json shown = ShowJson(controller, id);
  CHECK(HarnessState(shown, hung) == "gone");
  CHECK(HarnessState(shown, other) == "healthy");
  Completed text = controller.Campaign({"show", id});
  CHECK_THAT(text.out, Catch::Contains("harnesses") && Catch::Contains(hung) &&
                           Catch::Contains("gone") && Catch::Contains("given up"));

  // 2. The other harness is killed while it holds a run, and restarted on its address.
  const int attempts_before =
      Count(db, "SELECT COUNT(*) FROM evaluation_attempts WHERE harness='" + other + "'");
  bool killed_mid_run = Eventually(
      db,
      "SELECT COUNT(*) FROM evaluation_attempts WHERE outcome='running' AND harness='" + other +
          "' AND id > (SELECT MAX(id) FROM evaluation_attempts WHERE outcome='abandoned')",
      120);
  INFO("attempts on the survivor before the kill: " << attempts_before);
  survivor->Kill();
  std::string survivor_dir = survivor->data_dir();
  survivor.reset();
  survivor.emplace(survivor_dir, std::vector<std::string>{"--backend", "host", "--listen", other});
  REQUIRE(survivor->address() == other);

  Completed watch = controller.Campaign({"watch", id});
  REQUIRE(watch.exit_code == 0);
  std::string attempts_log;
  for (const auto& row : Query(db, "SELECT purpose, substr(candidate_hash,1,12), harness, run_id, "
                                   "outcome, detail FROM evaluation_attempts ORDER BY id")) {
    attempts_log += row[0] + " " + row[1] + " " + row[2] + " " + row[3] + " " + row[4] + ": " +
                    row[5] + "\n";
  }
  INFO(attempts_log);
  Json c = ShowJson(controller, id);
  CHECK(c["status"] == "completed");
  CHECK(c["candidates_evaluated"] == 5);
  CHECK(HarnessState(c, hung) == "gone");
  CHECK(HarnessState(c, other) == "healthy");

  // Nothing lost: every evaluation finished with a verdict, by exactly one attempt.
  const int evaluations = Count(db, "SELECT COUNT(*) FROM evaluations");
  CHECK(Count(db, "SELECT COUNT(*) FROM evaluations WHERE state!='done'") == 0);
  CHECK(Count(db, "SELECT COUNT(*) FROM evaluation_attempts WHERE outcome='verdict'") ==
        evaluations);
  CHECK(Count(db, "SELECT COUNT(*) FROM (SELECT candidate_hash, purpose FROM evaluation_attempts "
                  "WHERE outcome='verdict' GROUP BY candidate_hash, purpose HAVING COUNT(*)>1)") ==
        0);
  CHECK(Count(db, "SELECT COUNT(*) FROM evaluation_attempts WHERE outcome='running'") == 0);
  // Each evaluation's recorded run is the attempt that gave its verdict.
  CHECK(Count(db, "SELECT COUNT(*) FROM evaluations e JOIN evaluation_attempts t ON "
                  "t.run_id=e.run_id AND t.harness=e.harness AND t.outcome='verdict'") ==
        evaluations);
  if (killed_mid_run) {
    // The killed harness's run came back as a broken call (or INTERRUPTED) and was evaluated
    // again; the restarted harness marked it INTERRUPTED and did not run it again by itself.
    CHECK(Count(db, "SELECT COUNT(*) FROM evaluation_attempts WHERE harness='" + other +
                        "' AND outcome IN ('broken','interrupted')") >= 1);
  }
  // Nothing repeated: each harness ran only runs the controller attempted there (a call that
  // broke before the run id came back may or may not have been admitted).
  auto attempted = [&db](const std::string& harness, bool with_run_id) {
    return Count(db, "SELECT COUNT(*) FROM evaluation_attempts WHERE harness='" + harness + "'" +
                         (with_run_id ? " AND run_id!=''" : ""));
  };
  CHECK(CountRuns(*survivor) >= attempted(other, true));
  CHECK(CountRuns(*survivor) <= attempted(other, false));

  // 3. The hung harness continues: healthy again, and it ran nothing the controller does not know
  //    of. Its abandoned run's call was cancelled.
  REQUIRE(::kill(hung_pid, SIGCONT) == 0);
  const double deadline = NowSeconds() + 30;
  while (NowSeconds() < deadline && HarnessState(ShowJson(controller, id), hung) != "healthy") {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  CHECK(HarnessState(ShowJson(controller, id), hung) == "healthy");
  HarnessInstance& hung_instance = hung_a ? *a : *b;
  CHECK(CountRuns(hung_instance) >= attempted(hung, true));
  CHECK(CountRuns(hung_instance) <= attempted(hung, false));
  KillOrphans();
}

constexpr char kRepairScript[] = R"(#!/bin/bash
# Writes a candidate that does not compile, then, once TASK.md carries the compiler's feedback,
# a correct one (and the same correct one again after that).
set -e
if grep -q "The previous candidate was COMPILE_ERROR" TASK.md || [ -f ../seen-feedback ]; then
  touch ../seen-feedback
  body='out[i] = a[i] * 2.0f + b[i];'
else
  body='out[i] = a[i] * 2.0f + b[i]  // missing semicolon'
fi
cat > kernel.cc <<EOF
#include <kiln/abi.h>
extern "C" int run(const kiln_tensor* args, int32_t nargs, const kiln_context* ctx) {
  const float* a = static_cast<const float*>(args[0].data);
  const float* b = static_cast<const float*>(args[1].data);
  float* out = static_cast<float*>(args[2].data);
  for (int64_t i = 0; i < args[0].shape[0]; ++i) {
    $body
  }
  return 0;
}
EOF
cat > solution.json <<EOF
{"name": "scripted", "definition": "scale_add_f32", "author": "script",
 "spec": {"language": "cpp", "target_hardware": ["cpu"], "entry_point": "kernel.cc::run"},
 "sources": [{"path": "kernel.cc", "content": ""}]}
EOF
echo '{"type":"result","subtype":"success","is_error":false,"result":"ok","total_cost_usd":0.01,"num_turns":1}'
)";

TEST_CASE(
    "a command agent fixes its failing candidate from the feedback; duplicates are never "
    "evaluated twice") {
  ScratchDir harness_dir, controller_dir, files;
  HarnessInstance harness(harness_dir.path(), {"--backend", "host"});
  CommandAgentCampaign(files, "repair", kRepairScript, 60,
                       "budget: {max_candidates: 5, max_rounds: 6, max_cost_usd: 1}\n"
                       "supervisor: {max_duplicates: 1, functional_attempts: 3}\n");
  ControllerInstance controller(controller_dir.path(), harness.address());
  Completed start = controller.Campaign({"start", files / "campaign.yaml", "--wait", "--json"});
  INFO(start.Describe());
  REQUIRE(start.exit_code == 0);
  Json result = Json::parse(start.out);
  CHECK(result["candidates_evaluated"] == 2);
  CHECK(result["budget_used"]["cost_usd"].get<double>() == Approx(0.03));
  Json c = ShowJson(controller, result["campaign_id"]);
  CHECK_THAT(c["reason"].get<std::string>(), Catch::StartsWith("duplicates"));
  CHECK(c["duplicates"] == 1);
  const std::string db = controller.db();
  auto candidates = Query(db, "SELECT status FROM candidates ORDER BY round");
  REQUIRE(candidates.size() == 2);
  CHECK(candidates[0][0] == "COMPILE_ERROR");
  CHECK(candidates[1][0] == "PASSED");
  auto requests = Query(db, "SELECT pass, prompt FROM agent_requests ORDER BY id");
  REQUIRE(requests.size() == 3);
  CHECK(requests[1][0] == "functional");
  CHECK_THAT(requests[1][1], Catch::Contains("COMPILE_ERROR"));
  CHECK(requests[2][0] == "optimization");
  // The harness saw the two distinct candidates once each (plus a confirmation run of the
  // correct one when it looked faster than the reference).
  CHECK(Count(db, "SELECT COUNT(*) FROM evaluations WHERE purpose='first'") == 2);
  CHECK(CountRuns(harness) == Count(db, "SELECT COUNT(*) FROM evaluations"));
}

// An agent that evaluates its kernel itself through the kiln mcp its workspace's .mcp.json
// names (JSON-RPC over the server's stdio, driven by python3), then answers with it.
constexpr char kMcpAgentScript[] = R"(#!/bin/bash
set -e
cat > kernel.cc <<EOF
#include <kiln/abi.h>
extern "C" int run(const kiln_tensor* args, int32_t nargs, const kiln_context* ctx) {
  const float* a = static_cast<const float*>(args[0].data);
  const float* b = static_cast<const float*>(args[1].data);
  float* out = static_cast<float*>(args[2].data);
  for (int64_t i = 0; i < args[0].shape[0]; ++i) out[i] = a[i] * 2.0f + b[i];
  return 0;
}
EOF
/usr/bin/env python3 - <<'PY'
import json, subprocess
server = json.load(open(".mcp.json"))["mcpServers"]["kiln"]
proc = subprocess.Popen([server["command"]] + server["args"], stdin=subprocess.PIPE,
                        stdout=subprocess.PIPE, text=True)
def send(message):
    proc.stdin.write(json.dumps(message) + "\n")
    proc.stdin.flush()
def answer(wanted):
    for line in proc.stdout:
        message = json.loads(line)
        if message.get("id") == wanted:
            return message
send({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
    "protocolVersion": "2025-11-25", "capabilities": {},
    "clientInfo": {"name": "scripted-agent", "version": "1"}}})
answer(1)
send({"jsonrpc": "2.0", "method": "notifications/initialized"})
send({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "evaluate",
      "arguments": {"definition": "scale_add_f32", "files": {"kernel.cc": open("kernel.cc").read()},
                    "language": "cpp", "entry_point": "kernel.cc::run"}}})
result = answer(2)["result"]
open("agent-verdict", "w").write(result["structuredContent"]["status"])
proc.stdin.close()
proc.wait()
PY
cat > solution.json <<EOF
{"name": "checked", "definition": "scale_add_f32", "author": "script",
 "spec": {"language": "cpp", "target_hardware": ["cpu"], "entry_point": "kernel.cc::run"},
 "sources": [{"path": "kernel.cc", "content": ""}]}
EOF
echo '{"type":"result","subtype":"success","is_error":false,"result":"ok","total_cost_usd":0,"num_turns":1}'
)";

TEST_CASE("a command agent evaluates through kiln mcp and its evaluations count against the "
          "budget") {
  ScratchDir harness_dir, controller_dir, files;
  HarnessInstance harness(harness_dir.path(), {"--backend", "host"});
  CommandAgentCampaign(files, "mcp-agent", kMcpAgentScript, 300,
                       "budget: {max_candidates: 3, max_rounds: 1}\n");
  ControllerInstance controller(controller_dir.path(), harness.address());
  Completed start = controller.Campaign({"start", files / "campaign.yaml", "--wait", "--json"});
  INFO(start.Describe());
  REQUIRE(start.exit_code == 0);
  Json result = Json::parse(start.out);
  CHECK(result["budget_used"]["agent_evaluations"] == 1);
  CHECK(Count(controller.db(), "SELECT SUM(agent_evaluations) FROM agent_requests") == 1);
  // The agent's own verdict, its ledger, and the budget its kiln mcp was given: 3 candidates,
  // less the one it returns.
  std::optional<fs::path> workspace;
  for (const auto& entry : fs::recursive_directory_iterator(controller_dir.path())) {
    if (entry.path().filename() == "agent-verdict") workspace = entry.path().parent_path();
  }
  REQUIRE(workspace.has_value());
  CHECK(Slurp(*workspace / "agent-verdict") == "PASSED");
  const Json config = Json::parse(Slurp(*workspace / ".mcp.json"));
  const Json& args = config["mcpServers"]["kiln"]["args"];
  CHECK(args[2] == harness.address());
  CHECK(args[args.size() - 1] == "2");
  CHECK(Slurp(*workspace / "kiln-evaluations.log").size() > 0);
  // The harness ran the agent's evaluation besides the controller's.
  CHECK(CountRuns(harness) == Count(controller.db(), "SELECT COUNT(*) FROM evaluations") + 1);
}

}  // namespace
}  // namespace kiln::testing
