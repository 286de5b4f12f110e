#include "harness/archive/migrations.h"

#include <catch2/catch.hpp>
#include <string>

#include "harness/archive/archive.h"
#include "tests/unit/archive/archive_test_support.h"

namespace kiln {
namespace {

using archive_test::ExecSql;
using archive_test::OpenArchive;
using archive_test::QueryInt;
using archive_test::TempDir;

int NewestKnownVersion() {
  auto migrations = archive::HarnessMigrations();
  REQUIRE(migrations.ok());
  REQUIRE(!migrations->empty());
  return migrations->back().version;
}

TEST_CASE("the embedded migrations start at 0001_init.sql and are ordered") {
  auto migrations = archive::HarnessMigrations();
  REQUIRE(migrations.ok());
  REQUIRE(!migrations->empty());
  CHECK(migrations->front().name == "0001_init.sql");
  CHECK(migrations->front().version == 1);
  for (size_t i = 1; i < migrations->size(); ++i) {
    CHECK((*migrations)[i - 1].version < (*migrations)[i].version);
  }
}

TEST_CASE("a fresh folder is created and gets the whole schema") {
  TempDir tmp;
  const std::string dir = tmp.path() + "/nested/archive";
  auto archive = OpenArchive(dir);
  CHECK(archive->SchemaVersion() == NewestKnownVersion());
  CHECK(QueryInt(dir + "/kiln.db", "PRAGMA user_version") == NewestKnownVersion());
  for (const char* table :
       {"runs", "traces", "blobs", "artifacts", "definitions", "workloads", "settings"}) {
    INFO(table);
    CHECK(QueryInt(dir + "/kiln.db",
                   std::string("SELECT count(*) FROM sqlite_schema WHERE type = 'table' AND "
                               "name = '") +
                       table + "'") == 1);
  }
}

TEST_CASE("the archive database is in WAL mode") {
  TempDir tmp;
  auto archive = OpenArchive(tmp.path());
  // journal_mode=WAL persists in the file, so a fresh connection reports it.
  sqlite3* db = nullptr;
  REQUIRE(sqlite3_open_v2(tmp.db().c_str(), &db, SQLITE_OPEN_READONLY, nullptr) == SQLITE_OK);
  sqlite3_stmt* stmt = nullptr;
  REQUIRE(sqlite3_prepare_v2(db, "PRAGMA journal_mode", -1, &stmt, nullptr) == SQLITE_OK);
  REQUIRE(sqlite3_step(stmt) == SQLITE_ROW);
  CHECK(std::string(reinterpret_cast<const char*>(sqlite3_column_text(stmt, 0))) == "wal");
  sqlite3_finalize(stmt);
  sqlite3_close(db);
}

TEST_CASE("reopening an up-to-date archive applies nothing and keeps the data") {
  TempDir tmp;
  {
    auto archive = OpenArchive(tmp.path());
    REQUIRE(archive->PutSetting("secret", "s3cr3t").ok());
  }
  const int64_t tables_before =
      QueryInt(tmp.db(), "SELECT count(*) FROM sqlite_schema WHERE type = 'table'");
  auto archive = OpenArchive(tmp.path());
  CHECK(archive->SchemaVersion() == NewestKnownVersion());
  CHECK(QueryInt(tmp.db(), "SELECT count(*) FROM sqlite_schema WHERE type = 'table'") ==
        tables_before);
  auto value = archive->GetSetting("secret");
  REQUIRE(value.ok());
  REQUIRE(value->has_value());
  CHECK(**value == "s3cr3t");
}

TEST_CASE("a database newer than this binary is refused") {
  TempDir tmp;
  { auto archive = OpenArchive(tmp.path()); }
  const int newer = NewestKnownVersion() + 1;
  ExecSql(tmp.db(), "PRAGMA user_version = " + std::to_string(newer));
  auto archive = Archive::Open(tmp.path());
  REQUIRE(!archive.ok());
  CHECK(archive.status().code() == absl::StatusCode::kFailedPrecondition);
  CHECK(std::string(archive.status().message()) ==
        "database schema version " + std::to_string(newer) +
            " is newer than this kiln-harness (knows up to " +
            std::to_string(NewestKnownVersion()) + ")");
}

TEST_CASE("a failing migration is rolled back and named with SQLite's message") {
  TempDir tmp;
  const std::string init = "CREATE TABLE a (x INTEGER);";
  const std::string broken = "CREATE TABLE b (x INTEGER); INSERT INTO nowhere VALUES (1);";
  const EmbeddedFile files[] = {{"0002_broken.sql", broken.data(), broken.size()},
                                {"0001_init.sql", init.data(), init.size()}};
  auto migrations = archive::ParseMigrations(files, 2);
  REQUIRE(migrations.ok());
  REQUIRE((*migrations)[0].name == "0001_init.sql");  // sorted by number

  auto conn = archive::Connection::Open(tmp.db(), SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
  REQUIRE(conn.ok());
  auto version = archive::ApplyMigrations(**conn, *migrations);
  REQUIRE(!version.ok());
  const std::string message(version.status().message());
  CHECK_THAT(message, Catch::Contains("0002_broken.sql"));
  CHECK_THAT(message, Catch::Contains("no such table: nowhere"));
  CHECK(QueryInt(tmp.db(), "PRAGMA user_version") == 1);
  CHECK(QueryInt(tmp.db(), "SELECT count(*) FROM sqlite_schema WHERE name = 'a'") == 1);
  CHECK(QueryInt(tmp.db(), "SELECT count(*) FROM sqlite_schema WHERE name = 'b'") == 0);
}

TEST_CASE("migration files must be named NNNN_name.sql with distinct numbers") {
  const std::string sql = "SELECT 1;";
  const EmbeddedFile unnumbered[] = {{"init.sql", sql.data(), sql.size()}};
  CHECK(archive::ParseMigrations(unnumbered, 1).status().code() == absl::StatusCode::kInternal);
  const EmbeddedFile twice[] = {{"0001_a.sql", sql.data(), sql.size()},
                                {"1_b.sql", sql.data(), sql.size()}};
  CHECK(archive::ParseMigrations(twice, 2).status().code() == absl::StatusCode::kInternal);
}

}  // namespace
}  // namespace kiln
