// Writes the SVGs of `kiln report` for reports chosen to show what a reader must see, for
// tests/browser/report_svg_render_test.py to render with headless Chromium:
//   near_one.svg  three teams whose speedups lie within 0.85x-1.1x (bars close to 1x), two of
//                 them with near-equal fast_p curves, one without a PASSED run on a workload;
//   empty.svg     a definition no ranked run has reached.
// usage: report_svg_samples OUT_DIR
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include "report/definition_report.h"

namespace {

using namespace kiln;

constexpr char kDef[] = "rmsnorm_h4096";
const std::vector<std::string> kUuids = {"0f3a9c10-aaaa-4aaa-8aaa-000000000001",
                                         "0f3a9c10-bbbb-4bbb-8bbb-000000000002",
                                         "0f3a9c10-cccc-4ccc-8ccc-000000000003"};
int64_t next_created = 1000;

// A ranked run of `team`: reference 1 ms on every workload, `speedups` (0: not PASSED).
v1::Run MakeRun(const std::string& team, const std::vector<double>& speedups) {
  v1::Run run;
  run.set_run_id(team + "-run");
  run.set_definition(kDef);
  run.set_principal(team);
  run.set_solution_name(team + "-kernel");
  run.set_state(v1::RUN_DONE);
  run.set_mode("official");
  run.set_backend("cuda");
  run.set_registered_workloads(true);
  run.set_created_unix_ms(next_created++);
  for (size_t i = 0; i < speedups.size(); ++i) {
    v1::Trace* t = run.add_traces();
    t->set_definition(kDef);
    t->mutable_workload()->set_uuid(kUuids[i]);
    v1::AxisValue* axis = t->mutable_workload()->add_axes();
    axis->set_name("batch_size");
    axis->set_value(static_cast<int64_t>(7 * (i + 1)));
    if (speedups[i] > 0) {
      t->mutable_evaluation()->set_status(v1::PASSED);
      v1::Performance* perf = t->mutable_evaluation()->mutable_performance();
      perf->set_reference_latency_ms(1.0);
      perf->set_latency_ms(1.0 / speedups[i]);
      perf->set_speedup_factor(speedups[i]);
    } else {
      t->mutable_evaluation()->set_status(v1::INCORRECT_NUMERICAL);
    }
  }
  return run;
}

bool Write(const std::string& path, const std::string& content) {
  std::ofstream out(path, std::ios::binary);
  out << content;
  return static_cast<bool>(out);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: report_svg_samples OUT_DIR\n";
    return 2;
  }
  const std::string dir = argv[1];
  cli::DefinitionReportOptions options;
  options.definition = kDef;
  options.mode = "official";
  options.backend = "cuda";
  // Colours follow the score order: team-a (#4e79a7), team-b (#f28e2b), team-c (#e15759).
  const std::vector<v1::Run> runs = {MakeRun("team-a", {1.08, 1.05, 0.99}),
                                     MakeRun("team-b", {1.07, 1.04, 0.98}),
                                     MakeRun("team-c", {0.88, 0, 0.9})};
  absl::StatusOr<cli::DefinitionReport> report = cli::BuildDefinitionReport(runs, options);
  absl::StatusOr<cli::DefinitionReport> empty = cli::BuildDefinitionReport({}, options);
  if (!report.ok() || !empty.ok()) {
    std::cerr << "report_svg_samples: cannot build the reports\n";
    return 1;
  }
  if (!Write(dir + "/near_one.svg", cli::DefinitionReportSvg(*report, "reference")) ||
      !Write(dir + "/empty.svg", cli::DefinitionReportSvg(*empty, "reference"))) {
    std::cerr << "report_svg_samples: cannot write under " << dir << "\n";
    return 1;
  }
  return 0;
}
