// The web console's pages as plain functions (web/web_pages.h): escaping, the charts drawn or
// left out, what a rejected workload claims. The console's HTTP side and rendering are tested by
// tests/browser/web_console_test.py.
#include "web/web_pages.h"

#include <catch2/catch.hpp>
#include <regex>
#include <string>
#include <utility>
#include <vector>

#include "harness/common/xml_escape.h"
#include "harness/model/samples_artifact.h"
#include "web/source_diff.h"

namespace kiln::web {
namespace {

int Count(const std::string& text, const std::string& what) {
  int n = 0;
  for (size_t pos = text.find(what); pos != std::string::npos; pos = text.find(what, pos + 1)) {
    ++n;
  }
  return n;
}

v1::TimingResult Timing(double median) {
  v1::TimingResult t;
  t.set_latency_ms(median);
  t.set_median_ms(median);
  t.set_min_ms(median * 0.8);
  t.set_q1_ms(median * 0.9);
  t.set_q3_ms(median * 1.1);
  t.set_max_ms(median * 1.5);
  return t;
}

v1::Trace* AddTrace(v1::Run* run, int index, v1::EvaluationStatus status, double ms, double ref) {
  v1::Trace* t = run->add_traces();
  t->mutable_kiln()->set_workload_index(index);
  t->mutable_evaluation()->set_status(status);
  if (ms > 0) *t->mutable_kiln()->mutable_timing() = Timing(ms);
  if (ref > 0) *t->mutable_kiln()->mutable_reference_timing() = Timing(ref);
  return t;
}

TEST_CASE("web pages: text from runs and sources is escaped everywhere") {
  CHECK(XmlEscape("<a href=\"x\">&'") == "&lt;a href=&quot;x&quot;&gt;&amp;&apos;");
  v1::Run run;
  run.set_run_id("r1");
  run.set_solution_name("<script>alert(1)</script>");
  run.set_reason("output 'out' <b>");
  v1::SourceFile* f = run.mutable_solution()->add_sources();
  f->set_path("k.cc");
  f->set_content("if (a < b && c > d) {}");
  const std::string html = Page("Run r1", "runs", RunBody(run), "local (operator)");
  CHECK(html.find("<script>") == std::string::npos);
  CHECK_THAT(html, Catch::Contains("&lt;script&gt;alert(1)&lt;/script&gt;"));
  CHECK_THAT(html, Catch::Contains("if (a &lt; b &amp;&amp; c &gt; d) {}"));
  CHECK_THAT(html, Catch::Contains("<a href=\"/runs\" class=\"current\">Runs</a>"));
}

TEST_CASE("web pages: a profile run's page shows its kernels, escaped, and an evaluation none") {
  v1::Run run;
  run.set_run_id("r-profile");
  run.set_kind("profile");
  v1::RunProfile* profile = run.mutable_profile();
  profile->set_section("basic");
  v1::ProfiledTarget* t = profile->add_targets();
  t->set_target("solution");
  v1::KernelProfile* k = t->add_kernels();
  k->set_name("copy<float, 4>(const float *, float *)");
  k->set_duration_us(130.75);
  k->set_sm_throughput_pct(6.1);
  k->set_memory_throughput_pct(82.0);
  k->set_dram_throughput_pct(81.96);
  k->set_achieved_occupancy_pct(80);
  k->set_theoretical_occupancy_pct(100);
  const std::string html = RunBody(run);
  CHECK_THAT(html, Catch::Contains("<h2>Nsight Compute profile (section basic)</h2>"));
  CHECK_THAT(html, Catch::Contains("copy&lt;float, 4&gt;"));
  CHECK_THAT(html, Catch::Contains("130.75"));
  CHECK_THAT(html, Catch::Contains("memory_bound_dram"));
  run.set_kind("evaluation");
  CHECK(RunBody(run).find("Nsight Compute") == std::string::npos);
}

TEST_CASE("web pages: a run in flight says whose work is running, a finished one does not") {
  v1::Run run;
  run.set_run_id("r1");
  run.set_state(v1::RUN_TIMING);
  run.set_progress("reference for workload 1/3: timing");
  CHECK_THAT(RunBody(run), Catch::Contains("Now: reference for workload 1/3: timing"));
  run.set_state(v1::RUN_DONE);
  CHECK_THAT(RunBody(run), !Catch::Contains("Now:"));
}

TEST_CASE("web pages: the latency chart draws a candidate and a reference box per timed "
          "workload, and nothing for a run that was not timed") {
  v1::Run run;
  AddTrace(&run, 0, v1::PASSED, 0.01, 0.02);
  AddTrace(&run, 1, v1::PASSED, 1.0, 0);  // no reference latency
  AddTrace(&run, 2, v1::COMPILE_ERROR, 0, 0);
  const std::string chart = LatencyChart(run);
  CHECK(Count(chart, "class=\"box\"") == 3);
  CHECK(Count(chart, "class=\"median\"") == 3);
  CHECK(Count(chart, ">workload ") == 2);
  // Numbered from 1, as kiln submit and runs show number them.
  CHECK(Count(chart, ">workload 0<") == 0);
  CHECK(Count(chart, ">workload 1<") == 1);
  // Every box is at least 2 px wide and lies inside the plot.
  std::regex box(R"re(class="box" x="([0-9.]+)" y="[0-9.]+" width="([0-9.]+)")re");
  for (auto it = std::sregex_iterator(chart.begin(), chart.end(), box); it != std::sregex_iterator();
       ++it) {
    CHECK(std::stod((*it)[1]) >= 120);
    CHECK(std::stod((*it)[2]) >= 2);
    CHECK(std::stod((*it)[1]) + std::stod((*it)[2]) <= 681);
  }
  v1::Run untimed;
  AddTrace(&untimed, 0, v1::COMPILE_ERROR, 0, 0);
  CHECK(LatencyChart(untimed).empty());
}

TEST_CASE("web pages: with the raw samples the boxes come from them and every sample is a dot") {
  v1::Run run;
  AddTrace(&run, 0, v1::PASSED, 0.01, 0.02);
  AddTrace(&run, 1, v1::PASSED, 1.0, 0);
  RunSamples samples;
  // The trace says median 0.01 ms; the samples say 0.012..0.016 (median 0.014).
  samples["w0"] = {0.016, 0.012, 0.014, 0.013, 0.015};
  samples["w0_reference"] = std::vector<double>(40, 0.02);
  const std::string chart = LatencyChart(run, samples);
  CHECK(Count(chart, "class=\"samples\"") == 2);
  CHECK(Count(chart, "<circle") == 5 + 40);
  CHECK_THAT(chart, Catch::Contains("candidate: median 0.0140 ms, quartiles 0.0130..0.0150 ms, "
                                    "range 0.0120..0.0160 ms"));
  CHECK_THAT(chart, Catch::Contains("candidate: 5 samples"));
  // Workload 1 has none archived: its box is the trace's summary, without dots.
  CHECK_THAT(chart, Catch::Contains("candidate: median 1.0000 ms"));
  CHECK(Count(chart, "class=\"box\"") == 3);
  // Many samples: at most about 2000 dots, the box from all of them.
  std::vector<double> many;
  for (int i = 1; i <= 10000; ++i) many.push_back(0.001 * i);
  samples["w1"] = many;
  const std::string dense = LatencyChart(run, samples);
  CHECK(Count(dense, "<circle") <= 5 + 40 + 2000);
  CHECK_THAT(dense, Catch::Contains("candidate: 10000 samples"));
  CHECK_THAT(dense, Catch::Contains("range 0.0010..10.0000 ms"));
}

TEST_CASE("web pages: a samples artifact parses, anything else gives none") {
  google::protobuf::RepeatedField<double> written;
  for (double v : {0.0125, 1.5, 2e-4}) written.Add(v);
  CHECK(ParseSamplesArtifact(SamplesArtifact(written)) == std::vector<double>{0.0125, 1.5, 2e-4});
  CHECK(ParseSamplesArtifact("{\"unit\": \"ms\", \"samples_ms\": [0.5, 1e-3, 2]}") ==
        std::vector<double>{0.5, 0.001, 2});
  CHECK(ParseSamplesArtifact("not json").empty());
  CHECK(ParseSamplesArtifact("{\"samples_ms\": 3}").empty());
}

TEST_CASE("web pages: a run's artifacts link to the console's download of each") {
  v1::Run run;
  run.set_run_id("01a2b3c4d5e6f7a8b9c0");
  v1::ArtifactRef* a = run.add_artifacts();
  a->set_kind("worker_log");
  a->set_name("w0");
  a->set_size(12);
  a->set_sha256(std::string(64, 'a'));
  const std::string body = RunBody(run);
  CHECK(body.find("<a href=\"/runs/01a2b3c4d5e6f7a8b9c0/artifacts/worker_log/w0\">w0</a>") !=
        std::string::npos);
}

TEST_CASE("web pages: a workload that did not pass claims no speedup") {
  v1::Run run;
  AddTrace(&run, 0, v1::PASSED, 0.01, 0.03);
  AddTrace(&run, 1, v1::REJECTED, 0.001, 0.03);
  const std::string html = RunBody(run);
  CHECK_THAT(html, Catch::Contains("3.000x"));
  CHECK(html.find("30.000x") == std::string::npos);
}

TEST_CASE("web pages: the score chart draws one bar per scored entry and is left out when none "
          "has a score") {
  v1::Leaderboard board;
  board.set_rule("latest");
  v1::LeaderboardEntry* a = board.add_entries();
  a->set_principal("red");
  a->set_score(2.0);
  a->set_score_ci95_low(1.8);
  a->set_score_ci95_high(2.2);
  v1::LeaderboardEntry* b = board.add_entries();
  b->set_principal("blue");
  b->set_score(0);  // did not pass
  const std::string chart = ScoreChart(board);
  CHECK(Count(chart, "class=\"bar\"") == 1);
  CHECK_THAT(chart, Catch::Contains(">blue<"));
  CHECK_THAT(chart, Catch::Contains("1x (reference)"));
  a->set_score(0);
  CHECK(ScoreChart(board).empty());
  // The table marks a tie: an interval that crosses 1x, or one within the noise floor of it.
  a->set_score(1.01);
  a->set_score_ci95_low(0.95);
  a->set_score_ci95_high(1.07);
  v1::DefinitionDetail detail;
  detail.mutable_definition()->set_name("d");
  CHECK_THAT(DefinitionBody(detail, board), Catch::Contains("1.070 (tie)"));
  a->set_score(1.015);  // the whole interval above 1x, but inside the 2 % floor
  a->set_score_ci95_low(1.012);
  a->set_score_ci95_high(1.018);
  CHECK_THAT(DefinitionBody(detail, board), Catch::Contains("1.018 (tie)"));
  a->set_score(1.10);  // a win
  a->set_score_ci95_low(1.08);
  a->set_score_ci95_high(1.12);
  CHECK_THAT(DefinitionBody(detail, board), !Catch::Contains("(tie)"));
}

TEST_CASE("web pages: the score chart keeps every label inside it and clear of the intervals") {
  // A score close to 1x puts the 1x line near the right edge; a long team name on the left.
  v1::Leaderboard board;
  v1::LeaderboardEntry* a = board.add_entries();
  a->set_principal("red");
  a->set_score(1.0);
  a->set_score_ci95_low(0.9);
  a->set_score_ci95_high(1.05);
  v1::LeaderboardEntry* b = board.add_entries();
  b->set_principal("a-very-long-team-name-from-a-contest-organiser");
  b->set_score(1.02);
  b->set_score_ci95_low(0.98);
  b->set_score_ci95_high(1.03);
  const std::string chart = ScoreChart(board);
  std::smatch m;
  REQUIRE(std::regex_search(chart, m, std::regex("width=\"([0-9.]+)\" height=\"([0-9.]+)\" "
                                                 "font-size=\"([0-9.]+)\"")));
  const double width = std::stod(m[1]), height = std::stod(m[2]), font = std::stod(m[3]);
  // An upper bound of a label's width: 0.62 em a character (the widest digits and lower-case
  // letters of common sans-serif faces are about 0.6 em).
  const double per_char = 0.62 * font;
  const std::regex text_re("<text class=\"([a-z]+)\" x=\"([0-9.]+)\" y=\"([0-9.]+)\"( "
                           "text-anchor=\"(end|middle)\")?[^>]*>(<title>[^<]*</title>)?([^<]*)"
                           "</text>");
  std::vector<double> score_x;
  int texts = 0;
  for (auto it = std::sregex_iterator(chart.begin(), chart.end(), text_re);
       it != std::sregex_iterator(); ++it) {
    ++texts;
    const std::string label = (*it)[7];
    const double x = std::stod((*it)[2]), y = std::stod((*it)[3]);
    size_t chars = 0;  // UTF-8 code points
    for (unsigned char c : label) chars += (c & 0xC0) != 0x80;
    const double w = static_cast<double>(chars) * per_char;
    const std::string anchor = (*it)[5];
    const double left = anchor == "end" ? x - w : anchor == "middle" ? x - w / 2 : x;
    INFO(label << " at x " << x << ", width about " << w);
    CHECK(left >= 0);
    CHECK(left + w <= width);
    CHECK(y + 0.25 * font <= height);  // descenders inside
    if ((*it)[1] == "score") score_x.push_back(x);
  }
  CHECK(texts == 5);  // two teams, two scores, the 1x label
  const std::regex line_re("<line class=\"interval\" x1=\"[0-9.]+\" y1=\"[0-9.]+\" "
                           "x2=\"([0-9.]+)\"");
  std::vector<double> interval_end;
  for (auto it = std::sregex_iterator(chart.begin(), chart.end(), line_re);
       it != std::sregex_iterator(); ++it) {
    interval_end.push_back(std::stod((*it)[1]));
  }
  REQUIRE(interval_end.size() == 2);
  REQUIRE(score_x.size() == 2);
  for (size_t i = 0; i < 2; ++i) CHECK(score_x[i] > interval_end[i]);  // no line through a label
  CHECK_THAT(chart, Catch::Contains("<title>a-very-long-team-name-from-a-contest-organiser</title>"));
}

TEST_CASE("web pages: a page of runs links the next page with the same filters") {
  v1::ListRunsResponse runs;
  v1::RunSummary* r = runs.add_runs();
  r->set_run_id("01abc");
  r->set_definition("d");
  r->set_state(v1::RUN_DONE);
  r->set_status(v1::PASSED);
  runs.set_next_page_token("tok/1");
  const std::string html = RunsBody(runs, "definition=d");
  CHECK_THAT(html, Catch::Contains("href=\"/runs?definition=d&amp;page_token=tok%2F1\""));
  runs.clear_next_page_token();
  CHECK(RunsBody(runs, "").find("next page") == std::string::npos);
  CHECK_THAT(RunsBody(v1::ListRunsResponse(), ""), Catch::Contains("No runs match."));
}

}  // namespace
}  // namespace kiln::web

