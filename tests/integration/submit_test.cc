// kiln submit against a real kiln-harness: one solution per verdict.
#include <signal.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <thread>

#include "tests/integration/harness_instance.h"

using namespace kiln::testing;
using nlohmann::json;

namespace {

// kiln submit --definition scale_add_f32 --solution data/solutions/<name> --mode kernelbench
// --workloads data/scale_add_f32_single.jsonl
Completed Submit(const std::string& solution, std::vector<std::string> extra = {}) {
  std::vector<std::string> args{
      "submit", "--definition", "scale_add_f32", "--solution", DataPath("solutions/" + solution),
      "--mode", "kernelbench"};
  args.insert(args.end(), {"--workloads", DataPath("scale_add_f32_single.jsonl")});
  args.insert(args.end(), extra.begin(), extra.end());
  return SharedHarness().Kiln(args);
}

json ParseJson(const Completed& r) {
  INFO(r.Describe());
  json j = json::parse(r.out, nullptr, false);
  REQUIRE_FALSE(j.is_discarded());
  return j;
}

bool Contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

// The correct solution file on the definition file's three workloads, official mode, --json.
Completed SubmitCorrectOfficial(HarnessInstance& harness) {
  return harness.Kiln({"submit", "--definition", DataPath("scale_add_f32.json"), "--workloads",
                       DataPath("scale_add_f32.jsonl"), "--solution",
                       DataPath("solutions/correct.json"), "--mode", "official", "--json"});
}

}  // namespace

TEST_CASE("a correct solution file passes in official mode with latency and speedup") {
  HarnessInstance& harness = SharedHarness();
  Completed r = SubmitCorrectOfficial(harness);
  INFO(r.Describe());
  REQUIRE(r.exit_code == 0);
  json j = ParseJson(r);
  CHECK(j["status"] == "PASSED");
  CHECK_FALSE(j["run_id"].get<std::string>().empty());
  REQUIRE(j["traces"].size() == 3);
  for (const json& t : j["traces"]) {
    CHECK(t["definition"] == "scale_add_f32");
    CHECK(t["solution"] == "scale_add_correct_file");
    CHECK(t["evaluation"]["status"] == "PASSED");
    CHECK(t["evaluation"]["performance"]["latency_ms"].get<double>() > 0);
    CHECK(t["evaluation"]["performance"]["reference_latency_ms"].get<double>() > 0);
    CHECK(t["evaluation"]["performance"]["speedup_factor"].get<double>() > 0);
  }
  // Progress went to stderr, one line per finished workload.
  CHECK(Contains(r.err, "workload 3/3 PASSED"));
}

TEST_CASE("a correct solution folder passes on the registered workloads, all in the table") {
  // A definition file without --workloads keeps the workloads registered for it.
  Completed r =
      SharedHarness().Kiln({"submit", "--definition", DataPath("scale_add_f32.json"), "--solution",
                            DataPath("solutions/correct"), "--mode", "kernelbench"});
  INFO(r.Describe());
  REQUIRE(r.exit_code == 0);
  CHECK(Contains(r.out, "latency ms"));
  CHECK(Contains(r.out, "speedup"));
  for (const char* uuid : {"5ca1eadd", "n=1000", "n=4096", "n=65536"}) CHECK(Contains(r.out, uuid));
  std::regex summary(
      "run \\S+: PASSED \\(3/3 workloads\\), mean speedup [0-9.]+x, mode kernelbench");
  CHECK(std::regex_search(r.out, summary));
  CHECK(Contains(r.err, "workload 1/3 PASSED"));
  CHECK_FALSE(AdmittedRunId(r.err).empty());
}

TEST_CASE("a wrong solution is INCORRECT_NUMERICAL with its errors shown") {
  Completed r = Submit("wrong");
  INFO(r.Describe());
  CHECK(r.exit_code == 1);
  CHECK(Contains(r.out, "INCORRECT_NUMERICAL"));
  CHECK(Contains(r.out, "1.00e+00"));  // max abs err column: off by exactly one

  Completed j = Submit("wrong", {"--json"});
  CHECK(j.exit_code == 1);
  json doc = ParseJson(j);
  CHECK(doc["status"] == "INCORRECT_NUMERICAL");
  REQUIRE(doc["traces"].size() == 1);
  const json& correctness = doc["traces"][0]["evaluation"]["correctness"];
  CHECK(correctness["max_absolute_error"].get<double>() == Approx(1.0).margin(1e-3));
}

TEST_CASE("a syntax error is COMPILE_ERROR quoting the file and line") {
  Completed r = Submit("syntax_error");
  INFO(r.Describe());
  CHECK(r.exit_code == 1);
  CHECK(Contains(r.out, "COMPILE_ERROR"));
  CHECK(std::regex_search(r.out, std::regex("kernel\\.cc:[0-9]+")));
}

