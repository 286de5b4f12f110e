#include "controller/spec/campaign_spec.h"

#include <catch2/catch.hpp>
#include <fstream>
#include <sstream>

namespace kiln::controller {
namespace {

const std::string kExamples = std::string(KILN_SOURCE_DIR) + "/controller/examples";

std::string ReadExample() {
  std::ifstream in(kExamples + "/sweep-host.yaml");
  std::stringstream b;
  b << in.rdbuf();
  return b.str();
}

absl::Status ParseWith(const std::string& yaml) {
  DiskCampaignFiles files(kExamples);
  return ParseCampaignSpec(yaml, files).status();
}

std::string Replace(std::string text, const std::string& from, const std::string& to) {
  size_t pos = text.find(from);
  REQUIRE(pos != std::string::npos);
  return text.replace(pos, from.size(), to);
}

TEST_CASE("the shipped sweep example parses with every field read") {
  DiskCampaignFiles files(kExamples);
  absl::StatusOr<CampaignSpec> spec = ParseCampaignSpec(ReadExample(), files);
  REQUIRE(spec.ok());
  CHECK(spec->name == "matmul-block-sweep");
  CHECK(spec->definition_name == "matmul_f32_k128");
  CHECK(spec->definition_from_file);
  CHECK(spec->workloads.size() == 2);
  CHECK_FALSE(spec->baseline_is_reference);
  CHECK(spec->agents.size() == 1);
  CHECK(spec->agents[0].sweep.parameters.size() == 2);
  CHECK(spec->budget.max_candidates == 9);
  CHECK(spec->promotion.min_improvement == Approx(0.02));
  CHECK(spec->supervisor.plateau_rounds == 4);
  CHECK(spec->skills.size() == 1);
  // Everything it read is remembered, for shipping to a remote controller.
  CHECK(files.read().count("matmul_f32_k128.json") == 1);
  CHECK(files.read().count("skills/matmul-on-cpu.md") == 1);
}

TEST_CASE("a campaign re-parses from the files shipped with it") {
  DiskCampaignFiles disk(kExamples);
  REQUIRE(ParseCampaignSpec(ReadExample(), disk).ok());
  MapCampaignFiles shipped(disk.read());
  absl::StatusOr<CampaignSpec> spec = ParseCampaignSpec(ReadExample(), shipped);
  REQUIRE(spec.ok());
  CHECK(spec->skills.size() == 1);
}

TEST_CASE("campaign file errors name the offending field") {
  const std::string yaml = ReadExample();
  auto message = [](const absl::Status& s) { return std::string(s.message()); };
  CHECK_THAT(message(ParseWith(Replace(yaml, "max_candidates: 9", "max_candidates: many"))),
             Catch::StartsWith("budget.max_candidates:"));
  CHECK_THAT(message(ParseWith(Replace(yaml, "wall_clock_s: 900", "wall_clock_s: -1"))),
             Catch::StartsWith("budget.wall_clock_s:"));
  CHECK_THAT(message(ParseWith(Replace(yaml, "plateau_rounds: 4", "plateau_rounds: 0"))),
             Catch::StartsWith("supervisor.plateau_rounds:"));
  CHECK_THAT(message(ParseWith(Replace(yaml, "backend: host", "backend: tpu"))),
             Catch::StartsWith("target.backend:"));
  CHECK_THAT(message(ParseWith(Replace(yaml, "mode: official", "mode: fast"))),
             Catch::StartsWith("target.mode:"));
  CHECK_THAT(message(ParseWith(Replace(yaml, "type: sweep", "type: oracle"))),
             Catch::StartsWith("agents[0].type:"));
  CHECK_THAT(
      message(ParseWith(Replace(yaml, "BJ: [2, 16, 128]", "BJ: [2, 16, 128]\n      XX: [1]"))),
      Catch::StartsWith("agents[0].parameters.XX:"));
  CHECK_THAT(message(ParseWith(Replace(yaml, "      BJ: [2, 16, 128]\n", ""))),
             Catch::Contains("{{BJ}}"));
  CHECK_THAT(message(ParseWith(Replace(yaml, "confirm: true", "confirm: maybe"))),
             Catch::StartsWith("promotion.confirm:"));
  CHECK_THAT(message(ParseWith(Replace(yaml, "parallel: 1", "parallel: 0"))),
             Catch::StartsWith("parallel:"));
  CHECK_THAT(message(ParseWith(Replace(yaml, "name: matmul-block-sweep", "nmae: x"))),
             Catch::StartsWith("nmae: unknown field"));
  CHECK_THAT(message(ParseWith(Replace(yaml, "workloads: matmul_f32_k128.jsonl\n", ""))),
             Catch::StartsWith("workloads:"));
  CHECK_THAT(
      message(ParseWith(Replace(yaml, "solution: matmul_naive.json", "solution: nope.json"))),
      Catch::StartsWith("baseline.solution:"));
  CHECK_THAT(message(ParseWith(Replace(yaml, "baseline:\n  solution: matmul_naive.json",
                                       "baseline: torch_jit"))),
             Catch::StartsWith("baseline:"));
  {
    DiskCampaignFiles files(kExamples);
    absl::StatusOr<CampaignSpec> torch = ParseCampaignSpec(
        Replace(yaml, "baseline:\n  solution: matmul_naive.json", "baseline: torch_compile"),
        files);
    REQUIRE(torch.ok());
    CHECK(torch->baseline_is_reference);
    CHECK(torch->harness_baseline == "torch_compile");
  }
  {
    // A solution registered on the harnesses is passed on by name, as the harness's baseline.
    DiskCampaignFiles files(kExamples);
    absl::StatusOr<CampaignSpec> registered =
        ParseCampaignSpec(Replace(yaml, "baseline:\n  solution: matmul_naive.json",
                                  "baseline: solution:flashinfer_wrapper_9c4b1e"),
                          files);
    REQUIRE(registered.ok());
    CHECK(registered->baseline_is_reference);
    CHECK(registered->harness_baseline == "solution:flashinfer_wrapper_9c4b1e");
  }
  CHECK_THAT(message(ParseWith(Replace(yaml, "baseline:\n  solution: matmul_naive.json",
                                       "baseline: \"solution:\""))),
             Catch::StartsWith("baseline:"));
  CHECK_THAT(message(ParseWith(
                 Replace(yaml, "definition: matmul_f32_k128.json", "definition: ../etc/x.json"))),
             Catch::StartsWith("definition:"));
  CHECK_THAT(message(ParseWith("definition: [")), Catch::StartsWith("campaign file: line"));
}

TEST_CASE("command and HTTP agents are validated by type") {
  const std::string head = "definition: vector_add_f32\nagents:\n";
  CHECK_THAT(std::string(ParseWith(head + "  - type: command\n").message()),
             Catch::StartsWith("agents[0].argv:"));
  CHECK_THAT(std::string(ParseWith(head + "  - type: command\n    preset: gpt\n").message()),
             Catch::StartsWith("agents[0].preset:"));
  CHECK_THAT(std::string(ParseWith(head + "  - type: openai\n").message()),
             Catch::StartsWith("agents[0].model:"));
  CHECK_THAT(
      std::string(
          ParseWith(head + "  - type: anthropic\n    model: m\n    base_url: ftp://x\n").message()),
      Catch::StartsWith("agents[0].base_url:"));
  CHECK_THAT(std::string(ParseWith(head + "  - type: command\n    preset: claude\n    "
                                          "timeout_s: 0\n")
                             .message()),
             Catch::StartsWith("agents[0].timeout_s:"));
  DiskCampaignFiles files(kExamples);
  absl::StatusOr<CampaignSpec> spec =
      ParseCampaignSpec(head + "  - type: command\n    preset: claude\n", files);
  REQUIRE(spec.ok());
  CHECK(spec->agents[0].command.argv[0] == "claude");
  CHECK(spec->baseline_is_reference);
  // A built-in definition named by name comes complete.
  CHECK(spec->definition.inputs_size() == 2);
}

}  // namespace
}  // namespace kiln::controller

namespace kiln::controller {
namespace {

TEST_CASE("the campaign file documented in the README is valid") {
  std::ifstream in(std::string(KILN_SOURCE_DIR) + "/README.md");
  std::stringstream b;
  b << in.rdbuf();
  std::string readme = b.str();
  size_t section = readme.find("### The campaign file");
  REQUIRE(section != std::string::npos);
  size_t start = readme.find("```yaml\n", section);
  REQUIRE(start != std::string::npos);
  start += 8;
  std::string yaml = readme.substr(start, readme.find("```", start) - start);
  DiskCampaignFiles files(kExamples);
  absl::StatusOr<CampaignSpec> spec = ParseCampaignSpec(yaml, files);
  INFO(spec.status().message());
  REQUIRE(spec.ok());
  CHECK(spec->agents.size() == 4);
  CHECK(spec->agents[2].http.usd_per_million_output_tokens == 8);
  CHECK(spec->agents[3].http.api_key_env == "ANTHROPIC_API_KEY");
  CHECK(spec->parallel == 2);
}

}  // namespace
}  // namespace kiln::controller
