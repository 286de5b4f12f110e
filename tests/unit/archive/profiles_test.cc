// Profile runs (kind "profile"): their Nsight Compute figures are archived with the run and read
// back, listed apart from evaluations, and counted per principal for the hourly limit.
#include <catch2/catch.hpp>
#include <string>

#include "harness/archive/archive.h"
#include "tests/unit/archive/archive_test_support.h"

namespace kiln {
namespace {

using archive_test::MakeRun;
using archive_test::OpenArchive;
using archive_test::TempDir;

v1::RunProfile OneKernelProfile() {
  v1::RunProfile profile;
  profile.set_section("basic");
  profile.set_ncu("/usr/local/cuda/bin/ncu");
  v1::ProfiledTarget* t = profile.add_targets();
  t->set_target("solution");
  t->set_seconds(3.5);
  t->set_report_artifact("profile/solution.ncu-rep");
  v1::KernelProfile* k = t->add_kernels();
  k->set_name("copy_f32x4(const float4 *, float4 *, unsigned long)");
  k->set_duration_us(130.752);
  k->set_dram_throughput_pct(81.96);
  k->set_direction_kind("memory_bound_dram");
  v1::ProfiledTarget* ref = profile.add_targets();
  ref->set_target("reference");
  ref->set_error("not profiled: it was not built");
  return profile;
}

TEST_CASE("a profile run keeps its kind and its figures") {
  TempDir tmp;
  auto archive = OpenArchive(tmp.path());
  v1::Run run = MakeRun("run-profile", "copy", 1000);
  run.set_kind("profile");
  REQUIRE(archive->CreateRun(run).ok());
  auto queued = archive->GetRun("run-profile", false);
  REQUIRE(queued.ok());
  CHECK(queued->kind() == "profile");
  CHECK_FALSE(queued->has_profile());  // written when it finishes

  v1::Run done = run;
  done.set_status(v1::PASSED);
  *done.mutable_profile() = OneKernelProfile();
  REQUIRE(archive->FinishRun(done).ok());
  auto finished = archive->GetRun("run-profile", false);
  REQUIRE(finished.ok());
  REQUIRE(finished->has_profile());
  CHECK(finished->profile().SerializeAsString() == OneKernelProfile().SerializeAsString());
  CHECK(finished->profile().targets(0).kernels(0).dram_throughput_pct() == Approx(81.96));
  CHECK_FALSE(finished->profile().targets(0).kernels(0).has_l1_hit_pct());

  // An evaluation is of kind "evaluation", with no profile.
  REQUIRE(archive->CreateRun(MakeRun("run-eval", "copy", 2000)).ok());
  auto eval = archive->GetRun("run-eval", false);
  REQUIRE(eval.ok());
  CHECK(eval->kind() == "evaluation");
  CHECK_FALSE(eval->has_profile());
}

TEST_CASE("runs are listed by kind") {
  TempDir tmp;
  auto archive = OpenArchive(tmp.path());
  v1::Run profile = MakeRun("run-p", "copy", 1000);
  profile.set_kind("profile");
  REQUIRE(archive->CreateRun(profile).ok());
  REQUIRE(archive->CreateRun(MakeRun("run-e", "copy", 2000)).ok());
  RunFilter filter;
  auto all = archive->ListRuns(filter);
  REQUIRE(all.ok());
  CHECK(all->runs_size() == 2);
  CHECK(all->runs(0).kind() == "evaluation");
  CHECK(all->runs(1).kind() == "profile");
  filter.kind = "profile";
  auto profiles = archive->ListRuns(filter);
  REQUIRE(profiles.ok());
  REQUIRE(profiles->runs_size() == 1);
  CHECK(profiles->runs(0).run_id() == "run-p");
  filter.kind = "evaluation";
  auto evaluations = archive->ListRuns(filter);
  REQUIRE(evaluations.ok());
  REQUIRE(evaluations->runs_size() == 1);
  CHECK(evaluations->runs(0).run_id() == "run-e");
}

TEST_CASE("a principal's profiles since a time are counted, evaluations and others' not") {
  TempDir tmp;
  auto archive = OpenArchive(tmp.path());
  auto add = [&](const std::string& id, const std::string& principal, int64_t created,
                 const std::string& kind) {
    v1::Run run = MakeRun(id, "copy", created);
    run.set_principal(principal);
    run.set_kind(kind);
    REQUIRE(archive->CreateRun(run).ok());
  };
  add("p-old", "team-a", 1000, "profile");
  add("p-1", "team-a", 5000, "profile");
  add("p-2", "team-a", 7000, "profile");
  add("e-1", "team-a", 6000, "evaluation");
  add("p-b", "team-b", 6000, "profile");
  auto counted = archive->CountProfilesSince("team-a", 4000);
  REQUIRE(counted.ok());
  CHECK(counted->count == 2);
  CHECK(counted->oldest_unix_ms == 5000);
  auto none = archive->CountProfilesSince("team-c", 0);
  REQUIRE(none.ok());
  CHECK(none->count == 0);
  CHECK(none->oldest_unix_ms == 0);
}

}  // namespace
}  // namespace kiln
