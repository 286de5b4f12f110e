// Thin RAII layer over SQLite's C API for the archive: a connection with a cache of prepared
// statements, a statement handle that resets itself, and SQLite result codes mapped onto
// absl::Status.
//
//   ASSIGN_OR_RETURN(Statement s, conn.Prepare("SELECT value FROM settings WHERE key = ?1"));
//   s.BindText(1, key);
//   absl::StatusOr<bool> row = s.Step();
//
// A Connection is not thread-safe; its owner serialises use (the archive's writer mutex or a
// reader lease).
#ifndef KILN_SQLITE_SQLITE_CONNECTION_H_
#define KILN_SQLITE_SQLITE_CONNECTION_H_

#include <sqlite3.h>

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace kiln::archive {

// SQLite result `code` as a Status whose message is "`what`: <SQLite's message>". SQLITE_BUSY
// and SQLITE_LOCKED (the busy timeout ran out) are UNAVAILABLE, a full disk is
// RESOURCE_EXHAUSTED, corruption is DATA_LOSS, constraint violations are FAILED_PRECONDITION,
// anything else INTERNAL.
absl::Status SqliteStatus(int code, absl::string_view message, absl::string_view what);

class Connection;

// A prepared statement borrowed from a Connection's cache (or owned, when the cached one is
// already in use). Reset and unbound on destruction so the next user starts clean.
class Statement {
 public:
  Statement(Statement&& other) noexcept;
  Statement& operator=(Statement&&) = delete;
  Statement(const Statement&) = delete;
  ~Statement();

  // Parameters are 1-based, as in SQLite.
  void BindInt(int index, int64_t value);
  void BindDouble(int index, double value);
  void BindText(int index, std::string_view value);
  void BindBlob(int index, std::string_view value);
  void BindNull(int index);

  // Advances: true when a row is available, false when done.
  [[nodiscard]] absl::StatusOr<bool> Step();
  // Steps to completion, for statements that return no rows.
  [[nodiscard]] absl::Status Run();
  // Rewinds for another execution, keeping the bindings.
  [[nodiscard]] absl::Status Reset();

  // Columns are 0-based, as in SQLite. Valid until the next Step.
  int64_t ColumnInt(int col) const;
  double ColumnDouble(int col) const;
  std::string ColumnText(int col) const;
  std::string_view ColumnBlob(int col) const;
  bool ColumnIsNull(int col) const;

 private:
  friend class Connection;
  Statement(Connection* conn, sqlite3_stmt* stmt, bool* in_use);

  Connection* conn_;
  sqlite3_stmt* stmt_;
  bool* in_use_;  // the cache entry's flag; nullptr when this handle owns `stmt_`
};

class Connection {
 public:
  // Opens `path` with `flags` (SQLITE_OPEN_*; NOMUTEX is added) and applies the archive's
  // connection settings: WAL, synchronous=NORMAL, busy_timeout=5000 ms, foreign keys on.
  static absl::StatusOr<std::unique_ptr<Connection>> Open(const std::string& path, int flags);
  ~Connection();
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  // A statement for `sql`, prepared once per connection and reused.
  [[nodiscard]] absl::StatusOr<Statement> Prepare(const std::string& sql);
  // Runs one or more statements that return no rows.
  [[nodiscard]] absl::Status Exec(const std::string& sql);
  // The single integer a query such as "PRAGMA user_version" returns.
  [[nodiscard]] absl::StatusOr<int64_t> QueryInt(const std::string& sql);

  int64_t Changes() const;
  sqlite3* handle() const { return db_; }
  // The Status for the connection's last error, as SqliteStatus does.
  absl::Status LastError(int code, absl::string_view what) const;

 private:
  struct CachedStatement {
    sqlite3_stmt* stmt = nullptr;
    bool in_use = false;
  };
  explicit Connection(sqlite3* db) : db_(db) {}

  sqlite3* db_;
  std::unordered_map<std::string, CachedStatement> cache_;
};

// BEGIN IMMEDIATE (writers) or BEGIN (readers: one consistent snapshot) on construction,
// ROLLBACK on destruction unless committed.
class Transaction {
 public:
  enum class Kind { kRead, kWrite };
  [[nodiscard]] static absl::StatusOr<std::unique_ptr<Transaction>> Begin(Connection& conn,
                                                                          Kind kind);
  ~Transaction();
  [[nodiscard]] absl::Status Commit();

 private:
  explicit Transaction(Connection& conn) : conn_(conn) {}
  Connection& conn_;
  bool open_ = true;
};

}  // namespace kiln::archive

#endif  // KILN_SQLITE_SQLITE_CONNECTION_H_
