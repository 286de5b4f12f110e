#include "server/backend.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "server/node_info.h"

namespace kiln {

namespace {

bool IsKnown(const std::string& name) {
  const auto& known = KnownBackendNames();
  return std::find(known.begin(), known.end(), name) != known.end();
}

absl::Status Unknown(const std::string& name) {
  return absl::InvalidArgumentError(absl::StrCat("backend: '", name, "' is not one of ",
                                                 absl::StrJoin(KnownBackendNames(), ", ")));
}

absl::Status Unavailable(const std::string& name) {
  return absl::FailedPreconditionError(
      absl::StrCat("backend '", name, "' is not available on this node"));
}

NodeBackend HostBackend() {
  NodeBackend host;
  host.name = "host";
  host.compile_target = "host";
  host.languages = {"cpp"};
  host.devices = {CpuModelName()};
  return host;
}

}  // namespace

const std::vector<std::string>& KnownBackendNames() {
  static const std::vector<std::string> kNames = {"host", "cuda", "level_zero"};
  return kNames;
}

absl::StatusOr<std::vector<NodeBackend>> ResolveNodeBackends(const std::string& flag) {
  // Only the host backend is built into this kiln-harness; GPU backends join the list here
  // once their workers exist, and `auto` then prefers them.
  if (flag == "auto" || flag == "host" || flag.empty())
    return std::vector<NodeBackend>{HostBackend()};
  if (!IsKnown(flag)) return Unknown(flag);
  return Unavailable(flag);
}

absl::StatusOr<const NodeBackend*> SelectBackend(const std::vector<NodeBackend>& backends,
                                                 const std::string& requested) {
  if (backends.empty()) return absl::FailedPreconditionError("this node has no backend");
  if (requested.empty()) return &backends.front();
  for (const NodeBackend& b : backends) {
    if (b.name == requested) return &b;
  }
  if (!IsKnown(requested)) return Unknown(requested);
  return Unavailable(requested);
}

}  // namespace kiln
