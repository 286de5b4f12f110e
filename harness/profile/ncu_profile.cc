#include "harness/profile/ncu_profile.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <map>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "nlohmann/json.hpp"

namespace kiln {
namespace {

// RFC 4180 rows: quoted fields may hold commas ("1,056"), doubled quotes and newlines.
std::vector<std::vector<std::string>> ParseCsv(std::string_view text) {
  std::vector<std::vector<std::string>> rows;
  std::vector<std::string> row;
  std::string field;
  bool quoted = false, any = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (quoted) {
      if (c == '"' && i + 1 < text.size() && text[i + 1] == '"') {
        field += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        field += c;
      }
      continue;
    }
    if (c == '"') {
      quoted = true;
      any = true;
    } else if (c == ',') {
      row.push_back(std::move(field));
      field.clear();
      any = true;
    } else if (c == '\n' || c == '\r') {
      if (c == '\r' && i + 1 < text.size() && text[i + 1] == '\n') ++i;
      if (any || !field.empty()) {
        row.push_back(std::move(field));
        rows.push_back(std::move(row));
      }
      row.clear();
      field.clear();
      any = false;
    } else {
      field += c;
      any = true;
    }
  }
  if (any || !field.empty()) {
    row.push_back(std::move(field));
    rows.push_back(std::move(row));
  }
  return rows;
}

// ncu writes numbers with thousands separators ("130,752"); "n/a" and "" are no value.
std::optional<double> Number(std::string_view text) {
  std::string clean = absl::StrReplaceAll(absl::StripAsciiWhitespace(absl::string_view(text.data(), text.size())), {{",", ""}});
  if (clean.empty() || clean == "n/a") return std::nullopt;
  char* end = nullptr;
  const double v = std::strtod(clean.c_str(), &end);
  if (end == clean.c_str() || *end != '\0' || !std::isfinite(v)) return std::nullopt;
  return v;
}

// One metric kiln reads: its unit in `--print-units base`, and where it comes from.
struct Metric {
  const char* name;
  const char* unit;
  const char* section;  // the ncu section (or set) that collects it, for the error
};

constexpr Metric kDuration{"gpu__time_duration.sum", "ns", "SpeedOfLight"};
constexpr Metric kSm{"sm__throughput.avg.pct_of_peak_sustained_elapsed", "%", "SpeedOfLight"};
constexpr Metric kMemory{"gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed", "%",
                         "SpeedOfLight"};
constexpr Metric kDram{"gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed", "%",
                       "SpeedOfLight"};
constexpr Metric kL1Hit{"l1tex__t_sector_hit_rate.pct", "%", "MemoryWorkloadAnalysis"};
constexpr Metric kL2Hit{"lts__t_sector_hit_rate.pct", "%", "MemoryWorkloadAnalysis"};
constexpr Metric kAchieved{"sm__warps_active.avg.pct_of_peak_sustained_active", "%", "Occupancy"};
constexpr Metric kTheoretical{"sm__maximum_warps_per_active_cycle_pct", "%", "Occupancy"};
constexpr Metric kRegisters{"launch__registers_per_thread", "register/thread", "LaunchStats"};
constexpr Metric kSharedStatic{"launch__shared_mem_per_block_static", "byte/block",
                               "LaunchStats"};
constexpr Metric kSharedDynamic{"launch__shared_mem_per_block_dynamic", "byte/block",
                                "LaunchStats"};
constexpr Metric kWaves{"launch__waves_per_multiprocessor", "", "LaunchStats"};
constexpr Metric kDramRead{"dram__bytes_read.sum", "byte", "MemoryWorkloadAnalysis"};
constexpr Metric kDramWrite{"dram__bytes_write.sum", "byte", "MemoryWorkloadAnalysis"};
constexpr Metric kSmClock{"sm__cycles_elapsed.avg.per_second", "hz", "SpeedOfLightRooflineChart"};
constexpr Metric kDramClock{"dram__cycles_elapsed.avg.per_second", "hz", "SpeedOfLight"};
constexpr Metric kDramPeak{"dram__bytes.sum.peak_sustained", "byte/cycle",
                           "SpeedOfLightRooflineChart"};
constexpr Metric kFfmaPeak{"sm__sass_thread_inst_executed_op_ffma_pred_on.sum.peak_sustained",
                           "inst/cycle", "SpeedOfLightRooflineChart"};

// The occupancy limits, by what ncu calls them and what kiln says.
constexpr std::pair<const char*, const char*> kLimits[] = {
    {"launch__occupancy_limit_registers", "registers"},
    {"launch__occupancy_limit_shared_mem", "shared memory"},
    {"launch__occupancy_limit_warps", "warps"},
    {"launch__occupancy_limit_blocks", "blocks"},
    {"launch__occupancy_limit_barriers", "barriers"},
};

constexpr char kStallPrefix[] = "smsp__average_warps_issue_stalled_";
constexpr char kStallSuffix[] = "_per_issue_active.ratio";
constexpr char kOpPrefix[] = "smsp__sass_thread_inst_executed_op_";
constexpr char kOpSuffix[] = "_pred_on.sum.per_cycle_elapsed";

class Table {
 public:
  Table(std::vector<std::string> header, std::vector<std::string> units)
      : header_(std::move(header)), units_(std::move(units)) {
    for (size_t i = 0; i < header_.size(); ++i) index_[header_[i]] = i;
  }
  const std::vector<std::string>& header() const { return header_; }
  bool Has(const std::string& name) const { return index_.count(name) > 0; }
  // The column's unit must be `unit` (base units); error otherwise.
  absl::Status CheckUnit(const std::string& name, const std::string& unit) const {
    auto it = index_.find(name);
    if (it == index_.end() || it->second >= units_.size()) return absl::OkStatus();
    const std::string& got = units_[it->second];
    if (got == unit) return absl::OkStatus();
    return absl::InvalidArgumentError(
        absl::StrCat("ncu metric ", name, " is in '", got, "', expected '", unit,
                     "': export the report with --print-units base"));
  }
  std::string Text(const std::vector<std::string>& row, const std::string& name) const {
    auto it = index_.find(name);
    return it != index_.end() && it->second < row.size() ? row[it->second] : std::string();
  }

