// Reading the files a user hands the CLI: definition JSON, workload JSONL, and solutions given as
// a JSON file or a folder. Errors start with the file's path and keep the parser's field path,
// e.g. "defs/x.json: definition.inputs.a.dtype: unknown dtype 'float13'".
#ifndef KILN_CLIENT_INPUTS_H_
#define KILN_CLIENT_INPUTS_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "kiln/v1/types.pb.h"

namespace kiln::cli {

// True when `path` names an existing regular file (following symlinks).
bool IsFile(const std::string& path);
// True when `path` names an existing folder.
bool IsDirectory(const std::string& path);

absl::StatusOr<v1::Definition> LoadDefinitionFile(const std::string& path);

// `definition_name`, when non-empty, must match each trace line's "definition".
absl::StatusOr<std::vector<v1::Workload>> LoadWorkloadsFile(const std::string& path,
                                                            const std::string& definition_name);

// A solution JSON file, or a folder holding solution.json. When the folder's solution.json has
// no sources, every other regular file below the folder becomes a source, named by its path
// relative to the folder (sorted, so the solution hash does not depend on directory order).
// A file ending in .py is a KernelBench-style solution: one file defining class ModelNew. It
// becomes a Solution of language "triton" when it imports triton, else "python", entry point
// FILE.py::ModelNew, value-returning, named after the file.
absl::StatusOr<v1::Solution> LoadSolution(const std::string& path);

}  // namespace kiln::cli

#endif  // KILN_CLIENT_INPUTS_H_
