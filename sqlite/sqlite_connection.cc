#include "sqlite/sqlite_connection.h"

#include <utility>

#include "absl/strings/str_cat.h"

namespace kiln::archive {

namespace {

// Settings every archive connection runs with. journal_mode is asked for on read-only
// connections too: on a database already in WAL mode it is a no-op that reports "wal".
constexpr const char* kConnectionPragmas[] = {
    "PRAGMA busy_timeout = 5000",
    "PRAGMA journal_mode = WAL",
    "PRAGMA synchronous = NORMAL",
    "PRAGMA foreign_keys = ON",
};

}  // namespace

absl::Status SqliteStatus(int code, absl::string_view message, absl::string_view what) {
  std::string text = absl::StrCat(what, ": ", message);
  switch (code & 0xff) {
    case SQLITE_OK:
    case SQLITE_ROW:
    case SQLITE_DONE:
      return absl::OkStatus();
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
      return absl::UnavailableError(
          absl::StrCat(text, " (the archive stayed locked for longer than the 5 s busy timeout)"));
    case SQLITE_FULL:
      return absl::ResourceExhaustedError(text);
    case SQLITE_CORRUPT:
    case SQLITE_NOTADB:
      return absl::DataLossError(text);
    case SQLITE_CONSTRAINT:
      return absl::FailedPreconditionError(text);
    default:
      return absl::InternalError(text);
  }
}

// ---- Statement --------------------------------------------------------------------------

Statement::Statement(Connection* conn, sqlite3_stmt* stmt, bool* in_use)
    : conn_(conn), stmt_(stmt), in_use_(in_use) {}

Statement::Statement(Statement&& other) noexcept
    : conn_(other.conn_), stmt_(std::exchange(other.stmt_, nullptr)), in_use_(other.in_use_) {}

Statement::~Statement() {
  if (stmt_ == nullptr) return;
  if (in_use_ == nullptr) {
    sqlite3_finalize(stmt_);
    return;
  }
  sqlite3_reset(stmt_);
  sqlite3_clear_bindings(stmt_);
  *in_use_ = false;
}

void Statement::BindInt(int index, int64_t value) { sqlite3_bind_int64(stmt_, index, value); }

void Statement::BindDouble(int index, double value) { sqlite3_bind_double(stmt_, index, value); }

void Statement::BindText(int index, std::string_view value) {
  sqlite3_bind_text64(stmt_, index, value.data(), value.size(), SQLITE_TRANSIENT, SQLITE_UTF8);
}

void Statement::BindBlob(int index, std::string_view value) {
  // A zero-length blob with a null pointer would bind NULL; give SQLite a valid pointer.
  const char* data = value.empty() ? "" : value.data();
  sqlite3_bind_blob64(stmt_, index, data, value.size(), SQLITE_TRANSIENT);
}

void Statement::BindNull(int index) { sqlite3_bind_null(stmt_, index); }

absl::StatusOr<bool> Statement::Step() {
  int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  return conn_->LastError(rc, sqlite3_sql(stmt_));
}

absl::Status Statement::Run() {
  for (;;) {
    absl::StatusOr<bool> row = Step();
    if (!row.ok()) return row.status();
    if (!*row) return absl::OkStatus();
  }
}

absl::Status Statement::Reset() {
  int rc = sqlite3_reset(stmt_);
  if (rc == SQLITE_OK) return absl::OkStatus();
  return conn_->LastError(rc, sqlite3_sql(stmt_));
}

int64_t Statement::ColumnInt(int col) const { return sqlite3_column_int64(stmt_, col); }

double Statement::ColumnDouble(int col) const { return sqlite3_column_double(stmt_, col); }

std::string Statement::ColumnText(int col) const {
  const unsigned char* text = sqlite3_column_text(stmt_, col);
  if (text == nullptr) return std::string();
  return std::string(reinterpret_cast<const char*>(text),
                     static_cast<size_t>(sqlite3_column_bytes(stmt_, col)));
}

std::string_view Statement::ColumnBlob(int col) const {
  const void* data = sqlite3_column_blob(stmt_, col);
  if (data == nullptr) return std::string_view();
  return std::string_view(static_cast<const char*>(data),
                          static_cast<size_t>(sqlite3_column_bytes(stmt_, col)));
}

bool Statement::ColumnIsNull(int col) const {
  return sqlite3_column_type(stmt_, col) == SQLITE_NULL;
}

// ---- Connection -------------------------------------------------------------------------

absl::StatusOr<std::unique_ptr<Connection>> Connection::Open(const std::string& path, int flags) {
  sqlite3* db = nullptr;
  int rc = sqlite3_open_v2(path.c_str(), &db, flags | SQLITE_OPEN_NOMUTEX, nullptr);
  if (rc != SQLITE_OK) {
    std::string message = db != nullptr ? sqlite3_errmsg(db) : sqlite3_errstr(rc);
    sqlite3_close_v2(db);
    return SqliteStatus(rc, message, absl::StrCat("opening ", path));
  }
  sqlite3_extended_result_codes(db, 1);
  std::unique_ptr<Connection> conn(new Connection(db));
  for (const char* pragma : kConnectionPragmas) {
    absl::Status status = conn->Exec(pragma);
    if (!status.ok()) return status;
  }
  return conn;
}

Connection::~Connection() {
  for (auto& [sql, cached] : cache_) sqlite3_finalize(cached.stmt);
  sqlite3_close_v2(db_);
}

absl::StatusOr<Statement> Connection::Prepare(const std::string& sql) {
  auto it = cache_.find(sql);
  if (it != cache_.end() && !it->second.in_use) {
    it->second.in_use = true;
    return Statement(this, it->second.stmt, &it->second.in_use);
  }
  sqlite3_stmt* stmt = nullptr;
  // A statement already in use (a nested query of the same text) gets a private copy.
  const bool cache = it == cache_.end();
  int rc = sqlite3_prepare_v3(db_, sql.data(), static_cast<int>(sql.size()),
                              cache ? SQLITE_PREPARE_PERSISTENT : 0, &stmt, nullptr);
  if (rc != SQLITE_OK) return LastError(rc, absl::StrCat("preparing ", sql));
  if (!cache) return Statement(this, stmt, nullptr);
  CachedStatement& entry = cache_[sql];
  entry.stmt = stmt;
  entry.in_use = true;
  return Statement(this, stmt, &entry.in_use);
}

absl::Status Connection::Exec(const std::string& sql) {
  char* error = nullptr;
  int rc = sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &error);
  if (rc == SQLITE_OK) return absl::OkStatus();
  std::string message = error != nullptr ? error : sqlite3_errstr(rc);
  sqlite3_free(error);
  return SqliteStatus(rc, message, sql);
}

