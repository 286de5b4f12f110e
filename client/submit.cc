// kiln submit: evaluate a solution on a definition's workloads.
#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "client/commands.h"
#include "client/connection.h"
#include "client/evaluation.h"
#include "client/inputs.h"
#include "harness/model/solution_baseline.h"
#include "harness/model/unknown_definition.h"

namespace kiln::cli {

namespace {

constexpr double kDefaultSubmitTimeoutS = 3600;

// Registers the definition read from a file, with `workloads`, before it is evaluated. Without
// workloads the harness keeps those the definition already has.
int PutDefinition(Connection& connection, const v1::Definition& def,
                  const std::vector<v1::Workload>& workloads, Console& console) {
  v1::PutDefinitionRequest request;
  *request.mutable_definition() = def;
  for (const v1::Workload& w : workloads) *request.add_workloads() = w;
  grpc::ClientContext context;
  connection.Prepare(&context, kDefaultCallTimeoutS);
  v1::PutDefinitionResponse response;
  grpc::Status status = connection.stub().PutDefinition(&context, request, &response);
  if (!status.ok()) return connection.Fail(status, console);
  if (response.unchanged()) {
    console.err << "kiln: definition " << response.name() << " unchanged ("
                << response.workload_count() << " workloads)\n";
  } else {
    console.err << "kiln: definition " << response.name() << " registered ("
                << response.workload_count() << " workloads)\n";
  }
  return kExitOk;
}

// The names of the definitions registered on the harness; nullopt when it cannot be asked.
std::optional<std::vector<std::string>> RegisteredNames(const Invocation& inv) {
  Connection connection(inv);
  grpc::ClientContext context;
  connection.Prepare(&context, kDefaultCallTimeoutS);
  v1::ListDefinitionsResponse defs;
  if (!connection.stub().ListDefinitions(&context, v1::ListDefinitionsRequest(), &defs).ok()) {
    return std::nullopt;
  }
  std::vector<std::string> names;
  for (const v1::DefinitionSummary& d : defs.definitions()) names.push_back(d.name());
  return names;
}

}  // namespace

int RunSubmit(const Invocation& inv, Console& console) {
  absl::StatusOr<double> timeout_s = SecondsFlag(inv, "timeout-s", kDefaultSubmitTimeoutS);
  if (!timeout_s.ok()) return InputError(timeout_s.status(), console);

  // Read every local file before talking to the harness: a bad file costs no round trip.
  const std::string definition_arg = inv.args.Get("definition");
  std::optional<v1::Definition> definition;
  if (IsFile(definition_arg)) {
    absl::StatusOr<v1::Definition> def = LoadDefinitionFile(definition_arg);
    if (!def.ok()) return InputError(def.status(), console);
    definition = *std::move(def);
  }
  const std::string definition_name = definition ? definition->name() : definition_arg;

  std::vector<v1::Workload> workloads;
  if (inv.args.Has("workloads")) {
    absl::StatusOr<std::vector<v1::Workload>> loaded =
        LoadWorkloadsFile(inv.args.Get("workloads"), definition_name);
    if (!loaded.ok()) return InputError(loaded.status(), console);
    workloads = *std::move(loaded);
  }

  std::vector<v1::Solution> solutions;
  for (const std::string& solution_path : inv.args.GetAll("solution")) {
    absl::StatusOr<v1::Solution> solution = LoadSolution(solution_path);
    if (!solution.ok()) return InputError(solution.status(), console);
    if (!solution->definition().empty() && solution->definition() != definition_name) {
      // Which side is wrong: a --definition NAME the harness does not know is the typo.
      if (!definition) {
        std::optional<std::vector<std::string>> registered = RegisteredNames(inv);
        if (registered && std::find(registered->begin(), registered->end(), definition_name) ==
                              registered->end()) {
          return InputError(
              absl::NotFoundError(absl::StrCat(
                  "--definition: ", UnknownDefinitionMessage(definition_name, *registered),
                  "; ", solution_path, " solves '", solution->definition(), "'")),
              console);
        }
      }
      return InputError(absl::InvalidArgumentError(absl::StrCat(
                            solution_path, ": solution.definition: '", solution->definition(),
                            "' does not match the definition '", definition_name, "'")),
                        console);
    }
    solutions.push_back(*std::move(solution));
  }

  // The name of a registered solution (solution:NAME) is checked here; whether it is registered
  // for the definition, and the other names, the harness checks.
  for (const std::string& b : inv.args.GetAll("baseline")) {
    if (std::optional<std::string> name = SolutionBaselineName(b); name.has_value()) {
      if (absl::Status s = ValidateSolutionName(*name, absl::StrCat("--baseline ", b)); !s.ok()) {
        return InputError(s, console);
      }
    }
  }

  Connection connection(inv);
  if (definition) {
    int put = PutDefinition(connection, *definition, workloads, console);
    if (put != kExitOk) return put;
  }
  v1::EvaluateRequest request;
  request.set_definition(definition_name);
  for (v1::Workload& w : workloads) *request.add_workloads() = std::move(w);
  request.set_mode(inv.args.Get("mode"));
  request.set_backend(inv.args.Get("backend"));
  for (const std::string& b : inv.args.GetAll("baseline")) request.add_baselines(b);
  if (solutions.size() > 1) {
    v1::EvaluateBatchRequest batch;
    *batch.mutable_request() = std::move(request);
    for (v1::Solution& s : solutions) *batch.add_solutions() = std::move(s);
    BatchOutcome outcome = StreamBatch(connection, batch, *timeout_s, console);
    return ReportBatch(outcome, inv.args.Has("json"), connection, console);
  }
  *request.mutable_solution() = std::move(solutions.front());

  EvaluationOutcome outcome = StreamEvaluation(connection, request, *timeout_s, console);
  return ReportEvaluation(outcome, inv.args.Has("json"), connection, console);
}

}  // namespace kiln::cli
