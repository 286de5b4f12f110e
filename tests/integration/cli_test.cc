// The kiln CLI's own behaviour against a real kiln-harness: definitions, listings, node info,
// help, unreachable servers, and the self-contained demo.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <thread>
#include <nlohmann/json.hpp>
#include <regex>

#include "tests/integration/harness_instance.h"

using namespace kiln::testing;
using nlohmann::json;

namespace {

// A local port nothing listens on: bound, then closed.
int ClosedPort() {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  REQUIRE(fd >= 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  REQUIRE(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0);
  socklen_t len = sizeof addr;
  REQUIRE(::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0);
  ::close(fd);
  return ntohs(addr.sin_port);
}

}  // namespace

TEST_CASE("defs add registers a definition that defs list then shows") {
  ScratchDir dir;
  HarnessInstance harness(dir / "data");
  Completed added = harness.Kiln({"defs", "add", DataPath("scale_add_f32.json"), "--workloads",
                                  DataPath("scale_add_f32.jsonl")});
  INFO(added.Describe());
  REQUIRE(added.exit_code == 0);
  CHECK(added.out.find("scale_add_f32") != std::string::npos);
  CHECK(added.out.find("3 workloads") != std::string::npos);

  Completed listed = harness.Kiln({"defs", "list"});
  INFO(listed.Describe());
  REQUIRE(listed.exit_code == 0);
  CHECK(listed.out.find("scale_add_f32") != std::string::npos);
  CHECK(listed.out.find("rmsnorm_h2048") != std::string::npos);  // built in

  Completed as_json = harness.Kiln({"defs", "list", "--json"});
  REQUIRE(as_json.exit_code == 0);
  json j = json::parse(as_json.out);
  bool found = false;
  for (const json& d : j["definitions"]) {
    if (d["name"] == "scale_add_f32") {
      found = true;
      CHECK(d["workload_count"] == 3);
      CHECK(d["has_native_reference"] == true);
    }
  }
  CHECK(found);

  Completed bad = harness.Kiln({"defs", "add", DataPath("bad/unknown_dtype.json")});
  CHECK(bad.exit_code == 2);
  CHECK(bad.err.find("float13") != std::string::npos);

  // The harness's check of the new definition's reference is a run of its own: listed with
  // --all only.
  Completed runs = harness.Kiln({"runs", "list"});
  REQUIRE(runs.exit_code == 0);
  CHECK(runs.out.find("scale_add_f32_reference_check") == std::string::npos);
  Completed all = harness.Kiln({"runs", "list", "--all"});
  REQUIRE(all.exit_code == 0);
  CHECK(all.out.find("scale_add_f32_reference_check") != std::string::npos);
}

TEST_CASE("kiln node describes the harness") {
  Completed r = SharedHarness().Kiln({"node", "--json"});
  INFO(r.Describe());
  REQUIRE(r.exit_code == 0);
  json j = json::parse(r.out);
  CHECK_FALSE(j["backends"].empty());
  Completed text = SharedHarness().Kiln({"node"});
  CHECK(text.exit_code == 0);
  CHECK(text.out.find("backends") != std::string::npos);
  // The text says why a backend is unavailable, as the JSON does.
  for (const auto& [name, why] : j["unavailable_backends"].items()) {
    CHECK(text.out.find("  " + name + ": " + why.get<std::string>()) != std::string::npos);
  }
  CHECK(text.out.find("languages") != std::string::npos);
  // Whether Nsight Compute can profile here, and why not: the same in both.
  const std::string profiling = j["profiling"].get<std::string>();
  CHECK((profiling.rfind("available: ncu at ", 0) == 0 ||
         profiling.rfind("unavailable: ", 0) == 0));
  if (j["devices"].empty() || j["backends"] == json::array({"host"})) {
    CHECK(profiling.rfind("unavailable: no CUDA GPU", 0) == 0);
  }
  CHECK(text.out.find("nsight compute  " + profiling + "\n") != std::string::npos);
  const std::string sandbox = j["sandbox"].get<std::string>();
  CHECK(sandbox.rfind("sandbox: ", 0) == std::string::npos);  // the field names it
  CHECK(text.out.find("sandbox         " + sandbox + "\n") != std::string::npos);
}

TEST_CASE("kiln profile says why a node cannot profile, and checks its flags first") {
  Completed node = SharedHarness().Kiln({"node", "--json"});
  REQUIRE(node.exit_code == 0);
  const std::string profiling = json::parse(node.out)["profiling"].get<std::string>();
  Completed bad = SharedHarness().Kiln({"profile", "--definition", "scale_add_f32", "--solution",
                                        DataPath("solutions/correct"), "--section", "fast"});
  INFO(bad.Describe());
  CHECK(bad.exit_code == 2);
  CHECK(bad.err.find("--section: 'fast' is not one of basic, memory, compute, full") !=
        std::string::npos);
  Completed kinds = SharedHarness().Kiln({"runs", "list", "--kind", "bogus"});
  CHECK(kinds.exit_code == 2);
  CHECK(kinds.err.find("kind: 'bogus' is not one of evaluation, profile") != std::string::npos);
  if (profiling.rfind("unavailable: ", 0) != 0) {
    WARN("this node can profile: tests/gpu/profile_gpu.sh covers kiln profile there");
    return;
  }
  Completed r = SharedHarness().Kiln({"profile", "--definition", "scale_add_f32", "--solution",
                                      DataPath("solutions/correct")});
  INFO(r.Describe());
  CHECK(r.exit_code == 2);
  // The reason kiln node gives, as the refusal's.
  CHECK(r.err.find("this node cannot take profiles: " + profiling.substr(13)) !=
        std::string::npos);
  Completed listed = SharedHarness().Kiln({"runs", "list", "--kind", "profile"});
  CHECK(listed.exit_code == 0);
  CHECK(listed.out == "no runs\n");
}

TEST_CASE("a closed port is reported as unreachable with exit 2") {
  std::string server = "127.0.0.1:" + std::to_string(ClosedPort());
  Completed r = Kiln({"--server", server, "runs", "list"}, 60);
  INFO(r.Describe());
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("cannot reach kiln-harness at " + server) != std::string::npos);

