// The noise of a speedup in the reports: its 95 % interval, and the noise floor within which it is
// a tie with 1x (kiln report, the KernelBench suite report, --noise-floor).
#include <catch2/catch.hpp>
#include <regex>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_split.h"
#include "report/definition_report.h"
#include "report/suite_report.h"
#include "report/table.h"
#include "tests/unit/client/report_fixture.h"

using namespace kiln;
using namespace kiln::report_fixture;

TEST_CASE("every speedup carries the 95% interval of both latencies, a tie when it crosses 1x") {
  std::vector<v1::Run> runs = {MakeRun("red-1", "team-red", {0.5, 1.9})};
  auto set_ci = [](v1::TimingResult* t, double low, double high) {
    t->set_ci95_low_ms(low);
    t->set_ci95_high_ms(high);
  };
  // Workload 0: 2x with tight intervals. Workload 1: 2.0 / 1.9 = 1.05x with wide ones.
  set_ci(runs[0].mutable_traces(0)->mutable_kiln()->mutable_timing(), 0.49, 0.51);
  set_ci(runs[0].mutable_traces(0)->mutable_kiln()->mutable_reference_timing(), 0.98, 1.02);
  set_ci(runs[0].mutable_traces(1)->mutable_kiln()->mutable_timing(), 1.7, 2.1);
  set_ci(runs[0].mutable_traces(1)->mutable_kiln()->mutable_reference_timing(), 1.9, 2.1);
  absl::StatusOr<cli::DefinitionReport> report = cli::BuildDefinitionReport(runs, Options());
  REQUIRE(report.ok());
  const cli::Competitor& red = report->competitors[0];
  const Interval& tight = red.workloads[0].speedup_interval[kRef];
  CHECK(tight.low == Approx(0.98 / 0.51));
  CHECK(tight.high == Approx(1.02 / 0.49));
  CHECK_FALSE(CrossesOne(tight));
  const Interval& wide = red.workloads[1].speedup_interval[kRef];
  CHECK(wide.low == Approx(1.9 / 2.1));
  CHECK(wide.high == Approx(2.1 / 1.7));
  CHECK(CrossesOne(wide));
  CHECK(red.score_interval[kRef].low == Approx((0.98 / 0.51 + 1.9 / 2.1) / 2));
  CHECK(red.score_interval[kRef].high == Approx((1.02 / 0.49 + 2.1 / 1.7) / 2));
  const std::string text = cli::DefinitionReportText(*report, "reference");
  CHECK_THAT(text, Catch::Contains("95% interval"));
  CHECK_THAT(text, Catch::Contains("tie"));
  CHECK_THAT(text, Catch::Contains("noise floor (2%)"));
  const cli::Json json = cli::DefinitionReportJson(*report, "reference");
  CHECK(json["noise_floor"] == Approx(0.02));
  const cli::Json& w1 = json["competitors"][0]["workloads"][1]["speedup_ci95"]["reference"];
  CHECK(w1["crosses_one"] == true);
  CHECK(w1["tie"] == true);
  CHECK(w1["low"] == Approx(1.9 / 2.1));
  const cli::Json& w0 = json["competitors"][0]["workloads"][0]["speedup_ci95"]["reference"];
  CHECK(w0["crosses_one"] == false);
  CHECK(w0["tie"] == false);
}

