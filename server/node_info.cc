#include "server/node_info.h"

#include <algorithm>
#include <fstream>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace kiln {

std::string CpuModelName() {
  std::ifstream cpuinfo("/proc/cpuinfo");
  std::string line;
  while (std::getline(cpuinfo, line)) {
    if (!absl::StartsWith(line, "model name")) continue;
    auto colon = line.find(':');
    if (colon == std::string::npos) continue;
    std::string name(absl::StripAsciiWhitespace(line.substr(colon + 1)));
    if (!name.empty()) return name;
  }
  return "unknown CPU";
}

v1::NodeInfo DescribeNode(const NodeFacts& facts, const NodeLoad& load) {
  v1::NodeInfo info;
  info.set_version(facts.version);
  for (size_t b = 0; b < facts.backends.size(); ++b) {
    const NodeBackend& backend = facts.backends[b];
    info.add_backends(backend.name);
    for (size_t d = 0; d < backend.devices.size(); ++d) {
      v1::DeviceInfo* device = info.add_devices();
      device->set_backend(backend.name);
      device->set_index(static_cast<int32_t>(d));
      device->set_name(backend.devices[d]);
      device->set_device_minor(-1);
      if (d < backend.placements.size()) {
        const DevicePlacement& placement = backend.placements[d];
        device->set_index(placement.index);
        device->set_pci_bus_id(placement.pci_bus_id);
        device->set_device_minor(placement.device_minor);
        device->set_device_minor_source(placement.minor_source);
      }
      device->set_busy(b < load.busy.size() && d < load.busy[b].size() && load.busy[b][d]);
    }
  }
  for (const auto& [name, version] : facts.toolchains) (*info.mutable_toolchains())[name] = version;
  info.set_queue_depth(load.queue_depth);
  info.set_running(load.running);
  info.set_default_mode(facts.default_mode);
  if (!facts.backends.empty()) info.set_default_backend(facts.backends.front().name);
  info.set_runs_archived(load.runs_archived);
  info.set_started_unix_ms(facts.started_unix_ms);
  info.set_profiling(facts.profiling);
  bool has_level_zero = false;
  for (const NodeBackend& b : facts.backends) has_level_zero |= b.name == "level_zero";
  if (absl::Status ze = LevelZeroBackendStatus(); !has_level_zero && !ze.ok()) {
    (*info.mutable_unavailable_backends())["level_zero"] = std::string(ze.message());
  }
  return info;
}

void DescribeLanguages(const NodeFacts& facts, const PythonReference* python, v1::NodeInfo* info) {
  if (python != nullptr) {
    (*info->mutable_toolchains())["python"] =
        python->torch ? PythonSolutionRuntime(*python)
                      : absl::StrCat("unavailable: ", python->solutions_note);
  }
  for (const char* language : {"cpp", "cuda", "opencl", "python", "triton"}) {
    const bool interpreted = std::string(language) == "python" || std::string(language) == "triton";
    std::vector<std::string> runs_on;
    std::string why_not;
    for (const NodeBackend& backend : facts.backends) {
      if (std::find(backend.languages.begin(), backend.languages.end(), language) ==
          backend.languages.end()) {
        continue;
      }
      std::string missing;
      if (interpreted) {
        missing = python == nullptr
                      ? "this node runs no Python"
                      : PythonLanguageUnavailable(*python, language, backend.name);
      }
      if (missing.empty()) {
        runs_on.push_back(backend.name);
      } else if (why_not.empty()) {
        why_not = absl::StrCat(backend.name, ": ", missing);
      }
    }
    std::string& line = (*info->mutable_languages())[language];
    if (runs_on.empty()) {
      line = absl::StrCat("unavailable: ", why_not.empty() ? "no backend of this node runs it"
                                                          : why_not);
    } else {
      line = absl::StrCat("runs on ", absl::StrJoin(runs_on, ", "));
      if (interpreted && python != nullptr) absl::StrAppend(&line, " (", PythonSolutionRuntime(*python), ")");
    }
  }
}

}  // namespace kiln