  Completed submit = Kiln({"--server", server, "submit", "--definition", "scale_add_f32",
                           "--solution", DataPath("solutions/correct")},
                          60);
  CHECK(submit.exit_code == 2);
  CHECK(submit.err.find("cannot reach") != std::string::npos);
}

TEST_CASE("help is printed with exit 0 and usage errors exit 2") {
  for (std::vector<std::string> args : std::vector<std::vector<std::string>>{
           {"--help"}, {"help"}, {"help", "submit"}, {"submit", "--help"}}) {
    Completed r = Kiln(args, 30);
    CHECK(r.exit_code == 0);
    CHECK(r.out.find("usage: kiln") != std::string::npos);
  }
  Completed r = Kiln({"frobnicate"}, 30);
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("unknown command 'frobnicate'") != std::string::npos);
}

TEST_CASE("runs list names an unknown definition and a mistyped status instead of 'no runs'") {
  Completed unknown = SharedHarness().Kiln({"runs", "list", "--definition", "nosuch_def"});
  INFO(unknown.Describe());
  CHECK(unknown.exit_code == 2);
  CHECK(unknown.err.find(
            "--definition: unknown definition 'nosuch_def' (registered on this node:") !=
        std::string::npos);
  CHECK(unknown.out.find("no runs") == std::string::npos);

  Completed lower = SharedHarness().Kiln({"runs", "list", "--status", "passed"});
  INFO(lower.Describe());
  CHECK(lower.exit_code == 0);

  Completed typo = SharedHarness().Kiln({"runs", "list", "--status", "passd"});
  CHECK(typo.exit_code == 2);
  CHECK(typo.err.find("(one of PASSED,") != std::string::npos);

  Completed group = Kiln({"help", "runs"}, 30);
  CHECK(group.exit_code == 0);
  CHECK(group.out.find("runs export") != std::string::npos);
  CHECK(group.out.find("defs add") == std::string::npos);
}

