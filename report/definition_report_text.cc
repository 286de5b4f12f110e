// DefinitionReportText and DefinitionReportJson: the report as tables and as JSON.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "harness/verify/own_work.h"
#include "report/definition_report.h"
#include "report/report.h"
#include "report/table.h"

namespace kiln::cli {

std::string LeftOutText(const std::vector<std::string>& harnesses) {
  std::string out;
  for (const std::string& h : harnesses) {
    absl::StrAppend(&out, "left out: the runs held by harness ", h, "\n");
  }
  return out;
}

namespace {

// The report's workload ids, each as short as it can be and still differ from the others'.
std::vector<std::string> WorkloadIds(const DefinitionReport& report) {
  std::vector<std::string> uuids;
  for (const ReportWorkload& w : report.workloads) uuids.push_back(w.workload.uuid());
  return UniquePrefixes(uuids);
}

std::string GroupName(GroupBy group_by) { return group_by == GroupBy::kTeam ? "team" : "solution"; }

// A mean speedup as "1.23x" (0 too: nothing passed); "n/a" when not known.
std::string FormatScore(const std::optional<double>& value) {
  return value.has_value() ? absl::StrFormat("%.2fx", *value) : "n/a";
}

std::string RuleText(const DefinitionReport& report) {
  const std::string who = report.group_by == GroupBy::kTeam ? "team" : "solution";
  if (report.rule == Rule::kBest) {
    return absl::StrCat("rule best: per workload, each ", who,
                        "'s lowest PASSED latency over all its ranked runs (a view that only "
                        "improves with resubmission)\n");
  }
  return absl::StrCat("rule latest: each ", who,
                      "'s designated run, else its newest ranked run, whatever its verdict "
                      "(--best: the best of all its runs)\n");
}

// A fraction as "0.50"; "n/a" when not known.
std::string FormatFraction(const std::optional<double>& value) {
  return value.has_value() ? absl::StrFormat("%.2f", *value) : "n/a";
}

std::string Headline(const DefinitionReport& report, const std::string& baseline) {
  std::string line = absl::StrCat(report.definition, ": mode ", report.mode, ", backend ",
                                  report.backend.empty() ? "any" : report.backend);
  if (!report.empty_reason.empty()) return absl::StrCat(line, "\n", report.empty_reason, "\n");
  absl::StrAppend(&line, ", ", report.ranked_runs, " ranked run",
                  report.ranked_runs == 1 ? "" : "s", ", ", report.competitors.size(), " ",
                  GroupName(report.group_by), report.competitors.size() == 1 ? "" : "s", ", ",
                  report.workloads.size(), " workload", report.workloads.size() == 1 ? "" : "s",
                  "; speedups vs ", baseline, "\n", RuleText(report));
  return line;
}

std::string CompetitorTable(const DefinitionReport& report, int b) {
  const std::string& baseline = report.baselines[b];
  const bool other = b != kReferenceBaseline;
  std::vector<Column> columns = {
      {"#", Align::kRight}, {GroupName(report.group_by)}, {"author"}, {"score", Align::kRight}};
  if (other) columns.push_back({absl::StrCat("mean vs ", baseline), Align::kRight});
  columns.push_back({"95% interval", Align::kRight});
  columns.push_back({"noise"});
  columns.push_back({"passed", Align::kRight});
  for (double p : kFastPThresholds) {
    columns.push_back({absl::StrCat("fast_", absl::StrFormat("%g", p)), Align::kRight});
  }
  columns.push_back({"own kernels", Align::kRight});
  columns.push_back({"runs", Align::kRight});
  if (report.rule == Rule::kLatest) columns.push_back({"counted run"});
  Table table(std::move(columns));
  int place = 0;
  for (const Competitor& c : report.competitors) {
    std::vector<std::string> row = {
        absl::StrCat(++place), c.name,
        c.authors.empty() ? std::string(kAbsent) : absl::StrJoin(c.authors, ", "),
        FormatScore(c.score[kReferenceBaseline])};
    if (other) row.push_back(FormatScore(c.score[b]));
    const Interval known = c.score[b].has_value() ? c.score_interval[b] : Interval{};
    row.push_back(FormatSpeedupInterval(known));
    row.push_back(NoiseMark(known, report.noise_floor));
    row.push_back(absl::StrCat(c.passed_workloads, "/", c.workloads.size()));
    for (const std::optional<double>& f : c.fast_p[b]) row.push_back(FormatFraction(f));
    row.push_back(c.own_share.has_value() ? integrity::ShareText(*c.own_share)
                                          : std::string(kAbsent));
    row.push_back(absl::StrCat(c.runs));
    if (report.rule == Rule::kLatest) {
      row.push_back(c.run_id.empty() ? kAbsent
                                     : absl::StrCat(RunLabel(c.run_id),
                                                    c.designated ? " (designated)" : ""));
    }
    table.AddRow(std::move(row));
  }
  std::string out = table.Render();
  for (const Competitor& c : report.competitors) {
    if (!c.unavailable[b].empty()) {
      absl::StrAppend(&out, c.name, ": fast_p vs ", baseline, " unavailable: ", c.unavailable[b],
                      "\n");
    }
  }
  return out;
}

std::string BaselineCell(const BaselineMeasurement& m) {
  if (m.latency_ms == 0) return kAbsent;
  std::string cell = FormatMs(m.latency_ms);
  absl::StrAppend(&cell, " (", m.source.empty() ? "source unrecorded" : m.source,
                  m.cached ? ", cached" : "", ")");
  return cell;
}

std::string BaselineTable(const DefinitionReport& report) {
  std::vector<Column> columns = {{"workload"}, {"axes"}};
  for (const std::string& name : report.baselines) columns.push_back({absl::StrCat(name, " ms")});
  columns.push_back({"device"});
  Table table(std::move(columns));
  const std::vector<std::string> ids = WorkloadIds(report);
  for (size_t i = 0; i < report.workloads.size(); ++i) {
    const ReportWorkload& w = report.workloads[i];
    std::string device;
    std::vector<std::string> row = {ids[i], AxesText(w.workload)};
    for (const BaselineMeasurement& m : w.baselines) {
      if (device.empty()) device = m.device;
      row.push_back(BaselineCell(m));
    }
    row.push_back(device.empty() ? kAbsent : device);
    table.AddRow(std::move(row));
  }
  return table.Render();
}

// Per workload, the competitors fastest first; the fastest one's lead over the next.
std::string WorkloadTable(const DefinitionReport& report, int b) {
  Table table({{"workload"},
               {"axes"},
               {GroupName(report.group_by)},
               {"latency ms", Align::kRight},
               {absl::StrCat("vs ", report.baselines[b]), Align::kRight},
               {"95% interval", Align::kRight},
               {"noise"},
               {"run"},
               {"lead"}});
  const std::vector<std::string> ids = WorkloadIds(report);
  for (size_t i = 0; i < report.workloads.size(); ++i) {
    std::vector<const Competitor*> order;
    for (const Competitor& c : report.competitors) order.push_back(&c);
    std::stable_sort(order.begin(), order.end(), [i](const Competitor* x, const Competitor* y) {
      const double a = x->workloads[i].best_latency_ms, c = y->workloads[i].best_latency_ms;
      if ((a > 0) != (c > 0)) return a > 0;
      return a < c;
    });
    for (size_t k = 0; k < order.size(); ++k) {
      const CompetitorWorkload& cw = order[k]->workloads[i];
      std::string lead;
      if (k == 0 && cw.best_latency_ms > 0 && order.size() > 1) {
        const double next = order[1]->workloads[i].best_latency_ms;
        lead = next > 0
                   ? absl::StrFormat("%.2fx ahead of %s", next / cw.best_latency_ms, order[1]->name)
                   : "only one passed";
      }
      table.AddRow({k == 0 ? ids[i] : "",
                    k == 0 ? AxesText(report.workloads[i].workload) : "", order[k]->name,
                    cw.best_latency_ms > 0 ? FormatMs(cw.best_latency_ms) : "no PASSED run",
                    FormatSpeedup(cw.speedup[b]), FormatSpeedupInterval(cw.speedup_interval[b]),
                    NoiseMark(cw.speedup_interval[b], report.noise_floor), cw.run_id.empty() ? kAbsent : cw.run_id,
                    lead});
    }
  }
  return table.Render();
}

std::string SkippedText(const SkippedRuns& s) {
  std::vector<std::string> parts;
  auto add = [&parts](int n, absl::string_view what) {
    if (n > 0) parts.push_back(absl::StrCat(n, " ", what));
  };
  add(s.unfinished, "unfinished runs");
  add(s.confirmations, "confirmation runs (not ranked)");
  add(s.chosen_workloads, "runs on chosen workloads (not ranked)");
  add(s.other_mode, "runs in other modes");
  add(s.other_backend, "runs on other backends");
  add(s.unreadable, "runs of other principals not readable with this token");
  add(s.stale_workloads, "traces of workloads no longer registered");
  std::string out;
  if (!parts.empty()) out = absl::StrCat("left out: ", absl::StrJoin(parts, ", "), "\n");
  return out + LeftOutText(s.unavailable_harnesses);
}

Json OptionalNumber(const std::optional<double>& value) {
  return value.has_value() ? Json(*value) : Json(nullptr);
}

Json PositiveOrNull(double value) { return value > 0 ? Json(value) : Json(nullptr); }

// {"low", "high", "crosses_one"} of a known interval, else null.
Json IntervalJson(const Interval& i) {
  if (!(i.value > 0)) return Json(nullptr);
  return Json{{"low", i.low}, {"high", i.high}, {"crosses_one", CrossesOne(i)}};
}

// A speedup's IntervalJson with "tie": whether it is within the report's noise floor of 1x.
Json SpeedupIntervalJson(const Interval& i, double floor) {
  Json json = IntervalJson(i);
  if (!json.is_null()) json["tie"] = WithinNoise(i, floor);
  return json;
}

Json BaselineJson(const BaselineMeasurement& m) {
  return Json{{"latency_ms", PositiveOrNull(m.latency_ms)},
              {"source", m.source},
              {"device", m.device},
              {"run_id", m.run_id},
              {"cached", m.cached},
              {"note", m.note},
              {"ci95", IntervalJson(m.interval)}};
}

Json CompetitorJson(const DefinitionReport& report, const Competitor& c) {
  Json json = {{"name", c.name},
               {"authors", c.authors},
               {"runs", c.runs},
               {"passed_workloads", c.passed_workloads},
               {"own_kernel_share", OptionalNumber(c.own_share)},
               {"workload_count", c.workloads.size()},
               {"score", OptionalNumber(c.score[kReferenceBaseline])},
               {"run_id", c.run_id},
               {"designated", c.designated}};
  Json mean = Json::object(), fast = Json::object(), unavailable = Json::object();
  Json mean_ci = Json::object();
  for (size_t b = 0; b < report.baselines.size(); ++b) {
    const std::string& name = report.baselines[b];
    mean[name] = OptionalNumber(c.score[b]);
    mean_ci[name] = c.score[b].has_value()
                        ? SpeedupIntervalJson(c.score_interval[b], report.noise_floor)
                        : Json(nullptr);
    const bool known = std::all_of(c.fast_p[b].begin(), c.fast_p[b].end(),
                                   [](const std::optional<double>& v) { return v.has_value(); });
    fast[name] = known ? FastPJson(c.fast_p[b]) : Json(nullptr);
    unavailable[name] = c.unavailable[b];
  }
  json["mean_speedup"] = mean;
  json["mean_speedup_ci95"] = mean_ci;
  json["fast_p"] = fast;
  json["unavailable"] = unavailable;
  Json workloads = Json::array();
  for (size_t i = 0; i < c.workloads.size(); ++i) {
    const CompetitorWorkload& cw = c.workloads[i];
    Json speedup = Json::object(), speedup_ci = Json::object();
    for (size_t b = 0; b < report.baselines.size(); ++b) {
      speedup[report.baselines[b]] = PositiveOrNull(cw.speedup[b]);
      speedup_ci[report.baselines[b]] =
          SpeedupIntervalJson(cw.speedup_interval[b], report.noise_floor);
    }
    workloads.push_back({{"uuid", report.workloads[i].workload.uuid()},
                         {"best_latency_ms", PositiveOrNull(cw.best_latency_ms)},
                         {"run_id", cw.run_id},
                         {"solution", cw.solution_name},
                         {"author", cw.author},
                         {"speedup", speedup},
                         {"speedup_ci95", speedup_ci}});
  }
  json["workloads"] = workloads;
  return json;
}

}  // namespace

Json FastPJson(const std::array<std::optional<double>, kFastPThresholds.size()>& values) {
  Json out = Json::object();
  for (size_t i = 0; i < kFastPThresholds.size(); ++i) {
    out[FastPKey(kFastPThresholds[i])] = OptionalNumber(values[i]);
  }
  return out;
}

std::string DefinitionReportText(const DefinitionReport& report, const std::string& baseline) {
  std::string out = Headline(report, baseline);
  if (!report.empty_reason.empty()) return out + SkippedText(report.skipped);
  const int b = BaselineIndex(report, baseline);
  if (b < 0) return absl::StrCat(out, "baseline ", baseline, " is not in this report\n");
  absl::StrAppend(&out, "\n", CompetitorTable(report, b),
                  "noise: tie where the speedup's 95% interval, widened by the noise floor (",
                  FormatNoiseFloor(report.noise_floor), "), holds 1x: not told apart from ",
                  report.baselines[b], " (docs/report.md, Ties)\n",
                  "\nbaselines (best known)\n",
                  BaselineTable(report), report.rule == Rule::kBest ? "\nbest PASSED latency per workload\n"
                                              : "\nlatency of the counted run per workload\n",
                  WorkloadTable(report, b));
  const std::string skipped = SkippedText(report.skipped);
  if (!skipped.empty()) absl::StrAppend(&out, "\n", skipped);
  return out;
}

Json DefinitionReportJson(const DefinitionReport& report, const std::string& baseline) {
  const SkippedRuns& s = report.skipped;
  Json json = {{"definition", report.definition},
               {"mode", report.mode},
               {"backend", report.backend},
               {"group_by", GroupName(report.group_by)},
               {"rule", report.rule == Rule::kBest ? "best" : "latest"},
               {"baseline", baseline},
               {"baselines", report.baselines},
               {"fast_p_thresholds", kFastPThresholds},
               {"noise_floor", report.noise_floor},
               {"ranked_runs", report.ranked_runs},
               {"empty_reason", report.empty_reason},
               {"skipped",
                {{"unfinished", s.unfinished},
                 {"harness_checks", s.harness_checks},
                 {"confirmations", s.confirmations},
                 {"chosen_workloads", s.chosen_workloads},
                 {"other_mode", s.other_mode},
                 {"other_backend", s.other_backend},
                 {"unreadable", s.unreadable},
                 {"stale_workload_traces", s.stale_workloads},
                 {"unavailable_harnesses", s.unavailable_harnesses}}}};
  Json workloads = Json::array();
  for (const ReportWorkload& w : report.workloads) {
    Json axes = Json::object();
    for (const v1::AxisValue& a : w.workload.axes()) axes[a.name()] = a.value();
    Json baselines = Json::object();
    for (size_t b = 0; b < report.baselines.size(); ++b) {
      baselines[report.baselines[b]] = BaselineJson(w.baselines[b]);
    }
    workloads.push_back({{"uuid", w.workload.uuid()}, {"axes", axes}, {"baselines", baselines}});
  }
  json["workloads"] = workloads;
  Json competitors = Json::array();
  for (const Competitor& c : report.competitors) competitors.push_back(CompetitorJson(report, c));
  json["competitors"] = competitors;
  return json;
}

}  // namespace kiln::cli
