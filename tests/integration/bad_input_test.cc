// Input the CLI or the harness must refuse: exit 2, a message naming the field, no run archived.
#include <catch2/catch.hpp>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>

#include "tests/integration/harness_instance.h"

using namespace kiln::testing;

namespace {

Completed SubmitFile(const std::string& definition, const std::string& solution,
                     std::vector<std::string> extra = {}) {
  std::vector<std::string> args{"submit", "--definition", definition,   "--solution",
                                solution, "--mode",       "kernelbench"};
  args.insert(args.end(), extra.begin(), extra.end());
  return SharedHarness().Kiln(args);
}

// A solution folder whose one source is `bytes` long (mostly a comment).
void WriteHugeSolution(const std::string& dir, size_t bytes) {
  std::ofstream(dir + "/solution.json") << nlohmann::json{
      {"name", "scale_add_huge"},
      {"definition", "scale_add_f32"},
      {"author", "kiln-tests"},
      {"spec",
       {{"language", "cpp"}, {"target_hardware", {"cpu"}}, {"entry_point", "kernel.cc::run"}}}};
  std::string source = kiln::testing::Slurp(DataPath("solutions/correct/kernel.cc"));
  source += "/*";
  source.append(bytes, 'x');
  source += "*/\n";
  std::ofstream(dir + "/kernel.cc") << source;
}

}  // namespace

TEST_CASE("bad input exits 2 naming the field and archives nothing") {
  HarnessInstance& harness = SharedHarness();
  const int runs_before = CountRuns(harness);

  SECTION("an absolute source path") {
    Completed r = SubmitFile("scale_add_f32", DataPath("bad/absolute_path.json"));
    INFO(r.Describe());
    CHECK(r.exit_code == 2);
    CHECK(std::regex_search(r.err, std::regex("sources\\[0\\]\\.path|absolute")));
  }
  SECTION("a source path with '..'") {
    Completed r = SubmitFile("scale_add_f32", DataPath("bad/dotdot_path.json"));
    INFO(r.Describe());
    CHECK(r.exit_code == 2);
    CHECK(r.err.find("sources[0].path") != std::string::npos);
    CHECK(r.err.find("..") != std::string::npos);
  }
  SECTION("an unknown dtype in a definition file") {
    Completed r = SubmitFile(DataPath("bad/unknown_dtype.json"), DataPath("solutions/correct"));
    INFO(r.Describe());
    CHECK(r.exit_code == 2);
    CHECK(r.err.find("unknown_dtype.json") != std::string::npos);
    CHECK(r.err.find("dtype") != std::string::npos);
    CHECK(r.err.find("float13") != std::string::npos);
  }
  SECTION("a workload missing an axis") {
    Completed r = SubmitFile("scale_add_f32", DataPath("solutions/correct"),
                             {"--workloads", DataPath("bad/missing_axis.jsonl")});
    INFO(r.Describe());
    CHECK(r.exit_code == 2);
    CHECK(r.err.find("axes") != std::string::npos);
    CHECK(r.err.find("'n'") != std::string::npos);
  }
  SECTION("a solution written for another definition") {
    Completed r = SubmitFile("scale_add_f32", DataPath("bad/other_definition.json"));
    INFO(r.Describe());
    CHECK(r.exit_code == 2);
    CHECK(r.err.find("solution.definition") != std::string::npos);
    CHECK(r.err.find("rmsnorm_h2048") != std::string::npos);
  }
  SECTION("more than 1 MiB of sources") {
    ScratchDir dir;
    WriteHugeSolution(dir.path(), (1 << 20) + 1024);
    Completed r = SubmitFile("scale_add_f32", dir.path());
    INFO(r.Describe());
    CHECK(r.exit_code == 2);
    CHECK(
        std::regex_search(r.err, std::regex("sources|source bytes|too large", std::regex::icase)));
  }
  SECTION("an unknown flag") {
    Completed r = SubmitFile("scale_add_f32", DataPath("solutions/correct"), {"--foo"});
    CHECK(r.exit_code == 2);
    CHECK(r.err.find("kiln submit: unknown flag '--foo'") != std::string::npos);
    CHECK(r.err.find("usage: kiln") != std::string::npos);
  }
  SECTION("a missing required flag") {
    Completed r = harness.Kiln({"submit", "--definition", "scale_add_f32"});
    CHECK(r.exit_code == 2);
    CHECK(r.err.find("missing required flag --solution") != std::string::npos);
  }
  SECTION("a solution path that does not exist") {
    Completed r = SubmitFile("scale_add_f32", DataPath("solutions/no_such_solution"));
    CHECK(r.exit_code == 2);
    CHECK(r.err.find("no_such_solution") != std::string::npos);
  }
  SECTION("an unregistered definition name") {
    Completed r = SubmitFile("no_such_definition", DataPath("solutions/correct.json"));
    INFO(r.Describe());
    CHECK(r.exit_code == 2);
    CHECK(r.err.find("no_such_definition") != std::string::npos);
  }

  CHECK(CountRuns(harness) == runs_before);
}