 private:
  std::vector<std::string> header_, units_;
  std::map<std::string, size_t> index_;
};

std::string ShortName(const std::string& name) {
  const size_t paren = name.find('(');
  std::string s = paren == std::string::npos ? name : name.substr(0, paren);
  if (s.size() > 40) s = s.substr(0, 37) + "...";
  return s;
}

std::string Fixed(double v, int digits) { return absl::StrFormat("%.*f", digits, v); }
std::string Optional(const std::optional<double>& v, int digits, const std::string& suffix = "") {
  return v ? Fixed(*v, digits) + suffix : std::string("-");
}

}  // namespace

absl::StatusOr<std::vector<KernelProfile>> ParseNcuRawCsv(std::string_view csv) {
  std::vector<std::vector<std::string>> rows = ParseCsv(csv);
  // ncu may print "==PROF==" lines before the table: it starts at the row whose first field is ID.
  size_t start = 0;
  while (start < rows.size() && (rows[start].empty() || rows[start][0] != "ID")) ++start;
  if (start + 1 >= rows.size()) {
    return absl::InvalidArgumentError(
        "no ncu raw table: expected the output of `ncu --csv --page raw --print-units base` "
        "(a header row starting with \"ID\", a row of units, one row per kernel)");
  }
  Table table(rows[start], rows[start + 1]);
  std::vector<const Metric*> required = {&kDuration,   &kSm,        &kMemory,
                                         &kAchieved,   &kTheoretical, &kRegisters,
                                         &kSharedStatic, &kSharedDynamic, &kWaves};
  for (const Metric* m : required) {
    if (!table.Has(m->name)) {
      return absl::InvalidArgumentError(absl::StrCat("ncu output lacks ", m->name,
                                                     " (section ", m->section, ")"));
    }
  }
  for (const Metric* m :
       {&kDuration, &kSm, &kMemory, &kDram, &kL1Hit, &kL2Hit, &kAchieved, &kTheoretical,
        &kRegisters, &kSharedStatic, &kSharedDynamic, &kDramRead, &kDramWrite, &kSmClock,
        &kDramClock, &kDramPeak, &kFfmaPeak}) {
    if (absl::Status s = table.CheckUnit(m->name, m->unit); !s.ok()) return s;
  }
  std::vector<KernelProfile> out;
  for (size_t r = start + 2; r < rows.size(); ++r) {
    const std::vector<std::string>& row = rows[r];
    if (row.size() < 2) continue;
    KernelProfile k;
    auto get = [&](const Metric& m) { return Number(table.Text(row, m.name)); };
    auto need = [&](const Metric& m, double* into) -> absl::Status {
      std::optional<double> v = get(m);
      if (!v) {
        return absl::InvalidArgumentError(absl::StrCat("ncu row ", r - start - 1, ": ", m.name,
                                                       " has no value ('",
                                                       table.Text(row, m.name), "')"));
      }
      *into = *v;
      return absl::OkStatus();
    };
    k.name = table.Text(row, "Kernel Name");
    k.device = table.Text(row, "device__attribute_display_name");
    k.block_size = table.Text(row, "Block Size");
    k.grid_size = table.Text(row, "Grid Size");
    double duration_ns = 0, registers = 0, shared_static = 0, shared_dynamic = 0;
    for (auto [m, into] : std::initializer_list<std::pair<const Metric*, double*>>{
             {&kDuration, &duration_ns},
             {&kSm, &k.sm_throughput_pct},
             {&kMemory, &k.memory_throughput_pct},
             {&kAchieved, &k.achieved_occupancy_pct},
             {&kTheoretical, &k.theoretical_occupancy_pct},
             {&kRegisters, &registers},
             {&kSharedStatic, &shared_static},
             {&kSharedDynamic, &shared_dynamic},
             {&kWaves, &k.waves_per_sm}}) {
      if (absl::Status s = need(*m, into); !s.ok()) return s;
    }
    k.duration_us = duration_ns / 1e3;
    k.registers_per_thread = static_cast<int>(registers);
    k.shared_memory_per_block_bytes = shared_static + shared_dynamic;
    k.dram_throughput_pct = get(kDram);
    k.l1_hit_pct = get(kL1Hit);
    k.l2_hit_pct = get(kL2Hit);
    // Occupancy: the smallest of the per-resource block limits bounds the blocks per SM.
    double lowest = 0;
    std::vector<std::string> limiters;
    for (const auto& [metric, what] : kLimits) {
      std::optional<double> v = Number(table.Text(row, metric));
      if (!v) continue;
      if (limiters.empty() || *v < lowest) {
        lowest = *v;
        limiters = {what};
      } else if (*v == lowest) {
        limiters.push_back(what);
      }
    }
    k.occupancy_limiter = absl::StrJoin(limiters, ", ");
    k.occupancy_limit_blocks = lowest;
    // Warp stalls, most cycles first ("selected" is the issuing cycle, not a stall).
    for (const std::string& name : table.header()) {
      if (!absl::StartsWith(name, kStallPrefix) || !absl::EndsWith(name, kStallSuffix)) continue;
      std::string reason = name.substr(sizeof(kStallPrefix) - 1,
                                       name.size() - (sizeof(kStallPrefix) - 1) -
                                           (sizeof(kStallSuffix) - 1));
      if (reason == "selected") continue;
      std::optional<double> v = Number(table.Text(row, name));
      if (v && *v > 0) k.stalls.emplace_back(reason, *v);
    }
    std::stable_sort(k.stalls.begin(), k.stalls.end(),
                     [](const auto& a, const auto& b) { return a.second > b.second; });
    // Roofline: operations per elapsed cycle of every SM sub-partition, times the SM clock.
    const std::optional<double> sm_clock = get(kSmClock);
    double ops_per_cycle = 0;
    bool any_op = false;
    for (const char* precision : {"f", "d", "h"}) {
      for (const auto& [op, weight] : {std::pair{"add", 1.0}, {"mul", 1.0}, {"fma", 2.0}}) {
        const std::string name = absl::StrCat(kOpPrefix, precision, op, kOpSuffix);
        if (absl::Status s = table.CheckUnit(name, "inst/cycle"); !s.ok()) return s;
        if (std::optional<double> v = Number(table.Text(row, name)); v) {
          ops_per_cycle += weight * *v;
          any_op = true;
        }
      }
    }
    if (any_op && sm_clock) k.flop_per_s = ops_per_cycle * *sm_clock;
    const std::optional<double> read = get(kDramRead), write = get(kDramWrite);
    if (read && write) k.dram_bytes = *read + *write;
    if (k.flop_per_s && k.dram_bytes && *k.dram_bytes > 0) {
      k.arithmetic_intensity = *k.flop_per_s * duration_ns * 1e-9 / *k.dram_bytes;
    }
    if (std::optional<double> peak = get(kFfmaPeak); peak && sm_clock) {
      k.peak_fp32_flop_per_s = 2 * *peak * *sm_clock;
    }
    if (std::optional<double> peak = get(kDramPeak), clock = get(kDramClock); peak && clock) {
      k.peak_dram_bytes_per_s = *peak * *clock;
    }
    out.push_back(std::move(k));
  }
  if (out.empty()) return absl::InvalidArgumentError("ncu output has no profiled kernel");
  return out;
}