namespace kiln::web {
namespace {

v1::Solution Sources(const std::vector<std::pair<std::string, std::string>>& files) {
  v1::Solution s;
  for (const auto& [path, content] : files) {
    v1::SourceFile* f = s.add_sources();
    f->set_path(path);
    f->set_content(content);
  }
  return s;
}

TEST_CASE("web pages: the source diff against the previous run, file by file") {
  const v1::Solution before = Sources({{"k.cc", "a\nb\nc\n"}, {"old.h", "x\n"}});
  const v1::Solution after = Sources({{"k.cc", "a\nB\nc\n"}, {"new.h", "y\n"}});
  const std::string diff = UnifiedSourceDiff(before, after);
  CHECK_THAT(diff, Catch::Contains("--- a/k.cc\n+++ b/k.cc\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n"));
  CHECK_THAT(diff, Catch::Contains("--- /dev/null\n+++ b/new.h\n"));
  CHECK_THAT(diff, Catch::Contains("+y\n"));
  CHECK_THAT(diff, Catch::Contains("--- a/old.h\n+++ /dev/null\n"));
  CHECK_THAT(diff, Catch::Contains("-x\n"));
  CHECK(UnifiedSourceDiff(before, before).empty());
  const std::string html = DiffSection("01prev", diff);
  CHECK_THAT(html, Catch::Contains("<span class=\"del\">-b</span>"));
  CHECK_THAT(html, Catch::Contains("<span class=\"add\">+B</span>"));
  CHECK_THAT(DiffSection("01prev", ""), Catch::Contains("The same sources."));
  CHECK_THAT(DiffSection("", ""), Catch::Contains("The first run"));
}

}  // namespace
}  // namespace kiln::web

