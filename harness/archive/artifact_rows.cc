#include "harness/archive/artifact_rows.h"

#include "absl/strings/str_cat.h"
#include "harness/common/sha256.h"
#include "sqlite/status_macros.h"

namespace kiln::archive {

absl::StatusOr<std::string> StoreBlob(Connection& conn, std::string_view content) {
  std::string sha = Sha256Hex(content);
  ARCHIVE_ASSIGN_OR_RETURN(
      Statement insert,
      conn.Prepare("INSERT OR IGNORE INTO blobs (sha256, size, content) VALUES (?1, ?2, ?3)"));
  insert.BindText(1, sha);
  insert.BindInt(2, static_cast<int64_t>(content.size()));
  insert.BindBlob(3, content);
  ARCHIVE_RETURN_IF_ERROR(insert.Run());
  return sha;
}

absl::StatusOr<std::string> StoreArtifact(Connection& conn, const std::string& run_id,
                                          const std::string& kind, const std::string& name,
                                          std::string_view content) {
  ARCHIVE_ASSIGN_OR_RETURN(std::string sha, StoreBlob(conn, content));
  ARCHIVE_ASSIGN_OR_RETURN(
      Statement insert,
      conn.Prepare("INSERT OR REPLACE INTO artifacts (run_id, kind, name, sha256) "
                   "VALUES (?1, ?2, ?3, ?4)"));
  insert.BindText(1, run_id);
  insert.BindText(2, kind);
  insert.BindText(3, name);
  insert.BindText(4, sha);
  ARCHIVE_RETURN_IF_ERROR(insert.Run());
  return sha;
}

absl::StatusOr<std::string> LoadBlob(Connection& conn, const std::string& sha256) {
  ARCHIVE_ASSIGN_OR_RETURN(Statement select,
                           conn.Prepare("SELECT content FROM blobs WHERE sha256 = ?1"));
  select.BindText(1, sha256);
  ARCHIVE_ASSIGN_OR_RETURN(bool found, select.Step());
  if (!found) return absl::NotFoundError(absl::StrCat("artifact '", sha256, "' not found"));
  return std::string(select.ColumnBlob(0));
}

}  // namespace kiln::archive
