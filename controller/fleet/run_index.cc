#include "controller/fleet/run_index.h"

#include <sqlite3.h>

#include <chrono>

#include "sqlite/sqlite_connection.h"
#include "sqlite/status_macros.h"

namespace kiln::controller {

using archive::Connection;
using archive::Statement;
using archive::Transaction;

RunIndex::RunIndex(std::unique_ptr<Connection> conn) : conn_(std::move(conn)) {}
RunIndex::~RunIndex() = default;

absl::StatusOr<std::unique_ptr<RunIndex>> RunIndex::Open(const std::string& data_dir) {
  ARCHIVE_ASSIGN_OR_RETURN(std::unique_ptr<Connection> conn,
                           Connection::Open(data_dir + "/controller.db", SQLITE_OPEN_READWRITE));
  return std::unique_ptr<RunIndex>(new RunIndex(std::move(conn)));
}

absl::Status RunIndex::Record(const std::string& run_id, const std::string& harness) {
  std::lock_guard<std::mutex> lock(mu_);
  ARCHIVE_ASSIGN_OR_RETURN(
      Statement s,
      conn_->Prepare("INSERT INTO fleet_runs (run_id, harness, recorded_unix_ms) VALUES (?1,?2,?3) "
                     "ON CONFLICT(run_id) DO UPDATE SET harness=excluded.harness, "
                     "recorded_unix_ms=excluded.recorded_unix_ms"));
  s.BindText(1, run_id);
  s.BindText(2, harness);
  s.BindInt(3, std::chrono::duration_cast<std::chrono::milliseconds>(
                   std::chrono::system_clock::now().time_since_epoch())
                   .count());
  ARCHIVE_ASSIGN_OR_RETURN(std::unique_ptr<Transaction> txn,
                           Transaction::Begin(*conn_, Transaction::Kind::kWrite));
  ARCHIVE_RETURN_IF_ERROR(s.Run());
  return txn->Commit();
}

absl::StatusOr<std::optional<std::string>> RunIndex::HarnessOf(const std::string& run_id) {
  std::lock_guard<std::mutex> lock(mu_);
  ARCHIVE_ASSIGN_OR_RETURN(Statement s,
                           conn_->Prepare("SELECT harness FROM fleet_runs WHERE run_id=?1"));
  s.BindText(1, run_id);
  ARCHIVE_ASSIGN_OR_RETURN(bool row, s.Step());
  if (!row) return std::optional<std::string>();
  return std::optional<std::string>(s.ColumnText(0));
}

}  // namespace kiln::controller
