// kiln-harness's flags for serving beyond one machine: authentication, TLS, per-principal and
// per-run limits, and metrics. Defined here (not in main.cc) so that main only has to call
// ApplyAccessFlags.
#ifndef KILN_SERVER_ACCESS_FLAGS_H_
#define KILN_SERVER_ACCESS_FLAGS_H_

#include "server/harness_server.h"

namespace kiln {

// Copies the parsed flags into `options`.
void ApplyAccessFlags(HarnessOptions* options);

// The flags' usage lines, for --help.
extern const char kAccessFlagsUsage[];

}  // namespace kiln

#endif  // KILN_SERVER_ACCESS_FLAGS_H_
