// Schema migrations: numbered SQL files (NNNN_name.sql) applied in order, each in its own
// transaction together with `PRAGMA user_version = NNNN`, so a database is always at exactly
// one known version even after a crash mid-migration. Shared by the harness's archive and the
// controller's (each embeds its own migrations/<service>/*.sql).
#ifndef KILN_SQLITE_MIGRATIONS_H_
#define KILN_SQLITE_MIGRATIONS_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "harness/common/embedded_file.h"
#include "sqlite/sqlite_connection.h"

namespace kiln::archive {

struct Migration {
  int version = 0;   // the file name's number
  std::string name;  // "0001_init.sql"
  std::string sql;
};

// Parses embedded files (as cmake/embed.cmake lays them out) into migrations ordered by version.
absl::StatusOr<std::vector<Migration>> ParseMigrations(const EmbeddedFile* files, int count);

// Brings `conn` up to the newest of `migrations` and returns the resulting schema version.
// FAILED_PRECONDITION when the database is newer than the newest migration; a failing
// migration is rolled back and named with SQLite's message.
absl::StatusOr<int> ApplyMigrations(Connection& conn, const std::vector<Migration>& migrations);

}  // namespace kiln::archive

#endif  // KILN_SQLITE_MIGRATIONS_H_