TEST_CASE("kiln-harness --help documents every flag it takes") {
  Completed help = Run({HarnessBinary(), "--help"}, 30);
  REQUIRE(help.exit_code == 0);
  // Every ABSL_FLAG of the harness's own sources, as --flag-name.
  std::regex flag_decl(R"(ABSL_FLAG\(\s*[\w:]+\s*,\s*(\w+))");
  int checked = 0;
  for (const char* file : {"/server/main.cc", "/server/access_flags.cc", "/server/sandbox_flags.cc"}) {
    std::ifstream in(std::string(KILN_SOURCE_DIR) + file);
    std::stringstream text;
    text << in.rdbuf();
    const std::string source = text.str();
    for (std::sregex_iterator it(source.begin(), source.end(), flag_decl), end; it != end; ++it) {
      std::string name = (*it)[1];
      std::replace(name.begin(), name.end(), '_', '-');
      INFO(file << ": --" << name);
      CHECK(help.out.find("--" + name) != std::string::npos);
      ++checked;
    }
  }
  CHECK(checked >= 20);
}

TEST_CASE("kiln demo runs the built-in example end to end and keeps its run to look at") {
  ScratchDir dir;
  Completed r = Kiln({"demo", "--data-dir", dir / "demo"}, 600);
  INFO(r.Describe());
  CHECK(r.exit_code == 0);
  CHECK(r.out.find("kiln demo: embedded kiln-harness on 127.0.0.1:") != std::string::npos);
  CHECK(r.out.find(": PASSED (") != std::string::npos);
  std::smatch m;
  REQUIRE(std::regex_search(r.out, m, std::regex("\\(data in (\\S+)\\)")));
  CHECK(std::string(m[1]) == dir / "demo");
  CHECK_THAT(r.out, Catch::Contains("--data-dir " + dir / "demo"));
  CHECK_THAT(r.out, Catch::Contains("runs list"));
  // The next step the demo names: a harness over its folder lists the demo's run.
  HarnessInstance harness(dir / "demo");
  Completed listed = harness.Kiln({"runs", "list", "--json"});
  INFO(listed.Describe());
  REQUIRE(listed.exit_code == 0);
  const nlohmann::json runs = nlohmann::json::parse(listed.out)["runs"];
  REQUIRE(runs.size() == 1);
  CHECK(runs[0]["status"] == "PASSED");
}

TEST_CASE("a mistyped --definition is named as unknown, not blamed on the solution") {
  Completed typo = SharedHarness().Kiln({"submit", "--definition", "scale_add_f3", "--solution",
                                         DataPath("solutions/correct")});
  INFO(typo.Describe());
  CHECK(typo.exit_code == 2);
  CHECK_THAT(typo.err, Catch::Contains("--definition: unknown definition 'scale_add_f3' "
                                       "(registered on this node:"));
  CHECK_THAT(typo.err, Catch::Contains("solves 'scale_add_f32'"));
  // Every command words it the same.
  for (const std::vector<std::string>& args :
       std::vector<std::vector<std::string>>{{"leaderboard", "scale_add_f3"},
                                             {"report", "scale_add_f3"},
                                             {"defs", "show", "scale_add_f3"}}) {
    Completed c = SharedHarness().Kiln(args);
    INFO(c.Describe());
    CHECK(c.exit_code == 2);
    CHECK_THAT(c.err, Catch::Contains("unknown definition 'scale_add_f3' (registered on this node:"));
  }
}

