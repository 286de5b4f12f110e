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
#include "client/report_runs.h"
#include "harness/common/files.h"
#include "harness/model/unknown_definition.h"

namespace kiln::cli {

namespace {

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
  std::vector<v1::Run> runs;
  if (grpc::Status s = FetchReportRuns(
          connection.stub(),
          [&connection](grpc::ClientContext* context) {
            connection.Prepare(context, kDefaultCallTimeoutS);
          },
          options.definition, options.mode, &runs, &skipped);
      !s.ok()) {
    return connection.Fail(s, console);
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
