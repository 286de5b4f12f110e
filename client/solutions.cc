// kiln solutions add FILE|DIR [--name NAME] [--replace] | kiln solutions list [--definition DEF]:
// the harness's solution registry (PutSolution, ListSolutions), whose entries runs name as the
// baseline "solution:NAME".
#include <string>

#include "absl/strings/str_cat.h"
#include "client/commands.h"
#include "client/connection.h"
#include "client/inputs.h"
#include "harness/model/solution_baseline.h"
#include "report/json_output.h"
#include "report/table.h"

namespace kiln::cli {

namespace {

int InputError(Console& console, const std::string& message) {
  console.err << "kiln solutions add: " << message << "\n";
  return kExitUsage;
}

std::string SolutionsTable(const v1::ListSolutionsResponse& response) {
  Table table({{"name"}, {"definition"}, {"language"}, {"author"}, {"sha256"}, {"registered"}});
  for (const v1::RegisteredSolution& s : response.solutions()) {
    table.AddRow({s.name(), s.definition(), s.language(), s.author().empty() ? kAbsent : s.author(),
                  ShortId(s.sha256(), 12), FormatUnixMs(s.created_unix_ms())});
  }
  return table.Render();
}

}  // namespace

int RunSolutionsAdd(const Invocation& inv, Console& console) {
  const std::string path = inv.args.positionals[0];
  // The loader of `kiln submit --solution`: a Solution JSON file, or a folder with solution.json.
  absl::StatusOr<v1::Solution> solution = LoadSolution(path);
  if (!solution.ok()) return InputError(console, std::string(solution.status().message()));
  if (inv.args.Has("definition")) {
    const std::string definition = inv.args.Get("definition");
    if (!solution->definition().empty() && solution->definition() != definition) {
      return InputError(console, absl::StrCat("--definition ", definition, ": ", path,
                                              " is a solution of '", solution->definition(),
                                              "'"));
    }
    solution->set_definition(definition);
  }
  if (solution->definition().empty()) {
    return InputError(console, absl::StrCat(path,
                                            ": solution.definition: required (the "
                                            "definition it is registered under; --definition "
                                            "DEF names it)"));
  }
  const std::string name = inv.args.Get("name", solution->name());
  if (absl::Status s =
          ValidateSolutionName(name, inv.args.Has("name") ? "--name" : "solution.name");
      !s.ok()) {
    return InputError(console, absl::StrCat(inv.args.Has("name") ? "" : path + ": ", s.message()));
  }
  Connection connection(inv);
  v1::PutSolutionRequest request;
  *request.mutable_solution() = *std::move(solution);
  request.set_name(inv.args.Get("name"));
  request.set_replace(inv.args.Has("replace"));
  grpc::ClientContext context;
  connection.Prepare(&context, kDefaultCallTimeoutS);
  v1::PutSolutionResponse response;
  grpc::Status status = connection.stub().PutSolution(&context, request, &response);
  if (status.error_code() == grpc::StatusCode::ALREADY_EXISTS) {
    console.err << connection.Describe(status) << "\nkiln: add --replace to register " << path
                << " under that name instead\n";
    return kExitUsage;
  }
  if (!status.ok()) return connection.Fail(status, console);
  if (inv.args.Has("json")) {
    console.out << Dump(ProtoToJson(response));
    return kExitOk;
  }
  const v1::RegisteredSolution& r = response.solution();
  console.out << "solution " << r.name() << " of " << r.definition() << " ("
              << ShortId(r.sha256(), 12) << "): "
              << (response.outcome() == "unchanged" ? "already registered, unchanged"
                                                    : response.outcome())
              << "\nruns name it as the baseline " << SolutionBaseline(r.name()) << "\n";
  return kExitOk;
}

int RunSolutionsList(const Invocation& inv, Console& console) {
  Connection connection(inv);
  v1::ListSolutionsRequest request;
  request.set_definition(inv.args.Get("definition"));
  grpc::ClientContext context;
  connection.Prepare(&context, kDefaultCallTimeoutS);
  v1::ListSolutionsResponse response;
  grpc::Status status = connection.stub().ListSolutions(&context, request, &response);
  if (!status.ok()) return connection.Fail(status, console);
  if (inv.args.Has("json")) {
    console.out << Dump(ProtoToJson(response));
  } else if (response.solutions().empty()) {
    console.out << "no solutions registered"
                << (request.definition().empty() ? "" : " for " + request.definition()) << "\n";
  } else {
    console.out << SolutionsTable(response);
  }
  return kExitOk;
}

}  // namespace kiln::cli
