// kiln's figures of a kernel as Run.profile carries them, and the side-by-side table the CLI,
// the web console and the controller print from a run's profile.
#include <catch2/catch.hpp>
#include <fstream>
#include <sstream>
#include <string>

#include "harness/profile/ncu_profile.h"
#include "harness/profile/profile_proto.h"

namespace kiln {
namespace {

std::vector<KernelProfile> FixtureKernels(const std::string& name) {
  std::ifstream in(std::string(KILN_SOURCE_DIR) + "/tests/unit/profile/fixtures/" + name);
  REQUIRE(in.good());
  std::stringstream text;
  text << in.rdbuf();
  absl::StatusOr<std::vector<KernelProfile>> kernels = ParseNcuRawCsv(text.str());
  REQUIRE(kernels.ok());
  return *std::move(kernels);
}

TEST_CASE("a kernel's figures survive the protocol, with its direction, optionals kept unset") {
  for (const char* fixture : {"h200_full_raw.csv", "h200_basic_raw.csv"}) {
    INFO(fixture);
    for (const KernelProfile& k : FixtureKernels(fixture)) {
      const v1::KernelProfile p = KernelProfileToProto(k);
      CHECK(p.direction_kind() == DirectionFor(k).kind);
      CHECK(p.direction() == DirectionFor(k).text);
      CHECK(p.has_l1_hit_pct() == k.l1_hit_pct.has_value());
      CHECK(p.has_flop_per_s() == k.flop_per_s.has_value());
      const KernelProfile back = KernelProfileFromProto(p);
      // The same table and direction as the parsed kernel's.
      CHECK(RenderProfileTable({back}) == RenderProfileTable({k}));
      CHECK(DirectionFor(back).text == DirectionFor(k).text);
      CHECK(back.stalls == k.stalls);
    }
  }
}

TEST_CASE("a run's profile renders its targets side by side and says which failed") {
  const std::vector<KernelProfile> kernels = FixtureKernels("h200_full_raw.csv");
  REQUIRE(kernels.size() == 3);
  v1::RunProfile profile;
  profile.set_section("full");
  v1::ProfiledTarget* solution = profile.add_targets();
  solution->set_target("solution");
  *solution->add_kernels() = KernelProfileToProto(kernels[0]);
  v1::ProfiledTarget* reference = profile.add_targets();
  reference->set_target("reference");
  *reference->add_kernels() = KernelProfileToProto(kernels[2]);
  v1::ProfiledTarget* eager = profile.add_targets();
  eager->set_target("torch_eager");
  eager->set_error("not profiled: the node's python3 has no torch");

  const std::string text = RenderRunProfile(profile);
  INFO(text);
  // One column per kernel, each under the target it was profiled for.
  CHECK(text.find("profiled") != std::string::npos);
  CHECK(text.find("solution") != std::string::npos);
  CHECK(text.find("reference") != std::string::npos);
  CHECK(text.find("copy_f32x4") != std::string::npos);
  CHECK(text.find("sgemm") != std::string::npos);
  // Each kernel's direction, and why the third target has none.
  CHECK(text.find("memory_bound_dram") != std::string::npos);
  CHECK(text.find("memory_bound_cache") != std::string::npos);
  CHECK(text.find("torch_eager: not profiled: the node's python3 has no torch") !=
        std::string::npos);
  // Each direction once, under its target.
  CHECK(text.find("\nsolution copy_f32x4: ") != std::string::npos);
  CHECK(text.find("\nreference sgemm") != std::string::npos);
  const std::string copy_direction = DirectionFor(kernels[0]).text;
  CHECK(text.find(copy_direction) != std::string::npos);
  CHECK(text.find(copy_direction, text.find(copy_direction) + 1) == std::string::npos);

  // A single target needs no owner row.
  v1::RunProfile one;
  *one.add_targets() = *solution;
  CHECK(RenderRunProfile(one).find("profiled") == std::string::npos);
  CHECK(RenderRunProfile(v1::RunProfile()).empty());
}

}  // namespace
}  // namespace kiln
