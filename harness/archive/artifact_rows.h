// Content-addressed artifact rows: bytes live once in `blobs` keyed by their SHA-256; each
// run names the blobs it uses in `artifacts` (kind, name).
#ifndef KILN_HARNESS_ARCHIVE_ARTIFACT_ROWS_H_
#define KILN_HARNESS_ARCHIVE_ARTIFACT_ROWS_H_

#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "sqlite/sqlite_connection.h"

namespace kiln::archive {

// Stores `content` unless identical bytes are already stored; returns its sha256 (hex).
absl::StatusOr<std::string> StoreBlob(Connection& conn, std::string_view content);

// Stores `content` and names it (kind, name) for the run, replacing an earlier artifact of
// that kind and name. The run must exist (the caller checks).
absl::StatusOr<std::string> StoreArtifact(Connection& conn, const std::string& run_id,
                                          const std::string& kind, const std::string& name,
                                          std::string_view content);

// The bytes stored under `sha256`; NOT_FOUND names it.
absl::StatusOr<std::string> LoadBlob(Connection& conn, const std::string& sha256);

}  // namespace kiln::archive

#endif  // KILN_HARNESS_ARCHIVE_ARTIFACT_ROWS_H_
