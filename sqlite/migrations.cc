#include "sqlite/migrations.h"

#include <algorithm>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace kiln::archive {

namespace {

// "0003_add_index.sql" -> 3.
absl::StatusOr<int> VersionOf(const std::string& name) {
  size_t digits = 0;
  while (digits < name.size() && absl::ascii_isdigit(static_cast<unsigned char>(name[digits]))) {
    ++digits;
  }
  int version = 0;
  if (digits == 0 || digits >= name.size() || name[digits] != '_' ||
      !absl::SimpleAtoi(name.substr(0, digits), &version) || version <= 0) {
    return absl::InternalError(
        absl::StrCat("migration file '", name, "' is not named NNNN_name.sql"));
  }
  return version;
}

absl::Status Apply(Connection& conn, const Migration& migration) {
  absl::StatusOr<std::unique_ptr<Transaction>> txn =
      Transaction::Begin(conn, Transaction::Kind::kWrite);
  if (!txn.ok()) return txn.status();
  // Another process may have applied it while this one waited for the write lock.
  absl::StatusOr<int64_t> current = conn.QueryInt("PRAGMA user_version");
  if (!current.ok()) return current.status();
  if (*current >= migration.version) return (*txn)->Commit();
  absl::Status status = conn.Exec(migration.sql);
  if (status.ok()) status = conn.Exec(absl::StrCat("PRAGMA user_version = ", migration.version));
  if (status.ok()) status = (*txn)->Commit();
  if (status.ok()) return status;
  // The transaction rolls back as `txn` goes out of scope.
  return absl::Status(status.code(),
                      absl::StrCat("migration ", migration.name, " failed: ", status.message()));
}

}  // namespace

absl::StatusOr<std::vector<Migration>> ParseMigrations(const EmbeddedFile* files, int count) {
  std::vector<Migration> out;
  for (int i = 0; i < count; ++i) {
    Migration m;
    m.name = files[i].name;
    m.sql.assign(files[i].data, files[i].size);
    absl::StatusOr<int> version = VersionOf(m.name);
    if (!version.ok()) return version.status();
    m.version = *version;
    out.push_back(std::move(m));
  }
  std::sort(out.begin(), out.end(),
            [](const Migration& a, const Migration& b) { return a.version < b.version; });
  for (size_t i = 1; i < out.size(); ++i) {
    if (out[i].version == out[i - 1].version) {
      return absl::InternalError(absl::StrCat("migrations ", out[i - 1].name, " and ", out[i].name,
                                              " share version ", out[i].version));
    }
  }
  return out;
}

absl::StatusOr<int> ApplyMigrations(Connection& conn, const std::vector<Migration>& migrations) {
  absl::StatusOr<int64_t> current = conn.QueryInt("PRAGMA user_version");
  if (!current.ok()) return current.status();
  const int newest = migrations.empty() ? 0 : migrations.back().version;
  if (*current > newest) {
    return absl::FailedPreconditionError(
        absl::StrCat("database schema version ", *current,
                     " is newer than this kiln-harness (knows up to ", newest, ")"));
  }
  int version = static_cast<int>(*current);
  for (const Migration& migration : migrations) {
    if (migration.version <= version) continue;
    absl::Status status = Apply(conn, migration);
    if (!status.ok()) return status;
    version = migration.version;
  }
  return version;
}

}  // namespace kiln::archive
