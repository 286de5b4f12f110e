// Nsight Compute profiles as kiln reads them, from outputs recorded on an NVIDIA H200
// (tests/unit/profile/fixtures/README.md): a copy (memory-bound), a chain of FMAs (compute-bound)
// and a naive SGEMM (bound by L1 traffic), and the direction each profile points to.
#include <catch2/catch.hpp>
#include <fstream>
#include <sstream>
#include <string>

#include "harness/profile/ncu_profile.h"
#include "nlohmann/json.hpp"

namespace kiln {
namespace {

std::string Fixture(const std::string& name) {
  std::ifstream in(std::string(KILN_SOURCE_DIR) + "/tests/unit/profile/fixtures/" + name);
  REQUIRE(in.good());
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

std::vector<KernelProfile> Parse(const std::string& csv) {
  absl::StatusOr<std::vector<KernelProfile>> kernels = ParseNcuRawCsv(csv);
  INFO(kernels.status().ToString());
  REQUIRE(kernels.ok());
  return *std::move(kernels);
}

TEST_CASE("the full set's raw page gives each kernel's figures") {
  std::vector<KernelProfile> k = Parse(Fixture("h200_full_raw.csv"));
  REQUIRE(k.size() == 3);
  const KernelProfile& copy = k[0];
  CHECK(copy.name == "copy_f32x4(const float4 *, float4 *, unsigned long)");
  CHECK(copy.device == "NVIDIA H200");
  CHECK(copy.block_size == "(256, 1, 1)");
  CHECK(copy.grid_size == "(1056, 1, 1)");
  CHECK(copy.duration_us == Approx(130.752));
  CHECK(copy.dram_throughput_pct.value() == Approx(81.96));
  CHECK(copy.sm_throughput_pct == Approx(6.14));
  CHECK(copy.l2_hit_pct.value() == Approx(51.42));
  CHECK(copy.achieved_occupancy_pct == Approx(95.54));
  CHECK(copy.theoretical_occupancy_pct == Approx(100));
  CHECK(copy.registers_per_thread == 16);
  CHECK(copy.shared_memory_per_block_bytes == 0);
  CHECK(copy.occupancy_limiter == "warps");
  CHECK(copy.occupancy_limit_blocks == 8);
  // 256 MiB read and written once: the DRAM bytes are the copy's, at about 3.9 TB/s of 4.8.
  CHECK(copy.dram_bytes.value() == Approx(268464128.0 + 246964736.0));
  CHECK(copy.peak_dram_bytes_per_s.value() == Approx(1504 * 3197993147.33).epsilon(1e-6));
  CHECK(copy.peak_dram_bytes_per_s.value() > 4.7e12);
  CHECK(copy.flop_per_s.value() == 0);
  CHECK(copy.arithmetic_intensity.value() == 0);
  // Stalls sorted, most cycles first; "selected" is not a stall.
  REQUIRE(copy.stalls.size() >= 3);
  CHECK(copy.stalls[0].first == "long_scoreboard");
  CHECK(copy.stalls[0].second > copy.stalls[1].second);
  for (const auto& [reason, cycles] : copy.stalls) CHECK(reason != "selected");

  const KernelProfile& fma = k[1];
  CHECK(fma.sm_throughput_pct == Approx(67.95));
  // 2 FLOP per FFMA on every SM sub-partition, at the SM clock: about 43 TFLOP/s of 67.
  CHECK(fma.flop_per_s.value() > 40e12);
  CHECK(fma.flop_per_s.value() < fma.peak_fp32_flop_per_s.value());
  CHECK(fma.peak_fp32_flop_per_s.value() == Approx(2 * 16896 * 1980168000.0).epsilon(1e-3));

  const KernelProfile& gemm = k[2];
  CHECK(gemm.memory_throughput_pct == Approx(97.08));
  CHECK(gemm.l1_hit_pct.value() == Approx(87.45));
  CHECK(gemm.registers_per_thread == 32);
  CHECK(gemm.occupancy_limiter == "registers, warps");
  CHECK(gemm.waves_per_sm == Approx(15.52));
  CHECK(gemm.arithmetic_intensity.value() > 10);
}

TEST_CASE("each profile points to its own direction") {
  std::vector<KernelProfile> k = Parse(Fixture("h200_full_raw.csv"));
  REQUIRE(k.size() == 3);
  ProfileDirection copy = DirectionFor(k[0]);
  CHECK(copy.kind == "memory_bound_dram");
  CHECK_THAT(copy.text, Catch::Contains("DRAM at 82% of peak"));
  ProfileDirection fma = DirectionFor(k[1]);
  CHECK(fma.kind == "compute_bound");
  CHECK_THAT(fma.text, Catch::Contains("SM at 68% of peak"));
  ProfileDirection gemm = DirectionFor(k[2]);
  CHECK(gemm.kind == "memory_bound_cache");
  CHECK_THAT(gemm.text, Catch::Contains("L1 hit 87%"));
}

TEST_CASE("a short kernel is launch-bound, an idle one latency-bound with its limiter") {
  KernelProfile k = Parse(Fixture("h200_full_raw.csv"))[0];
  k.duration_us = 2.1;
  CHECK(DirectionFor(k).kind == "launch_bound");
  k.duration_us = 200;
  k.memory_throughput_pct = k.sm_throughput_pct = 20;
  k.dram_throughput_pct = 20;
  ProfileDirection busy_warps = DirectionFor(k);
  CHECK(busy_warps.kind == "latency_bound");
  CHECK_THAT(busy_warps.text, Catch::Contains("wait on long_scoreboard"));
  k.achieved_occupancy_pct = 18;
  k.occupancy_limiter = "registers";
  k.registers_per_thread = 168;
  ProfileDirection low = DirectionFor(k);
  CHECK(low.kind == "latency_bound");
  CHECK_THAT(low.text, Catch::Contains("limited by registers"));
  CHECK_THAT(low.text, Catch::Contains("168 registers/thread"));
}

TEST_CASE("the basic set parses without the full set's figures") {
  std::vector<KernelProfile> k = Parse(Fixture("h200_basic_raw.csv"));
  REQUIRE(k.size() == 3);
  CHECK(k[0].dram_throughput_pct.value() == Approx(81.14));
  CHECK_FALSE(k[0].l1_hit_pct.has_value());
  CHECK_FALSE(k[0].flop_per_s.has_value());
  CHECK(k[0].stalls.empty());
  CHECK(DirectionFor(k[0]).kind == "memory_bound_dram");
  CHECK(DirectionFor(k[1]).kind == "compute_bound");
}

TEST_CASE("the table and the JSON carry every kernel") {
  std::vector<KernelProfile> k = Parse(Fixture("h200_full_raw.csv"));
  const std::string table = RenderProfileTable(k);
  CHECK_THAT(table, Catch::Contains("copy_f32x4"));
  CHECK_THAT(table, Catch::Contains("fma_chain"));
  CHECK_THAT(table, Catch::Contains("sgemm_naive"));
  CHECK_THAT(table, Catch::Contains("memory_bound_dram"));
  CHECK_THAT(table, Catch::Contains("blocks/SM limited by"));
  nlohmann::json json = nlohmann::json::parse(ProfileJson(k));
  REQUIRE(json.size() == 3);
  CHECK(json[1]["direction"]["kind"] == "compute_bound");
  CHECK(json[0]["dram_throughput_pct"].get<double>() == Approx(81.96));
  CHECK(json[0]["stalls"][0]["reason"] == "long_scoreboard");
}

TEST_CASE("ncu output kiln cannot read is refused, naming what is wrong") {
  CHECK_THAT(std::string(ParseNcuRawCsv("==PROF== no kernels were profiled\n").status().message()),
             Catch::Contains("no ncu raw table"));
  // Scaled units ("us") instead of base units.
  std::string scaled = Fixture("h200_full_raw.csv");
  const size_t units = scaled.find('\n') + 1;
  const size_t ns = scaled.find("\"ns\"", units);
  REQUIRE(ns != std::string::npos);
  scaled.replace(ns, 4, "\"us\"");
  CHECK_THAT(std::string(ParseNcuRawCsv(scaled).status().message()),
             Catch::Contains("gpu__time_duration.sum is in 'us', expected 'ns'"));
  // A required metric missing: the section is named.
  std::string missing = Fixture("h200_full_raw.csv");
  const size_t at = missing.find("sm__throughput.avg.pct_of_peak_sustained_elapsed");
  REQUIRE(at != std::string::npos);
  missing.replace(at, 2, "xx");
  CHECK_THAT(std::string(ParseNcuRawCsv(missing).status().message()),
             Catch::Contains("lacks sm__throughput.avg.pct_of_peak_sustained_elapsed (section "
                             "SpeedOfLight)"));
}

}  // namespace
}  // namespace kiln
