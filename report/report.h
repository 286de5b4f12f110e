// What the CLI shows about a run: the per-workload table, the summary line, the details of a
// failure (reason, compiler log, error excerpts) and the progress lines streamed while it runs.
#ifndef KILN_REPORT_REPORT_H_
#define KILN_REPORT_REPORT_H_

#include <google/protobuf/repeated_ptr_field.h>

#include <ostream>
#include <string>

#include "kiln/v1/harness.pb.h"
#include "kiln/v1/types.pb.h"

namespace kiln::cli {

// "n=1000, m=4".
std::string AxesText(const v1::Workload& workload);

// Columns: # | workload | axes | status | latency ms | ref ms | speedup | max abs err |
// max rel err. Absent values are "-".
std::string TraceTable(const google::protobuf::RepeatedPtrField<v1::Trace>& traces);

// Mean speedup over traces that report one; 0 when none does.
double MeanSpeedup(const google::protobuf::RepeatedPtrField<v1::Trace>& traces);

// "run <id>: PASSED (5/5 workloads), mean speedup 2.31x, mode official", or for other verdicts
// "run <id>: INCORRECT_NUMERICAL (1/3 workloads passed), mode kernelbench". Ends in '\n'.
std::string SummaryLine(const v1::Run& run);

// For a run that did not pass: its reason, the compiler log (for COMPILE_ERROR, so that file:line
// is visible) and, per distinct failure, the workloads it hit with the reason and log excerpt.
// Empty for a PASSED run.
std::string FailureDetails(const v1::Run& run);

// Prints one line per stage change and per finished workload:
//   [run 3f2a1b2c] compiling (cache hit)
//   [run 3f2a1b2c] workload 2/5 PASSED 0.153 ms (ref 0.410 ms, 2.68x)
// On a terminal (`in_place`), stage lines overwrite each other and only finished workloads stay.
class ProgressPrinter {
 public:
  explicit ProgressPrinter(std::ostream& err, bool in_place = false)
      : err_(err), in_place_(in_place) {}
  void Print(const v1::Progress& progress);
  // Clears a stage line left on a terminal; call before writing anything else to `err`.
  void Finish();

 private:
  std::ostream& err_;
  bool in_place_;
  bool transient_shown_ = false;
  std::string last_line_;
};

// The progress line for a finished workload (without the "[run ...]" prefix).
std::string WorkloadLine(const v1::Trace& trace, int index, int count);

}  // namespace kiln::cli

#endif  // KILN_REPORT_REPORT_H_
