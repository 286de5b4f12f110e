// `kiln report --suite kernelbench [--level N]`: KernelBench's fast_p over the problems of a
// suite, as CUDA Agent reports it (fast_0: correct; fast_1: correct and faster; the fast_p
// curve), against the problem's Model in eager torch (the definition's reference) and against
// torch.compile (the torch_compile baseline, where a run measured it).
//
// A suite report is a DefinitionReport whose entries are problems (item "problem"): each problem
// is one definition, reported by BuildDefinitionReport; a team's entry for the problem is
// correct when its counted run PASSED every workload of it, and its speedup per baseline is the
// problem's contest score (the mean speedup over its workloads; KernelBench problems have one).
// The problems are those with a ranked run of anyone; a team that did not run one counts as not
// fast on it. Pure: DefinitionReports in, numbers and renderings out.
#ifndef KILN_REPORT_SUITE_REPORT_H_
#define KILN_REPORT_SUITE_REPORT_H_

#include <string>
#include <vector>

#include "report/definition_report.h"
#include "report/json_output.h"

namespace kiln::cli {

// OK when `suite` is a suite kiln knows ("kernelbench") and `level` one of its levels (0: all);
// else INVALID_ARGUMENT naming the flag.
absl::Status CheckSuite(const std::string& suite, int level);

// The KernelBench definitions of `registered` (kernelbench_l<level>_<id>_<name>) of level
// `level` (0: all levels), in problem order (level, then id).
std::vector<std::string> SuiteDefinitions(const std::vector<std::string>& registered, int level);

struct SuiteReport {
  std::string title;  // "KernelBench level 1"
  int registered = 0;  // problems of the suite (and level) registered on the node
  DefinitionReport report;  // entries are the problems run, item "problem"
  // Per competitor (report.competitors' order) and problem: "PASSED", "not passed" (its
  // counted run failed a workload) or "not run".
  std::vector<std::vector<std::string>> states;
};

// `problems`: BuildDefinitionReport of each suite definition (any order; those without a ranked
// run are counted, not listed). Carries the standard baselines only.
SuiteReport BuildSuiteReport(const std::string& title, int registered,
                             const std::vector<DefinitionReport>& problems, const std::string& mode);

// Per team: problems run, passed, fast_0, then fast_p at 0.5 / 1 / 1.5 / 2 vs eager and vs
// torch.compile, and how many of its speedups vs eager are ties (the problems' noise floor); then
// per problem each team's verdict, latency and both speedups, "tie" where one is.
std::string SuiteReportText(const SuiteReport& suite);
Json SuiteReportJson(const SuiteReport& suite);
// The fast_p curves and per-problem speedup bars vs eager, then the same vs torch.compile, one
// SVG document.
std::string SuiteReportSvg(const SuiteReport& suite);

}  // namespace kiln::cli

#endif  // KILN_REPORT_SUITE_REPORT_H_
