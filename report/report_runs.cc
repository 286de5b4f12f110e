#include "report/report_runs.h"

#include <algorithm>

namespace kiln::cli {

namespace {

constexpr int kRunsPageSize = 1000;

}  // namespace

grpc::Status FetchReportRuns(v1::Harness::StubInterface& stub,
                             const std::function<void(grpc::ClientContext*)>& prepare,
                             const std::string& definition, const std::string& mode,
                             std::vector<v1::Run>* runs, SkippedRuns* skipped) {
  std::vector<v1::RunSummary> summaries;
  v1::ListRunsRequest request;
  request.set_definition(definition);
  request.set_limit(kRunsPageSize);
  request.set_kind("evaluation");  // profiles are not submissions
  do {
    grpc::ClientContext context;
    prepare(&context);
    v1::ListRunsResponse page;
    grpc::Status status = stub.ListRuns(&context, request, &page);
    if (!status.ok()) return status;
    for (const std::string& h : page.left_out()) {
      std::vector<std::string>& left_out = skipped->unavailable_harnesses;
      if (std::find(left_out.begin(), left_out.end(), h) == left_out.end()) left_out.push_back(h);
    }
    for (const v1::RunSummary& r : page.runs()) {
      if (r.state() != v1::RUN_DONE) {
        ++skipped->unfinished;
      } else if (r.principal() == "kiln") {
        ++skipped->harness_checks;  // the harness's own check of the reference
      } else if (r.mode() != mode) {
        ++skipped->other_mode;
      } else {
        summaries.push_back(r);
      }
    }
    request.set_page_token(page.next_page_token());
  } while (!request.page_token().empty());
  for (const v1::RunSummary& summary : summaries) {
    v1::GetRunRequest get;
    get.set_run_id(summary.run_id());
    grpc::ClientContext context;
    prepare(&context);
    v1::Run run;
    grpc::Status s = stub.GetRun(&context, get, &run);
    if (s.error_code() == grpc::StatusCode::PERMISSION_DENIED) {
      ++skipped->unreadable;  // a team reads its own runs only
      continue;
    }
    if (!s.ok()) return s;
    runs->push_back(std::move(run));
  }
  return grpc::Status::OK;
}

}  // namespace kiln::cli
