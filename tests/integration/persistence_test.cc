// Runs outlive the harness: a clean restart keeps them, a SIGKILL mid-run leaves the run
// INTERRUPTED after the restart.
#include <signal.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <nlohmann/json.hpp>
#include <regex>
#include <thread>

#include "tests/integration/harness_instance.h"

using namespace kiln::testing;
using nlohmann::json;

namespace {

void AddDefinition(const HarnessInstance& harness) {
  Completed added = harness.Kiln({"defs", "add", DataPath("scale_add_f32.json"), "--workloads",
                                  DataPath("scale_add_f32_single.jsonl")});
  INFO(added.Describe());
  REQUIRE(added.exit_code == 0);
}

std::vector<std::string> SubmitArgs(const HarnessInstance& harness, const std::string& solution) {
  return {KilnBinary(),   "--server",      harness.address(), "submit",
          "--definition", "scale_add_f32", "--solution",      DataPath("solutions/" + solution),
          "--mode",       "kernelbench"};
}

// Waits until `done` holds, polling; false after `timeout_s`.
template <typename Pred>
bool WaitFor(Pred done, double timeout_s) {
  double deadline = NowSeconds() + timeout_s;
  while (NowSeconds() < deadline) {
    if (done()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return false;
}

}  // namespace

TEST_CASE("runs persist across a harness restart") {
  ScratchDir dir;
  std::string run_id;
  {
    HarnessInstance harness(dir / "data");
    AddDefinition(harness);
    std::vector<std::string> args = SubmitArgs(harness, "correct");
    args.push_back("--json");
    Completed r = Run(args);
    INFO(r.Describe());
    REQUIRE(r.exit_code == 0);
    run_id = json::parse(r.out)["run_id"];
    Completed stopped = harness.Terminate();
    INFO(stopped.Describe() << harness.log());
    CHECK(stopped.exit_code == 0);
    CHECK_FALSE(stopped.timed_out);
  }
  HarnessInstance restarted(dir / "data");
  Completed shown = restarted.Kiln({"runs", "show", run_id});
  INFO(shown.Describe());
  REQUIRE(shown.exit_code == 0);
  CHECK(shown.out.find(run_id) != std::string::npos);
  CHECK(shown.out.find("PASSED") != std::string::npos);
  CHECK(shown.out.find("queued") != std::string::npos);
  CHECK(shown.out.find("timing") != std::string::npos);
  CHECK(shown.out.find("kernel.cc") != std::string::npos);  // the sources
  // Without --tokens the team is the local principal; the solution's author is only shown.
  CHECK_THAT(shown.out, Catch::Contains("team        local\n") &&
                            Catch::Contains("author      kiln-tests\n"));

  Completed as_json = restarted.Kiln({"runs", "show", run_id, "--json"});
  REQUIRE(as_json.exit_code == 0);
  json run = json::parse(as_json.out);
  CHECK(run["run_id"] == run_id);
  REQUIRE(run["traces"].size() == 1);
  CHECK(run["traces"][0]["evaluation"]["status"] == "PASSED");

  Completed listed = restarted.Kiln({"runs", "list"});
  INFO(listed.Describe());
  REQUIRE(listed.exit_code == 0);
  CHECK(listed.out.find(run_id) != std::string::npos);
  CHECK(listed.out.find("scale_add_correct") != std::string::npos);

  Completed filtered = restarted.Kiln({"runs", "list", "--status", "COMPILE_ERROR"});
  REQUIRE(filtered.exit_code == 0);
  CHECK(filtered.out.find(run_id) == std::string::npos);
}

TEST_CASE("a run cut off by SIGKILL of the harness is INTERRUPTED after the restart") {
  AdoptOrphans();
  ScratchDir dir;
  std::string run_id;
  {
    HarnessInstance harness(dir / "data");
    AddDefinition(harness);
    Child client =
        Child::Start(SubmitArgs(harness, "endless_loop"), dir / "client.out", dir / "client.err");
    // Kill once the candidate is spinning in its worker.
    bool verifying = WaitFor(
        [&] {
          return std::regex_search(client.ReadErr(), std::regex("\\[run \\S+\\] .*verifying"));
        },
        60);
    INFO(client.ReadErr());
    REQUIRE(verifying);
    run_id = AdmittedRunId(client.ReadErr());
    REQUIRE_FALSE(run_id.empty());
    harness.Kill();
    Completed c = client.Wait(60);
    INFO(c.Describe());
    CHECK(c.exit_code == 2);  // the stream broke: a connection error, not a verdict
    CHECK(c.err.find(run_id) != std::string::npos);
    // A worker whose harness died must not spin on: it dies with the harness (PDEATHSIG).
    std::vector<std::string> alive = LiveOrphans(5.0);
    for (const std::string& name : alive) UNSCOPED_INFO("outlived the killed harness: " << name);
    CHECK(alive.empty());
    KillOrphans();  // reap the dead, end anything left so later tests start clean
  }
  HarnessInstance restarted(dir / "data");
  Completed shown = restarted.Kiln({"runs", "show", run_id});
  INFO(shown.Describe());
  REQUIRE(shown.exit_code == 0);
  CHECK(shown.out.find("INTERRUPTED") != std::string::npos);
}
