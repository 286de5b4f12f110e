// kiln report DEFINITION: reads the definition's runs from the harness (ListRuns, then GetRun
// for each) and prints the report that definition_report.h computes.
#include <algorithm>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "client/commands.h"
#include "client/connection.h"
#include "client/definition_report.h"
#include "harness/common/files.h"
#include "harness/model/unknown_definition.h"

namespace kiln::cli {

namespace {

constexpr int kRunsPageSize = 1000;

int UsageFailure(Console& console, const std::string& message) {
  console.err << "kiln report: " << message << "\n";
  return kExitUsage;
}

// The names of the registered definitions, or the gRPC error.
grpc::Status RegisteredDefinitions(Connection& connection, std::vector<std::string>* names) {
  grpc::ClientContext context;
  connection.Prepare(&context, kDefaultCallTimeoutS);
  v1::ListDefinitionsResponse response;
  grpc::Status status =
      connection.stub().ListDefinitions(&context, v1::ListDefinitionsRequest(), &response);
  for (const v1::DefinitionSummary& d : response.definitions()) names->push_back(d.name());
  return status;
}

// Every finished run of `definition` timed in `mode` (the summaries say both), all pages.
grpc::Status ListCandidateRuns(Connection& connection, const std::string& definition,
                               const std::string& mode, std::vector<v1::RunSummary>* runs,
                               SkippedRuns* skipped) {
  v1::ListRunsRequest request;
  request.set_definition(definition);
  request.set_limit(kRunsPageSize);
  do {
    grpc::ClientContext context;
    connection.Prepare(&context, kDefaultCallTimeoutS);
    v1::ListRunsResponse page;
    grpc::Status status = connection.stub().ListRuns(&context, request, &page);
    if (!status.ok()) return status;
    for (const v1::RunSummary& r : page.runs()) {
      if (r.state() != v1::RUN_DONE) {
        ++skipped->unfinished;
      } else if (r.principal() == "kiln") {
        ++skipped->harness_checks;  // the harness's own check of the reference
      } else if (r.mode() != mode) {
        ++skipped->other_mode;
      } else {
        runs->push_back(r);
      }
    }
    request.set_page_token(page.next_page_token());
  } while (!request.page_token().empty());
  return grpc::Status::OK;
}

}  // namespace

int RunDefinitionReport(const Invocation& inv, Console& console) {
  DefinitionReportOptions options;
  options.definition = inv.args.positionals[0];
  absl::StatusOr<std::string> baseline = ParseBaseline(inv.args.Get("baseline", "reference"));
  if (!baseline.ok()) {
    return UsageFailure(console, absl::StrCat("--baseline: ", baseline.status().message()));
  }
  // A solution baseline no ranked run timed still gets its (empty) column.
  options.baselines.push_back(*baseline);
  const std::string by = inv.args.Get("by", "team");
  if (by != "team" && by != "solution") {
    return UsageFailure(console, absl::StrCat("--by: expected team or solution, got '", by, "'"));
  }
  options.group_by = by == "team" ? GroupBy::kTeam : GroupBy::kSolution;
  options.rule = inv.args.Has("best") ? Rule::kBest : Rule::kLatest;

  Connection connection(inv);
  std::vector<std::string> definitions;
  if (grpc::Status s = RegisteredDefinitions(connection, &definitions); !s.ok()) {
    return connection.Fail(s, console);
  }
  if (std::find(definitions.begin(), definitions.end(), options.definition) == definitions.end()) {
    return UsageFailure(console, absl::StrCat("definition: ", UnknownDefinitionMessage(
                                                                  options.definition, definitions)));
  }
  // Latencies of different modes and backends are not comparable: one of each. The mode by
  // default is the node's (as for kiln leaderboard), the backend the one most runs used.
  options.mode = inv.args.Get("mode");
  options.backend = inv.args.Get("backend");
  if (options.mode.empty()) {
    grpc::ClientContext context;
    connection.Prepare(&context, kDefaultCallTimeoutS);
    v1::NodeInfo node;
    grpc::Status s = connection.stub().GetNodeInfo(&context, v1::GetNodeInfoRequest(), &node);
    if (!s.ok()) return connection.Fail(s, console);
    options.mode = node.default_mode();
  }

  SkippedRuns skipped;
  std::vector<v1::RunSummary> summaries;
  if (grpc::Status s =
          ListCandidateRuns(connection, options.definition, options.mode, &summaries, &skipped);
      !s.ok()) {
    return connection.Fail(s, console);
  }
  std::vector<v1::Run> runs;
  for (const v1::RunSummary& summary : summaries) {
    v1::GetRunRequest request;
    request.set_run_id(summary.run_id());
    grpc::ClientContext context;
    connection.Prepare(&context, kDefaultCallTimeoutS);
    v1::Run run;
    grpc::Status s = connection.stub().GetRun(&context, request, &run);
    if (s.error_code() == grpc::StatusCode::PERMISSION_DENIED) {
      ++skipped.unreadable;  // a team reads its own runs only
      continue;
    }
    if (!s.ok()) return connection.Fail(s, console);
    runs.push_back(std::move(run));
  }
  absl::StatusOr<DefinitionReport> report = BuildDefinitionReport(runs, options, skipped);
  if (!report.ok()) return UsageFailure(console, std::string(report.status().message()));

  if (inv.args.Has("svg")) {
    const std::string path = inv.args.Get("svg");
    if (path.empty()) return UsageFailure(console, "--svg: expected a file name");
    // Written whole or not at all (a temporary file renamed into place).
    if (absl::Status s = WriteFile(path, DefinitionReportSvg(*report, *baseline)); !s.ok()) {
      return UsageFailure(console, absl::StrCat("--svg ", path, ": ", s.message()));
    }
  }
  if (inv.args.Has("json")) {
    console.out << Dump(DefinitionReportJson(*report, *baseline));
  } else {
    console.out << DefinitionReportText(*report, *baseline);
  }
  return kExitOk;
}

}  // namespace kiln::cli