TEST_CASE("a speedup inside the noise floor is a tie, not a win; --noise-floor moves the line") {
  // One workload at 1.0 / 0.985 = 1.015x with a tight interval (1.0132..1.0173): its interval
  // is above 1x, but a reference timed against itself lands up to 2 % away from 1x.
  std::vector<v1::Run> runs = {MakeRun("red-1", "team-red", {0.985}),
                               MakeRun("blue-1", "team-blue", {0.8})};
  for (v1::Run& run : runs) {
    v1::TimingResult* t = run.mutable_traces(0)->mutable_kiln()->mutable_timing();
    const double latency = run.traces(0).evaluation().performance().latency_ms();
    t->set_ci95_low_ms(latency * 0.999);
    t->set_ci95_high_ms(latency * 1.001);
    v1::TimingResult* r = run.mutable_traces(0)->mutable_kiln()->mutable_reference_timing();
    r->set_ci95_low_ms(0.999);
    r->set_ci95_high_ms(1.001);
  }
  absl::StatusOr<cli::DefinitionReport> report = cli::BuildDefinitionReport(runs, Options());
  REQUIRE(report.ok());
  auto tie_of = [](const cli::DefinitionReport& r, const std::string& team) {
    const cli::Json json = cli::DefinitionReportJson(r, "reference");
    for (const cli::Json& c : json["competitors"]) {
      if (c["name"] == team) return c["workloads"][0]["speedup_ci95"]["reference"]["tie"];
    }
    return cli::Json(nullptr);
  };
  CHECK(tie_of(*report, "team-red") == true);    // 1.015x: inside the default 2 % floor
  CHECK(tie_of(*report, "team-blue") == false);  // 1.25x: a win
  // The text marks red's score and its workload row, never blue's.
  auto rows_with_tie = [](const std::string& text, const std::string& team) {
    int n = 0;
    for (const std::string& line : std::vector<std::string>(absl::StrSplit(text, '\n'))) {
      if (absl::StrContains(line, team) && std::regex_search(line, std::regex(" tie( |$)"))) ++n;
    }
    return n;
  };
  const std::string text = cli::DefinitionReportText(*report, "reference");
  CHECK(rows_with_tie(text, "team-red") == 2);
  CHECK(rows_with_tie(text, "team-blue") == 0);

  cli::DefinitionReportOptions options = Options();
  options.noise_floor = 0.01;  // a floor below 1.5 %: red's lead now counts
  report = cli::BuildDefinitionReport(runs, options);
  REQUIRE(report.ok());
  CHECK(tie_of(*report, "team-red") == false);
  CHECK(cli::DefinitionReportJson(*report, "reference")["noise_floor"] == Approx(0.01));
  CHECK_THAT(cli::DefinitionReportText(*report, "reference"), Catch::Contains("noise floor (1%)"));
}

TEST_CASE("--noise-floor takes a fraction from 0 to below 1 and names itself otherwise") {
  CHECK(*cli::ParseNoiseFloor("") == Approx(kiln::kDefaultNoiseFloor));
  CHECK(*cli::ParseNoiseFloor("0") == 0);
  CHECK(*cli::ParseNoiseFloor("0.05") == Approx(0.05));
  for (const char* bad : {"-0.1", "1", "2", "nan", "inf", "two", "5%"}) {
    const absl::StatusOr<double> f = cli::ParseNoiseFloor(bad);
    CHECK_FALSE(f.ok());
    CHECK_THAT(std::string(f.status().message()), Catch::Contains("--noise-floor"));
    CHECK_THAT(std::string(f.status().message()), Catch::Contains(bad));
  }
}

TEST_CASE("the suite report counts and marks each team's ties with eager at the noise floor") {
  // Two one-workload problems: team-red 1.012x on the first (a tie at 2 %), 1.5x on the second.
  auto problem = [](const std::string& name, double latency) {
    v1::Run run = MakeRun(name + "-red", "team-red", {latency});
    run.set_definition(name);
    v1::Trace* trace = run.mutable_traces(0);
    trace->set_definition(name);
    trace->mutable_kiln()->mutable_timing()->set_ci95_low_ms(latency * 0.999);
    trace->mutable_kiln()->mutable_timing()->set_ci95_high_ms(latency * 1.001);
    trace->mutable_kiln()->mutable_reference_timing()->set_ci95_low_ms(0.999);
    trace->mutable_kiln()->mutable_reference_timing()->set_ci95_high_ms(1.001);
    cli::DefinitionReportOptions options = Options();
    options.definition = name;
    return *cli::BuildDefinitionReport({run}, options);
  };
  const std::vector<cli::DefinitionReport> problems = {
      problem("kernelbench_l1_1_Square_matrix_multiplication_", 1.0 / 1.012),
      problem("kernelbench_l1_2_Standard_matrix_multiplication_", 1.0 / 1.5)};
  const cli::SuiteReport suite = cli::BuildSuiteReport("KernelBench level 1", 2, problems,
                                                       "official");
  const cli::Json json = cli::SuiteReportJson(suite);
  CHECK(json["noise_floor"] == Approx(0.02));
  REQUIRE(json["teams"].size() == 1);
  CHECK(json["teams"][0]["ties"]["eager"] == 1);
  CHECK(json["teams"][0]["fast_p"]["eager"]["1.0"] == Approx(1.0));  // KernelBench's count
  REQUIRE(json["problems"].size() == 2);
  CHECK(json["problems"][0]["teams"][0]["tie_eager"] == true);
  CHECK(json["problems"][1]["teams"][0]["tie_eager"] == false);
  const std::string text = cli::SuiteReportText(suite);
  CHECK_THAT(text, Catch::Contains("1.01x tie"));
  CHECK_THAT(text, Catch::Contains("1.50x") && !Catch::Contains("1.50x tie"));
  CHECK_THAT(text, Catch::Contains("noise floor (2%)"));
}