TEST_CASE("flags a command would not use are refused, not ignored") {
  Completed demo = Kiln({"demo", "--server", "127.0.0.1:1"});
  CHECK(demo.exit_code == 2);
  CHECK_THAT(demo.err, Catch::Contains("kiln demo: --server: kiln demo starts its own harness"));
  Completed campaign = Kiln({"campaign", "list", "--server", "127.0.0.1:1"});
  CHECK(campaign.exit_code == 2);
  CHECK_THAT(campaign.err, Catch::Contains("--controller HOST:PORT"));
  Completed global = Kiln({"--controller", "127.0.0.1:1", "runs", "list"});
  CHECK(global.exit_code == 2);
  CHECK_THAT(global.err, Catch::Contains("only campaign commands talk to kiln-controller"));
  // --controller before the command reaches the campaign command (nothing listens there).
  Completed before = Kiln({"--controller", "127.0.0.1:1", "campaign", "list"});
  CHECK(before.exit_code == 2);
  CHECK_THAT(before.err, Catch::Contains("127.0.0.1:1"));
}

namespace kiln::testing {
namespace {

std::string ReadFileOrDie(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  REQUIRE(in.good());
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

void WriteFileOrDie(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
  REQUIRE(out.good());
}

// Waits until the harness's reference check of `definition` has finished; its final status.
std::string WaitForReferenceCheck(const HarnessInstance& harness, const std::string& definition) {
  for (int attempt = 0; attempt < 600; ++attempt) {
    Completed listed = harness.Kiln({"runs", "list", "--all", "--json", "--definition", definition});
    REQUIRE(listed.exit_code == 0);
    const json parsed = json::parse(listed.out);
    for (const json& run : parsed["runs"]) {
      if (run["principal"] != "kiln") continue;
      if (run.value("state", "") == "RUN_DONE") return run.value("status", "");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  Completed last = harness.Kiln({"runs", "list", "--all", "--json", "--definition", definition});
  FAIL("the reference check of " << definition << " did not finish in 60 s: " << last.out);
  return "";
}

TEST_CASE("defs add checks the reference at once: a degenerate definition is flagged before any "
          "submission, an honest one is not") {
  ScratchDir dir;
  HarnessInstance harness(dir / "data");
  // scale_add_f32 with outputs a million times smaller: all zeros would pass atol 1e-2.
  json def = json::parse(ReadFileOrDie(DataPath("scale_add_f32.json")));
  def["name"] = "tiny_scale_add_f32";
  def["native_reference"]["definition"] = "tiny_scale_add_f32";
  std::string& source = def["native_reference"]["sources"][0]["content"].get_ref<std::string&>();
  const std::string honest = "out[i] = a[i] * T(2) + b[i];";
  REQUIRE(source.find(honest) != std::string::npos);
  source.replace(source.find(honest), honest.size(), "out[i] = (a[i] * T(2) + b[i]) * T(1e-6);");
  WriteFileOrDie(dir / "tiny.json", def.dump(2));
  std::string workloads = ReadFileOrDie(DataPath("scale_add_f32_single.jsonl"));
  workloads = std::regex_replace(workloads, std::regex("\"scale_add_f32\""),
                                 "\"tiny_scale_add_f32\"");
  WriteFileOrDie(dir / "tiny.jsonl", workloads);

  Completed tiny = harness.Kiln({"defs", "add", dir / "tiny.json", "--workloads", dir / "tiny.jsonl"});
  INFO(tiny.Describe());
  REQUIRE(tiny.exit_code == 0);
  CHECK_THAT(tiny.out, Catch::Contains("checking its reference for degenerate outputs: run"));
  Completed honest_def = harness.Kiln({"defs", "add", DataPath("scale_add_f32.json"),
                                       "--workloads", DataPath("scale_add_f32_single.jsonl")});
  REQUIRE(honest_def.exit_code == 0);
  CHECK(WaitForReferenceCheck(harness, "tiny_scale_add_f32") == "PASSED");
  CHECK(WaitForReferenceCheck(harness, "scale_add_f32") == "PASSED");

  Completed listed = harness.Kiln({"defs", "list", "--json"});
  INFO(listed.Describe());
  REQUIRE(listed.exit_code == 0);
  int seen = 0;
  const json definitions = json::parse(listed.out)["definitions"];
  for (const json& d : definitions) {
    if (d["name"] == "tiny_scale_add_f32") {
      ++seen;
      CHECK_THAT(d.value("integrity_warning", ""),
                 Catch::StartsWith("integrity.degenerate_definition"));
    } else if (d["name"] == "scale_add_f32") {
      ++seen;
      CHECK(d.value("integrity_warning", "").empty());
    }
  }
  CHECK(seen == 2);
  Completed table = harness.Kiln({"defs", "list"});
  CHECK_THAT(table.out, Catch::Contains("DEGENERATE"));
}

}  // namespace
}  // namespace kiln::testing

namespace {

// Runs `kiln --server ADDR mcp ARGS` with `requests` (JSON-RPC lines) on stdin, keeping stdin
// open until `answers` responses with ids 10.. have come (kiln mcp cancels what is in flight
// when its client goes), and returns the responses by id.
std::map<int, json> McpSession(const std::string& address, const std::string& args,
                               const std::vector<json>& requests, int answers,
                               const ScratchDir& dir) {
  const std::string in = dir / "requests.jsonl";
  const std::string out = dir / "responses.jsonl";
  {
    std::ofstream f(in);
    for (const json& r : requests) f << r.dump() << "\n";
  }
  std::string wait = "n=0; while [ $n -lt 600 ]; do c=$(grep -c '\"id\":1[0-9]' " + out +
                     " 2>/dev/null || true); [ \"${c:-0}\" -ge " + std::to_string(answers) +
                     " ] && break; sleep 0.2; n=$((n+1)); done";
  Completed r = Run({"/bin/sh", "-c",
                     "(cat " + in + "; " + wait + ") | " + KilnBinary() + " --server " + address +
                         " mcp " + args + " > " + out},
                    180);
  INFO(r.Describe());
  CHECK(r.exit_code == 0);
  std::map<int, json> by_id;
  std::ifstream f(out);
  for (std::string line; std::getline(f, line);) {
    json m = json::parse(line, nullptr, false);
    if (m.is_object() && m.contains("id") && m["id"].is_number_integer()) {
      by_id[m["id"].get<int>()] = m;
    }
  }
  return by_id;
}

std::vector<json> McpEvaluations(int count) {
  std::vector<json> requests = {
      {{"jsonrpc", "2.0"}, {"id", 1}, {"method", "initialize"},
       {"params", {{"protocolVersion", "2025-06-18"}, {"capabilities", json::object()},
                   {"clientInfo", {{"name", "budget-test"}, {"version", "1"}}}}}},
      {{"jsonrpc", "2.0"}, {"method", "notifications/initialized"}}};
  const std::string source = R"(#include <kiln/abi.h>
extern "C" int run(const kiln_tensor* args, int32_t nargs, const kiln_context* ctx) {
  const float* a = (const float*)args[0].data;
  const float* b = (const float*)args[1].data;
  float* c = (float*)args[2].data;
  for (int64_t i = 0; i < args[0].shape[0]; ++i) c[i] = a[i] + b[i];
  return 0;
})";
  for (int i = 0; i < count; ++i) {
    requests.push_back(
        {{"jsonrpc", "2.0"}, {"id", 10 + i}, {"method", "tools/call"},
         {"params",
          {{"name", "evaluate"},
           {"arguments",
            {{"definition", "vector_add_f32"},
             {"files", {{"solution.cc", source}}},
             {"language", "cpp"},
             {"entry_point", "solution.cc::run"},
             {"workloads",
              json::array({{{"uuid", "7f0ffe00-0000-4000-8000-00000000100" + std::to_string(i)},
                            {"axes", {{"n", 1024}}},
                            {"inputs", {{"a", {{"type", "random"}}},
                                        {"b", {{"type", "random"}}}}}}})}}}}}});
  }
  return requests;
}

bool BudgetSpent(const json& response) {
  const json& r = response.value("result", json::object());
  return r.value("isError", false) &&
         r.value("structuredContent", json::object()).value("budget_spent", false);
}

}  // namespace

TEST_CASE("usage errors are prefixed once, and a demo with a bad --mode starts nothing") {
  Completed bad_timeout = Kiln({"--server", "127.0.0.1:1", "submit", "--definition", "x",
                                "--solution", "y", "--timeout-s", "abc"});
  INFO(bad_timeout.Describe());
  CHECK(bad_timeout.exit_code == 2);
  CHECK_THAT(bad_timeout.err, Catch::StartsWith("kiln submit: --timeout-s: expected a positive"));
  ScratchDir dir;
  Completed demo = Kiln({"demo", "--mode", "bogus", "--data-dir", dir / "demo"});
  INFO(demo.Describe());
  CHECK(demo.exit_code == 2);
  CHECK(demo.err.find("kiln demo: --mode: 'bogus' is not one of official, kernelbench, robust") !=
        std::string::npos);
  CHECK(demo.out.find("The run is archived") == std::string::npos);
  CHECK_FALSE(std::filesystem::exists(dir / "demo"));
}

TEST_CASE("kiln mcp --max-evaluations admits at most N however parallel calls interleave") {
  ScratchDir harness_dir, dir;
  HarnessInstance harness(harness_dir.path(), {"--backend", "host"});
  const std::string ledger = dir / "ledger";
  // Four evaluate calls sent back to back, each answered on its own thread: two are admitted,
  // two refused as the budget spent, and the ledger holds the two admitted runs.
  std::map<int, json> answers = McpSession(
      harness.address(), "--max-evaluations 2 --ledger " + ledger, McpEvaluations(4), 4, dir);
  REQUIRE(answers.size() >= 5);  // initialize and the four calls
  int spent = 0, judged = 0;
  for (int id = 10; id < 14; ++id) {
    INFO(answers[id].dump());
    if (BudgetSpent(answers[id])) {
      ++spent;
    } else if (answers[id]["result"].value("isError", true) == false) {
      ++judged;
    }
  }
  CHECK(judged == 2);
  CHECK(spent == 2);
  std::ifstream f(ledger);
  int lines = 0;
  for (std::string line; std::getline(f, line);) lines += line.empty() ? 0 : 1;
  CHECK(lines == 2);

  // A kiln mcp started again on the same ledger (an agent's client restarts its server) finds
  // the budget spent: the ledger's lines count, not only this process's calls.
  ScratchDir again;
  std::map<int, json> restarted = McpSession(
      harness.address(), "--max-evaluations 2 --ledger " + ledger, McpEvaluations(1), 1, again);
  INFO(restarted[10].dump());
  CHECK(BudgetSpent(restarted[10]));

  // A budget of 0 admits nothing (a campaign with nothing left gives its agent 0).
  ScratchDir none;
  std::map<int, json> refused = McpSession(harness.address(), "--max-evaluations 0",
                                           McpEvaluations(1), 1, none);
  INFO(refused[10].dump());
  CHECK(BudgetSpent(refused[10]));
}

TEST_CASE("a --listen address in use is named as such, without gRPC's internal error line") {
  ScratchDir first_dir, second_dir;
  HarnessInstance first(first_dir.path(), {"--backend", "host", "--python", "none"});
  Completed second = Run({HarnessBinary(), "--listen", first.address(), "--data-dir",
                          second_dir.path(), "--backend", "host", "--python", "none", "--quiet"},
                         60);
  INFO(second.Describe());
  CHECK(second.exit_code == 2);
  CHECK(second.err.find("cannot listen on " + first.address() + ": the address is in use") !=
        std::string::npos);
  CHECK(second.err.find("chttp2") == std::string::npos);
}
