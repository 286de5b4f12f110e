#include "client/suite_report.h"

#include <algorithm>
#include <cstdlib>
#include <map>
#include <tuple>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "client/table.h"

namespace kiln::cli {

namespace {

// The report's baselines, renamed for a suite: KernelBench's reference is the problem's Model
// run by eager torch.
constexpr char kEager[] = "eager";
constexpr int kCompile = 2;  // torch_compile's index in kStandardBaselines
static_assert(kStandardBaselines[kCompile] == "torch_compile");

// (level, id) of "kernelbench_l<level>_<id>_<name>", or nullopt.
std::optional<std::pair<int, int>> KernelBenchProblem(const std::string& name) {
  absl::string_view rest = name;
  if (!absl::ConsumePrefix(&rest, "kernelbench_l")) return std::nullopt;
  std::vector<absl::string_view> parts = absl::StrSplit(rest, absl::MaxSplits('_', 2));
  int level = 0, id = 0;
  if (parts.size() < 3 || !absl::SimpleAtoi(parts[0], &level) || !absl::SimpleAtoi(parts[1], &id)) {
    return std::nullopt;
  }
  return std::make_pair(level, id);
}

std::string Fraction(const std::optional<double>& v) {
  return v.has_value() ? absl::StrFormat("%.2f", *v) : "n/a";
}

// Index of p in kFastPThresholds.
size_t Threshold(double p) {
  for (size_t i = 0; i < kFastPThresholds.size(); ++i) {
    if (kFastPThresholds[i] == p) return i;
  }
  std::abort();
}

}  // namespace

absl::StatusOr<std::vector<std::string>> SuiteDefinitions(
    const std::vector<std::string>& registered, const std::string& suite, int level) {
  if (suite != "kernelbench") {
    return absl::InvalidArgumentError(
        absl::StrCat("--suite: unknown suite '", suite, "' (expected kernelbench)"));
  }
  if (level < 0 || level > 3) {
    return absl::InvalidArgumentError(
        absl::StrCat("--level: expected 1, 2 or 3, got ", level));
  }
  std::vector<std::tuple<int, int, std::string>> found;
  for (const std::string& name : registered) {
    std::optional<std::pair<int, int>> problem = KernelBenchProblem(name);
    if (!problem.has_value() || (level != 0 && problem->first != level)) continue;
    found.emplace_back(problem->first, problem->second, name);
  }
  std::sort(found.begin(), found.end());
  std::vector<std::string> names;
  for (auto& [l, id, name] : found) names.push_back(std::move(name));
  return names;
}

SuiteReport BuildSuiteReport(const std::string& title, int registered,
                             const std::vector<DefinitionReport>& problems,
                             const std::string& mode) {
  SuiteReport suite;
  suite.title = title;
  suite.registered = registered;
  DefinitionReport& r = suite.report;
  r.definition = title;
  r.mode = mode;
  r.item = "problem";
  r.baselines = {kEager, std::string(kStandardBaselines[1]), std::string(kStandardBaselines[2])};
  const size_t nb = r.baselines.size();
  std::vector<const DefinitionReport*> run;
  for (const DefinitionReport& p : problems) {
    if (!p.empty_reason.empty() || p.competitors.empty()) continue;
    run.push_back(&p);
  }
  std::sort(run.begin(), run.end(), [](const DefinitionReport* a, const DefinitionReport* b) {
    return KernelBenchProblem(a->definition) < KernelBenchProblem(b->definition);
  });
  std::map<std::string, Competitor> competitors;
  for (size_t i = 0; i < run.size(); ++i) {
    const DefinitionReport& p = *run[i];
    r.ranked_runs += p.ranked_runs;
    if (r.backend.empty()) r.backend = p.backend;
    if (r.backend != p.backend) r.backend = "mixed";
    ReportWorkload entry;
    entry.workload.set_uuid(p.definition);
    entry.baselines.resize(nb);
    // A problem of one workload (every KernelBench problem) shows that workload's baselines.
    if (p.workloads.size() == 1) {
      for (size_t b = 0; b < nb && b < p.workloads[0].baselines.size(); ++b) {
        entry.baselines[b] = p.workloads[0].baselines[b];
      }
    }
    r.workloads.push_back(std::move(entry));
    for (const Competitor& pc : p.competitors) competitors[pc.name].name = pc.name;
  }
  for (auto& [name, c] : competitors) {
    c.workloads.assign(run.size(), CompetitorWorkload{});
    c.run_id.clear();
    for (size_t i = 0; i < run.size(); ++i) {
      CompetitorWorkload& cw = c.workloads[i];
      cw.speedup.assign(nb, 0);
      cw.speedup_interval.assign(nb, Interval{});
      const DefinitionReport& p = *run[i];
      auto it = std::find_if(p.competitors.begin(), p.competitors.end(),
                             [&](const Competitor& pc) { return pc.name == name; });
      if (it == p.competitors.end()) continue;
      c.runs += it->runs;
      cw.run_id = it->run_id;
      const bool passed =
          !p.workloads.empty() && it->passed_workloads == static_cast<int>(p.workloads.size());
      if (!passed) continue;
      double sum = 0;
      for (const CompetitorWorkload& w : it->workloads) {
        sum += w.best_latency_ms;
        cw.solution_name = w.solution_name;
        if (cw.run_id.empty()) cw.run_id = w.run_id;
      }
      cw.best_latency_ms = sum / static_cast<double>(it->workloads.size());
      if (it->workloads.size() == 1) cw.latency = it->workloads[0].latency;
      for (size_t b = 0; b < nb; ++b) {
        cw.speedup[b] = it->score[b].value_or(0);
        cw.speedup_interval[b] = it->score_interval[b];
      }
      ++c.passed_workloads;
    }
    ScoreCompetitor(r.baselines, r.workloads, c);
    r.competitors.push_back(std::move(c));
  }
  SortCompetitors(r.competitors);
  if (r.workloads.empty()) {
    r.empty_reason = absl::StrCat("no problem of ", title, " has a ranked run in mode ", mode, " (",
                                  registered, " registered)");
  }
  // Each competitor's state per problem, in the sorted order.
  suite.states.assign(r.competitors.size(), std::vector<std::string>(run.size(), "not run"));
  for (size_t c = 0; c < r.competitors.size(); ++c) {
    for (size_t i = 0; i < run.size(); ++i) {
      const CompetitorWorkload& cw = r.competitors[c].workloads[i];
      if (cw.best_latency_ms > 0) {
        suite.states[c][i] = "PASSED";
      } else if (std::any_of(run[i]->competitors.begin(), run[i]->competitors.end(),
                             [&](const Competitor& pc) { return pc.name == r.competitors[c].name; })) {
        suite.states[c][i] = "not passed";
      }
    }
  }
  return suite;
}

namespace {

// "PASSED", "not passed" or "not run": competitor `c`'s entry for problem `p`.
const std::string& State(const SuiteReport& suite, size_t c, size_t p) {
  return suite.states[c][p];
}

}  // namespace

std::string SuiteReportText(const SuiteReport& suite) {
  const DefinitionReport& r = suite.report;
  std::string out = absl::StrCat(suite.title, ": ", r.workloads.size(), " of ", suite.registered,
                                 " registered problems run (mode ", r.mode, ", backend ",
                                 r.backend.empty() ? "any" : r.backend, ")\n");
  if (!r.empty_reason.empty()) return absl::StrCat(out, r.empty_reason, "\n");
  absl::StrAppend(&out,
                  "speedups vs eager: the problem's Model in eager torch (the definition's "
                  "reference); vs torch.compile: where a run measured it (--baseline "
                  "torch_compile)\n"
                  "fast_p: share of the problems run that are correct and faster than p; a "
                  "problem a team did not run or did not pass counts as not fast\n\n");
  Table teams({{"team", Align::kLeft},
               {"passed", Align::kRight},
               {"fast_0", Align::kRight},
               {"fast_1 eager", Align::kRight},
               {"fast_1.5 eager", Align::kRight},
               {"fast_2 eager", Align::kRight},
               {"fast_1 compile", Align::kRight},
               {"fast_2 compile", Align::kRight},
               {"note", Align::kLeft}});
  for (const Competitor& c : r.competitors) {
    const auto& eager = c.fast_p[kReferenceBaseline];
    const auto& compile = c.fast_p[kCompile];
    std::string note = c.unavailable[kCompile];
    if (!c.unavailable[kReferenceBaseline].empty()) note = c.unavailable[kReferenceBaseline];
    teams.AddRow({c.name, absl::StrCat(c.passed_workloads, "/", r.workloads.size()),
                  Fraction(eager[Threshold(0.0)]), Fraction(eager[Threshold(1.0)]),
                  Fraction(eager[Threshold(1.5)]), Fraction(eager[Threshold(2.0)]),
                  Fraction(compile[Threshold(1.0)]), Fraction(compile[Threshold(2.0)]), note});
  }
  absl::StrAppend(&out, teams.Render(), "\n");
  Table problems({{"problem", Align::kLeft},
                  {"team", Align::kLeft},
                  {"verdict", Align::kLeft},
                  {"latency ms", Align::kRight},
                  {"eager ms", Align::kRight},
                  {"vs eager", Align::kRight},
                  {"compile ms", Align::kRight},
                  {"vs compile", Align::kRight},
                  {"run", Align::kLeft}});
  for (size_t i = 0; i < r.workloads.size(); ++i) {
    const ReportWorkload& w = r.workloads[i];
    for (size_t c = 0; c < r.competitors.size(); ++c) {
      const CompetitorWorkload& cw = r.competitors[c].workloads[i];
      problems.AddRow({c == 0 ? w.workload.uuid() : "", r.competitors[c].name, State(suite, c, i),
                       FormatMs(cw.best_latency_ms),
                       c == 0 ? FormatMs(w.baselines[kReferenceBaseline].latency_ms) : "",
                       FormatSpeedup(cw.speedup[kReferenceBaseline]),
                       c == 0 ? FormatMs(w.baselines[kCompile].latency_ms) : "",
                       FormatSpeedup(cw.speedup[kCompile]), cw.run_id});
    }
  }
  absl::StrAppend(&out, problems.Render());
  return out;
}

Json SuiteReportJson(const SuiteReport& suite) {
  const DefinitionReport& r = suite.report;
  auto fast_p = [](const std::array<std::optional<double>, kFastPThresholds.size()>& values) {
    Json out = Json::object();
    for (size_t i = 0; i < kFastPThresholds.size(); ++i) {
      out[FastPKey(kFastPThresholds[i])] =
          values[i].has_value() ? Json(*values[i]) : Json(nullptr);
    }
    return out;
  };
  Json teams = Json::array();
  for (const Competitor& c : r.competitors) {
    teams.push_back({{"name", c.name},
                     {"passed", c.passed_workloads},
                     {"problems", r.workloads.size()},
                     {"fast_p", {{"eager", fast_p(c.fast_p[kReferenceBaseline])},
                                 {"torch_compile", fast_p(c.fast_p[kCompile])}}},
                     {"unavailable", {{"eager", c.unavailable[kReferenceBaseline]},
                                      {"torch_compile", c.unavailable[kCompile]}}}});
  }
  Json problems = Json::array();
  for (size_t i = 0; i < r.workloads.size(); ++i) {
    const ReportWorkload& w = r.workloads[i];
    Json entries = Json::array();
    for (size_t c = 0; c < r.competitors.size(); ++c) {
      const CompetitorWorkload& cw = r.competitors[c].workloads[i];
      entries.push_back({{"team", r.competitors[c].name},
                         {"state", State(suite, c, i)},
                         {"latency_ms", cw.best_latency_ms},
                         {"speedup_eager", cw.speedup[kReferenceBaseline]},
                         {"speedup_torch_compile", cw.speedup[kCompile]},
                         {"run_id", cw.run_id}});
    }
    problems.push_back({{"name", w.workload.uuid()},
                        {"eager_ms", w.baselines[kReferenceBaseline].latency_ms},
                        {"torch_compile_ms", w.baselines[kCompile].latency_ms},
                        {"teams", std::move(entries)}});
  }
  return Json{{"suite", suite.title},
              {"mode", r.mode},
              {"backend", r.backend},
              {"registered", suite.registered},
              {"problems_run", r.workloads.size()},
              {"empty_reason", r.empty_reason},
              {"teams", std::move(teams)},
              {"problems", std::move(problems)}};
}

std::string SuiteReportSvg(const SuiteReport& suite) {
  // Two reports' SVGs, each as a nested <svg> placed under the previous one.
  std::string body;
  double width = 0, height = 0;
  for (const std::string& baseline : {std::string(kEager), std::string("torch_compile")}) {
    std::string svg = DefinitionReportSvg(suite.report, baseline);
    svg = svg.substr(svg.find("<svg"));
    auto attribute = [&svg](const std::string& name) {
      const size_t at = svg.find(absl::StrCat(" ", name, "=\""));
      double v = 0;
      if (at != std::string::npos) {
        const size_t start = at + name.size() + 3;
        if (!absl::SimpleAtod(svg.substr(start, svg.find('"', start) - start), &v)) v = 0;
      }
      return v;
    };
    const double w = attribute("width"), h = attribute("height");
    svg.insert(4, absl::StrFormat(" x=\"0\" y=\"%.2f\"", height));
    body += svg;
    width = std::max(width, w);
    height += h;
  }
  return absl::StrCat("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n",
                      absl::StrFormat("<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.2f\" "
                                      "height=\"%.2f\" viewBox=\"0 0 %.2f %.2f\">\n",
                                      width, height, width, height),
                      body, "</svg>\n");
}

}  // namespace kiln::cli