namespace kiln::web {
namespace {

TEST_CASE("web pages: a campaign's best latency per round steps down at each promotion, and "
          "its budget bars show what is used") {
  v1::Campaign c;
  c.set_campaign_id("c1");
  c.set_round(4);
  CHECK(BestLatencyChart(c).empty());  // nothing measured yet
  c.set_baseline_latency_ms(2.0);
  v1::Promotion* p = c.add_promotion_history();
  p->set_round(2);
  p->set_latency_ms(0.5);
  p->set_solution_name("<blocked>");
  const std::string chart = BestLatencyChart(c);
  std::smatch m;
  REQUIRE(std::regex_search(chart, m, std::regex(R"re(class="best" points="([^"]+)")re")));
  std::vector<std::pair<double, double>> points;
  std::regex xy(R"(([0-9.]+),([0-9.]+))");
  const std::string list = m[1];
  for (auto it = std::sregex_iterator(list.begin(), list.end(), xy); it != std::sregex_iterator();
       ++it) {
    points.push_back({std::stod((*it)[1]), std::stod((*it)[2])});
  }
  // Baseline from round 0 to 2, then the promotion's latency from round 2 to round 4; latency
  // grows upwards, so the line steps down (larger y).
  REQUIRE(points.size() == 4);
  CHECK(points[0].second == points[1].second);
  CHECK(points[2].second == points[3].second);
  CHECK(points[2].second > points[1].second);
  CHECK(points[1].first == points[2].first);
  CHECK(points[3].first > points[2].first);
  CHECK(Count(chart, "class=\"promotion\"") == 1);
  CHECK_THAT(chart, Catch::Contains("&lt;blocked&gt;"));

  CHECK_THAT(BudgetChart(c), Catch::Contains("No budget limits."));
  c.mutable_budget()->set_max_candidates(4);
  c.mutable_budget()->set_max_rounds(10);
  c.mutable_used()->set_candidates(4);
  c.mutable_used()->set_rounds(5);
  const std::string budget = BudgetChart(c);
  CHECK(Count(budget, "class=\"used\"") == 2);
  CHECK_THAT(budget, Catch::Contains("4 of 4 (100%)"));
  CHECK_THAT(budget, Catch::Contains("5 of 10 (50%)"));
  CHECK_THAT(budget, Catch::Contains("#b42318"));  // a limit reached is drawn red
}

}  // namespace
}  // namespace kiln::web
