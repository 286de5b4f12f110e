// Reading a flashinfer-bench dataset folder for `kiln defs import`, before anything is sent:
//
//   DIR/definitions/**/*.json   Definition documents (one per file)
//   DIR/workloads/**/*.jsonl    one workload trace per line, matched to its definition by the
//                               line's "definition" field (not by the folder it sits in)
//   DIR/solutions/**/*.json     Solution documents
//   DIR/blob/**                 safetensors files that workloads name by a path relative to DIR
//
// This is flashinfer-bench's TraceSet.from_path layout; like its load_safetensors, a relative
// safetensors path resolves against DIR and an absolute one is used as it is. Files are read in
// sorted order so reports are reproducible.
//
// A workload whose blob is not in the folder is LEFT OUT (reported with its path, never
// registered: it cannot be evaluated). A blob whose tensor has the wrong dtype or shape, a
// workload or definition that does not parse or validate, is an ERROR of its definition, which
// is then not registered at all. Errors name the file and, for JSONL, the line.
#ifndef KILN_CLIENT_IMPORT_DATASET_IMPORT_H_
#define KILN_CLIENT_IMPORT_DATASET_IMPORT_H_

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "kiln/v1/types.pb.h"

namespace kiln::cli {

// A workload that is not registered, and why.
struct LeftOutWorkload {
  std::string uuid;
  std::string where;   // "workloads/gqa/x.jsonl:12"
  std::string path;    // the safetensors path as the workload names it
  std::string reason;  // "missing blob" | "absolute blob path"
};

// A blob to send to the harness: the workload's path, and the file behind it.
struct DatasetBlob {
  std::string path;        // as the workload names it ("./blob/workloads/...")
  std::string local_path;  // DIR/path
};

struct DefinitionImport {
  std::string name;
  std::string file;  // relative to DIR
  v1::Definition definition;
  std::vector<v1::Workload> workloads;  // importable, in file and line order
  int workloads_in_files = 0;           // JSONL lines naming this definition
  std::vector<LeftOutWorkload> left_out;
  std::vector<DatasetBlob> blobs;   // distinct blobs of the importable workloads
  std::set<std::string> blob_local_paths;  // local_path of every entry of `blobs`
  std::vector<std::string> errors;  // any error: nothing is registered for this definition
};

struct SolutionImport {
  std::string file;  // relative to DIR
  std::string name;
  std::string definition;
  std::string language;
  std::string author;
  // "valid"; "unsupported" (a flashinfer-bench language kiln does not run); "invalid".
  std::string status;
  std::string error;
  v1::Solution solution;  // as read (when it parsed)
};

struct DatasetScan {
  std::string dir;
  std::vector<DefinitionImport> definitions;  // sorted by file
  std::vector<SolutionImport> solutions;      // sorted by file
  // Errors no definition can be blamed for: unreadable files, JSONL lines without a
  // "definition" or naming one the folder does not have, duplicate names.
  std::vector<std::string> errors;
};

// Reads and checks everything under `dir`. `only`, when not empty, restricts the scan to these
// definitions (and the workloads and solutions naming them). A folder without definitions/, or
// a name in `only` that no definition file has, is INVALID_ARGUMENT; every other problem is
// recorded in the result.
absl::StatusOr<DatasetScan> ScanDataset(const std::string& dir, const std::set<std::string>& only);

}  // namespace kiln::cli

#endif  // KILN_CLIENT_IMPORT_DATASET_IMPORT_H_
