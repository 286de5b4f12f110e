// `kiln report DEFINITION`: one page per definition, from the archived runs of every team.
//
//   DefinitionReportOptions options{.definition = "gemm_n4096_k4096", .mode = "official",
//                                   .backend = "cuda"};
//   absl::StatusOr<DefinitionReport> report = BuildDefinitionReport(runs, options);
//   std::cout << DefinitionReportText(*report, "reference");
//
// Everything here is pure: the runs (with traces, as GetRun returns them) go in, numbers and
// renderings come out. Reading them from a harness is definition_report_command.cc's job.
//
// The numbers (docs/report.md has the formulas and their sources):
// - per workload and team: the latency of the team's one counted run (rule latest, the default:
//   its designated run, else its newest ranked run), or with rule best the lowest latency of a
//   PASSED trace among all the team's ranked runs, and the run that gave it;
// - per workload and baseline (reference, torch_eager, torch_compile, and every solution:NAME a
//   ranked run timed): the best-known latency, the lowest one measured by any ranked run on that
//   workload;
// - speedup = baseline latency / the team's best latency;
// - score (flashinfer-bench contest scoring): the arithmetic mean over the definition's
//   workloads of the speedup vs the reference, a workload without a PASSED trace counting 0;
// - fast_p (KernelBench, src/score.py): the fraction of the definition's workloads that PASSED
//   with a speedup strictly greater than p.
#ifndef KILN_REPORT_DEFINITION_REPORT_H_
#define KILN_REPORT_DEFINITION_REPORT_H_

#include <array>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "harness/common/xml_escape.h"
#include "harness/model/run_team.h"
#include "harness/model/speedup_interval.h"
#include "kiln/v1/types.pb.h"
#include "report/json_output.h"

