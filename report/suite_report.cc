#include "report/suite_report.h"

#include <algorithm>
#include <map>
#include <tuple>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "report/table.h"

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

// Index of p in kFastPThresholds, at compile time (a p not in it does not compile).
constexpr size_t Threshold(double p) {
  size_t i = 0;
  while (kFastPThresholds[i] != p) ++i;
  return i;
}
constexpr size_t kFast0 = Threshold(0.0), kFast1 = Threshold(1.0), kFast15 = Threshold(1.5),
                 kFast2 = Threshold(2.0);

}  // namespace

absl::Status CheckSuite(const std::string& suite, int level) {
  if (suite != "kernelbench") {
    return absl::InvalidArgumentError(
        absl::StrCat("--suite: unknown suite '", suite, "' (expected kernelbench)"));
  }
  if (level < 0 || level > 3) {
    return absl::InvalidArgumentError(absl::StrCat("--level: expected 1, 2 or 3, got ", level));
  }
  return absl::OkStatus();
}

std::vector<std::string> SuiteDefinitions(const std::vector<std::string>& registered, int level) {
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
  // One --noise-floor serves every problem's report (definition_report_command.cc).
  if (!problems.empty()) r.noise_floor = problems.front().noise_floor;
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
  // Each competitor's state per problem, by name until the competitors are sorted.
  std::map<std::string, std::vector<std::string>> states;
  for (auto& [name, c] : competitors) {
    c.workloads.assign(run.size(), CompetitorWorkload{});
    std::vector<std::string>& state = states[name];
    state.assign(run.size(), "not run");
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
      state[i] = passed ? "PASSED" : "not passed";
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
  for (const Competitor& c : r.competitors) suite.states.push_back(std::move(states[c.name]));
  return suite;
}

namespace {

// Whether competitor c's speedup on problem i vs baseline b is a tie with 1x (WithinNoise at the
// report's floor); false where it did not pass or b was not measured.
bool Tie(const DefinitionReport& r, size_t c, size_t i, int b) {
  const CompetitorWorkload& cw = r.competitors[c].workloads[i];
  return cw.speedup[b] > 0 && WithinNoise(cw.speedup_interval[b], r.noise_floor);
}

// How many of competitor c's problems are ties vs baseline b.
int Ties(const DefinitionReport& r, size_t c, int b) {
  int n = 0;
  for (size_t i = 0; i < r.workloads.size(); ++i) n += Tie(r, c, i, b) ? 1 : 0;
  return n;
}

// A speedup cell: "1.01x", with " tie" when it is one.
std::string SpeedupCell(const DefinitionReport& r, size_t c, size_t i, int b) {
  const std::string s = FormatSpeedup(r.competitors[c].workloads[i].speedup[b]);
  return Tie(r, c, i, b) ? s + " tie" : s;
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
                  "problem a team did not run or did not pass counts as not fast\n"
                  "tie: the speedup's 95% interval, widened by the noise floor (",
                  FormatNoiseFloor(r.noise_floor),
                  "), holds 1x (docs/report.md, Ties); fast_p counts ties as KernelBench does\n\n");
  Table teams({{"team", Align::kLeft},
               {"passed", Align::kRight},
               {"fast_0", Align::kRight},
               {"fast_1 eager", Align::kRight},
               {"fast_1.5 eager", Align::kRight},
               {"fast_2 eager", Align::kRight},
               {"fast_1 compile", Align::kRight},
               {"fast_2 compile", Align::kRight},
               {"ties eager", Align::kRight},
               {"note", Align::kLeft}});
  for (size_t ci = 0; ci < r.competitors.size(); ++ci) {
    const Competitor& c = r.competitors[ci];
    const auto& eager = c.fast_p[kReferenceBaseline];
    const auto& compile = c.fast_p[kCompile];
    std::string note = c.unavailable[kCompile];
    if (!c.unavailable[kReferenceBaseline].empty()) note = c.unavailable[kReferenceBaseline];
    teams.AddRow({c.name, absl::StrCat(c.passed_workloads, "/", r.workloads.size()),
                  Fraction(eager[kFast0]), Fraction(eager[kFast1]), Fraction(eager[kFast15]),
                  Fraction(eager[kFast2]), Fraction(compile[kFast1]), Fraction(compile[kFast2]),
                  absl::StrCat(Ties(r, ci, kReferenceBaseline)), note});
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
      problems.AddRow({c == 0 ? w.workload.uuid() : "", r.competitors[c].name, suite.states[c][i],
                       FormatMs(cw.best_latency_ms),
                       c == 0 ? FormatMs(w.baselines[kReferenceBaseline].latency_ms) : "",
                       SpeedupCell(r, c, i, kReferenceBaseline),
                       c == 0 ? FormatMs(w.baselines[kCompile].latency_ms) : "",
                       SpeedupCell(r, c, i, kCompile), cw.run_id});
    }
  }
  absl::StrAppend(&out, problems.Render());
  return out;
}

Json SuiteReportJson(const SuiteReport& suite) {
  const DefinitionReport& r = suite.report;
  Json teams = Json::array();
  for (size_t ci = 0; ci < r.competitors.size(); ++ci) {
    const Competitor& c = r.competitors[ci];
    teams.push_back({{"name", c.name},
                     {"passed", c.passed_workloads},
                     {"problems", r.workloads.size()},
                     {"fast_p", {{"eager", FastPJson(c.fast_p[kReferenceBaseline])},
                                 {"torch_compile", FastPJson(c.fast_p[kCompile])}}},
                     {"unavailable", {{"eager", c.unavailable[kReferenceBaseline]},
                                      {"torch_compile", c.unavailable[kCompile]}}},
                     {"ties", {{"eager", Ties(r, ci, kReferenceBaseline)},
                               {"torch_compile", Ties(r, ci, kCompile)}}}});
  }
  Json problems = Json::array();
  for (size_t i = 0; i < r.workloads.size(); ++i) {
    const ReportWorkload& w = r.workloads[i];
    Json entries = Json::array();
    for (size_t c = 0; c < r.competitors.size(); ++c) {
      const CompetitorWorkload& cw = r.competitors[c].workloads[i];
      entries.push_back({{"team", r.competitors[c].name},
                         {"state", suite.states[c][i]},
                         {"latency_ms", cw.best_latency_ms},
                         {"speedup_eager", cw.speedup[kReferenceBaseline]},
                         {"speedup_torch_compile", cw.speedup[kCompile]},
                         {"tie_eager", Tie(r, c, i, kReferenceBaseline)},
                         {"tie_torch_compile", Tie(r, c, i, kCompile)},
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
              {"noise_floor", r.noise_floor},
              {"empty_reason", r.empty_reason},
              {"teams", std::move(teams)},
              {"problems", std::move(problems)}};
}

std::string SuiteReportSvg(const SuiteReport& suite) {
  // The report against eager, then against torch.compile under it.
  std::string body;
  double width = 0, height = 0;
  for (const char* baseline : {kEager, "torch_compile"}) {
    const SvgPanel panel = DefinitionReportSvgPanel(suite.report, baseline);
    absl::StrAppend(&body, "<g transform=\"translate(0 ", absl::StrFormat("%.2f", height), ")\">\n",
                    panel.body, "</g>\n");
    width = std::max(width, panel.width);
    height += panel.height;
  }
  return SvgDocument(width, height, body);
}

}  // namespace kiln::cli