TEST_CASE("a crashing solution is RUNTIME_ERROR and the harness keeps serving") {
  Completed crash = Submit("segfault");
  INFO(crash.Describe());
  CHECK(crash.exit_code == 1);
  CHECK(Contains(crash.out, "RUNTIME_ERROR"));
  CHECK(Contains(crash.out + crash.err, "SIGSEGV"));

  Completed next = Submit("correct");
  INFO(next.Describe());
  CHECK(next.exit_code == 0);
  CHECK(Contains(next.out, "PASSED"));
}

TEST_CASE("an endless loop is TIMEOUT after the worker limit") {
  Completed r = Submit("endless_loop");
  INFO(r.Describe());
  CHECK(r.exit_code == 1);
  CHECK(Contains(r.out, "TIMEOUT"));
  // Generous: the limit is 5 s per worker; compile and reference timing come on top.
  CHECK(r.wall_s < kWorkerTimeoutS + 60);
}

TEST_CASE("a solution that writes its input does not pass") {
  Completed r = Submit("mutates_input", {"--json"});
  INFO(r.Describe());
  CHECK(r.exit_code == 1);
  json j = ParseJson(r);
  CHECK(j["status"] != "PASSED");
  CHECK(j["status"] != "COMPILE_ERROR");
}

TEST_CASE("a solution that never writes its output does not pass") {
  Completed r = Submit("output_not_written");
  INFO(r.Describe());
  CHECK(r.exit_code == 1);
  CHECK_FALSE(Contains(r.out, ": PASSED"));
  CHECK(std::regex_search(r.out, std::regex("INCORRECT_NUMERICAL|REJECTED")));
}

TEST_CASE("an entry point that is not exported is reported by name") {
  Completed r = Submit("not_exported");
  INFO(r.Describe());
  CHECK(r.exit_code == 1);
  CHECK(std::regex_search(r.out, std::regex("COMPILE_ERROR|RUNTIME_ERROR")));
  CHECK(std::regex_search(r.out, std::regex("scale_add\\b")));  // not scale_add_f32
}

