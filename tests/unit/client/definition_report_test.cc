#include "report/definition_report.h"

#include <catch2/catch.hpp>
#include <cmath>
#include <regex>
#include <string>
#include <vector>

#include "report/table.h"
#include "tests/unit/client/report_fixture.h"

using namespace kiln;
using cli::WorkloadOutcome;
using kiln::CrossesOne;
using kiln::Interval;

using namespace kiln::report_fixture;

TEST_CASE("the contest score is the mean speedup over all workloads, a failed one counting 0") {
  CHECK(*cli::ContestScore({{true, 2.0}, {true, 4.0}}) == Approx(3.0));
  CHECK(*cli::ContestScore({{true, 2.0}, {false, 0}}) == Approx(1.0));
  CHECK(*cli::ContestScore({{false, 0}, {false, 0}}) == Approx(0.0));
  CHECK_FALSE(cli::ContestScore({}).has_value());
  // A passed workload whose baseline latency is unknown makes the mean unknowable.
  CHECK_FALSE(cli::ContestScore({{true, 2.0}, {true, 0}}).has_value());
}

TEST_CASE("fast_p counts speedups strictly above p over every workload") {
  const std::vector<WorkloadOutcome> outcomes = {{true, 1.0}, {true, 1.5}, {true, 0.4}, {false, 0}};
  CHECK(*cli::FastP(outcomes, 0.0) == Approx(0.75));  // correct: 3 of 4 (the denominator is 4)
  CHECK(*cli::FastP(outcomes, 0.4) == Approx(0.5));   // 0.4 is not > 0.4
  CHECK(*cli::FastP(outcomes, 1.0) == Approx(0.25));  // exactly 1.0 does not count at p = 1
  CHECK(*cli::FastP(outcomes, 1.5) == Approx(0.0));   // nor exactly 1.5 at p = 1.5
  CHECK(*cli::FastP(outcomes, 1.4999) == Approx(0.25));
  CHECK_FALSE(cli::FastP({}, 1.0).has_value());
  CHECK_FALSE(cli::FastP({{true, 2.0}, {true, 0}}, 1.0).has_value());
  // A failed workload needs no baseline: it is not fast either way.
  CHECK(*cli::FastP({{true, 2.0}, {false, 0}}, 1.0) == Approx(0.5));
}

TEST_CASE("rule best: the best PASSED latency of a team wins across its runs") {
  const std::vector<v1::Run> runs = {MakeRun("red-1", "team-red", {0.5, 1.0}),
                                     MakeRun("red-2", "team-red", {0.25, 4.0}),
                                     MakeRun("blue-1", "team-blue", {2.0, 0})};
  cli::DefinitionReportOptions best = Options();
  best.rule = cli::Rule::kBest;
  absl::StatusOr<cli::DefinitionReport> report = cli::BuildDefinitionReport(runs, best);
  REQUIRE(report.ok());
  REQUIRE(report->workloads.size() == 2);
  REQUIRE(report->competitors.size() == 2);
  CHECK(report->ranked_runs == 3);
  const cli::Competitor& red = report->competitors[0];
  CHECK(red.name == "team-red");
  CHECK(red.runs == 2);
  CHECK(red.workloads[0].best_latency_ms == 0.25);
  CHECK(red.workloads[0].run_id == "red-2");
  CHECK(red.workloads[1].best_latency_ms == 1.0);
  CHECK(red.workloads[1].run_id == "red-1");
  CHECK(red.workloads[0].speedup[kRef] == Approx(4.0));  // 1.0 / 0.25
  CHECK(red.workloads[1].speedup[kRef] == Approx(2.0));  // 2.0 / 1.0
  CHECK(*red.score[kRef] == Approx(3.0));
  CHECK(*red.fast_p[kRef][2] == Approx(1.0));  // p = 1
  CHECK(*red.fast_p[kRef][4] == Approx(0.5));  // p = 2: 2.0 is not > 2

  const cli::Competitor& blue = report->competitors[1];
  CHECK(blue.passed_workloads == 1);
  CHECK(blue.workloads[1].best_latency_ms == 0);
  CHECK(blue.workloads[1].run_id.empty());
  CHECK(*blue.score[kRef] == Approx(0.25));  // (0.5 + 0) / 2
  CHECK(*blue.fast_p[kRef][0] == Approx(0.5));
}

