// kiln defs show DEF | kiln defs set DEF [--atol X] ... [--reset]: how a definition is judged
// (GetDefinition, SetDefinitionSettings; definition_detail.h prints them).
#include <string>

#include "client/commands.h"
#include "client/connection.h"
#include "client/definition_detail.h"

namespace kiln::cli {

namespace {

int PrintDetail(const v1::DefinitionDetail& detail, bool json, Console& console) {
  if (json) {
    console.out << Dump(DefinitionDetailJson(detail));
  } else {
    console.out << DefinitionDetailText(detail);
  }
  return kExitOk;
}

}  // namespace

int RunDefsShow(const Invocation& inv, Console& console) {
  Connection connection(inv);
  v1::GetDefinitionRequest request;
  request.set_name(inv.args.positionals[0]);
  request.set_include_workloads(true);  // defs show lists them, with the reference
  grpc::ClientContext context;
  connection.Prepare(&context, kDefaultCallTimeoutS);
  v1::DefinitionDetail detail;
  grpc::Status status = connection.stub().GetDefinition(&context, request, &detail);
  if (!status.ok()) return connection.Fail(status, console);
  return PrintDetail(detail, inv.args.Has("json"), console);
}

int RunDefsSet(const Invocation& inv, Console& console) {
  // Checked here first, so that a bad value is refused naming its flag before any call.
  absl::StatusOr<v1::DefinitionSettings> settings = SettingsFromFlags(inv.args, "defs set");
  if (!settings.ok()) {
    console.err << settings.status().message() << "\n";
    return kExitUsage;
  }
  const bool reset = inv.args.Has("reset");
  if (!reset && settings->ByteSizeLong() == 0) {
    console.err << "kiln defs set: nothing to set: give --atol, --rtol, --required-matched-ratio, "
                   "--warmup, --iterations, --trials, --min-own-kernel-share, --allow-torch-only or "
                   "--reset\n";
    return kExitUsage;
  }
  Connection connection(inv);
  v1::SetDefinitionSettingsRequest request;
  request.set_definition(inv.args.positionals[0]);
  *request.mutable_settings() = *std::move(settings);
  request.set_reset(reset);
  grpc::ClientContext context;
  connection.Prepare(&context, kDefaultCallTimeoutS);
  v1::DefinitionDetail detail;
  grpc::Status status = connection.stub().SetDefinitionSettings(&context, request, &detail);
  if (!status.ok()) return connection.Fail(status, console);
  console.err << "kiln: settings of " << request.definition()
              << " stored; runs admitted from now on use them\n";
  return PrintDetail(detail, inv.args.Has("json"), console);
}

}  // namespace kiln::cli
