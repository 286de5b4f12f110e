// An optimisation round's evidence from a profile of the incumbent: the profile run becomes the
// evidence (its table, the longest kernel's direction), the direction of the round comes from
// it first, TASK.md carries the table, and the campaign file's `profile` field is read.
#include <catch2/catch.hpp>
#include <fstream>
#include <sstream>

#include "controller/evidence.h"
#include "controller/spec/campaign_spec.h"
#include "harness/profile/profile_proto.h"

namespace kiln::controller {
namespace {

// A profile run of the copy kernel recorded on an NVIDIA H200 (the unit_profile fixtures).
v1::Run CopyProfileRun() {
  std::ifstream in(std::string(KILN_SOURCE_DIR) +
                   "/tests/unit/profile/fixtures/h200_full_raw.csv");
  REQUIRE(in.good());
  std::stringstream text;
  text << in.rdbuf();
  absl::StatusOr<std::vector<KernelProfile>> kernels = ParseNcuRawCsv(text.str());
  REQUIRE(kernels.ok());
  v1::Run run;
  run.set_run_id("20261202-profile");
  run.set_kind("profile");
  run.set_status(v1::PASSED);
  v1::RunProfile* profile = run.mutable_profile();
  profile->set_section("full");
  v1::ProfiledTarget* solution = profile->add_targets();
  solution->set_target("solution");
  *solution->add_kernels() = KernelProfileToProto((*kernels)[0]);  // the copy
  return run;
}

Json IncumbentSummary() {
  return Json{{"status", "PASSED"},
              {"mean_latency_ms", 0.2},
              {"workloads",
               Json::array({{{"uuid", "w-fast"}, {"axes", "n=1024"}, {"status", "PASSED"},
                             {"latency_ms", 0.01}, {"speedup", 3.0}},
                            {{"uuid", "w-slow"}, {"axes", "n=67108864"}, {"status", "PASSED"},
                             {"latency_ms", 0.4}, {"speedup", 1.1}},
                            {{"uuid", "w-failed"}, {"axes", "n=7"}, {"status", "RUNTIME_ERROR"}}})}};
}

TEST_CASE("the slowest workload relative to the reference is the one profiled") {
  Json summary = IncumbentSummary();
  const Json* slowest = SlowestWorkload(summary);
  REQUIRE(slowest != nullptr);
  CHECK(slowest->value("uuid", "") == "w-slow");
  CHECK(SlowestWorkload(Json{{"status", "PASSED"}}) == nullptr);
}

TEST_CASE("a profile of the incumbent steers the round's direction and goes into TASK.md") {
  Json summary = IncumbentSummary();
  summary["profile"] = ProfileEvidence(CopyProfileRun(), "n=67108864");
  const Json& p = summary["profile"];
  REQUIRE_FALSE(p.contains("error"));
  CHECK(p.value("run_id", "") == "20261202-profile");
  CHECK(p["kernels"].size() == 1);
  CHECK(p["kernels"][0].value("direction_kind", "") == "memory_bound_dram");

  // The direction is the profile's: memory-bound near DRAM peak, on that workload and kernel.
  const std::string direction = ChooseDirection(summary, {});
  INFO(direction);
  CHECK_THAT(direction, Catch::StartsWith("Nsight Compute on workload n=67108864, kernel copy_f32x4"));
  CHECK_THAT(direction, Catch::Contains("memory_bound_dram"));
  // Once tried, the next direction is another.
  CHECK(ChooseDirection(summary, {{direction, "rejected"}}) != direction);

  const std::string task = EvidenceMarkdown(summary, {});
  INFO(task);
  CHECK_THAT(task, Catch::Contains("Nsight Compute profile of the incumbent on its slowest "
                                   "workload n=67108864 (run 20261202-profile, section full)"));
  CHECK_THAT(task, Catch::Contains("DRAM throughput (% peak)"));
  CHECK_THAT(task, Catch::Contains("copy_f32x4"));
  CHECK_THAT(task, Catch::Contains("```"));
}

TEST_CASE("an incumbent without a profile says why in TASK.md, and the direction falls back") {
  Json summary = IncumbentSummary();
  v1::Run refused = CopyProfileRun();
  refused.mutable_profile()->mutable_targets(0)->clear_kernels();
  refused.mutable_profile()->mutable_targets(0)->set_error(
      "not profiled: the solution did not pass the workload");
  summary["profile"] = ProfileEvidence(refused, "n=67108864");
  CHECK(summary["profile"].value("error", "") ==
        "not profiled: the solution did not pass the workload");
  CHECK_THAT(EvidenceMarkdown(summary, {}),
             Catch::Contains("Nsight Compute: no profile of the incumbent on workload "
                             "n=67108864: not profiled: the solution did not pass"));
  CHECK_THAT(ChooseDirection(summary, {}), !Catch::StartsWith("Nsight Compute"));

  Json noted = IncumbentSummary();
  noted["profile_note"] = "no profile of the incumbent on workload n=67108864: this node cannot "
                          "take profiles: no CUDA GPU";
  CHECK_THAT(EvidenceMarkdown(noted, {}), Catch::Contains("this node cannot take profiles"));
}

TEST_CASE("the campaign file's profile field takes a switch or a section") {
  const std::string dir = std::string(KILN_SOURCE_DIR) + "/controller/examples";
  std::ifstream in(dir + "/sweep-host.yaml");
  std::stringstream b;
  b << in.rdbuf();
  const std::string yaml = b.str();
  auto parse = [&](const std::string& text) {
    DiskCampaignFiles files(dir);
    return ParseCampaignSpec(text, files);
  };
  absl::StatusOr<CampaignSpec> by_default = parse(yaml);
  REQUIRE(by_default.ok());
  CHECK(by_default->profile);
  CHECK(by_default->profile_section == "full");
  absl::StatusOr<CampaignSpec> off = parse(yaml + "\nprofile: false\n");
  REQUIRE(off.ok());
  CHECK_FALSE(off->profile);
  absl::StatusOr<CampaignSpec> memory = parse(yaml + "\nprofile: memory\n");
  REQUIRE(memory.ok());
  CHECK(memory->profile);
  CHECK(memory->profile_section == "memory");
  absl::StatusOr<CampaignSpec> bad = parse(yaml + "\nprofile: sometimes\n");
  REQUIRE_FALSE(bad.ok());
  CHECK_THAT(std::string(bad.status().message()), Catch::StartsWith("profile:"));
}

}  // namespace
}  // namespace kiln::controller
