#include "controller/fleet/registration_log.h"

#include <sqlite3.h>

#include "controller/campaign_archive.h"
#include "sqlite/sqlite_connection.h"
#include "sqlite/status_macros.h"

namespace kiln::controller {

using archive::Connection;
using archive::Statement;
using archive::Transaction;

RegistrationLog::RegistrationLog(std::unique_ptr<Connection> conn) : conn_(std::move(conn)) {}
RegistrationLog::~RegistrationLog() = default;

absl::StatusOr<std::unique_ptr<RegistrationLog>> RegistrationLog::Open(
    const std::string& data_dir) {
  ARCHIVE_ASSIGN_OR_RETURN(std::unique_ptr<Connection> conn,
                           Connection::Open(data_dir + "/controller.db", SQLITE_OPEN_READWRITE));
  return std::unique_ptr<RegistrationLog>(new RegistrationLog(std::move(conn)));
}

absl::Status RegistrationLog::Put(const Registration& entry) {
  std::lock_guard<std::mutex> lock(mu_);
  ARCHIVE_ASSIGN_OR_RETURN(std::unique_ptr<Transaction> txn,
                           Transaction::Begin(*conn_, Transaction::Kind::kWrite));
  ARCHIVE_ASSIGN_OR_RETURN(
      Statement s,
      conn_->Prepare("INSERT INTO fleet_registrations (kind, key, request, seq, recorded_unix_ms) "
                     "VALUES (?1, ?2, ?3, (SELECT COALESCE(MAX(seq), 0) + 1 FROM "
                     "fleet_registrations), ?4) ON CONFLICT(kind, key) DO UPDATE SET "
                     "request=excluded.request, seq=excluded.seq, "
                     "recorded_unix_ms=excluded.recorded_unix_ms"));
  s.BindText(1, entry.kind);
  s.BindText(2, entry.key);
  s.BindBlob(3, entry.request);
  s.BindInt(4, NowUnixMs());
  ARCHIVE_RETURN_IF_ERROR(s.Run());
  return txn->Commit();
}

absl::StatusOr<std::vector<Registration>> RegistrationLog::All() {
  std::lock_guard<std::mutex> lock(mu_);
  ARCHIVE_ASSIGN_OR_RETURN(
      Statement s,
      conn_->Prepare("SELECT kind, key, request FROM fleet_registrations ORDER BY seq"));
  std::vector<Registration> out;
  for (;;) {
    ARCHIVE_ASSIGN_OR_RETURN(bool row, s.Step());
    if (!row) break;
    out.push_back({std::string(s.ColumnText(0)), std::string(s.ColumnText(1)),
                   std::string(s.ColumnBlob(2))});
  }
  return out;
}

}  // namespace kiln::controller