TEST_CASE("Ctrl-C during submit cancels the run") {
  HarnessInstance& harness = SharedHarness();
  ScratchDir dir;
  Child client =
      Child::Start({KilnBinary(), "--server", harness.address(), "submit", "--definition",
                    "scale_add_f32", "--solution", DataPath("solutions/endless_loop"),
                    "--workloads", DataPath("scale_add_f32_single.jsonl"), "--mode", "kernelbench"},
                   dir / "out", dir / "err");
  double deadline = NowSeconds() + 60;
  while (!std::regex_search(client.ReadErr(), std::regex("\\[run \\S+\\] .*verifying")) &&
         client.running() && NowSeconds() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  std::string run_id = AdmittedRunId(client.ReadErr());
  REQUIRE_FALSE(run_id.empty());
  client.Signal(SIGINT);
  Completed r = client.Wait(60);
  INFO(r.Describe());
  CHECK(r.exit_code == 1);
  CHECK(Contains(r.out, run_id));
  CHECK(Contains(r.out, "CANCELLED"));

  // The harness records the cancellation once the worker is gone.
  std::string shown;
  while (NowSeconds() < deadline) {
    shown = harness.Kiln({"runs", "show", run_id}).out;
    if (Contains(shown, "CANCELLED")) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  INFO(shown);
  CHECK(Contains(shown, "CANCELLED"));
}

TEST_CASE("a --timeout-s that runs out says so, where the run was, and the run is cancelled") {
  HarnessInstance& harness = SharedHarness();
  // The worker's own limit is 5 s; the client's 2 s runs out first, mid-verification.
  Completed r = harness.Kiln({"submit", "--definition", "scale_add_f32", "--solution",
                              DataPath("solutions/endless_loop"), "--workloads",
                              DataPath("scale_add_f32_single.jsonl"), "--timeout-s", "2"},
                             60);
  INFO(r.Describe());
  CHECK(r.exit_code != 0);
  CHECK(Contains(r.err, "kiln: --timeout-s 2 ran out with the run at 'workload 1/1: "));
  CHECK(Contains(r.err, "the harness cancels the run"));
  CHECK_FALSE(Contains(r.err, "Deadline Exceeded"));
  const std::string run_id = AdmittedRunId(r.err);
  REQUIRE_FALSE(run_id.empty());
  std::string shown;
  const double deadline = NowSeconds() + 60;
  while (NowSeconds() < deadline) {
    shown = harness.Kiln({"runs", "show", run_id}).out;
    if (Contains(shown, "CANCELLED")) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  INFO(shown);
  CHECK(Contains(shown, "CANCELLED"));
}

TEST_CASE("several --solution flags are one batch: a run and verdict each, on the same inputs") {
  Completed r = SharedHarness().Kiln(
      {"submit", "--definition", "scale_add_f32", "--solution", DataPath("solutions/correct"),
       "--solution", DataPath("solutions/wrong"), "--mode", "kernelbench", "--workloads",
       DataPath("scale_add_f32_single.jsonl"), "--json"});
  INFO(r.Describe());
  CHECK(r.exit_code == 1);  // one of them is wrong
  json doc = ParseJson(r);
  CHECK_FALSE(doc["batch_id"].get<std::string>().empty());
  REQUIRE(doc["runs"].size() == 2);
  CHECK(doc["runs"][0]["status"] == "PASSED");
  CHECK(doc["runs"][1]["status"] == "INCORRECT_NUMERICAL");
  CHECK(doc["runs"][0]["run_id"] != doc["runs"][1]["run_id"]);
  for (const json& run : doc["runs"]) {
    REQUIRE(run["traces"].size() == 1);
    CHECK(run["traces"][0]["kiln"]["batch_id"] == doc["batch_id"]);
  }
  // The text form names each solution above its table.
  Completed text = SharedHarness().Kiln(
      {"submit", "--definition", "scale_add_f32", "--solution", DataPath("solutions/correct"),
       "--solution", DataPath("solutions/correct.json"), "--mode", "kernelbench", "--workloads",
       DataPath("scale_add_f32_single.jsonl")});
  INFO(text.Describe());
  CHECK(text.exit_code == 0);
  CHECK(Contains(text.out, "== scale_add_correct_file (run "));
  CHECK(Contains(text.out, "PASSED (1/1 workloads)"));
}

TEST_CASE("runs artifacts lists a run's files and runs artifact downloads one, checked") {
  HarnessInstance& harness = SharedHarness();
  Completed r = SubmitCorrectOfficial(harness);
  INFO(r.Describe());
  REQUIRE(r.exit_code == 0);
  const std::string run_id = ParseJson(r)["run_id"];

  Completed listed = harness.Kiln({"runs", "artifacts", run_id, "--json"});
  INFO(listed.Describe());
  REQUIRE(listed.exit_code == 0);
  json doc = ParseJson(listed);
  CHECK(doc["run_id"] == run_id);
  std::map<std::string, json> by_name;
  for (const json& a : doc["artifacts"]) {
    by_name[a["kind"].get<std::string>() + "/" + a["name"].get<std::string>()] = a;
  }
  REQUIRE(by_name.count("samples/w0") == 1);
  REQUIRE(by_name.count("worker_log/w0") == 1);

  // The table, and runs show's list, name them as runs artifact takes them.
  Completed table = harness.Kiln({"runs", "artifacts", run_id});
  CHECK(table.exit_code == 0);
  CHECK(Contains(table.out, "samples/w0"));
  CHECK(Contains(harness.Kiln({"runs", "show", run_id}).out, "worker_log/w2"));

  // A bare name shared by two kinds is refused, naming both.
  Completed ambiguous = harness.Kiln({"runs", "artifact", run_id, "w0"});
  CHECK(ambiguous.exit_code == 2);
  CHECK(Contains(ambiguous.err, "samples/w0"));
  CHECK(Contains(ambiguous.err, "worker_log/w0"));
  Completed missing = harness.Kiln({"runs", "artifact", run_id, "samples/w9"});
  CHECK(missing.exit_code == 2);
  CHECK(Contains(missing.err, "has no artifact 'samples/w9'; it has: "));
  CHECK(Contains(missing.err, "samples/w1"));
  // With --kind the name is taken whole: no worker log is named "samples/w0".
  Completed whole =
      harness.Kiln({"runs", "artifact", run_id, "samples/w0", "--kind", "worker_log"});
  CHECK(whole.exit_code == 2);
  CHECK(Contains(whole.err, "has no artifact 'worker_log/samples/w0'"));

  ScratchDir dir;
  const std::string file = dir / "w0.json";
  Completed fetched =
      harness.Kiln({"runs", "artifact", run_id, "w0", "--kind", "samples", "--output", file});
  INFO(fetched.Describe());
  REQUIRE(fetched.exit_code == 0);
  CHECK(Contains(fetched.err, "wrote " + file));
  const std::string content = Slurp(file);
  CHECK(static_cast<int64_t>(content.size()) == by_name["samples/w0"]["size"].get<int64_t>());
  json samples = json::parse(content, nullptr, false);
  REQUIRE_FALSE(samples.is_discarded());
  CHECK(samples["unit"] == "ms");
  CHECK(samples["samples_ms"].size() > 0);

  // Without --output: stdout.
  Completed log = harness.Kiln({"runs", "artifact", run_id, "worker_log/w0"});
  CHECK(log.exit_code == 0);
  CHECK(Contains(log.out, "kiln-worker"));
}
