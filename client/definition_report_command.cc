// kiln report DEFINITION: reads the definition's runs from the harness (ListRuns, then GetRun
// for each) and prints the report that definition_report.h computes.
#include <algorithm>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "client/commands.h"
#include "client/connection.h"
#include "harness/common/files.h"
#include "harness/model/unknown_definition.h"
#include "report/definition_report.h"
#include "report/report_runs.h"
#include "report/suite_report.h"
#include "report/table.h"

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

// --by, --best and --noise-floor into `options`; INVALID_ARGUMENT naming a bad one.
absl::Status ParseGrouping(const Invocation& inv, DefinitionReportOptions* options) {
  const std::string by = inv.args.Get("by", "team");
  if (by != "team" && by != "solution") {
    return absl::InvalidArgumentError(
        absl::StrCat("--by: expected team or solution, got '", by, "'"));
  }
  options->group_by = by == "team" ? GroupBy::kTeam : GroupBy::kSolution;
  options->rule = inv.args.Has("best") ? Rule::kBest : Rule::kLatest;
  absl::StatusOr<double> floor = ParseNoiseFloor(inv.args.Get("noise-floor"));
  if (!floor.ok()) return floor.status();
  options->noise_floor = *floor;
  return absl::OkStatus();
}

// Latencies of different modes and backends are not comparable: one of each. The mode is
// --mode, by default the node's (as for kiln leaderboard); the gRPC error of asking for it.
grpc::Status ModeOf(const Invocation& inv, Connection& connection, std::string* mode) {
  *mode = inv.args.Get("mode");
  if (!mode->empty()) return grpc::Status::OK;
  grpc::ClientContext context;
  connection.Prepare(&context, kDefaultCallTimeoutS);
  v1::NodeInfo node;
  grpc::Status s = connection.stub().GetNodeInfo(&context, v1::GetNodeInfoRequest(), &node);
  *mode = node.default_mode();
  return s;
}

// The report of options.definition, from its runs (ListRuns, then GetRun for each); the gRPC
// error of reading them, else OK with *report holding the report or why it cannot be built.
grpc::Status ReportOf(Connection& connection, const DefinitionReportOptions& options,
                      absl::StatusOr<DefinitionReport>* report) {
  SkippedRuns skipped;
  std::vector<v1::Run> runs;
  grpc::Status s = FetchReportRuns(
      connection.stub(),
      [&connection](grpc::ClientContext* context) {
        connection.Prepare(context, kDefaultCallTimeoutS);
      },
      options.definition, options.mode, &runs, &skipped);
  if (s.ok()) *report = BuildDefinitionReport(runs, options, skipped);
  return s;
}

// kiln report --suite kernelbench [--level N]: every problem's report (as kiln report
// DEFINITION builds it), then the suite's fast_p over the problems run.
int RunSuiteReport(const Invocation& inv, Console& console) {
  if (!inv.args.positionals.empty()) {
    return UsageFailure(console, absl::StrCat("unexpected argument '", inv.args.positionals[0],
                                              "': --suite reports every problem of the suite"));
  }
  if (inv.args.Has("baseline")) {
    return UsageFailure(console, "--baseline: not with --suite (its report is vs eager and vs "
                                 "torch.compile)");
  }
  int level = 0;
  if (inv.args.Has("level") && (!absl::SimpleAtoi(inv.args.Get("level"), &level) || level < 1)) {
    return UsageFailure(console, absl::StrCat("--level: expected 1, 2 or 3, got '",
                                              inv.args.Get("level"), "'"));
  }
  if (absl::Status s = CheckSuite(inv.args.Get("suite"), level); !s.ok()) {
    return UsageFailure(console, std::string(s.message()));
  }
  DefinitionReportOptions grouping;
  if (absl::Status s = ParseGrouping(inv, &grouping); !s.ok()) {
    return UsageFailure(console, std::string(s.message()));
  }
  std::string svg_path;
  if (inv.args.Has("svg")) {
    svg_path = inv.args.Get("svg");
    if (svg_path.empty()) return UsageFailure(console, "--svg: expected a file name");
  }

  Connection connection(inv);
  std::vector<std::string> registered;
  if (grpc::Status s = RegisteredDefinitions(connection, &registered); !s.ok()) {
    return connection.Fail(s, console);
  }
  const std::vector<std::string> definitions = SuiteDefinitions(registered, level);
  std::string mode;
  if (grpc::Status s = ModeOf(inv, connection, &mode); !s.ok()) return connection.Fail(s, console);
  std::vector<DefinitionReport> problems;
  for (size_t i = 0; i < definitions.size(); ++i) {
    if (definitions.size() >= 20 && i % 20 == 0) {
      console.err << "kiln report: reading runs of problem " << i + 1 << "/" << definitions.size()
                  << "\n";
    }
    DefinitionReportOptions options = grouping;
    options.definition = definitions[i];
    options.mode = mode;
    options.backend = inv.args.Get("backend");
    absl::StatusOr<DefinitionReport> report;
    if (grpc::Status s = ReportOf(connection, options, &report); !s.ok()) {
      return connection.Fail(s, console);
    }
    if (!report.ok()) return UsageFailure(console, std::string(report.status().message()));
    problems.push_back(*std::move(report));
  }
  const std::string title =
      level == 0 ? "KernelBench" : absl::StrCat("KernelBench level ", level);
  const SuiteReport suite =
      BuildSuiteReport(title, static_cast<int>(definitions.size()), problems, mode);
  if (!svg_path.empty()) {
    if (absl::Status s = WriteFile(svg_path, SuiteReportSvg(suite)); !s.ok()) {
      return UsageFailure(console, absl::StrCat("--svg ", svg_path, ": ", s.message()));
    }
  }
  if (inv.args.Has("json")) {
    console.out << Dump(SuiteReportJson(suite));
  } else {
    console.out << SuiteReportText(suite);
  }
  return kExitOk;
}

}  // namespace

int RunDefinitionReport(const Invocation& inv, Console& console) {
  if (inv.args.Has("suite")) return RunSuiteReport(inv, console);
  if (inv.args.Has("level")) return UsageFailure(console, "--level: only with --suite");
  if (inv.args.positionals.empty()) {
    return UsageFailure(console, "missing DEFINITION (or --suite kernelbench)");
  }
  DefinitionReportOptions options;
  options.definition = inv.args.positionals[0];
  absl::StatusOr<std::string> baseline = ParseBaseline(inv.args.Get("baseline", "reference"));
  if (!baseline.ok()) {
    return UsageFailure(console, absl::StrCat("--baseline: ", baseline.status().message()));
  }
  // A solution baseline no ranked run timed still gets its (empty) column.
  options.baselines.push_back(*baseline);
  if (absl::Status s = ParseGrouping(inv, &options); !s.ok()) {
    return UsageFailure(console, std::string(s.message()));
  }

  Connection connection(inv);
  std::vector<std::string> definitions;
  if (grpc::Status s = RegisteredDefinitions(connection, &definitions); !s.ok()) {
    return connection.Fail(s, console);
  }
  if (std::find(definitions.begin(), definitions.end(), options.definition) == definitions.end()) {
    return UsageFailure(console, absl::StrCat("definition: ", UnknownDefinitionMessage(
                                                                  options.definition, definitions)));
  }
  options.backend = inv.args.Get("backend");
  if (grpc::Status s = ModeOf(inv, connection, &options.mode); !s.ok()) {
    return connection.Fail(s, console);
  }
  absl::StatusOr<DefinitionReport> report;
  if (grpc::Status s = ReportOf(connection, options, &report); !s.ok()) {
    return connection.Fail(s, console);
  }
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
