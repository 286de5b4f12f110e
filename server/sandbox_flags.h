// kiln-harness's flags for the sandbox, the GPUs it serves and the node check (--sandbox,
// --worker-memory-mb, --gpus, --check, --json). Defined here (not in main.cc) so that main only calls these functions.
#ifndef KILN_SERVER_SANDBOX_FLAGS_H_
#define KILN_SERVER_SANDBOX_FLAGS_H_

#include "server/harness_server.h"

namespace kiln {

// Copies the parsed flags into `options`.
void ApplySandboxFlags(HarnessOptions* options);

// Whether --check was given; then RunRequestedCheck prints the report and gives the exit code.
bool NodeCheckRequested();
int RunRequestedCheck(const HarnessOptions& options);

// The flags' usage lines, for --help.
extern const char kSandboxFlagsUsage[];

}  // namespace kiln

#endif  // KILN_SERVER_SANDBOX_FLAGS_H_