TEST_CASE("rule latest (the default): a team's designated run, else its newest, counts whole") {
  std::vector<v1::Run> runs = {MakeRun("red-1", "team-red", {0.5, 1.0}),
                               MakeRun("red-2", "team-red", {0.25, 4.0}),
                               MakeRun("blue-1", "team-blue", {2.0, 0})};
  absl::StatusOr<cli::DefinitionReport> report = cli::BuildDefinitionReport(runs, Options());
  REQUIRE(report.ok());
  CHECK(report->rule == cli::Rule::kLatest);
  const cli::Competitor& red = Find(*report, "team-red");
  CHECK(red.runs == 2);
  CHECK(red.run_id == "red-2");
  CHECK_FALSE(red.designated);
  // red-2's own latencies, the slow one too: scores do not only go up with resubmission.
  CHECK(red.workloads[0].best_latency_ms == 0.25);
  CHECK(red.workloads[1].best_latency_ms == 4.0);
  CHECK(*red.score[kRef] == Approx((4.0 + 0.5) / 2));
  // Baselines still come from every ranked run.
  CHECK(report->workloads[1].baselines[kRef].latency_ms == 2.0);

  runs[0].set_designated(true);
  report = cli::BuildDefinitionReport(runs, Options());
  REQUIRE(report.ok());
  const cli::Competitor& designated = Find(*report, "team-red");
  CHECK(designated.run_id == "red-1");
  CHECK(designated.designated);
  CHECK(*designated.score[kRef] == Approx(2.0));  // 1.0 / 0.5 and 2.0 / 1.0
  const std::string text = cli::DefinitionReportText(*report, "reference");
  CHECK_THAT(text, Catch::Contains("rule latest"));
  CHECK_THAT(text, Catch::Contains("(designated)"));
  CHECK(cli::DefinitionReportJson(*report, "reference")["rule"] == "latest");
}

TEST_CASE("a team with no PASSED workload scores 0 and fast_p 0, not unavailable") {
  const std::vector<v1::Run> runs = {MakeRun("green-1", "team-green", {0, 0}),
                                     MakeRun("red-1", "team-red", {0.5, 1.0})};
  absl::StatusOr<cli::DefinitionReport> report = cli::BuildDefinitionReport(runs, Options());
  REQUIRE(report.ok());
  const cli::Competitor& green = Find(*report, "team-green");
  CHECK(green.passed_workloads == 0);
  REQUIRE(green.score[kRef].has_value());
  CHECK(*green.score[kRef] == 0.0);
  for (const auto& f : green.fast_p[kRef]) CHECK(*f == 0.0);
  CHECK(report->competitors.back().name == "team-green");
}

TEST_CASE("an unmeasured baseline makes fast_p unavailable, not 0") {
  std::vector<v1::Run> runs = {MakeRun("red-1", "team-red", {0.5, 1.0})};
  v1::Trace* first = runs[0].mutable_traces(0);
  AddBaseline(first, "reference", 1.0);
  AddBaseline(first, "torch_eager", 1.5);
  AddBaseline(first, "torch_compile", 0, "torch is not installed on this node");
  v1::Trace* second = runs[0].mutable_traces(1);
  AddBaseline(second, "reference", 2.0);
  AddBaseline(second, "torch_eager", 0, "torch is not installed on this node");
  absl::StatusOr<cli::DefinitionReport> report = cli::BuildDefinitionReport(runs, Options());
  REQUIRE(report.ok());
  const cli::Competitor& red = report->competitors[0];
  CHECK(red.fast_p[kRef][0].has_value());
  CHECK(red.workloads[0].speedup[kEager] == Approx(3.0));
  CHECK_FALSE(red.fast_p[kEager][0].has_value());
  CHECK_FALSE(red.score[kEager].has_value());
  CHECK_THAT(red.unavailable[kEager], Catch::Contains("1 of 2"));
  CHECK(report->workloads[1].baselines[kEager].latency_ms == 0);
  CHECK(report->workloads[1].baselines[kEager].note == "torch is not installed on this node");

  const cli::Json json = cli::DefinitionReportJson(*report, "torch_eager");
  const cli::Json& c = json["competitors"][0];
  CHECK(c["fast_p"]["torch_eager"].is_null());
  CHECK(c["fast_p"]["reference"]["1.0"] == Approx(1.0));
  CHECK(c["score"] == Approx(2.0));  // mean of 1.0 / 0.5 and 2.0 / 1.0
  CHECK(json["workloads"][1]["baselines"]["torch_eager"]["latency_ms"].is_null());
  CHECK(json["workloads"][0]["baselines"]["reference"]["source"] == "native_reference");
  const std::string text = cli::DefinitionReportText(*report, "torch_eager");
  CHECK_THAT(text, Catch::Contains("n/a"));
  CHECK_THAT(text, Catch::Contains("unavailable"));
}

