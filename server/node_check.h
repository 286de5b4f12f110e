// `kiln-harness --check`: what this node can do (backends and devices, the sandbox: bwrap and
// user namespaces, seccomp, cgroups, GPU device nodes, whether Nsight Compute can profile), as a
// table or JSON, and whether it can serve contest teams (exit 0) or not (exit 1: the sandbox is
// missing or unusable).
#ifndef KILN_SERVER_NODE_CHECK_H_
#define KILN_SERVER_NODE_CHECK_H_

#include <string>

#include "nlohmann/json.hpp"
#include "server/harness_server.h"

namespace kiln {

// Probes the node for `options` (its --backend, --sandbox and --listen). "ok" is false when
// the sandbox is unusable.
nlohmann::json CheckNode(const HarnessOptions& options);

// The report as an aligned, human-readable table.
std::string NodeCheckTable(const nlohmann::json& report);

// Prints the report (JSON when `json`) to stdout; returns the process exit code.
int RunNodeCheck(const HarnessOptions& options, bool json);

}  // namespace kiln

#endif  // KILN_SERVER_NODE_CHECK_H_
