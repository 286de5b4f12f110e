// Archive: opening, the writer/reader discipline, artifacts and settings. Runs live in
// archive_runs.cc (writes) and archive_run_reads.cc (reads); definitions in
// archive_definitions.cc.
#include "harness/archive/archive.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "harness/archive/archive_impl.h"
#include "harness/archive/artifact_rows.h"
#include "harness/archive/migrations.h"
#include "harness/archive/run_rows.h"
#include "harness/common/files.h"
#include "sqlite/status_macros.h"

namespace kiln {

namespace {

using archive::Connection;
using archive::Statement;
using archive::Transaction;

// Enough for the RPC handlers that read concurrently on a node; more would only add memory.
constexpr int kMaxReaders = 4;

// Errors that already name their subject ("run 'x' not found") pass unchanged; the rest
// (SQLite's) gain what was being done.
absl::Status Annotate(const absl::Status& status, absl::string_view what) {
  if (status.ok() || absl::IsNotFound(status) || absl::IsInvalidArgument(status) ||
      absl::IsAlreadyExists(status)) {
    return status;
  }
  return absl::Status(status.code(), absl::StrCat(what, ": ", status.message()));
}

absl::Status RunInTransaction(Connection& conn, Transaction::Kind kind,
                              absl::FunctionRef<absl::Status(Connection&)> body) {
  ARCHIVE_ASSIGN_OR_RETURN(std::unique_ptr<Transaction> txn, Transaction::Begin(conn, kind));
  ARCHIVE_RETURN_IF_ERROR(body(conn));
  return txn->Commit();
}

}  // namespace

namespace archive {
int64_t NowUnixMs() { return absl::ToUnixMillis(absl::Now()); }
}  // namespace archive

Archive::Impl::Impl(std::string path, std::unique_ptr<Connection> writer_conn, int version)
    : db_path(std::move(path)),
      schema_version(version),
      writer(std::move(writer_conn)),
      readers(db_path, kMaxReaders) {}

absl::Status Archive::Impl::Write(absl::string_view what,
                                  absl::FunctionRef<absl::Status(Connection&)> body) {
  absl::MutexLock lock(&write_mu);
  return Annotate(RunInTransaction(*writer, Transaction::Kind::kWrite, body), what);
}

absl::Status Archive::Impl::Read(absl::string_view what,
                                 absl::FunctionRef<absl::Status(Connection&)> body) {
  absl::StatusOr<archive::ReaderPool::Lease> lease = readers.Acquire();
  if (!lease.ok()) return Annotate(lease.status(), what);
  return Annotate(RunInTransaction(**lease, Transaction::Kind::kRead, body), what);
}

absl::StatusOr<std::unique_ptr<Archive>> Archive::Open(const std::string& dir) {
  const std::string path = absl::StrCat(dir, "/kiln.db");
  const std::string what = absl::StrCat("opening the archive ", path);
  ARCHIVE_RETURN_IF_ERROR(Annotate(MakeDirs(dir), what));
  absl::StatusOr<std::vector<archive::Migration>> migrations = archive::HarnessMigrations();
  if (!migrations.ok()) return Annotate(migrations.status(), what);
  absl::StatusOr<std::unique_ptr<Connection>> writer =
      Connection::Open(path, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
  if (!writer.ok()) return Annotate(writer.status(), what);
  absl::StatusOr<int> version = archive::ApplyMigrations(**writer, *migrations);
  if (!version.ok()) {
    // The version message stands on its own; it is what an operator acts on.
    if (absl::IsFailedPrecondition(version.status())) return version.status();
    return Annotate(version.status(), what);
  }
  auto impl = std::make_unique<Impl>(path, std::move(*writer), *version);
  return std::unique_ptr<Archive>(new Archive(std::move(impl)));
}

Archive::Archive(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

Archive::~Archive() = default;

int Archive::SchemaVersion() const { return impl_->schema_version; }

absl::StatusOr<std::string> Archive::PutArtifact(const std::string& run_id, const std::string& kind,
                                                 const std::string& name,
                                                 const std::string& content) {
  if (kind.empty()) return absl::InvalidArgumentError("artifact kind is empty");
  if (name.empty()) return absl::InvalidArgumentError("artifact name is empty");
  std::string sha;
  ARCHIVE_RETURN_IF_ERROR(impl_->Write(
      absl::StrCat("storing artifact ", kind, "/", name, " of run '", run_id, "'"),
      [&](Connection& conn) -> absl::Status {
        ARCHIVE_RETURN_IF_ERROR(archive::LoadRunProgress(conn, run_id).status());
        ARCHIVE_ASSIGN_OR_RETURN(sha, archive::StoreArtifact(conn, run_id, kind, name, content));
        return absl::OkStatus();
      }));
  return sha;
}

absl::StatusOr<std::string> Archive::GetArtifact(const std::string& sha256) {
  std::string content;
  ARCHIVE_RETURN_IF_ERROR(
      impl_->Read(absl::StrCat("reading artifact ", sha256), [&](Connection& conn) -> absl::Status {
        ARCHIVE_ASSIGN_OR_RETURN(content, archive::LoadBlob(conn, sha256));
        return absl::OkStatus();
      }));
  return content;
}

absl::StatusOr<std::optional<std::string>> Archive::GetSetting(const std::string& key) {
  std::optional<std::string> value;
  ARCHIVE_RETURN_IF_ERROR(impl_->Read(
      absl::StrCat("reading setting '", key, "'"), [&](Connection& conn) -> absl::Status {
        ARCHIVE_ASSIGN_OR_RETURN(Statement select,
                                 conn.Prepare("SELECT value FROM settings WHERE key = ?1"));
        select.BindText(1, key);
        ARCHIVE_ASSIGN_OR_RETURN(bool found, select.Step());
        if (found) value = std::string(select.ColumnBlob(0));
        return absl::OkStatus();
      }));
  return value;
}

absl::Status Archive::PutSetting(const std::string& key, const std::string& value) {
  if (key.empty()) return absl::InvalidArgumentError("setting key is empty");
  return impl_->Write(absl::StrCat("storing setting '", key, "'"),
                      [&](Connection& conn) -> absl::Status {
                        ARCHIVE_ASSIGN_OR_RETURN(
                            Statement upsert,
                            conn.Prepare("INSERT INTO settings (key, value) VALUES (?1, ?2) "
                                         "ON CONFLICT (key) DO UPDATE SET value = excluded.value"));
                        upsert.BindText(1, key);
                        upsert.BindBlob(2, value);
                        return upsert.Run();
                      });
}

}  // namespace kiln