TEST_CASE("the best-known baseline is the lowest latency any ranked run measured") {
  std::vector<v1::Run> runs = {MakeRun("red-1", "team-red", {0.5, 1.0}, {1.0, 2.0}),
                               MakeRun("blue-1", "team-blue", {0.5, 1.0}, {0.8, 2.5})};
  absl::StatusOr<cli::DefinitionReport> report = cli::BuildDefinitionReport(runs, Options());
  REQUIRE(report.ok());
  CHECK(report->workloads[0].baselines[kRef].latency_ms == 0.8);
  CHECK(report->workloads[0].baselines[kRef].run_id == "blue-1");
  CHECK(report->workloads[1].baselines[kRef].latency_ms == 2.0);
  // Both teams are compared with the same baseline latency.
  CHECK(report->competitors[0].workloads[0].speedup[kRef] == Approx(1.6));
  CHECK(report->competitors[1].workloads[0].speedup[kRef] == Approx(1.6));
  // Older runs without baselines give no torch latencies.
  CHECK(report->workloads[0].baselines[kEager].latency_ms == 0);
  CHECK_FALSE(report->competitors[0].fast_p[kEager][0].has_value());
}

TEST_CASE("a Python reference measurement is preferred to a faster native one") {
  std::vector<v1::Run> runs = {MakeRun("py", "team-red", {0.5, 1.0}),
                               MakeRun("native", "team-blue", {0.5, 1.0})};
  AddBaseline(runs[0].mutable_traces(0), "reference", 1.0)->set_source("python");
  AddBaseline(runs[1].mutable_traces(0), "reference", 0.2)->set_source("native_reference");
  absl::StatusOr<cli::DefinitionReport> report = cli::BuildDefinitionReport(runs, Options());
  REQUIRE(report.ok());
  CHECK(report->workloads[0].baselines[kRef].latency_ms == 1.0);
  CHECK(report->workloads[0].baselines[kRef].source == "python");
  CHECK(report->workloads[0].baselines[kRef].run_id == "py");
}

TEST_CASE("runs that are not ranked are left out and counted") {
  std::vector<v1::Run> runs = {MakeRun("red-1", "team-red", {0.5, 1.0})};
  runs.push_back(MakeRun("chosen", "team-red", {0.01, 0.01}));
  runs.back().set_registered_workloads(false);
  runs.push_back(MakeRun("kb", "team-red", {0.01, 0.01}));
  runs.back().set_mode("kernelbench");
  runs.push_back(MakeRun("cuda", "team-red", {0.01, 0.01}));
  runs.back().set_backend("cuda");
  runs.push_back(MakeRun("check", "kiln", {0.01, 0.01}));
  runs.push_back(MakeRun("confirm", "ops", {0.01, 0.01}));
  runs.back().set_confirms("red-1");
  absl::StatusOr<cli::DefinitionReport> report = cli::BuildDefinitionReport(runs, Options());
  REQUIRE(report.ok());
  CHECK(report->ranked_runs == 1);
  // Counts agree with their nouns: "1 ranked run", never "1 ranked runs".
  const std::string text = cli::DefinitionReportText(*report, "reference");
  CHECK(text.find(", 1 ranked run, 1 team, 2 workloads;") != std::string::npos);
  CHECK(text.find("1 ranked runs") == std::string::npos);
  CHECK(report->skipped.chosen_workloads == 1);
  CHECK(report->skipped.other_mode == 1);
  CHECK(report->skipped.other_backend == 1);
  CHECK(report->skipped.harness_checks == 1);
  CHECK(report->skipped.confirmations == 1);
  REQUIRE(report->competitors.size() == 1);
  CHECK(report->competitors[0].workloads[0].best_latency_ms == 0.5);
}

