// Resolving a program name the way a shell does, before anything is forked: the child of a
// multithreaded process may only make async-signal-safe calls, so PATH is searched up front.
#ifndef KILN_HARNESS_SANDBOX_PROGRAM_PATH_H_
#define KILN_HARNESS_SANDBOX_PROGRAM_PATH_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace kiln {

// A name containing '/' comes back unchanged (exec reports whether it runs). Otherwise the first
// executable regular file named `name` in PATH, where PATH is taken from `env` ("K=V" entries)
// when it sets one, else from this process's environment, else "/usr/local/bin:/usr/bin:/bin".
// NOT_FOUND names the program and the PATH searched.
absl::StatusOr<std::string> FindProgram(const std::string& name,
                                        const std::vector<std::string>& env = {});

}  // namespace kiln

#endif  // KILN_HARNESS_SANDBOX_PROGRAM_PATH_H_
