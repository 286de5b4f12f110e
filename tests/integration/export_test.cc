// kiln runs export --format flashinfer-trace against a real kiln-harness: host-backend runs on the
// built-in vector_add_f32, exported as flashinfer-bench Trace lines.
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "harness/model/json_interop.h"
#include "tests/integration/harness_instance.h"
#include "tests/unit/model/flashinfer_trace_schema.h"

using namespace kiln::testing;
using Json = nlohmann::ordered_json;

namespace {

// A vector_add_f32 solution named `name` computing c = a <op> b.
std::string VectorAddSolution(const std::string& name, const std::string& op) {
  Json s = {{"name", name},
            {"definition", "vector_add_f32"},
            {"author", "kiln-tests"},
            {"spec",
             {{"language", "cpp"},
              {"target_hardware", {"cpu"}},
              {"entry_point", "kernel.cc::run"},
              {"dependencies", Json::array()},
              {"destination_passing_style", true}}},
            {"sources",
             {{{"path", "kernel.cc"},
               {"content",
                "#include <kiln/abi.h>\n\nextern \"C\" int run(const kiln_tensor* args, int32_t "
                "nargs, const kiln_context* ctx) {\n  if (nargs != 3) return 1;\n  const float* "
                "a = (const float*)args[0].data;\n  const float* b = (const float*)args[1].data;\n"
                "  float* c = (float*)args[2].data;\n  for (int64_t i = 0; i < args[0].shape[0]; "
                "++i) c[i] = a[i] " + op + " b[i];\n  return 0;\n}\n"}}}}};
  return s.dump(2);
}

void WriteText(const std::string& path, const std::string& text) {
  std::ofstream out(path);
  out << text;
  REQUIRE(out.good());
}

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (!line.empty()) lines.push_back(line);
  }
  return lines;
}

}  // namespace

