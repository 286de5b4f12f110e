// `kiln defs import --format kernelbench DIR [--level N]...`: KernelBench problem files
// (DIR/levelN/ID_NAME.py) as kiln definitions, read into the same DatasetScan a flashinfer-bench
// folder gives, so that registration and the report are the same code.
//
// The problem files are Python: kiln_kernelbench_import.py (share/kiln/python, beside kiln's
// Python runner) reads them with the given interpreter and torch, and prints one JSON object per
// problem: the definition and its one workload, or why the problem cannot be converted. Each is
// then parsed and validated here exactly as a definition file and a workload line are; a problem
// that does not convert or validate is a failed definition naming the file and the reason.
#ifndef KILN_CLIENT_IMPORT_KERNELBENCH_IMPORT_H_
#define KILN_CLIENT_IMPORT_KERNELBENCH_IMPORT_H_

#include <set>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "client/import/dataset_import.h"

namespace kiln::cli {

struct KernelBenchScanOptions {
  std::string dir;
  std::vector<int> levels;  // empty: every level folder
  std::string python = "python3";
  std::string script;        // empty: share/kiln/python/ beside the kiln binary
  std::set<std::string> only;  // definition names; empty: all
};

// INVALID_ARGUMENT for a folder without level folders or a name in `only` no problem has;
// FAILED_PRECONDITION when the interpreter cannot run the script (no torch: its reason).
absl::StatusOr<DatasetScan> ScanKernelBench(const KernelBenchScanOptions& options);

// kernelbench_l{level}_{id}_{name}: the definition name of a problem file's record.
std::string KernelBenchDefinitionName(int level, int problem_id, const std::string& name);

}  // namespace kiln::cli

#endif  // KILN_CLIENT_IMPORT_KERNELBENCH_IMPORT_H_