TEST_CASE("without --backend the backend most runs used is compared") {
  std::vector<v1::Run> runs = {MakeRun("h1", "team-red", {0.5, 1.0}),
                               MakeRun("h2", "team-blue", {0.5, 1.0}),
                               MakeRun("c1", "team-red", {0.01, 0.01})};
  runs.back().set_backend("cuda");
  cli::DefinitionReportOptions options = Options();
  options.backend.clear();
  absl::StatusOr<cli::DefinitionReport> report = cli::BuildDefinitionReport(runs, options);
  REQUIRE(report.ok());
  CHECK(report->backend == "host");
  CHECK(report->ranked_runs == 2);
  CHECK(report->skipped.other_backend == 1);
}

TEST_CASE("no runs give an empty report with the reason") {
  absl::StatusOr<cli::DefinitionReport> none = cli::BuildDefinitionReport({}, Options());
  REQUIRE(none.ok());
  CHECK(none->competitors.empty());
  CHECK(none->empty_reason == "no runs of vector_add_f32 yet");
  CHECK_THAT(cli::DefinitionReportText(*none, "reference"),
             Catch::Contains("no runs of vector_add_f32 yet"));
  CHECK(cli::DefinitionReportJson(*none, "reference")["empty_reason"] ==
        "no runs of vector_add_f32 yet");

  std::vector<v1::Run> runs = {MakeRun("kb", "team-red", {0.5, 1.0})};
  runs[0].set_mode("kernelbench");
  absl::StatusOr<cli::DefinitionReport> other = cli::BuildDefinitionReport(runs, Options());
  REQUIRE(other.ok());
  CHECK_THAT(other->empty_reason, Catch::Contains("1 timed in another mode than official"));
}

TEST_CASE("the principal is the team; the solution's author is shown, never ranked by") {
  // A harness without --tokens serves every caller as "local": runs "a" and "b" are one team
  // whatever authors their solutions declare; rule latest counts its newest run ("b").
  std::vector<v1::Run> runs = {MakeRun("a", "local", {0.5, 1.0}),
                               MakeRun("b", "local", {1.0, 1.0}), MakeRun("c", "", {1.0, 1.0}),
                               MakeRun("d", "team-red", {1.0, 1.0})};
  runs[0].set_author("alice");
  runs[1].set_author("bob");
  runs[1].set_solution_name("a-solution");
  runs[2].set_author("carol");
  runs[2].set_created_unix_ms(runs[0].created_unix_ms() - 1);
  runs[3].set_author("alice");
  CHECK(cli::TeamOf(runs[0]) == "local");
  CHECK(cli::TeamOf(runs[2]) == "local");
  CHECK(cli::TeamOf(runs[3]) == "team-red");
  CHECK(cli::AuthorOf(runs[0]) == "alice");
  absl::StatusOr<cli::DefinitionReport> teams = cli::BuildDefinitionReport(runs, Options());
  REQUIRE(teams.ok());
  REQUIRE(teams->competitors.size() == 2);
  const cli::Competitor& local =
      teams->competitors[0].name == "local" ? teams->competitors[0] : teams->competitors[1];
  const cli::Competitor& red =
      teams->competitors[0].name == "local" ? teams->competitors[1] : teams->competitors[0];
  CHECK(local.name == "local");
  CHECK(local.runs == 3);
  CHECK(local.run_id == "b");
  CHECK(local.authors == std::vector<std::string>{"bob"});
  CHECK(red.name == "team-red");
  CHECK(red.authors == std::vector<std::string>{"alice"});
  // Rule best: each workload's best run names its author.
  cli::DefinitionReportOptions best = Options();
  best.rule = cli::Rule::kBest;
  absl::StatusOr<cli::DefinitionReport> best_report = cli::BuildDefinitionReport(runs, best);
  REQUIRE(best_report.ok());
  for (const cli::Competitor& c : best_report->competitors) {
    if (c.name != "local") continue;
    CHECK(c.workloads[0].author == "alice");
    // Workload 1 is a tie at 1.0 ms, kept by the oldest run ("c", carol), as on the leaderboard.
    CHECK(c.workloads[1].author == "carol");
    CHECK(c.authors == std::vector<std::string>{"alice", "carol"});
  }
  std::string text = cli::DefinitionReportText(*teams, "reference");
  CHECK_THAT(text, Catch::Contains("author"));
  CHECK_THAT(text, !Catch::Contains("(no author)"));

  cli::DefinitionReportOptions by_solution = Options();
  by_solution.group_by = cli::GroupBy::kSolution;
  absl::StatusOr<cli::DefinitionReport> solutions = cli::BuildDefinitionReport(runs, by_solution);
  REQUIRE(solutions.ok());
  REQUIRE(solutions->competitors.size() == 3);
  int a_solution_runs = 0;
  for (const cli::Competitor& c : solutions->competitors) {
    if (c.name == "a-solution") a_solution_runs = c.runs;
  }
  CHECK(a_solution_runs == 2);
}