TEST_CASE("runs export writes flashinfer-bench traces that kiln reads back", "[export]") {
  ScratchDir dir;
  // Timing on a busy machine can pass the tests' usual 5 s worker limit.
  HarnessInstance harness(dir / "data", {"--worker-timeout-s", "60"});
  // The smallest built-in workload (n = 4096) keeps the runs short.
  WriteText(dir / "small.jsonl",
            R"({"definition": "vector_add_f32", "solution": null, "workload": {"uuid": )"
            R"("1d7c9e35-2f4a-4b6c-8d9e-0f1a2b3c4d01", "axes": {"n": 4096}, "inputs": {"a": )"
            R"({"type": "random"}, "b": {"type": "random"}}}, "evaluation": null})"
            "\n");
  // The same solution name for two different codes: --solutions must keep them apart.
  WriteText(dir / "right.json", VectorAddSolution("vadd", "+"));
  WriteText(dir / "wrong.json", VectorAddSolution("vadd", "-"));

  std::map<std::string, Json> submitted;  // status -> the trace kiln submit --json printed
  for (const char* file : {"right.json", "wrong.json"}) {
    Completed r = harness.Kiln({"submit", "--definition", "vector_add_f32", "--solution",
                                dir / file, "--workloads", dir / "small.jsonl", "--json"});
    INFO(r.Describe());
    REQUIRE((r.exit_code == 0 || r.exit_code == 1));
    Json j = Json::parse(r.out);
    REQUIRE(j["traces"].size() == 1);
    submitted[j["status"].get<std::string>()] = j["traces"][0];
  }
  REQUIRE(submitted.count("PASSED") == 1);
  REQUIRE(submitted.count("INCORRECT_NUMERICAL") == 1);
  // A run on another built-in definition (3 workloads), for the filters: it fails to compile, so
  // it is cheap.
  Json broken = Json::parse(VectorAddSolution("rmsnorm_broken", "+"));
  broken["definition"] = "rmsnorm_h2048";
  broken["sources"][0]["content"] = "this is not C++\n";
  WriteText(dir / "broken.json", broken.dump());
  Completed other =
      harness.Kiln({"submit", "--definition", "rmsnorm_h2048", "--solution", dir / "broken.json"});
  INFO(other.Describe());
  REQUIRE(other.exit_code == 1);
  REQUIRE(other.out.find("COMPILE_ERROR") != std::string::npos);

  Completed exported = harness.Kiln({"runs", "export", "--format", "flashinfer-trace",
                                     "--definition", "vector_add_f32", "--solutions",
                                     dir / "solutions", "--page-size", "1",
                                     "--progress-every", "1"});
  INFO(exported.Describe());
  REQUIRE(exported.exit_code == 0);
  const std::vector<std::string> lines = Lines(exported.out);
  REQUIRE(lines.size() == 2);
  CHECK(exported.err.find("2 traces of 2 runs exported") != std::string::npos);
  CHECK(exported.err.find("1 solutions renamed") != std::string::npos);

  std::map<std::string, std::string> solution_of_status;
  for (const std::string& line : lines) {
    INFO(line);
    const Json doc = Json::parse(line);
    const std::vector<std::string> violations = FlashinferTraceViolations(doc);
    CHECK(violations.empty());
    for (const std::string& v : violations) UNSCOPED_INFO(v);
    CHECK(doc["definition"] == "vector_add_f32");
    CHECK_FALSE(doc.contains("kiln"));
    const std::string status = doc["evaluation"]["status"].get<std::string>();
    REQUIRE(submitted.count(status) == 1);
    solution_of_status[status] = doc["solution"].get<std::string>();
    // kiln's own reader gets the same status and latencies back.
    absl::StatusOr<kiln::v1::Trace> back = kiln::ParseTraceJson(line);
    REQUIRE(back.ok());
    CHECK(std::string(kiln::StatusName(back->evaluation().status())) == status);
    const Json& before = submitted[status]["evaluation"];
    if (status == "PASSED") {
      CHECK(back->evaluation().performance().latency_ms() ==
            before["performance"]["latency_ms"].get<double>());
      CHECK(back->evaluation().performance().reference_latency_ms() ==
            before["performance"]["reference_latency_ms"].get<double>());
      CHECK(back->evaluation().performance().latency_ms() > 0);
    } else {
      CHECK_FALSE(back->evaluation().has_performance());
      CHECK(back->evaluation().correctness().max_absolute_error() > 0);
    }
  }
  // Each exported run's solution, loadable under the name its traces carry.
  REQUIRE(solution_of_status.size() == 2);
  CHECK(solution_of_status["PASSED"] != solution_of_status["INCORRECT_NUMERICAL"]);
  for (const auto& [status, name] : solution_of_status) {
    const std::string path = dir / ("solutions/vector_add_f32/" + name + ".json");
    INFO(path);
    REQUIRE(std::filesystem::exists(path));
    absl::StatusOr<kiln::v1::Solution> solution = kiln::ParseSolutionJson(Slurp(path));
    REQUIRE(solution.ok());
    CHECK(solution->name() == name);
    CHECK(solution->definition() == "vector_add_f32");
    REQUIRE(solution->sources_size() == 1);
    CHECK(solution->sources(0).content().find(status == "PASSED" ? "a[i] + b[i]" : "a[i] - b[i]") !=
          std::string::npos);
  }

  // --status filters runs; without --definition every definition comes.
  Completed failing = harness.Kiln({"runs", "export", "--status", "COMPILE_ERROR"});
  INFO(failing.Describe());
  REQUIRE(failing.exit_code == 0);
  REQUIRE(Lines(failing.out).size() == 3);
  const Json compile_error = Json::parse(Lines(failing.out)[0]);
  CHECK(compile_error["definition"] == "rmsnorm_h2048");
  CHECK(compile_error["solution"] == "rmsnorm_broken");
  CHECK(compile_error["evaluation"]["status"] == "COMPILE_ERROR");
  CHECK(compile_error["evaluation"]["correctness"].is_null());
  CHECK(FlashinferTraceViolations(compile_error).empty());
  Completed all = harness.Kiln({"runs", "export", "--progress-every", "0"});
  INFO(all.Describe());
  REQUIRE(all.exit_code == 0);
  std::map<std::string, int> per_definition;
  for (const std::string& line : Lines(all.out)) {
    ++per_definition[Json::parse(line)["definition"].get<std::string>()];
  }
  CHECK(per_definition == std::map<std::string, int>{{"rmsnorm_h2048", 3}, {"vector_add_f32", 2}});
  CHECK(all.err.find("5 traces of 3 runs exported") != std::string::npos);

  // Usage errors name the flag.
  Completed bad = harness.Kiln({"runs", "export", "--format", "csv"});
  CHECK(bad.exit_code == 2);
  CHECK(bad.err.find("--format: unknown format 'csv'") != std::string::npos);
  Completed future = harness.Kiln({"runs", "export", "--since", "2999-01-01"});
  REQUIRE(future.exit_code == 0);
  CHECK(future.out.empty());
  CHECK(future.err.find("0 traces of 0 runs exported") != std::string::npos);
}

TEST_CASE("runs export --definition naming no definition is refused, not an empty export",
          "[export]") {
  ScratchDir dir;
  HarnessInstance harness(dir / "data");
  Completed r = harness.Kiln({"runs", "export", "--definition", "nope"});
  INFO(r.Describe());
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("--definition nope: no such definition on this harness") != std::string::npos);
  CHECK(r.out.empty());
  Completed known = harness.Kiln({"runs", "export", "--definition", "vector_add_f32"});
  INFO(known.Describe());
  CHECK(known.exit_code == 0);
  CHECK(known.err.find("0 traces of 0 runs exported") != std::string::npos);
}
