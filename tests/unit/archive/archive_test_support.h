// Shared setup for the archive's unit tests: a private temporary folder, runs and traces with
// recognisable contents, and direct SQLite access for checking what was stored.
#ifndef KILN_TESTS_UNIT_ARCHIVE_ARCHIVE_TEST_SUPPORT_H_
#define KILN_TESTS_UNIT_ARCHIVE_ARCHIVE_TEST_SUPPORT_H_

#include <sqlite3.h>

#include <catch2/catch.hpp>
#include <memory>
#include <string>

#include "harness/archive/archive.h"
#include "harness/common/files.h"

namespace kiln::archive_test {

class TempDir {
 public:
  TempDir() {
    auto dir = MakeTempDir("", "kiln-archive-test");
    REQUIRE(dir.ok());
    path_ = *dir;
  }
  ~TempDir() { (void)RemoveTree(path_); }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }
  std::string db() const { return path_ + "/kiln.db"; }

 private:
  std::string path_;
};

inline std::unique_ptr<Archive> OpenArchive(const std::string& dir) {
  auto archive = Archive::Open(dir);
  INFO(archive.status().ToString());
  REQUIRE(archive.ok());
  return std::move(*archive);
}

inline v1::Run MakeRun(const std::string& run_id, const std::string& definition,
                       int64_t created_ms) {
  v1::Run run;
  run.set_run_id(run_id);
  run.set_definition(definition);
  run.set_solution_hash("hash-" + run_id);
  run.set_principal("team-a");
  run.set_state(v1::RUN_QUEUED);
  run.set_mode("official");
  run.set_backend("host");
  run.set_created_unix_ms(created_ms);
  v1::Solution* solution = run.mutable_solution();
  solution->set_name("sol-" + run_id);
  solution->set_definition(definition);
  solution->set_author("alice");
  solution->mutable_spec()->set_language("cpp");
  solution->mutable_spec()->set_entry_point("main.cc::run");
  v1::SourceFile* main = solution->add_sources();
  main->set_path("main.cc");
  main->set_content("extern \"C\" int run() { return 0; }  // " + run_id);
  v1::SourceFile* common = solution->add_sources();
  common->set_path("include/common.h");
  common->set_content("#pragma once\n");  // identical in every run
  return run;
}

// A trace; timed (with performance) when latency_ms > 0.
inline v1::Trace MakeTrace(const std::string& uuid, v1::EvaluationStatus status, double latency_ms,
                           double speedup) {
  v1::Trace trace;
  trace.set_definition("gemm");
  trace.mutable_workload()->set_uuid(uuid);
  trace.mutable_evaluation()->set_status(status);
  trace.mutable_evaluation()->set_log("log of " + uuid);
  if (latency_ms > 0) {
    trace.mutable_evaluation()->mutable_performance()->set_latency_ms(latency_ms);
    trace.mutable_evaluation()->mutable_performance()->set_speedup_factor(speedup);
  }
  return trace;
}

// Runs one query returning an integer on the database file directly (no Archive).
inline int64_t QueryInt(const std::string& db_path, const std::string& sql) {
  sqlite3* db = nullptr;
  REQUIRE(sqlite3_open_v2(db_path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr) == SQLITE_OK);
  sqlite3_stmt* stmt = nullptr;
  REQUIRE(sqlite3_prepare_v2(db, sql.c_str(), -1, &stmt, nullptr) == SQLITE_OK);
  REQUIRE(sqlite3_step(stmt) == SQLITE_ROW);
  int64_t value = sqlite3_column_int64(stmt, 0);
  sqlite3_finalize(stmt);
  sqlite3_close(db);
  return value;
}

// Runs statements on the database file directly (no Archive).
inline void ExecSql(const std::string& db_path, const std::string& sql) {
  sqlite3* db = nullptr;
  REQUIRE(sqlite3_open(db_path.c_str(), &db) == SQLITE_OK);
  char* error = nullptr;
  int rc = sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &error);
  INFO((error != nullptr ? error : ""));
  sqlite3_free(error);
  sqlite3_close(db);
  REQUIRE(rc == SQLITE_OK);
}

}  // namespace kiln::archive_test

#endif  // KILN_TESTS_UNIT_ARCHIVE_ARCHIVE_TEST_SUPPORT_H_
