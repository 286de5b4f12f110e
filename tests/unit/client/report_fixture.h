// Runs and traces for the report tests: a ranked run of a team with given latencies (and
// reference latencies), a baseline on a trace, the options of a report on them.
#ifndef KILN_TESTS_UNIT_CLIENT_REPORT_FIXTURE_H_
#define KILN_TESTS_UNIT_CLIENT_REPORT_FIXTURE_H_

#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "report/definition_report.h"

namespace kiln::report_fixture {

inline constexpr char kDef[] = "vector_add_f32";
inline const std::vector<std::string> kUuids = {"1d7c9e35-aaaa", "c8e2f047-bbbb"};
inline int64_t next_created = 1000;

// One trace: PASSED with `latency` (0: INCORRECT_NUMERICAL, not timed), reference `ref`.
inline v1::Trace MakeTrace(size_t workload, double latency, double ref) {
  v1::Trace t;
  t.set_definition(kDef);
  t.mutable_workload()->set_uuid(kUuids[workload]);
  v1::AxisValue* axis = t.mutable_workload()->add_axes();
  axis->set_name("n");
  axis->set_value(workload == 0 ? 4096 : 1048576);
  t.mutable_kiln()->set_workload_index(static_cast<int32_t>(workload));
  if (latency > 0) {
    t.mutable_evaluation()->set_status(v1::PASSED);
    auto* perf = t.mutable_evaluation()->mutable_performance();
    perf->set_latency_ms(latency);
    perf->set_reference_latency_ms(ref);
    perf->set_speedup_factor(ref / latency);
  } else {
    t.mutable_evaluation()->set_status(v1::INCORRECT_NUMERICAL);
  }
  return t;
}

// A finished ranked run of `principal` with one trace per entry of `latencies` (0: failed).
inline v1::Run MakeRun(const std::string& id, const std::string& principal,
                const std::vector<double>& latencies,
                const std::vector<double>& refs = {1.0, 2.0}) {
  v1::Run run;
  run.set_run_id(id);
  run.set_definition(kDef);
  run.set_principal(principal);
  run.set_solution_name(id + "-solution");
  run.set_state(v1::RUN_DONE);
  run.set_mode("official");
  run.set_backend("host");
  run.set_registered_workloads(true);
  run.set_created_unix_ms(next_created++);
  for (size_t i = 0; i < latencies.size(); ++i) {
    *run.add_traces() = MakeTrace(i, latencies[i], refs[i]);
  }
  return run;
}

inline v1::BaselineResult* AddBaseline(v1::Trace* trace, const std::string& name, double latency,
                                const std::string& note = "") {
  v1::BaselineResult* b = trace->mutable_kiln()->add_baselines();
  b->set_name(name);
  b->set_source(name == "reference" ? "native_reference" : "python");
  b->set_latency_ms(latency);
  b->set_note(note);
  return b;
}

inline cli::DefinitionReportOptions Options() {
  cli::DefinitionReportOptions options;
  options.definition = kDef;
  options.mode = "official";
  options.backend = "host";
  return options;
}

inline const cli::Competitor& Find(const cli::DefinitionReport& report, const std::string& name) {
  for (const cli::Competitor& c : report.competitors) {
    if (c.name == name) return c;
  }
  FAIL("no competitor " << name);
  return report.competitors.front();
}

inline constexpr int kRef = cli::kReferenceBaseline;
inline constexpr int kEager = 1;  // kStandardBaselines: reference, torch_eager, torch_compile

}  // namespace kiln::report_fixture

#endif  // KILN_TESTS_UNIT_CLIENT_REPORT_FIXTURE_H_