absl::StatusOr<int64_t> Connection::QueryInt(const std::string& sql) {
  absl::StatusOr<Statement> stmt = Prepare(sql);
  if (!stmt.ok()) return stmt.status();
  absl::StatusOr<bool> row = stmt->Step();
  if (!row.ok()) return row.status();
  if (!*row) return absl::InternalError(absl::StrCat(sql, ": returned no row"));
  return stmt->ColumnInt(0);
}

int64_t Connection::Changes() const { return sqlite3_changes64(db_); }

absl::Status Connection::LastError(int code, absl::string_view what) const {
  return SqliteStatus(code, sqlite3_errmsg(db_), what);
}

// ---- Transaction ------------------------------------------------------------------------

absl::StatusOr<std::unique_ptr<Transaction>> Transaction::Begin(Connection& conn, Kind kind) {
  absl::Status status = conn.Exec(kind == Kind::kWrite ? "BEGIN IMMEDIATE" : "BEGIN");
  if (!status.ok()) return status;
  return std::unique_ptr<Transaction>(new Transaction(conn));
}

Transaction::~Transaction() {
  // The rollback of a failed transaction; there is nothing useful to do if it fails too.
  if (open_) (void)conn_.Exec("ROLLBACK");
}

absl::Status Transaction::Commit() {
  absl::Status status = conn_.Exec("COMMIT");
  if (status.ok()) open_ = false;
  return status;
}

}  // namespace kiln::archive
