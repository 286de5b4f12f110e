#include "report/definition_report.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "harness/model/solution_baseline.h"

namespace kiln::cli {

namespace {

// A principal every caller of a harness without --tokens shares (access/principal.cc).
// The harness's own reference checks of added definitions (access/principal.h).
constexpr char kHarnessPrincipal[] = "kiln";
constexpr char kPythonSource[] = "python";

bool Usable(double ms) { return std::isfinite(ms) && ms > 0; }

// A baseline latency one trace offers, and where it came from.
struct Offer {
  std::string baseline;
  BaselineMeasurement measurement;
  int64_t created_unix_ms = 0;
};

// The baseline latencies `trace` carries: TraceDetail.baselines, or for runs archived before
// baselines were recorded, the reference latency of its performance.
std::vector<Offer> BaselineOffers(const v1::Run& run, const v1::Trace& trace) {
  std::vector<Offer> offers;
  const v1::TraceDetail& detail = trace.kiln();
  if (detail.baselines().empty()) {
    const double ms = trace.evaluation().performance().reference_latency_ms();
    BaselineMeasurement m;
    m.latency_ms = Usable(ms) ? ms : 0;
    m.source = detail.reference_source();
    m.device = detail.reference_timing().device().empty() ? run.device_name()
                                                          : detail.reference_timing().device();
    m.run_id = run.run_id();
    m.note = detail.reference_timing().note();
    m.interval = LatencyInterval(detail.reference_timing(), m.latency_ms);
    offers.push_back(
        {std::string(kStandardBaselines[kReferenceBaseline]), std::move(m), run.created_unix_ms()});
    return offers;
  }
  for (const v1::BaselineResult& b : detail.baselines()) {
    absl::StatusOr<std::string> baseline = ParseBaseline(b.name());
    if (!baseline.ok()) continue;  // a baseline this client does not know
    BaselineMeasurement m;
    m.latency_ms = Usable(b.latency_ms()) ? b.latency_ms() : 0;
    m.source = b.source();
    m.device = b.timing().device().empty() ? run.device_name() : b.timing().device();
    m.run_id = run.run_id();
    m.cached = b.cached();
    m.note = b.note();
    m.interval = LatencyInterval(b.timing(), m.latency_ms);
    offers.push_back({*std::move(baseline), std::move(m), run.created_unix_ms()});
  }
  return offers;
}

// kStandardBaselines, then every other baseline the ranked runs' traces offer (newest run
// first) and those of the options.
std::vector<std::string> ReportBaselines(const std::vector<const v1::Run*>& ranked,
                                         const DefinitionReportOptions& options) {
  std::vector<std::string> names(kStandardBaselines.begin(), kStandardBaselines.end());
  auto add = [&names](const std::string& name) {
    if (std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
  };
  for (const v1::Run* run : ranked) {
    for (const v1::Trace& trace : run->traces()) {
      for (const Offer& offer : BaselineOffers(*run, trace)) add(offer.baseline);
    }
  }
  for (const std::string& name : options.baselines) add(name);
  return names;
}

// Whether `offer` is a better-known measurement than `current`: one of the Python reference
// (what flashinfer-bench scores against) over one of a native reference, then the lowest
// latency, then a fresh one over a cached one, then the newer run. Missing latencies only fill
// in notes.
bool Better(const Offer& offer, const BaselineMeasurement& current, int64_t current_created) {
  if (offer.measurement.latency_ms == 0) return false;
  if (current.latency_ms == 0) return true;
  const bool offer_python = offer.measurement.source == kPythonSource;
  if (offer_python != (current.source == kPythonSource)) return offer_python;
  if (offer.measurement.latency_ms != current.latency_ms) {
    return offer.measurement.latency_ms < current.latency_ms;
  }
  if (offer.measurement.cached != current.cached) return !offer.measurement.cached;
  return offer.created_unix_ms > current_created;
}

// Whether `run` is ranked; a run that is not is counted in `skipped` under its reason.
bool Ranked(const v1::Run& run, const DefinitionReportOptions& options, SkippedRuns& skipped) {
  if (run.state() != v1::RUN_DONE) {
    ++skipped.unfinished;
  } else if (run.principal() == kHarnessPrincipal) {
    ++skipped.harness_checks;
  } else if (!run.confirms().empty()) {
    ++skipped.confirmations;
  } else if (!run.registered_workloads()) {
    ++skipped.chosen_workloads;
  } else if (run.mode() != options.mode) {
    ++skipped.other_mode;
  } else if (!options.backend.empty() && run.backend() != options.backend) {
    ++skipped.other_backend;
  } else {
    return true;
  }
  return false;
}

// The backend most runs that would otherwise be ranked ran on (on a tie, the newest run's), so
// that latencies of one device are compared; "" when there is no such run.
std::string MostUsedBackend(const std::vector<v1::Run>& runs,
                            const DefinitionReportOptions& options) {
  std::map<std::string, std::pair<int, int64_t>> uses;  // backend -> (runs, newest created)
  for (const v1::Run& run : runs) {
    SkippedRuns ignored;
    DefinitionReportOptions any_backend = options;
    any_backend.backend.clear();
    if (!Ranked(run, any_backend, ignored)) continue;
    auto& [count, newest] = uses[run.backend()];
    ++count;
    newest = std::max(newest, run.created_unix_ms());
  }
  std::string chosen;
  std::pair<int, int64_t> chosen_use = {0, 0};
  for (const auto& [backend, use] : uses) {
    if (use > chosen_use) {
      chosen = backend;
      chosen_use = use;
    }
  }
  return chosen;
}

std::string EmptyReason(const DefinitionReport& report) {
  const SkippedRuns& s = report.skipped;
  // The harness's reference checks of a definition are not submissions.
  if (s.unfinished + s.confirmations + s.chosen_workloads + s.other_mode + s.other_backend +
          s.unreadable ==
      0) {
    return absl::StrCat("no runs of ", report.definition, " yet");
  }
  std::vector<std::string> parts;
  auto add = [&parts](int n, absl::string_view what) {
    if (n > 0) parts.push_back(absl::StrCat(n, " ", what));
  };
  add(s.unfinished, "not finished");
  add(s.confirmations, "confirmation runs (not ranked)");
  add(s.chosen_workloads, "on workloads of the submitter's choosing (not ranked)");
  add(s.other_mode, absl::StrCat("timed in another mode than ", report.mode));
  add(s.other_backend, absl::StrCat("on another backend than ", report.backend));
  add(s.unreadable, "of other principals, not readable with this token");
  return absl::StrCat("no ranked runs of ", report.definition, " (", absl::StrJoin(parts, ", "),
                      ")");
}

void Score(const std::vector<std::string>& baselines, const std::vector<ReportWorkload>& workloads,
           Competitor& c) {
  const size_t n = baselines.size();
  c.score.assign(n, std::nullopt);
  c.score_interval.assign(n, Interval{});
  c.fast_p.assign(n, {});
  c.unavailable.assign(n, "");
  for (size_t b = 0; b < n; ++b) {
    std::vector<WorkloadOutcome> outcomes;
    int missing = 0;
    for (const CompetitorWorkload& w : c.workloads) {
      const bool passed = w.best_latency_ms > 0;
      outcomes.push_back({passed, w.speedup[b]});
      if (passed && w.speedup[b] == 0) ++missing;
    }
    c.score[b] = ContestScore(outcomes);
    if (c.score[b].has_value() && !c.workloads.empty()) {
      Interval& mean = c.score_interval[b];
      for (const CompetitorWorkload& w : c.workloads) {
        mean.low += w.speedup_interval[b].low;
        mean.high += w.speedup_interval[b].high;
      }
      mean.low /= static_cast<double>(c.workloads.size());
      mean.high /= static_cast<double>(c.workloads.size());
      mean.value = *c.score[b];
    }
    for (size_t i = 0; i < kFastPThresholds.size(); ++i) {
      c.fast_p[b][i] = FastP(outcomes, kFastPThresholds[i]);
    }
    if (missing > 0) {
      c.unavailable[b] = absl::StrCat(baselines[b], " not measured on ", missing, " of ",
                                      c.passed_workloads, " passed workloads");
    } else if (workloads.empty()) {
      c.unavailable[b] = "no workloads";
    }
  }
}

}  // namespace

absl::StatusOr<std::string> ParseBaseline(const std::string& name) {
  for (std::string_view b : kStandardBaselines) {
    if (b == name) return name;
  }
  if (std::optional<std::string> solution = SolutionBaselineName(name); solution.has_value()) {
    if (absl::Status s = ValidateSolutionName(*solution, absl::StrCat("baseline '", name, "'"));
        !s.ok()) {
      return s;
    }
    return name;
  }
  return absl::InvalidArgumentError(
      absl::StrCat("unknown baseline '", name,
                   "' (expected reference, torch_eager, torch_compile or solution:NAME)"));
}

int BaselineIndex(const DefinitionReport& report, const std::string& baseline) {
  auto it = std::find(report.baselines.begin(), report.baselines.end(), baseline);
  return it == report.baselines.end() ? -1 : static_cast<int>(it - report.baselines.begin());
}

std::string FastPKey(double p) { return absl::StrFormat("%.1f", p); }

std::optional<double> ContestScore(const std::vector<WorkloadOutcome>& outcomes) {
  if (outcomes.empty()) return std::nullopt;
  double sum = 0;
  for (const WorkloadOutcome& o : outcomes) {
    if (!o.passed) continue;  // a failed workload contributes a speedup of 0
    if (!Usable(o.speedup)) return std::nullopt;
    sum += o.speedup;
  }
  return sum / static_cast<double>(outcomes.size());
}

std::optional<double> FastP(const std::vector<WorkloadOutcome>& outcomes, double p) {
  if (outcomes.empty()) return std::nullopt;
  int fast = 0;
  for (const WorkloadOutcome& o : outcomes) {
    if (!o.passed) continue;
    if (!Usable(o.speedup)) return std::nullopt;
    if (o.speedup > p) ++fast;
  }
  return static_cast<double>(fast) / static_cast<double>(outcomes.size());
}

absl::StatusOr<DefinitionReport> BuildDefinitionReport(const std::vector<v1::Run>& runs,
                                                       const DefinitionReportOptions& options,
                                                       const SkippedRuns& already_skipped) {
  DefinitionReport report;
  report.definition = options.definition;
  report.mode = options.mode;
  report.noise_floor = options.noise_floor;
  report.group_by = options.group_by;
  report.rule = options.rule;
  report.skipped = already_skipped;

  for (const v1::Run& run : runs) {
    if (run.definition() != options.definition) {
      return absl::InvalidArgumentError(absl::StrCat("run '", run.run_id(), "' is of definition '",
                                                     run.definition(), "', not '",
                                                     options.definition, "'"));
    }
  }
  DefinitionReportOptions effective = options;
  if (effective.backend.empty()) effective.backend = MostUsedBackend(runs, options);
  report.backend = effective.backend;
  std::vector<const v1::Run*> ranked;
  for (const v1::Run& run : runs) {
    if (Ranked(run, effective, report.skipped)) ranked.push_back(&run);
  }
  // The newest ranked run ran on the workloads registered now; older runs may predate a
  // re-registration, and their traces of other workloads are left out.
  std::stable_sort(ranked.begin(), ranked.end(), [](const v1::Run* a, const v1::Run* b) {
    return a->created_unix_ms() > b->created_unix_ms();
  });
  report.baselines = ReportBaselines(ranked, options);
  if (ranked.empty()) {
    report.empty_reason = EmptyReason(report);
    return report;
  }
  const size_t baseline_count = report.baselines.size();
  std::map<std::string, size_t> workload_index;
  for (const v1::Trace& trace : ranked.front()->traces()) {
    if (workload_index.count(trace.workload().uuid()) > 0) continue;
    workload_index[trace.workload().uuid()] = report.workloads.size();
    ReportWorkload& w = report.workloads.emplace_back();
    w.workload.set_uuid(trace.workload().uuid());
    *w.workload.mutable_axes() = trace.workload().axes();
    w.baselines.resize(baseline_count);
  }

  std::vector<int64_t> baseline_created(report.workloads.size() * baseline_count, 0);
  auto competitor_of = [&options](const v1::Run& run) {
    return options.group_by == GroupBy::kTeam ? TeamOf(run) : run.solution_name();
  };
  // Rule latest: the one run of each competitor that counts, its designated run (the newest
  // one designated, should a competitor group several principals), else its newest.
  std::map<std::string, const v1::Run*> counted;
  if (options.rule == Rule::kLatest) {
    for (const v1::Run* run : ranked) {
      const v1::Run*& chosen = counted[competitor_of(*run)];
      if (chosen == nullptr || (run->designated() && !chosen->designated())) chosen = run;
    }
  }
  std::map<std::string, Competitor> competitors;
  for (const v1::Run* run : ranked) {
    report.ranked_runs++;
    const std::string name = competitor_of(*run);
    Competitor& c = competitors[name];
    if (c.workloads.empty()) {
      c.name = name;
      c.workloads.resize(report.workloads.size());
      for (CompetitorWorkload& cw : c.workloads) {
        cw.speedup.assign(baseline_count, 0);
        cw.speedup_interval.assign(baseline_count, Interval{});
      }
    }
    c.runs++;
    // Every ranked run's baselines count; only the counted run's latencies (rule latest).
    const bool counts = options.rule == Rule::kBest || counted[name] == run;
    if (counts && options.rule == Rule::kLatest) {
      c.run_id = run->run_id();
      c.designated = run->designated();
      if (!AuthorOf(*run).empty()) c.authors.push_back(AuthorOf(*run));
    }
    for (const v1::Trace& trace : run->traces()) {
      auto it = workload_index.find(trace.workload().uuid());
      if (it == workload_index.end()) {
        ++report.skipped.stale_workloads;
        continue;
      }
      ReportWorkload& w = report.workloads[it->second];
      for (Offer& offer : BaselineOffers(*run, trace)) {
        const size_t b = static_cast<size_t>(BaselineIndex(report, offer.baseline));
        BaselineMeasurement& current = w.baselines[b];
        int64_t& created = baseline_created[it->second * baseline_count + b];
        if (Better(offer, current, created)) {
          current = std::move(offer.measurement);
          created = offer.created_unix_ms;
        } else if (current.latency_ms == 0 && current.note.empty()) {
          current.note = offer.measurement.note;
        }
      }
      const double ms = trace.evaluation().performance().latency_ms();
      if (!counts || trace.evaluation().status() != v1::PASSED || !Usable(ms)) continue;
      CompetitorWorkload& cw = c.workloads[it->second];
      // Runs are newest first: on equal latency the older run keeps the place, as on the
      // leaderboard.
      if (cw.best_latency_ms == 0 || ms <= cw.best_latency_ms) {
        cw.best_latency_ms = ms;
        cw.latency = LatencyInterval(trace.kiln().timing(), ms);
        cw.run_id = run->run_id();
        cw.solution_name = run->solution_name();
        cw.author = AuthorOf(*run);
        cw.own_share = trace.kiln().own_work().measured()
                           ? std::optional<double>(trace.kiln().own_work().share())
                           : std::nullopt;
      }
    }
  }

  for (ReportWorkload& w : report.workloads) {
    for (size_t b = 0; b < baseline_count; ++b) {
      BaselineMeasurement& m = w.baselines[b];
      if (m.latency_ms == 0 && m.note.empty()) {
        m.note = b == static_cast<size_t>(kReferenceBaseline) ? "no ranked run timed the reference"
                                                              : "not requested by any ranked run";
      }
    }
  }
  for (auto& [name, c] : competitors) {
    double share_sum = 0;
    int shares = 0;
    for (size_t i = 0; i < c.workloads.size(); ++i) {
      CompetitorWorkload& cw = c.workloads[i];
      if (cw.best_latency_ms == 0) continue;
      ++c.passed_workloads;
      if (cw.own_share.has_value()) {
        share_sum += *cw.own_share;
        ++shares;
      }
      for (size_t b = 0; b < baseline_count; ++b) {
        const BaselineMeasurement& base = report.workloads[i].baselines[b];
        cw.speedup[b] = base.latency_ms > 0 ? base.latency_ms / cw.best_latency_ms : 0;
        if (base.latency_ms > 0) cw.speedup_interval[b] = SpeedupInterval(base.interval, cw.latency);
      }
    }
    if (shares > 0) c.own_share = share_sum / shares;
    for (const CompetitorWorkload& cw : c.workloads) {
      if (!cw.author.empty()) c.authors.push_back(cw.author);
    }
    std::sort(c.authors.begin(), c.authors.end());
    c.authors.erase(std::unique(c.authors.begin(), c.authors.end()), c.authors.end());
    Score(report.baselines, report.workloads, c);
    report.competitors.push_back(std::move(c));
  }
  SortCompetitors(report.competitors);
  return report;
}

void ScoreCompetitor(const std::vector<std::string>& baselines,
                     const std::vector<ReportWorkload>& workloads, Competitor& c) {
  Score(baselines, workloads, c);
}

void SortCompetitors(std::vector<Competitor>& competitors) {
  const int ref = kReferenceBaseline;
  std::stable_sort(competitors.begin(), competitors.end(),
                   [ref](const Competitor& a, const Competitor& b) {
                     const double sa = a.score[ref].value_or(-1);
                     const double sb = b.score[ref].value_or(-1);
                     if (sa != sb) return sa > sb;
                     return a.name < b.name;
                   });
}

}  // namespace kiln::cli