TEST_CASE("a run of another definition is refused") {
  std::vector<v1::Run> runs = {MakeRun("a", "team-red", {0.5, 1.0})};
  runs[0].set_definition("gemm");
  CHECK(cli::BuildDefinitionReport(runs, Options()).status().code() ==
        absl::StatusCode::kInvalidArgument);
}

TEST_CASE("XmlEscape escapes markup characters") {
  CHECK(XmlEscape("a<b>&\"c'") == "a&lt;b&gt;&amp;&quot;c&apos;");
}

TEST_CASE("the SVG is well formed, names every team and has the p ticks and finite numbers") {
  std::vector<v1::Run> runs = {MakeRun("red-1", "team <red> & co", {0.5, 1.0}),
                               MakeRun("blue-1", "team-blue", {2.0, 0}),
                               MakeRun("green-1", "team-green", {0, 0})};
  absl::StatusOr<cli::DefinitionReport> report = cli::BuildDefinitionReport(runs, Options());
  REQUIRE(report.ok());
  const std::string svg = cli::DefinitionReportSvg(*report, "reference");
  INFO(svg);
  CHECK(svg.rfind("<?xml", 0) == 0);
  CHECK_THAT(svg, Catch::Contains("<svg xmlns=\"http://www.w3.org/2000/svg\" width=\""));
  CHECK_THAT(svg, Catch::Contains("team &lt;red&gt; &amp; co"));
  CHECK_THAT(svg, Catch::Contains("team-blue"));
  CHECK_THAT(svg, Catch::Contains("team-green"));
  CHECK_THAT(svg, Catch::Contains("vector_add_f32: fast_p vs reference"));
  for (const char* tick : {">0<", ">0.5<", ">1<", ">1.5<", ">2<"}) {
    CHECK_THAT(svg, Catch::Contains(tick));
  }
  CHECK_THAT(svg, Catch::Contains("<polyline"));
  CHECK_THAT(svg, Catch::Contains("<rect"));
  CHECK(svg.find("nan") == std::string::npos);
  CHECK(svg.find("inf") == std::string::npos);

  // Balanced tags: every opening tag is closed in order (self-closing ones aside).
  std::vector<std::string> stack;
  const std::regex tag(R"(<(/?)([a-zA-Z?][\w:-]*)([^>]*)>)");
  for (auto it = std::sregex_iterator(svg.begin(), svg.end(), tag); it != std::sregex_iterator();
       ++it) {
    const std::smatch& m = *it;
    const std::string name = m[2];
    const std::string rest = m[3];
    if (name[0] == '?' || (!rest.empty() && rest.back() == '/')) continue;
    if (m[1] == "/") {
      REQUIRE_FALSE(stack.empty());
      CHECK(stack.back() == name);
      stack.pop_back();
    } else {
      stack.push_back(name);
    }
  }
  CHECK(stack.empty());
  // No raw '&' outside entities, and every coordinate attribute a finite number.
  CHECK_FALSE(std::regex_search(svg, std::regex("&(?!(amp|lt|gt|quot|apos);)")));
  const std::regex number(R"(\b(x|y|x1|y1|x2|y2|width|height)="([^"]*)\")");
  int numbers = 0;
  for (auto it = std::sregex_iterator(svg.begin(), svg.end(), number); it != std::sregex_iterator();
       ++it) {
    const std::string value = (*it)[2];
    char* end = nullptr;
    const double v = std::strtod(value.c_str(), &end);
    CHECK(*end == '\0');
    CHECK(std::isfinite(v));
    ++numbers;
  }
  CHECK(numbers > 50);
}

TEST_CASE("the SVG of an empty report says why") {
  absl::StatusOr<cli::DefinitionReport> none = cli::BuildDefinitionReport({}, Options());
  REQUIRE(none.ok());
  const std::string svg = cli::DefinitionReportSvg(*none, "reference");
  CHECK_THAT(svg, Catch::Contains("no runs of vector_add_f32 yet"));
  CHECK_THAT(svg, Catch::EndsWith("</svg>\n"));
}

TEST_CASE("a solution baseline from the traces gets its own column, speedups and fast_p") {
  std::vector<v1::Run> runs = {MakeRun("red-1", "team-red", {0.5, 1.0})};
  AddBaseline(runs[0].mutable_traces(0), "reference", 1.0);
  AddBaseline(runs[0].mutable_traces(0), "solution:flashinfer_wrapper_9c4b1e", 0.25);
  AddBaseline(runs[0].mutable_traces(1), "reference", 2.0);
  AddBaseline(runs[0].mutable_traces(1), "solution:flashinfer_wrapper_9c4b1e", 2.0);
  absl::StatusOr<cli::DefinitionReport> report = cli::BuildDefinitionReport(runs, Options());
  REQUIRE(report.ok());
  const int b = cli::BaselineIndex(*report, "solution:flashinfer_wrapper_9c4b1e");
  REQUIRE(b == 3);  // after the standard three
  const cli::Competitor& red = report->competitors[0];
  CHECK(red.workloads[0].speedup[b] == Approx(0.5));  // 0.25 / 0.5
  CHECK(red.workloads[1].speedup[b] == Approx(2.0));  // 2.0 / 1.0
  CHECK(*red.score[b] == Approx(1.25));
  CHECK(*red.fast_p[b][2] == Approx(0.5));  // p = 1: only the second workload is faster

  const cli::Json json = cli::DefinitionReportJson(*report, "solution:flashinfer_wrapper_9c4b1e");
  CHECK(json["baseline"] == "solution:flashinfer_wrapper_9c4b1e");
  CHECK(json["workloads"][0]["baselines"]["solution:flashinfer_wrapper_9c4b1e"]["latency_ms"] ==
        Approx(0.25));
  CHECK(json["competitors"][0]["mean_speedup"]["solution:flashinfer_wrapper_9c4b1e"] ==
        Approx(1.25));
  const std::string text = cli::DefinitionReportText(*report, "solution:flashinfer_wrapper_9c4b1e");
  CHECK_THAT(text, Catch::Contains("solution:flashinfer_wrapper_9c4b1e ms"));
  CHECK_THAT(text, Catch::Contains("mean vs solution:flashinfer_wrapper_9c4b1e"));
}

TEST_CASE("a solution baseline asked for but never timed is in the report without numbers") {
  std::vector<v1::Run> runs = {MakeRun("red-1", "team-red", {0.5, 1.0})};
  cli::DefinitionReportOptions options = Options();
  options.baselines.push_back("solution:never_timed");
  absl::StatusOr<cli::DefinitionReport> report = cli::BuildDefinitionReport(runs, options);
  REQUIRE(report.ok());
  const int b = cli::BaselineIndex(*report, "solution:never_timed");
  REQUIRE(b >= 0);
  CHECK(report->workloads[0].baselines[b].note == "not requested by any ranked run");
  CHECK_FALSE(report->competitors[0].score[b].has_value());
  CHECK_THAT(cli::DefinitionReportText(*report, "solution:never_timed"),
             Catch::Contains("fast_p vs solution:never_timed unavailable"));
  CHECK_THAT(cli::DefinitionReportSvg(*report, "solution:never_timed"),
             Catch::Contains("fast_p vs solution:never_timed"));
}

TEST_CASE("report baselines are the standard three or solution:NAME") {
  CHECK(*cli::ParseBaseline("torch_compile") == "torch_compile");
  CHECK(*cli::ParseBaseline("solution:flashinfer_wrapper_9c4b1e") ==
        "solution:flashinfer_wrapper_9c4b1e");
  CHECK_THAT(std::string(cli::ParseBaseline("torch_jit").status().message()),
             Catch::Contains("solution:NAME"));
  CHECK_FALSE(cli::ParseBaseline("solution:").ok());
  CHECK_FALSE(cli::ParseBaseline("solution:a b").ok());
}
