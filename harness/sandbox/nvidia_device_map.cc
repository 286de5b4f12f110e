#include "harness/sandbox/nvidia_device_map.h"

#include <dirent.h>

#include <algorithm>
#include <cstdio>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "harness/common/files.h"

namespace kiln {

namespace {

bool ParseHex(absl::string_view text, unsigned max, unsigned* out) {
  if (text.empty() || text.size() > 8) return false;
  unsigned value = 0;
  for (char c : text) {
    if (!absl::ascii_isxdigit(static_cast<unsigned char>(c))) return false;
    value = value * 16 + static_cast<unsigned>(absl::ascii_isdigit(static_cast<unsigned char>(c))
                                                   ? c - '0'
                                                   : absl::ascii_tolower(c) - 'a' + 10);
  }
  if (value > max) return false;
  *out = value;
  return true;
}

// The value after "Key:" on a line of the driver's information file, trimmed.
bool FieldValue(absl::string_view line, absl::string_view key, std::string* value) {
  if (!absl::StartsWith(line, key)) return false;
  absl::string_view rest = line.substr(key.size());
  if (rest.empty() || rest.front() != ':') return false;
  *value = std::string(absl::StripAsciiWhitespace(rest.substr(1)));
  return true;
}

}  // namespace

std::string NormalizePciBusId(const std::string& bus_id) {
  std::vector<absl::string_view> parts =
      absl::StrSplit(absl::StripAsciiWhitespace(bus_id), ':');
  if (parts.size() != 3) return "";
  absl::string_view device = parts[2];
  absl::string_view function = "0";
  if (size_t dot = device.find('.'); dot != absl::string_view::npos) {
    function = device.substr(dot + 1);
    device = device.substr(0, dot);
  }
  unsigned d = 0, b = 0, dev = 0, fn = 0;
  if (!ParseHex(parts[0], 0xffffffffu, &d) || !ParseHex(parts[1], 0xff, &b) ||
      !ParseHex(device, 0x1f, &dev) || !ParseHex(function, 0x7, &fn)) {
    return "";
  }
  char out[32];
  std::snprintf(out, sizeof out, "%04x:%02x:%02x.%x", d, b, dev, fn);
  return out;
}

absl::StatusOr<std::vector<NvidiaProcGpu>> ReadNvidiaProcGpus(const std::string& proc_root) {
  const std::string dir = absl::StrCat(proc_root, "/driver/nvidia/gpus");
  DIR* d = ::opendir(dir.c_str());
  if (d == nullptr) {
    return absl::FailedPreconditionError(
        absl::StrCat(dir, " cannot be read (is the NVIDIA kernel driver loaded?)"));
  }
  std::vector<std::string> entries;
  while (struct dirent* e = ::readdir(d)) {
    std::string name = e->d_name;
    if (name != "." && name != "..") entries.push_back(std::move(name));
  }
  ::closedir(d);
  std::sort(entries.begin(), entries.end());
  std::vector<NvidiaProcGpu> gpus;
  for (const std::string& entry : entries) {
    NvidiaProcGpu gpu;
    gpu.pci_bus_id = NormalizePciBusId(entry);
    if (gpu.pci_bus_id.empty()) continue;  // not a GPU folder
    const std::string path = absl::StrCat(dir, "/", entry, "/information");
    absl::StatusOr<std::string> text = ReadFile(path);
    if (!text.ok()) {
      return absl::FailedPreconditionError(absl::StrCat(path, ": ", text.status().message()));
    }
    bool has_minor = false;
    for (absl::string_view line : absl::StrSplit(*text, '\n')) {
      std::string value;
      if (FieldValue(line, "Device Minor", &value)) {
        has_minor = absl::SimpleAtoi(value, &gpu.minor) && gpu.minor >= 0;
      } else if (FieldValue(line, "GPU UUID", &value)) {
        gpu.uuid = value;
      } else if (FieldValue(line, "Model", &value)) {
        gpu.model = value;
      }
    }
    if (!has_minor) {
      return absl::FailedPreconditionError(
          absl::StrCat(path, ": no readable \"Device Minor:\" line"));
    }
    gpus.push_back(std::move(gpu));
  }
  return gpus;
}

absl::StatusOr<int> NvidiaDeviceMinor(const std::string& proc_root,
                                      const std::string& pci_bus_id) {
  const std::string wanted = NormalizePciBusId(pci_bus_id);
  if (wanted.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("PCI bus id '", pci_bus_id, "' is not DOMAIN:BUS:DEVICE.FUNCTION"));
  }
  absl::StatusOr<std::vector<NvidiaProcGpu>> gpus = ReadNvidiaProcGpus(proc_root);
  if (!gpus.ok()) return gpus.status();
  std::vector<std::string> listed;
  for (const NvidiaProcGpu& gpu : *gpus) {
    if (gpu.pci_bus_id == wanted) return gpu.minor;
    listed.push_back(gpu.pci_bus_id);
  }
  return absl::NotFoundError(absl::StrCat(
      "the NVIDIA driver lists no GPU at PCI bus id ", wanted, " in ", proc_root,
      "/driver/nvidia/gpus (it lists: ", listed.empty() ? "none" : absl::StrJoin(listed, ", "),
      ")"));
}

}  // namespace kiln
