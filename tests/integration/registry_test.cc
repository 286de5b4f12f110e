// How definitions are judged (kiln defs set / show) and the solution registry (kiln solutions,
// kiln defs import, --baseline solution:NAME), driven by the real kiln CLI against a real
// kiln-harness serving a team and an operator.
#include <catch2/catch.hpp>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "harness/common/sha256.h"
#include "tests/integration/harness_instance.h"

namespace kiln::testing {
namespace {

using json = nlohmann::json;

constexpr char kTeam[] = "team-secret-token";
constexpr char kOps[] = "ops-secret-token";

// Starts a harness on `dir`/data serving the tokens file in `dir`.
std::vector<std::string> ServeTokens(const ScratchDir& dir) {
  const std::string path = dir / "tokens";
  std::ofstream(path) << "red team " << Sha256Hex(kTeam) << "\n"
                      << "ops operator " << Sha256Hex(kOps) << "\n";
  return {"--tokens", path, "--check-references=false"};
}

Completed As(const HarnessInstance& harness, const std::string& token,
             std::vector<std::string> args) {
  args.insert(args.begin(), {"--token", token});
  return harness.Kiln(args);
}

void AddScaleAdd(const HarnessInstance& harness) {
  Completed added = As(harness, kOps,
                       {"defs", "add", DataPath("scale_add_f32.json"), "--workloads",
                        DataPath("scale_add_f32_single.jsonl")});
  INFO(added.Describe());
  REQUIRE(added.exit_code == 0);
}

json ShowJson(const HarnessInstance& harness, const std::string& definition) {
  Completed shown = As(harness, kTeam, {"defs", "show", definition, "--json"});
  INFO(shown.Describe());
  REQUIRE(shown.exit_code == 0);
  return json::parse(shown.out);
}

json ListSolutions(const HarnessInstance& harness) {
  Completed listed = As(harness, kTeam, {"solutions", "list", "--json"});
  INFO(listed.Describe());
  REQUIRE(listed.exit_code == 0);
  return json::parse(listed.out)["solutions"];
}

TEST_CASE("defs set changes how runs are judged and timed, for operators only, across restarts") {
  ScratchDir dir;
  std::optional<HarnessInstance> harness;
  harness.emplace(dir / "data", ServeTokens(dir));
  AddScaleAdd(*harness);

  // Defaults first, each marked as such.
  json shown = ShowJson(*harness, "scale_add_f32");
  CHECK(shown["settings"]["atol"]["value"] == 0.01);
  CHECK(shown["settings"]["atol"]["source"] == "default");
  CHECK(shown["settings"]["iterations"]["value"] == 50);
  CHECK(shown["workload_count"] == 1);

  // A team is refused, a bad value is refused naming its flag; neither changes anything.
  Completed refused = As(*harness, kTeam, {"defs", "set", "scale_add_f32", "--atol", "1"});
  CHECK(refused.exit_code == 2);
  CHECK(refused.err.find("PERMISSION_DENIED") != std::string::npos);
  Completed bad = As(*harness, kOps, {"defs", "set", "scale_add_f32", "--iterations", "0"});
  CHECK(bad.exit_code == 2);
  CHECK(bad.err.find("kiln defs set: --iterations: must be >= 1, got 0") == 0);
  CHECK(As(*harness, kOps, {"defs", "set", "scale_add_f32"}).exit_code == 2);
  CHECK(ShowJson(*harness, "scale_add_f32")["settings"]["atol"]["source"] == "default");

  Completed set = As(*harness, kOps,
                     {"defs", "set", "scale_add_f32", "--atol", "1", "--warmup", "1",
                      "--iterations", "5", "--trials", "3"});
  INFO(set.Describe());
  REQUIRE(set.exit_code == 0);
  CHECK(set.out.find("iterations") != std::string::npos);
  Completed listed = As(*harness, kTeam, {"defs", "list"});
  CHECK(listed.out.find("atol=1 warmup=1 iterations=5 trials=3") != std::string::npos);

  // A submission times with those counts in official mode and records what it was judged with.
  Completed submitted = As(*harness, kTeam,
                           {"submit", "--definition", "scale_add_f32", "--solution",
                            DataPath("solutions/correct.json"), "--mode", "official", "--json"});
  INFO(submitted.Describe());
  REQUIRE(submitted.exit_code == 0);
  const json run = json::parse(submitted.out);
  const json& kiln = run["traces"][0]["kiln"];
  CHECK(kiln["timing"]["warmup"] == 1);
  CHECK(kiln["timing"]["iterations"] == 5);
  CHECK(kiln["timing"]["trials"] == 3);
  CHECK(kiln["tolerance"]["atol"] == 1.0);
  Completed run_shown = As(*harness, kTeam, {"runs", "show", run["run_id"].get<std::string>()});
  CHECK(run_shown.out.find("judged with atol 1, rtol 0.01, required matched ratio 1") !=
        std::string::npos);
  CHECK(run_shown.out.find("timed with  official: 3 trials of 1 warmup + 5 timed calls") !=
        std::string::npos);

  // The settings outlive the process; --reset clears them.
  harness->Terminate();
  harness.emplace(dir / "data", ServeTokens(dir));
  shown = ShowJson(*harness, "scale_add_f32");
  CHECK(shown["settings"]["atol"]["value"] == 1.0);
  CHECK(shown["settings"]["atol"]["source"] == "set");
  CHECK(shown["settings"]["trials"]["value"] == 3);
  REQUIRE(As(*harness, kOps, {"defs", "set", "scale_add_f32", "--reset"}).exit_code == 0);
  CHECK(ShowJson(*harness, "scale_add_f32")["settings"]["iterations"]["source"] == "default");
  CHECK(As(*harness, kTeam, {"defs", "show", "no_such_definition"}).exit_code == 2);
}

TEST_CASE("solutions add registers a solution once; runs and reports name it solution:NAME") {
  ScratchDir dir;
  HarnessInstance harness(dir / "data", ServeTokens(dir));
  AddScaleAdd(harness);
  const std::string correct = DataPath("solutions/correct.json");

  CHECK(As(harness, kTeam, {"solutions", "add", correct}).exit_code == 2);  // operators only
  Completed added = As(harness, kOps, {"solutions", "add", correct, "--name", "scalar_loop"});
  INFO(added.Describe());
  REQUIRE(added.exit_code == 0);
  CHECK(added.out.find("created") != std::string::npos);
  CHECK(added.out.find("solution:scalar_loop") != std::string::npos);
  Completed again = As(harness, kOps, {"solutions", "add", correct, "--name", "scalar_loop"});
  CHECK(again.exit_code == 0);
  CHECK(again.out.find("already registered, unchanged") != std::string::npos);

  // Other content under the same name needs --replace.
  json changed = json::parse(Slurp(correct));
  changed["sources"][0]["content"] = changed["sources"][0]["content"].get<std::string>() + "\n";
  const std::string changed_path = dir / "changed.json";
  std::ofstream(changed_path) << changed.dump(2);
  Completed conflict =
      As(harness, kOps, {"solutions", "add", changed_path, "--name", "scalar_loop"});
  CHECK(conflict.exit_code == 2);
  CHECK(conflict.err.find("ALREADY_EXISTS") != std::string::npos);
  CHECK(conflict.err.find("--replace") != std::string::npos);
  const json before = ListSolutions(harness);
  REQUIRE(before.size() == 1);
  Completed replaced =
      As(harness, kOps, {"solutions", "add", changed_path, "--name", "scalar_loop", "--replace"});
  CHECK(replaced.exit_code == 0);
  const json after = ListSolutions(harness);
  REQUIRE(after.size() == 1);
  CHECK(after[0]["name"] == "scalar_loop");
  CHECK(after[0]["definition"] == "scale_add_f32");
  CHECK(after[0]["language"] == "cpp");
  CHECK(after[0]["sha256"] != before[0]["sha256"]);
  CHECK(As(harness, kTeam, {"solutions", "list"}).out.find("scalar_loop") != std::string::npos);

  // A team's run names it as a baseline; a name not registered is refused at admission.
  Completed submitted = As(harness, kTeam,
                           {"submit", "--definition", "scale_add_f32", "--solution", correct,
                            "--mode", "kernelbench", "--baseline", "solution:scalar_loop"});
  INFO(submitted.Describe());
  CHECK(submitted.exit_code == 0);
  Completed unknown = As(harness, kTeam,
                         {"submit", "--definition", "scale_add_f32", "--solution", correct,
                          "--baseline", "solution:nope"});
  CHECK(unknown.exit_code == 2);
  CHECK(unknown.err.find("baselines[0]: no solution 'nope' is registered") != std::string::npos);
  Completed empty = As(harness, kTeam,
                       {"submit", "--definition", "scale_add_f32", "--solution", correct,
                        "--baseline", "solution:"});
  CHECK(empty.exit_code == 2);
  CHECK(empty.err.find("--baseline solution:: empty") != std::string::npos);

  Completed report = As(harness, kOps,
                        {"report", "scale_add_f32", "--mode", "kernelbench", "--baseline",
                         "solution:scalar_loop", "--json"});
  INFO(report.Describe());
  REQUIRE(report.exit_code == 0);
  const json page = json::parse(report.out);
  CHECK(page["baseline"] == "solution:scalar_loop");
  CHECK(page["workloads"][0]["baselines"].contains("solution:scalar_loop"));
  CHECK(As(harness, kOps, {"report", "scale_add_f32", "--baseline", "solution:"}).exit_code == 2);
}

TEST_CASE("defs import registers the dataset's solutions under the definitions it registered") {
  ScratchDir dir;
  HarnessInstance harness(dir / "data", ServeTokens(dir));
  const std::string dataset = DataPath("flashinfer_trace_mini");

  // A dry run registers nothing, and says what it would register.
  Completed dry = As(harness, kOps, {"defs", "import", dataset, "--dry-run", "--json"});
  INFO(dry.Describe());
  REQUIRE(dry.exit_code == 0);
  const json plan = json::parse(dry.out);
  CHECK(plan["summary"]["solutions_to_register"] == 3);
  CHECK(plan["summary"]["solutions_registered"] == 0);
  CHECK(ListSolutions(harness).empty());

  // A team cannot import (the first call is refused: nothing is registered).
  CHECK(As(harness, kTeam, {"defs", "import", dataset}).exit_code == 2);
  CHECK(ListSolutions(harness).empty());

  Completed imported = As(harness, kOps, {"defs", "import", dataset, "--json"});
  INFO(imported.Describe());
  REQUIRE(imported.exit_code == 0);
  const json report = json::parse(imported.out);
  CHECK(report["summary"]["registered"] == 2);
  CHECK(report["summary"]["solutions"] == 4);
  CHECK(report["summary"]["solutions_registered"] == 3);
  CHECK(report["summary"]["solutions_unsupported"] == 1);
  for (const json& s : report["solutions"]) {
    INFO(s.dump());
    CHECK(s["registration"] == (s["language"] == "tilelang" ? "not registered" : "registered"));
  }
  CHECK(imported.err.find("kiln: solutions: 3 registered, 0 already registered, 0 failed") !=
        std::string::npos);

  // Python and CUDA solutions are registered although this node runs cpp only.
  const json listed = ListSolutions(harness);
  REQUIRE(listed.size() == 3);
  CHECK(listed[0]["definition"] == "gemm_n128_k2048");
  CHECK(listed[0]["name"] == "flashinfer_wrapper_3f1c2a");
  CHECK(listed[0]["language"] == "python");
  CHECK(listed[0]["author"] == "flashinfer");
  CHECK(listed[1]["name"] == "gemm_n128_k2048_cuda_rowwise");
  CHECK(listed[1]["language"] == "cuda");
  CHECK(listed[2]["definition"] == "rmsnorm_h128");

  // Importing again finds them registered, unchanged.
  Completed again = As(harness, kOps, {"defs", "import", dataset});
  INFO(again.Describe());
  CHECK(again.exit_code == 0);
  CHECK(again.out.find("0 registered, 3 already registered, 0 failed to register") !=
        std::string::npos);
  CHECK(ListSolutions(harness).size() == 3);
}

TEST_CASE("solutions add takes --definition for a file that names none") {
  ScratchDir dir;
  HarnessInstance harness(dir / "data", ServeTokens(dir));
  const std::string model_new = DataPath("kernelbench_candidates/relu_torch.py");
  Completed unnamed = As(harness, kOps, {"solutions", "add", model_new});
  INFO(unnamed.Describe());
  CHECK(unnamed.exit_code == 2);
  CHECK(unnamed.err.find("solution.definition: required") != std::string::npos);
  CHECK(unnamed.err.find("--definition DEF names it") != std::string::npos);
  // Named, it reaches admission, which refuses a ModelNew for a definition that is not a
  // KernelBench problem, naming the field.
  Completed named =
      As(harness, kOps, {"solutions", "add", model_new, "--definition", "vector_add_f32"});
  INFO(named.Describe());
  CHECK(named.exit_code != 0);
  CHECK(named.err.find("is a KernelBench ModelNew class, and definition 'vector_add_f32' is not "
                       "a KernelBench problem") != std::string::npos);
}

}  // namespace
}  // namespace kiln::testing