ProfileDirection DirectionFor(const KernelProfile& k) {
  constexpr double kBusy = 60;          // % of peak that counts as a bound unit
  constexpr double kLaunchBoundUs = 5;  // shorter kernels are dominated by launch and tail
  constexpr double kLowOccupancy = 50;
  const double sm = k.sm_throughput_pct, mem = k.memory_throughput_pct;
  const double dram = k.dram_throughput_pct.value_or(0);
  if (k.duration_us < kLaunchBoundUs) {
    return {"launch_bound",
            absl::StrFormat("launch-bound: %.2f us on a grid of %s blocks (%.2f waves per SM); "
                            "the launch and the tail dominate: fuse it with neighbouring work or "
                            "give each block more work",
                            k.duration_us, k.grid_size, k.waves_per_sm)};
  }
  if (std::max(sm, mem) >= kBusy) {
    if (mem >= sm) {
      if (dram >= 0.8 * mem) {
        return {"memory_bound_dram",
                absl::StrFormat("memory-bound: DRAM at %.0f%% of peak (SM %.0f%%); only moving "
                                "fewer bytes helps: fuse, reuse data from shared memory or "
                                "registers, narrower types",
                                dram, sm)};
      }
      return {"memory_bound_cache",
              absl::StrFormat("bound by cache traffic: memory at %.0f%% of peak with DRAM at %.0f%% "
                              "(L1 hit %s, L2 hit %s); improve locality: coalesced accesses, "
                              "tiles staged in shared memory, fewer redundant loads",
                              mem, dram, Optional(k.l1_hit_pct, 0, "%"),
                              Optional(k.l2_hit_pct, 0, "%"))};
    }
    return {"compute_bound",
            absl::StrFormat("compute-bound: SM at %.0f%% of peak (memory %.0f%%); fewer or cheaper "
                            "instructions: tensor cores where the math allows, lower precision, "
                            "less index arithmetic",
                            sm, mem)};
  }
  if (k.achieved_occupancy_pct < kLowOccupancy) {
    return {"latency_bound",
            absl::StrFormat("latency-bound with low occupancy: %.0f%% of warps active (theoretical "
                            "%.0f%%), blocks per SM limited by %s (%.0f; %d registers/thread, %.0f "
                            "bytes shared/block); raise occupancy or independent work per thread",
                            k.achieved_occupancy_pct, k.theoretical_occupancy_pct,
                            k.occupancy_limiter, k.occupancy_limit_blocks, k.registers_per_thread,
                            k.shared_memory_per_block_bytes)};
  }
  std::string stall = k.stalls.empty()
                          ? std::string("an unrecorded reason (profile with --section full)")
                          : absl::StrFormat("%s (%.1f cycles per instruction)",
                                            k.stalls.front().first, k.stalls.front().second);
  return {"latency_bound",
          absl::StrFormat("latency-bound: neither SM (%.0f%%) nor memory (%.0f%%) is busy and "
                          "warps mostly wait on %s; more independent work per thread, "
                          "prefetching, fewer dependent loads",
                          sm, mem, stall)};
}

