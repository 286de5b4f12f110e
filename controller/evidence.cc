#include "controller/evidence.h"

#include <algorithm>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "harness/model/json_interop.h"
#include "harness/model/validate.h"
#include "harness/profile/profile_proto.h"

namespace kiln::controller {

namespace {

std::string AxesText(const v1::Workload& w) {
  std::string out;
  for (const v1::AxisValue& a : w.axes()) {
    absl::StrAppend(&out, out.empty() ? "" : ",", a.name(), "=", a.value());
  }
  return out;
}

// Lines of the compiler log that carry a diagnostic (file:line: error/warning), at most `max`.
std::vector<std::string> Diagnostics(const std::string& log, size_t max) {
  std::vector<std::string> out;
  std::istringstream in(log);
  std::string line;
  while (std::getline(in, line) && out.size() < max) {
    if (line.find("error") != std::string::npos || line.find("warning") != std::string::npos) {
      out.push_back(line.substr(0, 300));
    }
  }
  return out;
}

bool Tried(const std::vector<DirectionHistory>& history, const std::string& direction) {
  for (const DirectionHistory& h : history) {
    if (h.direction == direction && h.outcome != "promoted") return true;
  }
  return false;
}

}  // namespace

double GpuSeconds(const v1::Run& run) { return run.verify_s() + run.timing_s(); }

Json SummarizeRun(const v1::Run& run, const v1::Definition& definition,
                  double peak_bandwidth_gbps) {
  Json s;
  s["run_id"] = run.run_id();
  s["status"] = std::string(StatusName(run.status()));
  s["reason"] = run.reason();
  s["gpu_seconds"] = GpuSeconds(run);
  Json workloads = Json::array();
  double sum = 0, sum_noise = 0;
  int timed = 0;
  for (const v1::Trace& t : run.traces()) {
    Json w;
    w["uuid"] = t.workload().uuid();
    w["axes"] = AxesText(t.workload());
    w["status"] = std::string(StatusName(t.evaluation().status()));
    if (!t.kiln().reason().empty()) w["reason"] = t.kiln().reason();
    if (t.kiln().mismatched_elements() > 0) {
      w["mismatched"] =
          absl::StrCat(t.kiln().mismatched_elements(), " of ", t.kiln().checked_elements(),
                       " elements of ", t.kiln().worst_output());
      w["max_abs_error"] = t.evaluation().correctness().max_absolute_error();
    }
    if (t.evaluation().has_performance() && t.evaluation().performance().latency_ms() > 0) {
      const v1::Performance& p = t.evaluation().performance();
      w["latency_ms"] = p.latency_ms();
      w["reference_latency_ms"] = p.reference_latency_ms();
      w["speedup"] = p.speedup_factor();
      const v1::TimingResult& timing = t.kiln().timing();
      double rel = 0;
      if (timing.trial_medians_ms_size() > 1) {
        auto [lo, hi] =
            std::minmax_element(timing.trial_medians_ms().begin(), timing.trial_medians_ms().end());
        rel = (*hi - *lo) / std::max(p.latency_ms(), 1e-12);
      } else if (timing.stdev_ms() > 0) {
        rel = timing.stdev_ms() / std::max(p.latency_ms(), 1e-12);
      }
      w["relative_noise"] = rel;
      sum += p.latency_ms();
      sum_noise += rel;
      ++timed;
      if (peak_bandwidth_gbps > 0 && definition.inputs_size() > 0) {
        absl::StatusOr<int64_t> bytes = WorkloadBytes(definition, t.workload());
        if (bytes.ok()) {
          double floor_ms = static_cast<double>(*bytes) / (peak_bandwidth_gbps * 1e9) * 1e3;
          w["floor_ms"] = floor_ms;
          w["floor_ratio"] = p.latency_ms() / std::max(floor_ms, 1e-12);
        }
      }
    }
    workloads.push_back(w);
  }
  s["workloads"] = workloads;
  s["mean_latency_ms"] = timed > 0 ? sum / timed : 0.0;
  s["relative_noise"] = timed > 0 ? sum_noise / timed : 0.0;
  s["timed_workloads"] = timed;
  std::vector<std::string> diagnostics = Diagnostics(run.compile_log(), 20);
  if (!diagnostics.empty()) s["diagnostics"] = diagnostics;
  return s;
}

void AttachResources(const std::string& kernels_json, Json* summary) {
  Json parsed = Json::parse(kernels_json, nullptr, false);
  if (!parsed.is_discarded()) (*summary)["resources"] = parsed;
}

std::string FunctionalFeedback(const Json& summary) {
  if (!summary.is_object()) return "";
  std::string out = absl::StrCat("The previous candidate was ", summary.value("status", "?"));
  std::string reason = summary.value("reason", "");
  if (!reason.empty()) absl::StrAppend(&out, ": ", reason);
  absl::StrAppend(&out, "\n");
  if (summary.contains("diagnostics")) {
    absl::StrAppend(&out, "\nCompiler diagnostics:\n");
    for (const auto& d : summary["diagnostics"])
      absl::StrAppend(&out, "  ", d.get<std::string>(), "\n");
  }
  for (const auto& w : summary.value("workloads", Json::array())) {
    if (w.value("status", "") == "PASSED") continue;
    absl::StrAppend(&out, "\nFirst failing workload (", w.value("axes", ""),
                    "): ", w.value("status", ""));
    if (w.contains("reason")) absl::StrAppend(&out, ": ", w["reason"].get<std::string>());
    if (w.contains("mismatched")) {
      absl::StrAppend(&out, "; mismatched ", w["mismatched"].get<std::string>(), ", max abs error ",
                      w.value("max_abs_error", 0.0));
    }
    absl::StrAppend(&out, "\n");
    break;
  }
  return out;
}

Json ProfileEvidence(const v1::Run& run, const std::string& axes) {
  const v1::RunProfile& profile = run.profile();
  const v1::ProfiledTarget* own = FindProfiledTarget(profile, "solution");
  if (own == nullptr || !own->error().empty() || own->kernels().empty()) {
    std::string why = own == nullptr    ? "the harness returned no profile of the solution"
                      : own->error().empty() ? "no kernel was profiled"
                                             : own->error();
    if (run.status() != v1::PASSED && !run.reason().empty()) why = run.reason();
    return Json{{"run_id", run.run_id()}, {"workload", axes}, {"error", why}};
  }
  Json kernels = Json::array();
  const v1::KernelProfile* longest = nullptr;
  for (const v1::KernelProfile& k : own->kernels()) {
    kernels.push_back(Json{{"name", k.name()},
                           {"duration_us", k.duration_us()},
                           {"direction_kind", k.direction_kind()},
                           {"direction", k.direction()}});
    if (longest == nullptr || k.duration_us() > longest->duration_us()) longest = &k;
  }
  v1::RunProfile own_only;
  own_only.set_section(profile.section());
  *own_only.add_targets() = *own;
  std::string name = longest->name();
  if (name.size() > 80) name = name.substr(0, 77) + "...";
  return Json{{"run_id", run.run_id()},
              {"workload", axes},
              {"section", profile.section()},
              {"kernels", kernels},
              {"direction", absl::StrFormat("Nsight Compute on workload %s, kernel %s (%.1f us, "
                                            "%s): %s",
                                            axes, name, longest->duration_us(),
                                            longest->direction_kind(), longest->direction())},
              {"table", RenderRunProfile(own_only)}};
}

const Json* SlowestWorkload(const Json& s) {
  if (!s.is_object() || !s.contains("workloads") || !s["workloads"].is_array()) return nullptr;
  const Json* slowest = nullptr;
  for (const Json& w : s["workloads"]) {
    if (w.value("status", "") != "PASSED" || !w.contains("speedup")) continue;
    if (slowest == nullptr || w.value("speedup", 0.0) < slowest->value("speedup", 0.0)) {
      slowest = &w;
    }
  }
  return slowest;
}

std::string ChooseDirection(const Json& s, const std::vector<DirectionHistory>& history) {
  std::vector<std::string> options;
  if (!s.is_object())
    return "Improve cache locality: block the loops so each tile's working set fits in cache";
  if (s.contains("profile") && s["profile"].is_object() && s["profile"].contains("direction")) {
    options.push_back(s["profile"]["direction"].get<std::string>());
  }
  if (s.contains("resources") && s["resources"].is_array()) {
    for (const auto& k : s["resources"]) {
      int64_t spill =
          k.value("spill_store_bytes", int64_t{0}) + k.value("spill_load_bytes", int64_t{0});
      if (spill > 0) {
        options.push_back(absl::StrCat("Remove register spills in kernel ", k.value("name", "?"),
                                       " (", spill, " bytes spilled): smaller per-thread tiles"));
      }
      if (k.value("registers", 0) > 128) {
        options.push_back(absl::StrCat("Cut registers per thread of ", k.value("name", "?"), " (",
                                       k.value("registers", 0), ") to raise occupancy"));
      }
    }
  }
  // The workload furthest from its floor (or the slowest relative to the reference).
  const Json* worst = nullptr;
  double worst_score = 0;
  const Json workloads = s.is_object() ? s.value("workloads", Json::array()) : Json::array();
  for (const auto& w : workloads) {
    double score = w.contains("floor_ratio") ? w["floor_ratio"].get<double>()
                                             : 1.0 / std::max(w.value("speedup", 1.0), 1e-9);
    if (worst == nullptr || score > worst_score) {
      worst = &w;
      worst_score = score;
    }
  }
  if (worst != nullptr && worst->contains("floor_ratio") && worst_score > 4) {
    options.push_back(absl::StrFormat(
        "Workload %s runs at %.1fx its memory roofline floor: improve data reuse (tiling / "
        "blocking) and access coalescing",
        worst->value("axes", ""), worst_score));
  }
  if (worst != nullptr && worst->value("speedup", 1.0) < 1.0) {
    options.push_back(absl::StrFormat(
        "Workload %s is slower than the reference (speedup %.2f): specialise for its shape",
        worst->value("axes", ""), worst->value("speedup", 1.0)));
  }
  options.push_back(
      "Improve cache locality: block the loops so each tile's working set fits "
      "in cache");
  options.push_back("Vectorise the inner loop (contiguous accesses, wider loads/stores)");
  options.push_back("Unroll the innermost loop and keep accumulators in registers");
  options.push_back("Reduce fixed overhead per call (setup, allocation, launch count)");
  for (const std::string& o : options) {
    if (!Tried(history, o)) return o;
  }
  return options.front();
}

std::string EvidenceMarkdown(const Json& s, const std::vector<DirectionHistory>& history) {
  if (!s.is_object()) return "";
  std::string out = absl::StrFormat("Incumbent mean latency: %.6f ms (status %s)\n\n",
                                    s.value("mean_latency_ms", 0.0), s.value("status", "?"));
  out += "| workload | status | latency ms | reference ms | speedup | floor ms |\n";
  out += "|---|---|---|---|---|---|\n";
  for (const auto& w : s.value("workloads", Json::array())) {
    absl::StrAppend(&out,
                    absl::StrFormat("| %s | %s | %.6f | %.6f | %.3f | %s |\n", w.value("axes", ""),
                                    w.value("status", ""), w.value("latency_ms", 0.0),
                                    w.value("reference_latency_ms", 0.0), w.value("speedup", 0.0),
                                    w.contains("floor_ms")
                                        ? absl::StrFormat("%.6f", w["floor_ms"].get<double>())
                                        : std::string("n/a")));
  }
  if (s.contains("resources"))
    absl::StrAppend(&out, "\nKernel resources: ", s["resources"].dump(), "\n");
  if (s.contains("profile") && s["profile"].is_object()) {
    const Json& p = s["profile"];
    if (p.contains("table")) {
      absl::StrAppend(&out, "\nNsight Compute profile of the incumbent on its slowest workload ",
                      p.value("workload", ""), " (run ", p.value("run_id", ""), ", section ",
                      p.value("section", ""), "):\n\n```\n", p.value("table", ""), "```\n");
    } else {
      absl::StrAppend(&out, "\nNsight Compute: no profile of the incumbent on workload ",
                      p.value("workload", ""), ": ", p.value("error", ""), "\n");
    }
  } else if (s.contains("profile_note")) {
    absl::StrAppend(&out, "\nNsight Compute: ", s.value("profile_note", ""), "\n");
  } else {
    out += "\nNsight Compute: no profile of this incumbent.\n";
  }
  if (!history.empty()) {
    out += "\nDirections tried so far:\n";
    for (const DirectionHistory& h : history) {
      absl::StrAppend(&out, "- ", h.direction, " -> ", h.outcome, "\n");
    }
  }
  return out;
}

}  // namespace kiln::controller
