// kiln node: what a kiln-harness node offers (GetNodeInfo).
#include <map>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "client/commands.h"
#include "client/connection.h"
#include "report/json_output.h"
#include "report/table.h"

namespace kiln::cli {

namespace {

std::string NodeText(const v1::NodeInfo& node, const std::string& server) {
  std::string out = absl::StrCat(
      "server          ", server, "\n", "version         ", node.version(), "\n",
      "backends        ", absl::StrJoin(node.backends(), ", "), "\n", "default backend ",
      node.default_backend(), "\n", "default mode    ", node.default_mode(), "\n",
      "queue depth     ", node.queue_depth(), "\n", "running         ", node.running(), "\n",
      "runs archived   ", node.runs_archived(), "\n");
  if (!node.sandbox().empty()) absl::StrAppend(&out, "sandbox         ", node.sandbox(), "\n");
  // Whether Nsight Compute can profile here (kiln-harness --check finds the same).
  if (!node.profiling().empty()) absl::StrAppend(&out, "nsight compute  ", node.profiling(), "\n");
  if (!node.toolchains().empty()) {
    // The map's order is unspecified; sort for a stable listing.
    std::map<std::string, std::string> toolchains(node.toolchains().begin(),
                                                  node.toolchains().end());
    out += "toolchains\n";
    for (const auto& [name, version] : toolchains) {
      absl::StrAppend(&out, "  ", name, ": ", version, "\n");
    }
  }
  if (!node.unavailable_backends().empty()) {
    std::map<std::string, std::string> unavailable(node.unavailable_backends().begin(),
                                                   node.unavailable_backends().end());
    out += "unavailable backends\n";
    for (const auto& [name, why] : unavailable) absl::StrAppend(&out, "  ", name, ": ", why, "\n");
  }
  if (!node.languages().empty()) {
    std::map<std::string, std::string> languages(node.languages().begin(),
                                                 node.languages().end());
    out += "languages\n";
    for (const auto& [name, where] : languages) {
      absl::StrAppend(&out, "  ", name, ": ", where, "\n");
    }
  }
  // Through a kiln-controller: the fleet's harnesses; the counts above are their sum.
  if (!node.fleet().empty()) {
    out += "harnesses of the fleet (counts and devices: those that answered)\n";
    for (const std::string& h : node.fleet()) absl::StrAppend(&out, "  ", h, "\n");
  }
  if (!node.devices().empty()) {
    const bool fleet = !node.fleet().empty();
    std::vector<Column> columns = {{"backend"}, {"index", Align::kRight}, {"name"},
                                   {"pci bus id"}, {"busy"}};
    if (fleet) columns.insert(columns.begin(), Column{"harness"});
    Table devices(std::move(columns));
    for (const v1::DeviceInfo& d : node.devices()) {
      std::vector<std::string> row = {d.backend(), absl::StrCat(d.index()), d.name(),
                                      d.pci_bus_id().empty() ? "-" : d.pci_bus_id(),
                                      d.busy() ? "yes" : "no"};
      if (fleet) row.insert(row.begin(), d.harness());
      devices.AddRow(std::move(row));
    }
    out += "devices\n" + devices.Render();
  }
  return out;
}

}  // namespace

int RunNode(const Invocation& inv, Console& console) {
  Connection connection(inv);
  grpc::ClientContext context;
  connection.Prepare(&context, kDefaultCallTimeoutS);
  v1::NodeInfo node;
  grpc::Status status = connection.stub().GetNodeInfo(&context, v1::GetNodeInfoRequest(), &node);
  if (!status.ok()) return connection.Fail(status, console);
  if (inv.args.Has("json")) {
    console.out << Dump(ProtoToJson(node));
  } else {
    console.out << NodeText(node, inv.server);
  }
  return kExitOk;
}

}  // namespace kiln::cli
