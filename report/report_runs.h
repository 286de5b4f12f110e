// The runs a definition report is computed from, read from a harness: every finished run of the
// definition timed in the mode (ListRuns, all pages), each with its traces (GetRun). Shared by
// `kiln report` and the harness's web console.
#ifndef KILN_REPORT_REPORT_RUNS_H_
#define KILN_REPORT_REPORT_RUNS_H_

#include <grpcpp/grpcpp.h>

#include <functional>
#include <string>
#include <vector>

#include "kiln/v1/harness.grpc.pb.h"
#include "report/definition_report.h"

namespace kiln::cli {

// `prepare` sets each call's deadline and credentials. Runs the caller may not read (another
// team's) are counted in skipped->unreadable, as are unfinished runs, the harness's reference
// checks and runs of another mode in their own counts.
grpc::Status FetchReportRuns(v1::Harness::StubInterface& stub,
                             const std::function<void(grpc::ClientContext*)>& prepare,
                             const std::string& definition, const std::string& mode,
                             std::vector<v1::Run>* runs, SkippedRuns* skipped);

}  // namespace kiln::cli

#endif  // KILN_REPORT_REPORT_RUNS_H_
