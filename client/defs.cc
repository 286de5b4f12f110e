// kiln defs add FILE [--workloads FILE.jsonl] | kiln defs list (defs_settings.cc: show, set)
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "client/commands.h"
#include "client/connection.h"
#include "client/definition_detail.h"
#include "client/inputs.h"
#include "client/views.h"
#include "report/json_output.h"
#include "report/table.h"

namespace kiln::cli {

std::string DefinitionsText(const v1::ListDefinitionsResponse& response) {
  Table table({{"name"},
               {"op_type"},
               {"workloads", Align::kRight},
               {"builtin"},
               {"native reference"},
               {"integrity"},
               {"evaluable here"},
               {"settings"}});
  std::string warnings;
  for (const v1::DefinitionSummary& d : response.definitions()) {
    const bool flagged = !d.integrity_warning().empty();
    table.AddRow({d.name(), d.op_type(), absl::StrCat(d.workload_count()),
                  d.builtin() ? "yes" : "no", d.has_native_reference() ? "yes" : "no",
                  flagged ? "DEGENERATE" : "ok", d.cannot_evaluate().empty() ? "yes" : "NO",
                  SettingsColumn(d)});
    if (flagged) absl::StrAppend(&warnings, d.name(), ": ", d.integrity_warning(), "\n");
    if (!d.cannot_evaluate().empty()) {
      absl::StrAppend(&warnings, d.name(), ": not evaluable here: ", d.cannot_evaluate(), "\n");
    }
  }
  return table.Render() + warnings;
}

int RunDefsAdd(const Invocation& inv, Console& console) {
  absl::StatusOr<v1::Definition> def = LoadDefinitionFile(inv.args.positionals[0]);
  if (!def.ok()) {
    console.err << "kiln: " << def.status().message() << "\n";
    return kExitUsage;
  }
  v1::PutDefinitionRequest request;
  if (inv.args.Has("workloads")) {
    absl::StatusOr<std::vector<v1::Workload>> workloads =
        LoadWorkloadsFile(inv.args.Get("workloads"), def->name());
    if (!workloads.ok()) {
      console.err << "kiln: " << workloads.status().message() << "\n";
      return kExitUsage;
    }
    for (v1::Workload& w : *workloads) *request.add_workloads() = std::move(w);
  }
  *request.mutable_definition() = *std::move(def);
  request.set_allow_unevaluable(inv.args.Has("allow-unevaluable"));
  Connection connection(inv);
  grpc::ClientContext context;
  connection.Prepare(&context, kDefaultCallTimeoutS);
  v1::PutDefinitionResponse response;
  grpc::Status status = connection.stub().PutDefinition(&context, request, &response);
  if (!status.ok()) return connection.Fail(status, console);
  if (response.unchanged()) {
    console.out << "definition " << response.name() << " unchanged (" << response.workload_count()
                << " workloads): already registered exactly so\n";
    return kExitOk;
  }
  console.out << "definition " << response.name() << " registered with "
              << response.workload_count() << " workloads\n";
  if (!response.cannot_evaluate().empty()) {
    console.out << "WARNING: this node cannot evaluate it: " << response.cannot_evaluate()
                << "\n";
  }
  if (!response.reference_check_run_id().empty()) {
    console.out << "checking its reference for degenerate outputs: run "
                << response.reference_check_run_id() << " (kiln defs list shows the result)\n";
  } else if (!response.reference_check_note().empty()) {
    console.out << "reference not checked: " << response.reference_check_note() << "\n";
  }
  return kExitOk;
}

int RunDefsList(const Invocation& inv, Console& console) {
  Connection connection(inv);
  grpc::ClientContext context;
  connection.Prepare(&context, kDefaultCallTimeoutS);
  v1::ListDefinitionsResponse response;
  grpc::Status status =
      connection.stub().ListDefinitions(&context, v1::ListDefinitionsRequest(), &response);
  if (!status.ok()) return connection.Fail(status, console);
  if (inv.args.Has("json")) {
    console.out << Dump(ProtoToJson(response));
    return kExitOk;
  }
  console.out << DefinitionsText(response);
  return kExitOk;
}

}  // namespace kiln::cli
