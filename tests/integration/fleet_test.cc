// The controller as the fleet's front door (controller/fleet/fleet_service.h): real kiln-harness
// processes (host backend) behind one kiln-controller, and the real kiln CLI pointed at the
// controller with --server.
#include <catch2/catch.hpp>
#include <climits>
#include <fstream>
#include <functional>
#include <optional>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "harness/common/sha256.h"
#include "tests/integration/controller_instance.h"
#include "tests/integration/harness_instance.h"
#include "tests/integration/subprocess.h"

namespace kiln::testing {
namespace {

bool Contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

Json ParseOut(const Completed& r) {
  Json j = Json::parse(r.out, nullptr, false);
  return j;
}

constexpr char kOps[] = "fleet-ops-token";
std::string TeamToken(int i) { return "fleet-team-token-" + std::to_string(i); }

// One tokens file for the harnesses and the controller: four teams and an operator.
std::string WriteTokens(const ScratchDir& dir) {
  const std::string path = dir / "tokens";
  std::ofstream out(path);
  for (int i = 0; i < 4; ++i) {
    out << "team-" << i << " team " << Sha256Hex(TeamToken(i)) << "\n";
  }
  out << "ops operator " << Sha256Hex(kOps) << "\n";
  std::ofstream(dir / "harness-token") << kOps << "\n";
  return path;
}

// The definition and its one workload, registered through the controller on every harness by
// an operator's first submission.
Completed SubmitFile(const std::string& server) {
  return Kiln({"--server", server, "--token", kOps, "submit", "--definition",
               DataPath("scale_add_f32.json"), "--workloads", DataPath("scale_add_f32_single.jsonl"),
               "--solution", DataPath("solutions/correct.json"), "--json"},
              300);
}

Completed SubmitByName(const std::string& server, const std::string& token) {
  return Kiln({"--server", server, "--token", token, "submit", "--definition", "scale_add_f32",
               "--solution", DataPath("solutions/correct.json"), "--json"},
              300);
}

}  // namespace

TEST_CASE("a fleet behind the controller: 20 submissions from 4 clients, a harness killed "
          "mid-run, 20 verdicts, every run found through the controller") {
  ScratchDir dir_a, dir_b, dir_c, controller_dir, secrets;
  AdoptOrphans();
  const std::string tokens = WriteTokens(secrets);
  HarnessInstance a(dir_a.path(), {"--backend", "host", "--tokens", tokens});
  HarnessInstance b(dir_b.path(), {"--backend", "host", "--tokens", tokens});
  HarnessInstance c(dir_c.path(), {"--backend", "host", "--tokens", tokens});
  // A harness's first GetNodeInfo probes its toolchains (seconds on a busy machine): done here,
  // so that the controller's probes find all three healthy at once.
  for (HarnessInstance* h : {&a, &b, &c}) REQUIRE(h->Kiln({"--token", kOps, "node"}).exit_code == 0);
  ControllerInstance controller(
      controller_dir.path(), a.address() + "," + b.address() + "," + c.address(),
      {"--tokens", tokens, "--harness-token-file", secrets / "harness-token"});
  const std::string server = controller.address();

  // The first submission registers the definition on all three harnesses through the controller.
  Completed first = SubmitFile(server);
  INFO(first.Describe());
  REQUIRE(first.exit_code == 0);
  CHECK(ParseOut(first)["status"] == "PASSED");
  for (HarnessInstance* h : {&a, &b, &c}) {
    Completed defs = h->Kiln({"--token", kOps, "defs", "list"});
    CHECK(Contains(defs.out, "scale_add_f32"));
  }

  // 4 teams x 5 submissions at once; a harness is killed while it holds a run.
  constexpr int kClients = 4, kEach = 5;
  std::vector<Completed> results(kClients * kEach);
  std::vector<std::thread> clients;
  for (int client = 0; client < kClients; ++client) {
    clients.emplace_back([&, client] {
      for (int i = 0; i < kEach; ++i) {
        results[client * kEach + i] = SubmitByName(server, TeamToken(client));
      }
    });
  }
  const std::string indexed = "SELECT COUNT(*) FROM fleet_runs";
  const int64_t before = Count(controller.db(), indexed);
  double deadline = NowSeconds() + 120;
  while (NowSeconds() < deadline && Count(controller.db(), indexed) < before + 5) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  // The harness of the run admitted last: it is evaluating it now.
  auto last = Query(controller.db(),
                    "SELECT harness, run_id FROM fleet_runs ORDER BY recorded_unix_ms DESC, "
                    "rowid DESC LIMIT 1");
  REQUIRE(last.size() == 1);
  const std::string killed = last[0][0];
  const std::string lost_run = last[0][1];
  HarnessInstance* victim = killed == a.address() ? &a : killed == b.address() ? &b : &c;
  victim->Kill();
  for (std::thread& t : clients) t.join();
  KillOrphans();

  std::set<std::string> run_ids;
  int retried = 0;
  for (const Completed& r : results) {
    INFO(r.Describe());
    REQUIRE(r.exit_code == 0);
    Json j = ParseOut(r);
    CHECK(j["status"] == "PASSED");
    run_ids.insert(j["run_id"].get<std::string>());
    if (Contains(r.err, "lost the run")) ++retried;
  }
  // Every submission got its own verdict; the run the killed harness held is none of them.
  CHECK(run_ids.size() == results.size());
  CHECK(run_ids.count(lost_run) == 0);
  CHECK(retried >= 1);

  // Each verdict's run is found through the controller, on the harness the index names; a run
  // the killed harness finished before it died is unavailable with it, and the error names it.
  std::set<std::string> on_survivors;
  for (const std::string& id : run_ids) {
    auto holder = Query(controller.db(), "SELECT harness FROM fleet_runs WHERE run_id='" + id + "'");
    REQUIRE(holder.size() == 1);
    Completed show = Kiln({"--server", server, "--token", kOps, "runs", "show", id, "--json"}, 60);
    INFO(show.Describe());
    if (holder[0][0] == killed) {
      CHECK(show.exit_code != 0);
      CHECK(Contains(show.err, killed));
      continue;
    }
    on_survivors.insert(id);
    REQUIRE(show.exit_code == 0);
    CHECK(ParseOut(show)["run_id"] == id);
    // The run is the team's that submitted it: the controller called with the team's token.
    CHECK(ParseOut(show)["principal"].get<std::string>().rfind("team-", 0) == 0);
  }
  CHECK(on_survivors.size() >= results.size() / 2);

  // The fleet's listing (the healthy harnesses') holds every verdict on them, newest first.
  Completed list =
      Kiln({"--server", server, "--token", kOps, "runs", "list", "--json", "--limit", "100"}, 60);
  INFO(list.Describe());
  REQUIRE(list.exit_code == 0);
  Json runs = ParseOut(list);
  std::set<std::string> listed;
  int64_t previous = INT64_MAX;
  bool ordered = true;
  for (const Json& r : runs["runs"]) {
    listed.insert(r["run_id"].get<std::string>());
    // int64 fields are strings in protobuf's JSON mapping.
    const Json& field = r["created_unix_ms"];
    const int64_t created =
        field.is_string() ? std::stoll(field.get<std::string>()) : field.get<int64_t>();
    ordered = ordered && created <= previous;
    previous = created;
  }
  CHECK(ordered);
  for (const std::string& id : on_survivors) CHECK(listed.count(id) == 1);
  // ... and says whose runs it lacks: the killed harness's, with its state.
  REQUIRE(runs["left_out"].size() == 1);
  CHECK(runs["left_out"][0].get<std::string>().rfind(killed + ": ", 0) == 0);
  Completed text = Kiln({"--server", server, "--token", kOps, "runs", "list"}, 60);
  INFO(text.Describe());
  CHECK(std::regex_search(text.out, std::regex("left out: the runs held by harness " + killed +
                                               ": (suspect|gone) for [0-9]+ s \\(")));

  // The fleet leaderboard is what the surviving harnesses hold together: each principal's latest
  // run over both.
  std::map<std::string, std::pair<int64_t, std::string>> latest;
  auto created_of = [](const Json& field) {
    return field.is_string() ? std::stoll(field.get<std::string>()) : field.get<int64_t>();
  };
  for (HarnessInstance* h : {&a, &b, &c}) {
    if (h == victim) continue;
    Completed board = h->Kiln({"--token", kOps, "leaderboard", "scale_add_f32", "--json"});
    INFO(board.Describe());
    REQUIRE(board.exit_code == 0);
    const Json parsed = ParseOut(board);  // kept: a loop over a temporary's member dangles
    for (const Json& e : parsed["entries"]) {
      const std::pair<int64_t, std::string> key{created_of(e["created_unix_ms"]),
                                                e["run_id"].get<std::string>()};
      auto& best = latest[e["principal"].get<std::string>()];
      if (key > best) best = key;
    }
  }
  Completed fleet_board =
      Kiln({"--server", server, "--token", kOps, "leaderboard", "scale_add_f32", "--json"}, 60);
  INFO(fleet_board.Describe());
  REQUIRE(fleet_board.exit_code == 0);
  std::map<std::string, std::string> fleet;
  const Json fleet_parsed = ParseOut(fleet_board);
  for (const Json& e : fleet_parsed["entries"]) {
    fleet[e["principal"].get<std::string>()] = e["run_id"].get<std::string>();
  }
  REQUIRE(fleet.size() == latest.size());
  for (const auto& [principal, key] : latest) CHECK(fleet[principal] == key.second);
  REQUIRE(fleet_parsed["left_out"].size() == 1);
  CHECK(fleet_parsed["left_out"][0].get<std::string>().rfind(killed + ": ", 0) == 0);
  // kiln node through the controller answers for the fleet: each harness and its state.
  Completed node = Kiln({"--server", server, "--token", kOps, "node", "--json"}, 60);
  INFO(node.Describe());
  REQUIRE(node.exit_code == 0);
  const Json fleet_node = ParseOut(node);
  REQUIRE(fleet_node["fleet"].size() == 3);
  int healthy = 0;
  for (const Json& h : fleet_node["fleet"]) {
    const std::string line = h.get<std::string>();
    if (line.rfind(killed + ": ", 0) == 0) {
      CHECK(line.find(": healthy") == std::string::npos);
    } else {
      healthy += line.find(": healthy for ") != std::string::npos ? 1 : 0;
    }
  }
  CHECK(healthy == 2);
  Completed report = Kiln({"--server", server, "--token", kOps, "report", "scale_add_f32"}, 120);
  INFO(report.Describe());
  CHECK(report.exit_code == 0);
  CHECK(Contains(report.out, "left out: the runs held by harness " + killed + ": "));
  for (int i = 0; i < kClients; ++i) CHECK(fleet.count("team-" + std::to_string(i)) == 1);
}

// Polls `check` for up to 90 s.
bool Eventually(const std::function<bool()>& check) {
  const double deadline = NowSeconds() + 90;
  while (NowSeconds() < deadline) {
    if (check()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(250));
  }
  return false;
}

// Whether the harness at `server` holds the definition, the solution fleet_base and the
// settings registered through the controller.
bool HoldsRegistrations(const std::string& server) {
  Completed solutions = Kiln({"--server", server, "--token", kOps, "solutions", "list"}, 60);
  Completed show =
      Kiln({"--server", server, "--token", kOps, "defs", "show", "scale_add_f32", "--json"}, 60);
  if (solutions.exit_code != 0 || show.exit_code != 0) return false;
  Json detail = Json::parse(show.out, nullptr, false);
  if (detail.is_discarded()) return false;
  const Json atol = detail["settings"]["atol"];
  return Contains(solutions.out, "fleet_base") && atol["source"] == "set" &&
         atol["value"].is_number() && atol["value"].get<double>() == 0.5;
}

TEST_CASE("through the controller, what a harness missed while down is replayed to it when it "
          "comes back, also after the controller restarted") {
  ScratchDir dir_a, dir_b, dir_b2, dir_b3, controller_dir, secrets;
  const std::string tokens = WriteTokens(secrets);
  HarnessInstance a(dir_a.path(), {"--backend", "host", "--tokens", tokens});
  std::optional<HarnessInstance> b;
  b.emplace(dir_b.path(), std::vector<std::string>{"--backend", "host", "--tokens", tokens});
  const std::string b_address = b->address();
  for (HarnessInstance* h : {&a, &*b}) {
    REQUIRE(h->Kiln({"--token", kOps, "node"}).exit_code == 0);
  }
  const std::vector<std::string> flags = {"--tokens", tokens, "--harness-token-file",
                                          secrets / "harness-token", "--harness-probe-s", "0.5",
                                          "--harness-gone-s", "3"};
  std::optional<ControllerInstance> controller;
  controller.emplace(controller_dir.path(), a.address() + "," + b_address, flags);
  const std::string server = controller->address();
  Completed first = SubmitFile(server);
  INFO(first.Describe());
  REQUIRE(first.exit_code == 0);

  // b goes down; a solution and a setting are registered through the controller meanwhile.
  b->Terminate();
  b.reset();
  Completed add = Kiln({"--server", server, "--token", kOps, "solutions", "add",
                        DataPath("solutions/correct.json"), "--name", "fleet_base"},
                       120);
  INFO(add.Describe());
  REQUIRE(add.exit_code == 0);
  Completed set = Kiln({"--server", server, "--token", kOps, "defs", "set", "scale_add_f32",
                        "--atol", "0.5"},
                       120);
  INFO(set.Describe());
  REQUIRE(set.exit_code == 0);
  CHECK(HoldsRegistrations(a.address()));

  // b comes back at its address as a new process with an empty archive: the controller
  // replays the definition, the solution and the setting before offering it work.
  HarnessInstance b2(dir_b2.path(),
                     {"--backend", "host", "--tokens", tokens, "--listen", b_address});
  CHECK(Eventually([&] { return HoldsRegistrations(b_address); }));
  Completed by_name = SubmitByName(server, TeamToken(0));
  INFO(by_name.Describe());
  CHECK(by_name.exit_code == 0);

  // Every team's latest run, wherever it ran: team-1's on b (submitted there directly), team-0's
  // through the controller. A confirmation of the top 2 re-measures each run on the harness that
  // holds it, and each confirmation names the run it confirms.
  Completed on_b = SubmitByName(b_address, TeamToken(1));
  INFO(on_b.Describe());
  REQUIRE(on_b.exit_code == 0);
  const std::string b_run = ParseOut(on_b)["run_id"];
  Completed confirm = Kiln({"--server", server, "--token", kOps, "leaderboard", "scale_add_f32",
                            "--confirm", "2", "--json"},
                           300);
  INFO(confirm.Describe());
  REQUIRE(confirm.exit_code == 0);
  const Json confirmed = ParseOut(confirm)["confirmation"];
  REQUIRE(confirmed.size() == 2);
  std::set<std::string> ranked;
  for (const Json& c : confirmed) {
    CHECK(c["status"] == "PASSED");
    ranked.insert(c["ranked_run_id"].get<std::string>());
    const std::string id = c["run_id"];
    Completed shown = Kiln({"--server", server, "--token", kOps, "runs", "show", id, "--json"}, 60);
    CHECK(shown.exit_code == 0);
    CHECK(ParseOut(shown)["confirms"] == c["ranked_run_id"]);
  }
  CHECK(ranked.count(b_run) == 1);
  // The CLI's other reading commands answer through the controller as from a harness.
  for (const std::vector<std::string>& args :
       std::vector<std::vector<std::string>>{{"runs", "list", "--json"},
                                             {"solutions", "list"},
                                             {"defs", "show", "scale_add_f32"},
                                             {"report", "scale_add_f32"},
                                             {"node"}}) {
    std::vector<std::string> argv = {"--server", server, "--token", kOps};
    argv.insert(argv.end(), args.begin(), args.end());
    Completed r = Kiln(argv, 120);
    INFO(r.Describe());
    CHECK(r.exit_code == 0);
  }

  // The journal is in controller.db: a controller started again replays it too.
  CHECK(Count(controller->db(), "SELECT COUNT(*) FROM fleet_registrations") == 3);
  controller.reset();
  b2.Terminate();
  controller.emplace(controller_dir.path(), a.address() + "," + b_address, flags);
  HarnessInstance b3(dir_b3.path(),
                     {"--backend", "host", "--tokens", tokens, "--listen", b_address});
  CHECK(Eventually([&] { return HoldsRegistrations(b_address); }));
}

TEST_CASE("through the controller, a run no harness has is NOT_FOUND, naming the fleet") {
  ScratchDir dir_a, controller_dir;
  HarnessInstance a(dir_a.path(), {"--backend", "host"});
  ControllerInstance controller(controller_dir.path(), a.address());
  Completed show = Kiln({"--server", controller.address(), "runs", "show", "ffffffffffffffffffff"}, 60);
  INFO(show.Describe());
  CHECK(show.exit_code != 0);
  CHECK(Contains(show.err, "on no healthy harness"));
  // A profile (CUDA only) on a fleet of host harnesses is refused at once, not after the wait
  // for a harness that may come back.
  const double start = NowSeconds();
  Completed profile = Kiln({"--server", controller.address(), "profile", "--definition",
                            "scale_add_f32", "--solution", DataPath("solutions/correct.json")},
                           60);
  INFO(profile.Describe());
  CHECK(profile.exit_code != 0);
  CHECK(Contains(profile.err, "FAILED_PRECONDITION: no harness of the fleet runs backend cuda"));
  CHECK(Contains(profile.err, a.address() + " runs host"));
  CHECK(NowSeconds() - start < 30);
}

}  // namespace kiln::testing
