#include "server/node_check.h"

#include <dirent.h>

#include <algorithm>
#include <cstdio>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "access/server_credentials.h"
#include "harness/common/files.h"
#include "harness/profile/profiling_support.h"
#include "harness/sandbox/sandbox.h"
#include "harness/sandbox/seccomp_filter.h"
#include "server/backend.h"

namespace kiln {

namespace {

std::string Trimmed(const std::string& path) {
  absl::StatusOr<std::string> text = ReadFile(path);
  if (!text.ok()) return "";
  std::string value = *text;
  while (!value.empty() && (value.back() == '\n' || value.back() == ' ')) value.pop_back();
  return value;
}

// /dev/nvidia* and /dev/dri/renderD*, sorted.
std::vector<std::string> GpuNodesPresent() {
  std::vector<std::string> nodes;
  for (const auto& [dir, prefix] : std::vector<std::pair<std::string, std::string>>{
           {"/dev", "nvidia"}, {"/dev/dri", "renderD"}}) {
    DIR* d = ::opendir(dir.c_str());
    if (d == nullptr) continue;
    while (struct dirent* e = ::readdir(d)) {
      std::string name = e->d_name;
      if (name.rfind(prefix, 0) == 0) nodes.push_back(dir + "/" + name);
    }
    ::closedir(d);
  }
  std::sort(nodes.begin(), nodes.end());
  return nodes;
}

nlohmann::json Backends(const HarnessOptions& options) {
  nlohmann::json out = nlohmann::json::array();
  auto backends = ResolveNodeBackends(options.backend, options.gpus);
  if (!backends.ok()) {
    out.push_back({{"name", options.backend}, {"error", std::string(backends.status().message())}});
    return out;
  }
  bool level_zero = false;
  for (const NodeBackend& b : *backends) {
    nlohmann::json entry = {{"name", b.name}, {"devices", b.devices}, {"languages", b.languages}};
    if (b.name == "cuda") {
      // Which GPUs are served (--gpus) and the device node each one's workers get.
      nlohmann::json gpus = nlohmann::json::array();
      for (size_t d = 0; d < b.placements.size() && d < b.devices.size(); ++d) {
        const DevicePlacement& p = b.placements[d];
        gpus.push_back({{"index", p.index},
                        {"name", b.devices[d]},
                        {"pci_bus_id", p.pci_bus_id},
                        {"uuid", p.uuid},
                        {"device_node", absl::StrCat("/dev/nvidia", p.device_minor)},
                        {"minor_from_pci_bus_id", !p.minor_guessed},
                        {"minor_source", p.minor_source}});
      }
      entry["gpus"] = std::move(gpus);
      entry["gpus_requested"] = options.gpus;
    }
    if (!b.warnings.empty()) entry["warnings"] = b.warnings;
    out.push_back(std::move(entry));
    level_zero = level_zero || b.name == "level_zero";
  }
  // Say plainly why Intel GPUs are not served (most nodes have no Level Zero driver).
  if (!level_zero) {
    absl::Status ze = LevelZeroBackendStatus();
    if (!ze.ok()) out.push_back({{"name", "level_zero"}, {"error", std::string(ze.message())}});
  }
  return out;
}

nlohmann::json SandboxReport(const HarnessOptions& options, const SandboxProbe& probe) {
  nlohmann::json s;
  s["bwrap"] = probe.bwrap;
  s["bwrap_works"] = probe.bwrap_works;
  if (!probe.bwrap_detail.empty()) s["bwrap_detail"] = probe.bwrap_detail;
  s["max_user_namespaces"] = Trimmed("/proc/sys/user/max_user_namespaces");
  std::string clone = Trimmed("/proc/sys/kernel/unprivileged_userns_clone");
  if (!clone.empty()) s["unprivileged_userns_clone"] = clone;
  s["seccomp"] = probe.seccomp_program != nullptr;
  s["seccomp_blocked"] = BlockedSyscallNames();
  if (!probe.seccomp_detail.empty()) s["seccomp_detail"] = probe.seccomp_detail;
  s["cgroups"] = probe.cgroups->available();
  s["cgroups_detail"] = probe.cgroups->Describe();
  auto sandbox = Sandbox::Create(options.sandbox, IsLoopbackListen(options.listen), probe);
  s["requested"] = options.sandbox;
  s["mode"] = !sandbox.ok()        ? "refused"
              : (*sandbox)->enabled() ? "bwrap"
                                      : "none";
  s["summary"] = sandbox.ok() ? (*sandbox)->Describe() : std::string(sandbox.status().message());
  return s;
}

std::string Row(const std::string& key, const std::string& value) {
  return absl::StrCat("  ", key, std::string(key.size() < 22 ? 22 - key.size() : 1, ' '), value,
                      "\n");
}

std::string YesNo(bool b) { return b ? "yes" : "NO"; }

}  // namespace

nlohmann::json CheckNode(const HarnessOptions& options) {
  SandboxProbe probe = ProbeSandbox();
  nlohmann::json report;
  report["backends"] = Backends(options);
  report["sandbox"] = SandboxReport(options, probe);
  report["gpu_device_nodes"] = GpuNodesPresent();
  int cuda_devices = 0;
  for (const auto& b : report["backends"]) {
    if (b.value("name", std::string()) == "cuda" && b.contains("devices")) {
      cuda_devices += static_cast<int>(b["devices"].size());
    }
  }
  const ProfilingSupport profiling = CheckProfiling(cuda_devices, ProfilerSearchDirs());
  report["profiling"] = {{"available", profiling.available},
                         {"ncu", profiling.ncu},
                         {"reason", profiling.reason}};
  // Profiling is optional: the node serves teams without it.
  report["ok"] = probe.bwrap_works && probe.seccomp_program != nullptr;
  return report;
}

std::string NodeCheckTable(const nlohmann::json& r) {
  std::string out = "kiln-harness node check\n\nbackends\n";
  for (const auto& b : r["backends"]) {
    std::string value = b.contains("error") ? b["error"].get<std::string>()
                                            : absl::StrCat(b["devices"].size(), " device(s): ",
                                                           absl::StrJoin(b["devices"].get<std::vector<std::string>>(), ", "));
    out += Row(b["name"].get<std::string>(), value);
    for (const auto& gpu : b.value("gpus", nlohmann::json::array())) {
      const bool mapped = gpu["minor_from_pci_bus_id"].get<bool>();
      out += Row(absl::StrCat("  GPU ", gpu["index"].get<int>()),
                 absl::StrCat(gpu["pci_bus_id"].get<std::string>().empty()
                                  ? std::string("no PCI bus id")
                                  : gpu["pci_bus_id"].get<std::string>(),
                              " -> ", gpu["device_node"].get<std::string>(),
                              mapped ? " (by PCI bus id)"
                                     : " (ASSUMED: CUDA ordinal, the bus id could not be "
                                       "mapped)"));
    }
    for (const auto& warning : b.value("warnings", nlohmann::json::array())) {
      out += Row("  WARNING", warning.get<std::string>());
    }
  }
  const auto& s = r["sandbox"];
  out += "\nsandbox\n";
  out += Row("bwrap", s["bwrap"].get<std::string>().empty() ? "NOT FOUND" : s["bwrap"].get<std::string>());
  out += Row("user namespaces", s["bwrap_works"].get<bool>()
                                    ? "yes (bwrap sandbox runs)"
                                    : absl::StrCat("NO: ", s.value("bwrap_detail", std::string())));
  out += Row("max_user_namespaces", s["max_user_namespaces"].get<std::string>());
  out += Row("seccomp", s["seccomp"].get<bool>()
                            ? absl::StrCat("yes (", s["seccomp_blocked"].size(), " calls blocked)")
                            : absl::StrCat("NO: ", s.value("seccomp_detail", std::string())));
  out += Row("cgroups", absl::StrCat(YesNo(s["cgroups"].get<bool>()), ": ",
                                     s["cgroups_detail"].get<std::string>()));
  out += Row("mode", absl::StrCat(s["mode"].get<std::string>(), " (--sandbox ",
                                  s["requested"].get<std::string>(), ")"));
  out += Row("", s["summary"].get<std::string>());
  out += "\ngpu device nodes\n";
  auto nodes = r["gpu_device_nodes"].get<std::vector<std::string>>();
  out += Row("present", nodes.empty() ? "none" : absl::StrJoin(nodes, " "));
  if (r.contains("profiling")) {
    const auto& p = r["profiling"];
    ProfilingSupport support;
    support.available = p["available"].get<bool>();
    support.ncu = p["ncu"].get<std::string>();
    support.reason = p["reason"].get<std::string>();
    out += "\nprofiling (Nsight Compute)\n";
    out += Row("", DescribeProfiling(support));
  }
  out += absl::StrCat("\n", r["ok"].get<bool>() ? "OK: this node can sandbox candidates\n"
                                                 : "FAIL: the sandbox is missing or unusable\n");
  return out;
}

int RunNodeCheck(const HarnessOptions& options, bool json) {
  nlohmann::json report = CheckNode(options);
  std::string text = json ? report.dump(2) + "\n" : NodeCheckTable(report);
  std::fputs(text.c_str(), stdout);
  std::fflush(stdout);
  return report["ok"].get<bool>() ? 0 : 1;
}

}  // namespace kiln
