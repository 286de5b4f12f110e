#include "harness/profile/profile_proto.h"

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"

namespace kiln {

v1::KernelProfile KernelProfileToProto(const KernelProfile& k) {
  v1::KernelProfile p;
  p.set_name(k.name);
  p.set_device(k.device);
  p.set_block_size(k.block_size);
  p.set_grid_size(k.grid_size);
  p.set_duration_us(k.duration_us);
  p.set_sm_throughput_pct(k.sm_throughput_pct);
  p.set_memory_throughput_pct(k.memory_throughput_pct);
  if (k.dram_throughput_pct) p.set_dram_throughput_pct(*k.dram_throughput_pct);
  if (k.l1_hit_pct) p.set_l1_hit_pct(*k.l1_hit_pct);
  if (k.l2_hit_pct) p.set_l2_hit_pct(*k.l2_hit_pct);
  p.set_achieved_occupancy_pct(k.achieved_occupancy_pct);
  p.set_theoretical_occupancy_pct(k.theoretical_occupancy_pct);
  p.set_occupancy_limiter(k.occupancy_limiter);
  p.set_occupancy_limit_blocks(k.occupancy_limit_blocks);
  p.set_waves_per_sm(k.waves_per_sm);
  p.set_registers_per_thread(k.registers_per_thread);
  p.set_shared_memory_per_block_bytes(k.shared_memory_per_block_bytes);
  for (const auto& [reason, cycles] : k.stalls) {
    v1::WarpStall* stall = p.add_stalls();
    stall->set_reason(reason);
    stall->set_cycles_per_issue(cycles);
  }
  if (k.flop_per_s) p.set_flop_per_s(*k.flop_per_s);
  if (k.dram_bytes) p.set_dram_bytes(*k.dram_bytes);
  if (k.arithmetic_intensity) p.set_arithmetic_intensity(*k.arithmetic_intensity);
  if (k.peak_fp32_flop_per_s) p.set_peak_fp32_flop_per_s(*k.peak_fp32_flop_per_s);
  if (k.peak_dram_bytes_per_s) p.set_peak_dram_bytes_per_s(*k.peak_dram_bytes_per_s);
  const ProfileDirection direction = DirectionFor(k);
  p.set_direction_kind(direction.kind);
  p.set_direction(direction.text);
  return p;
}

KernelProfile KernelProfileFromProto(const v1::KernelProfile& p) {
  KernelProfile k;
  k.name = p.name();
  k.device = p.device();
  k.block_size = p.block_size();
  k.grid_size = p.grid_size();
  k.duration_us = p.duration_us();
  k.sm_throughput_pct = p.sm_throughput_pct();
  k.memory_throughput_pct = p.memory_throughput_pct();
  if (p.has_dram_throughput_pct()) k.dram_throughput_pct = p.dram_throughput_pct();
  if (p.has_l1_hit_pct()) k.l1_hit_pct = p.l1_hit_pct();
  if (p.has_l2_hit_pct()) k.l2_hit_pct = p.l2_hit_pct();
  k.achieved_occupancy_pct = p.achieved_occupancy_pct();
  k.theoretical_occupancy_pct = p.theoretical_occupancy_pct();
  k.occupancy_limiter = p.occupancy_limiter();
  k.occupancy_limit_blocks = p.occupancy_limit_blocks();
  k.waves_per_sm = p.waves_per_sm();
  k.registers_per_thread = p.registers_per_thread();
  k.shared_memory_per_block_bytes = p.shared_memory_per_block_bytes();
  for (const v1::WarpStall& s : p.stalls()) k.stalls.emplace_back(s.reason(), s.cycles_per_issue());
  if (p.has_flop_per_s()) k.flop_per_s = p.flop_per_s();
  if (p.has_dram_bytes()) k.dram_bytes = p.dram_bytes();
  if (p.has_arithmetic_intensity()) k.arithmetic_intensity = p.arithmetic_intensity();
  if (p.has_peak_fp32_flop_per_s()) k.peak_fp32_flop_per_s = p.peak_fp32_flop_per_s();
  if (p.has_peak_dram_bytes_per_s()) k.peak_dram_bytes_per_s = p.peak_dram_bytes_per_s();
  return k;
}

const v1::ProfiledTarget* FindProfiledTarget(const v1::RunProfile& profile,
                                             const std::string& target) {
  for (const v1::ProfiledTarget& t : profile.targets()) {
    if (t.target() == target) return &t;
  }
  return nullptr;
}

std::string RenderRunProfile(const v1::RunProfile& profile) {
  std::vector<KernelProfile> kernels;
  std::vector<std::string> owners;
  std::string failures;
  int profiled_targets = 0;
  for (const v1::ProfiledTarget& t : profile.targets()) {
    if (!t.error().empty()) {
      absl::StrAppend(&failures, t.target(), ": ", t.error(), "\n");
      continue;
    }
    ++profiled_targets;
    for (const v1::KernelProfile& k : t.kernels()) {
      kernels.push_back(KernelProfileFromProto(k));
      owners.push_back(t.target());
    }
  }
  std::string out;
  // The table ends with each kernel's direction, under its owner when there are several.
  if (!kernels.empty()) {
    out = RenderProfileTable(kernels, profiled_targets > 1 ? owners : std::vector<std::string>{});
  }
  absl::StrAppend(&out, failures);
  return out;
}

}  // namespace kiln
