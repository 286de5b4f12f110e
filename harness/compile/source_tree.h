// A solution's sources on disk. Source paths come from untrusted clients, so they are checked
// before anything is written: relative, no "." / ".." / empty components, no NUL, unique, and
// no file doubling as another file's folder.
#ifndef KILN_HARNESS_COMPILE_SOURCE_TREE_H_
#define KILN_HARNESS_COMPILE_SOURCE_TREE_H_

#include <string>

#include "absl/status/status.h"
#include "kiln/v1/types.pb.h"

namespace kiln {

// INVALID_ARGUMENT naming the field, e.g. "sources[2].path: '../x.h' must not contain '..'".
absl::Status ValidateSourcePaths(const v1::Solution& solution);

// Validates, then writes every source to `dir`/<path>, creating folders as needed.
absl::Status WriteSources(const v1::Solution& solution, const std::string& dir);

}  // namespace kiln

#endif  // KILN_HARNESS_COMPILE_SOURCE_TREE_H_
