// Nsight Compute's view of a kernel, as kiln reports it: what an engineer opening a profile looks
// at first (time, SM and DRAM throughput against peak, occupancy and what limits it, registers
// and shared memory, cache hit rates, the top warp stalls, a roofline point), read from
// `ncu --csv --page raw --print-units base` (one row per profiled kernel), and the one direction
// of work the numbers point to.
#ifndef KILN_HARNESS_PROFILE_NCU_PROFILE_H_
#define KILN_HARNESS_PROFILE_NCU_PROFILE_H_

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"

namespace kiln {

struct KernelProfile {
  std::string name;  // as ncu names it (demangled)
  std::string device;
  std::string block_size;  // "(256, 1, 1)"
  std::string grid_size;
  double duration_us = 0;
  double sm_throughput_pct = 0;      // compute (SM) throughput, % of peak
  double memory_throughput_pct = 0;  // the busiest of DRAM, L2 and L1, % of peak
  std::optional<double> dram_throughput_pct;
  std::optional<double> l1_hit_pct;
  std::optional<double> l2_hit_pct;
  double achieved_occupancy_pct = 0;
  double theoretical_occupancy_pct = 0;
  // What bounds the blocks per SM: "registers", "shared memory", "warps", "blocks" or
  // "barriers" (several when they tie), with that many blocks.
  std::string occupancy_limiter;
  double occupancy_limit_blocks = 0;
  double waves_per_sm = 0;
  int registers_per_thread = 0;
  double shared_memory_per_block_bytes = 0;  // static + dynamic
  // The warp stall reasons, most cycles first: (reason, cycles per issued instruction).
  std::vector<std::pair<std::string, double>> stalls;
  // Roofline (full set only): floating-point operations per second (FMA counted as 2; FP16,
  // FP32 and FP64 summed), DRAM bytes moved, their ratio, and the device's peaks.
  std::optional<double> flop_per_s;
  std::optional<double> dram_bytes;
  std::optional<double> arithmetic_intensity;  // FLOP per DRAM byte
  std::optional<double> peak_fp32_flop_per_s;
  std::optional<double> peak_dram_bytes_per_s;
};

// Parses ncu's raw CSV page. Units must be base units (`--print-units base`): a metric in
// another unit is an error naming it. Errors name the missing metric and the section that gives
// it; optional metrics (the full set's) are left unset when absent.
absl::StatusOr<std::vector<KernelProfile>> ParseNcuRawCsv(std::string_view csv);

// The one direction of work a profile points to.
struct ProfileDirection {
  // launch_bound | memory_bound_dram | memory_bound_cache | compute_bound | latency_bound
  std::string kind;
  std::string text;  // one or two sentences with the figures behind them
};
ProfileDirection DirectionFor(const KernelProfile& profile);

// A table of the kernels side by side (one row per figure, one column per kernel), as text.
// `owners` (empty, or one per kernel) prefix each kernel's name: what it was profiled for
// ("solution", "reference"), for side-by-side tables of several targets.
std::string RenderProfileTable(const std::vector<KernelProfile>& kernels,
                               const std::vector<std::string>& owners = {});
// The kernels (with each one's direction) as a JSON array.
std::string ProfileJson(const std::vector<KernelProfile>& kernels);

}  // namespace kiln

#endif  // KILN_HARNESS_PROFILE_NCU_PROFILE_H_