std::string RenderProfileTable(const std::vector<KernelProfile>& kernels,
                               const std::vector<std::string>& owners) {
  std::vector<std::pair<std::string, std::vector<std::string>>> rows;
  auto add = [&](std::string label, auto&& value) {
    std::vector<std::string> cells;
    for (const KernelProfile& k : kernels) cells.push_back(value(k));
    rows.emplace_back(std::move(label), std::move(cells));
  };
  if (owners.size() == kernels.size()) {
    std::vector<std::string> cells(owners.begin(), owners.end());
    rows.emplace_back("profiled", std::move(cells));
  }
  add("kernel", [](const KernelProfile& k) { return ShortName(k.name); });
  add("duration (us)", [](const KernelProfile& k) { return Fixed(k.duration_us, 2); });
  add("SM throughput (% peak)", [](const KernelProfile& k) { return Fixed(k.sm_throughput_pct, 1); });
  add("memory throughput (% peak)",
      [](const KernelProfile& k) { return Fixed(k.memory_throughput_pct, 1); });
  add("DRAM throughput (% peak)",
      [](const KernelProfile& k) { return Optional(k.dram_throughput_pct, 1); });
  add("L1 hit (%)", [](const KernelProfile& k) { return Optional(k.l1_hit_pct, 1); });
  add("L2 hit (%)", [](const KernelProfile& k) { return Optional(k.l2_hit_pct, 1); });
  add("occupancy achieved / theoretical (%)", [](const KernelProfile& k) {
    return absl::StrFormat("%.1f / %.1f", k.achieved_occupancy_pct, k.theoretical_occupancy_pct);
  });
  add("blocks/SM limited by", [](const KernelProfile& k) {
    return absl::StrFormat("%s (%.0f)", k.occupancy_limiter, k.occupancy_limit_blocks);
  });
  add("registers/thread", [](const KernelProfile& k) { return absl::StrCat(k.registers_per_thread); });
  add("shared memory/block (bytes)",
      [](const KernelProfile& k) { return Fixed(k.shared_memory_per_block_bytes, 0); });
  add("block / grid", [](const KernelProfile& k) {
    return absl::StrCat(k.block_size, " / ", k.grid_size);
  });
  add("waves per SM", [](const KernelProfile& k) { return Fixed(k.waves_per_sm, 2); });
  for (int i = 0; i < 3; ++i) {
    add(absl::StrCat("stall #", i + 1, " (cycles/inst)"), [i](const KernelProfile& k) {
      if (static_cast<size_t>(i) >= k.stalls.size()) return std::string("-");
      return absl::StrFormat("%s %.1f", k.stalls[i].first, k.stalls[i].second);
    });
  }
  add("GFLOP/s (% of FP32 peak)", [](const KernelProfile& k) {
    if (!k.flop_per_s) return std::string("-");
    std::string s = Fixed(*k.flop_per_s / 1e9, 1);
    if (k.peak_fp32_flop_per_s && *k.peak_fp32_flop_per_s > 0) {
      absl::StrAppendFormat(&s, " (%.1f%%)", 100 * *k.flop_per_s / *k.peak_fp32_flop_per_s);
    }
    return s;
  });
  add("DRAM GB/s (% of peak)", [](const KernelProfile& k) {
    if (!k.dram_bytes || k.duration_us <= 0) return std::string("-");
    const double rate = *k.dram_bytes / (k.duration_us * 1e-6);
    std::string s = Fixed(rate / 1e9, 1);
    if (k.peak_dram_bytes_per_s && *k.peak_dram_bytes_per_s > 0) {
      absl::StrAppendFormat(&s, " (%.1f%%)", 100 * rate / *k.peak_dram_bytes_per_s);
    }
    return s;
  });
  add("FLOP per DRAM byte",
      [](const KernelProfile& k) { return Optional(k.arithmetic_intensity, 3); });
  add("direction", [](const KernelProfile& k) { return DirectionFor(k).kind; });
  size_t label_width = 0;
  std::vector<size_t> widths(kernels.size(), 0);
  for (const auto& [label, cells] : rows) {
    label_width = std::max(label_width, label.size());
    for (size_t c = 0; c < cells.size(); ++c) widths[c] = std::max(widths[c], cells[c].size());
  }
  std::string out;
  for (const auto& [label, cells] : rows) {
    absl::StrAppend(&out, label, std::string(label_width - label.size(), ' '));
    for (size_t c = 0; c < cells.size(); ++c) {
      absl::StrAppend(&out, "  ", cells[c], std::string(widths[c] - cells[c].size(), ' '));
    }
    while (!out.empty() && out.back() == ' ') out.pop_back();
    out += '\n';
  }
  for (size_t i = 0; i < kernels.size(); ++i) {
    absl::StrAppend(&out, "\n", owners.size() == kernels.size() ? owners[i] + " " : "",
                    ShortName(kernels[i].name), ": ", DirectionFor(kernels[i]).text, "\n");
  }
  return out;
}