namespace kiln::cli {

// The baselines every report carries, as BaselineResult.name writes them, the reference first;
// solution baselines ("solution:NAME", a registered solution) follow them in
// DefinitionReport::baselines.
inline constexpr std::array<std::string_view, 3> kStandardBaselines = {"reference", "torch_eager",
                                                                       "torch_compile"};
inline constexpr int kReferenceBaseline = 0;  // its index in DefinitionReport::baselines

// `name` when a report can compare with it: a standard baseline or "solution:NAME";
// INVALID_ARGUMENT naming the accepted values otherwise.
absl::StatusOr<std::string> ParseBaseline(const std::string& name);

// The thresholds the report tabulates fast_p at (KernelBench's list without 0.8), and the
// JSON keys they are written under ("0.0", ... as KernelBench's str(p)).
inline constexpr std::array<double, 5> kFastPThresholds = {0.0, 0.5, 1.0, 1.5, 2.0};
std::string FastPKey(double p);

// What one workload contributes to a team's score and fast_p for one baseline.
struct WorkloadOutcome {
  bool passed = false;  // the team has a PASSED trace on the workload
  double speedup = 0;   // baseline latency / best latency; 0 when the baseline is not known
};

// flashinfer-bench contest score: mean over all `outcomes` of the speedup, 0 for a workload
// that did not pass. nullopt when there is no workload, or when a passed workload has no
// baseline latency (the mean would be a guess).
std::optional<double> ContestScore(const std::vector<WorkloadOutcome>& outcomes);

// KernelBench fast_p: (number of outcomes passed with speedup > p) / (number of outcomes).
// Strictly greater, and the denominator counts every workload, failed ones included. nullopt
// when there is no workload or a passed workload has no baseline latency.
std::optional<double> FastP(const std::vector<WorkloadOutcome>& outcomes, double p);

// How runs are grouped into the report's competitors.
enum class GroupBy { kTeam, kSolution };

// Which runs of a competitor count. kLatest: one run, the designated one (Run.designated) else
// the newest ranked run, as a contest takes each team's latest submission; kBest: per workload
// the lowest latency over all its ranked runs (a view that only improves with resubmission).
enum class Rule { kLatest, kBest };

struct DefinitionReportOptions {
  std::string definition;
  std::string mode;  // only runs timed in this mode are compared
  // Only runs on this backend; empty: the backend of most runs (ties: the newest run's).
  std::string backend;
  GroupBy group_by = GroupBy::kTeam;
  Rule rule = Rule::kLatest;
  // Solution baselines the report carries even when no ranked run timed them (the one asked for).
  std::vector<std::string> baselines;
  // A speedup within this floor of 1x is a tie (WithinNoise; --noise-floor).
  double noise_floor = kDefaultNoiseFloor;
};

// The best-known measurement of one baseline on one workload.
struct BaselineMeasurement {
  double latency_ms = 0;  // 0: no ranked run measured it
  std::string source;     // python | native_reference | "" (not recorded by older runs)
  std::string device;     // TimingResult.device of the measurement
  std::string run_id;     // the run whose trace carried it
  bool cached = false;    // the harness took it from its cache of earlier measurements
  std::string note;       // why it is missing, or the harness's note about it
  Interval interval;      // the latency's 95 % interval (LatencyInterval)
};

struct ReportWorkload {
  v1::Workload workload;  // uuid and axes (inputs dropped)
  std::vector<BaselineMeasurement> baselines;  // parallel to DefinitionReport::baselines
};

// One competitor on one workload.
struct CompetitorWorkload {
  double best_latency_ms = 0;  // the latency counted (see Rule); 0: no PASSED trace
  Interval latency;            // its 95 % interval
  std::string run_id;          // the run of that latency
  std::string solution_name;
  std::string author;  // that run's solution's author (AuthorOf): shown, never ranked by
  // The share of that trace's timed GPU time done by the solution's own kernels
  // (TraceDetail.own_work); nullopt where it was not measured.
  std::optional<double> own_share;
  std::vector<double> speedup;  // per baseline; 0: not passed or baseline not known
  // Per baseline: the speedup's 95 % interval from both latencies' (SpeedupInterval); zeros
  // where the speedup is 0.
  std::vector<Interval> speedup_interval;
};

struct Competitor {
  std::string name;  // the team (TeamOf: the principal that submitted) or the solution
  // The authors (AuthorOf) of the runs whose latencies count: the counted run's (rule latest),
  // else those of every workload's best run; sorted, distinct, none empty. Shown, never ranked.
  std::vector<std::string> authors;
  int runs = 0;      // its ranked runs
  // Rule kLatest: the one run counted, and whether its principal designated it.
  std::string run_id;
  bool designated = false;
  std::vector<CompetitorWorkload> workloads;  // parallel to DefinitionReport::workloads
  int passed_workloads = 0;
  // The mean own-kernel share of the counted traces (MeanShare); nullopt where none measured it.
  std::optional<double> own_share;
  std::vector<std::optional<double>> score;  // ContestScore per baseline
  // Per baseline: the mean of the workloads' speedup intervals (a failed workload counting
  // 0), known where `score` is.
  std::vector<Interval> score_interval;
  // FastP per baseline and kFastPThresholds entry.
  std::vector<std::array<std::optional<double>, kFastPThresholds.size()>> fast_p;
  // Why score and fast_p are nullopt for a baseline ("" where they are known).
  std::vector<std::string> unavailable;
};

// Runs left out of the comparison, by reason.
struct SkippedRuns {
  int unfinished = 0;        // not RUN_DONE
  int harness_checks = 0;    // the harness's own reference checks (principal "kiln")
  int confirmations = 0;     // confirmation runs (kiln leaderboard --confirm), never ranked
  int chosen_workloads = 0;  // evaluated on workloads of the submitter's choosing
  int other_mode = 0;
  int other_backend = 0;
  int unreadable = 0;       // GetRun refused (another team's run, read by a team)
  int stale_workloads = 0;  // traces of workloads no longer registered, ignored
  // Through a kiln-controller: the harnesses whose runs could not be read (ListRunsResponse
  // left_out, "ADDRESS: STATE for N s (WHY)").
  std::vector<std::string> unavailable_harnesses;
};

// A fleet answer's left_out (from a kiln-controller): a line per harness whose runs it lacks,
// "left out: the runs held by harness ADDRESS: STATE for N s (WHY)"; "" when none.
std::string LeftOutText(const std::vector<std::string>& harnesses);
// The same of a response's `left_out` field.
inline std::string LeftOutText(const google::protobuf::RepeatedPtrField<std::string>& harnesses) {
  return LeftOutText(std::vector<std::string>(harnesses.begin(), harnesses.end()));
}

struct DefinitionReport {
  std::string definition;
  std::string mode;
  std::string backend;  // the backend compared ("" when no run qualified)
  GroupBy group_by = GroupBy::kTeam;
  Rule rule = Rule::kLatest;
  // kStandardBaselines, then the solution baselines of the ranked runs (newest run first) and
  // of the options; every per-baseline vector below is parallel to it.
  std::vector<std::string> baselines;
  int ranked_runs = 0;
  SkippedRuns skipped;
  std::vector<ReportWorkload> workloads;  // the newest ranked run's workloads, in its order
  std::vector<Competitor> competitors;    // highest reference score first, then by name
  std::string empty_reason;               // set when there is nothing to compare
  double noise_floor = kDefaultNoiseFloor;  // the options': the renderings' "tie" marks
  // What one entry of `workloads` is, in the renderings: "workload", or "problem" for a suite
  // report (suite_report.h), whose entries are whole definitions.
  std::string item = "workload";
};

// The team of a run and the author of its solution (harness/model/run_team.h).
using ::kiln::AuthorOf;
using ::kiln::TeamOf;

// Fills c.score, c.score_interval, c.fast_p and c.unavailable from c.workloads (parallel to
// `workloads`) and c.passed_workloads, for every baseline.
void ScoreCompetitor(const std::vector<std::string>& baselines,
                     const std::vector<ReportWorkload>& workloads, Competitor& c);

// The order of DefinitionReport::competitors: highest reference score first, then by name.
void SortCompetitors(std::vector<Competitor>& competitors);

// The index of `baseline` in report.baselines, or -1.
int BaselineIndex(const DefinitionReport& report, const std::string& baseline);

// Builds the report from `runs` (GetRun answers, any order). Runs of other definitions are an
// INVALID_ARGUMENT (the caller filtered by definition). `already_skipped` counts the runs the
// caller left out before reading them (unreadable ones, other modes, ...); the report adds its
// own.
absl::StatusOr<DefinitionReport> BuildDefinitionReport(const std::vector<v1::Run>& runs,
                                                       const DefinitionReportOptions& options,
                                                       const SkippedRuns& already_skipped = {});

// `baseline` is one of report.baselines (BuildDefinitionReport adds the options' to them); for
// another one the renderings say that it is not in the report.
//
// Human text: competitors (score and fast_p vs `baseline`), baselines per workload, and the
// best latency of every competitor per workload. Ends in '\n'.
std::string DefinitionReportText(const DefinitionReport& report, const std::string& baseline);

// The same numbers as JSON (field names in docs/report.md).
Json DefinitionReportJson(const DefinitionReport& report, const std::string& baseline);

// A self-contained SVG: the fast_p curve vs `baseline` of every competitor (p from 0 to at
// least 2) and the per-workload speedups vs `baseline` as grouped bars on a log scale.
std::string DefinitionReportSvg(const DefinitionReport& report, const std::string& baseline);

// DefinitionReportSvg's content (a white background, title, the two charts) and its size, to
// place in a document of several reports.
struct SvgPanel {
  std::string body;
  double width = 0, height = 0;
};
SvgPanel DefinitionReportSvgPanel(const DefinitionReport& report, const std::string& baseline);
// A self-contained SVG document of `body`, in kiln's report font.
std::string SvgDocument(double width, double height, const std::string& body);

// fast_p at every kFastPThresholds entry, keyed by FastPKey; null where unknown.
Json FastPJson(const std::array<std::optional<double>, kFastPThresholds.size()>& values);

}  // namespace kiln::cli

#endif  // KILN_REPORT_DEFINITION_REPORT_H_
