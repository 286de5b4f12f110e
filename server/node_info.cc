#include "server/node_info.h"

#include <fstream>
#include <string>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"

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
  bool has_level_zero = false;
  for (const NodeBackend& b : facts.backends) has_level_zero |= b.name == "level_zero";
  if (absl::Status ze = LevelZeroBackendStatus(); !has_level_zero && !ze.ok()) {
    (*info.mutable_unavailable_backends())["level_zero"] = std::string(ze.message());
  }
  return info;
}

}  // namespace kiln