std::string ProfileJson(const std::vector<KernelProfile>& kernels) {
  nlohmann::json out = nlohmann::json::array();
  auto opt = [](const std::optional<double>& v) {
    return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
  };
  for (const KernelProfile& k : kernels) {
    nlohmann::json stalls = nlohmann::json::array();
    for (const auto& [reason, cycles] : k.stalls) {
      stalls.push_back({{"reason", reason}, {"cycles_per_instruction", cycles}});
    }
    const ProfileDirection d = DirectionFor(k);
    out.push_back({{"kernel", k.name},
                   {"device", k.device},
                   {"block_size", k.block_size},
                   {"grid_size", k.grid_size},
                   {"duration_us", k.duration_us},
                   {"sm_throughput_pct", k.sm_throughput_pct},
                   {"memory_throughput_pct", k.memory_throughput_pct},
                   {"dram_throughput_pct", opt(k.dram_throughput_pct)},
                   {"l1_hit_pct", opt(k.l1_hit_pct)},
                   {"l2_hit_pct", opt(k.l2_hit_pct)},
                   {"achieved_occupancy_pct", k.achieved_occupancy_pct},
                   {"theoretical_occupancy_pct", k.theoretical_occupancy_pct},
                   {"occupancy_limiter", k.occupancy_limiter},
                   {"occupancy_limit_blocks", k.occupancy_limit_blocks},
                   {"waves_per_sm", k.waves_per_sm},
                   {"registers_per_thread", k.registers_per_thread},
                   {"shared_memory_per_block_bytes", k.shared_memory_per_block_bytes},
                   {"stalls", stalls},
                   {"flop_per_s", opt(k.flop_per_s)},
                   {"dram_bytes", opt(k.dram_bytes)},
                   {"arithmetic_intensity", opt(k.arithmetic_intensity)},
                   {"peak_fp32_flop_per_s", opt(k.peak_fp32_flop_per_s)},
                   {"peak_dram_bytes_per_s", opt(k.peak_dram_bytes_per_s)},
                   {"direction", {{"kind", d.kind}, {"text", d.text}}}});
  }
  return out.dump(1);
}

}  // namespace kiln
