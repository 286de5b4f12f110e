// Runs of several principals in one archive: listing by principal, artifact ownership, the
// leaderboard, and the upgrade of an archive written before principals were ranked.
#include <catch2/catch.hpp>
#include <string>

#include "harness/archive/archive.h"
#include "harness/archive/migrations.h"
#include "harness/common/sha256.h"
#include "sqlite/sqlite_connection.h"
#include "tests/unit/archive/archive_test_support.h"

namespace kiln {
namespace {

using archive_test::MakeRun;
using archive_test::MakeTrace;
using archive_test::OpenArchive;
using archive_test::QueryInt;
using archive_test::TempDir;

// A finished run of `principal` with one timed trace of `latency_ms` and verdict `status`;
// `confirms`: the run it re-measures (a confirmation run).
void AddFinishedRun(Archive& archive, const std::string& id, const std::string& principal,
                    double latency_ms, bool registered, int64_t created_ms,
                    v1::EvaluationStatus status = v1::PASSED, const std::string& confirms = "") {
  v1::Run run = MakeRun(id, "gemm", created_ms);
  run.set_principal(principal);
  run.set_registered_workloads(registered);
  run.set_confirms(confirms);
  REQUIRE(archive.CreateRun(run).ok());
  REQUIRE(archive.PutTrace(id, 0, MakeTrace("w0", status, latency_ms, 2.0)).ok());
  run.set_status(status);
  run.set_state(v1::RUN_DONE);
  REQUIRE(archive.FinishRun(run).ok());
}

TEST_CASE("the leaderboard keeps each principal's fastest run on the registered workloads") {
  TempDir tmp;
  auto archive = OpenArchive(tmp.path());
  AddFinishedRun(*archive, "r1", "red", 3.0, true, 1000);
  AddFinishedRun(*archive, "r2", "red", 2.0, true, 2000);
  AddFinishedRun(*archive, "b1", "blue", 2.5, true, 1500);
  AddFinishedRun(*archive, "b2", "blue", 0.1, false, 1600);  // own workloads: not ranked
  auto board = archive->Leaderboard("gemm", "official", "best");
  REQUIRE(board.ok());
  REQUIRE(board->size() == 2);
  CHECK((*board)[0].principal() == "red");
  CHECK((*board)[0].run_id() == "r2");
  CHECK((*board)[0].mean_latency_ms() == Approx(2.0));
  CHECK((*board)[0].passed_runs() == 2);
  CHECK((*board)[1].principal() == "blue");
  CHECK((*board)[1].run_id() == "b1");
  CHECK(archive->Leaderboard("gemm", "kernelbench", "best")->empty());
  CHECK(absl::IsInvalidArgument(archive->Leaderboard("gemm", "official", "fastest").status()));
}

TEST_CASE("rule latest ranks each principal's designated run, else its newest, whatever its "
          "verdict; confirmation runs never rank") {
  TempDir tmp;
  auto archive = OpenArchive(tmp.path());
  AddFinishedRun(*archive, "r1", "red", 3.0, true, 1000);
  AddFinishedRun(*archive, "r2", "red", 2.0, true, 2000);
  AddFinishedRun(*archive, "r3", "red", 5.0, true, 3000, v1::INCORRECT_NUMERICAL);
  AddFinishedRun(*archive, "b1", "blue", 2.5, true, 1500);
  AddFinishedRun(*archive, "c1", "ops", 1.0, true, 4000, v1::PASSED, "r2");
  auto entry_of = [](const std::vector<v1::LeaderboardEntry>& board, const std::string& who) {
    for (const v1::LeaderboardEntry& e : board) {
      if (e.principal() == who) return e;
    }
    return v1::LeaderboardEntry();
  };
  auto latest = archive->Leaderboard("gemm", "official", "latest");
  REQUIRE(latest.ok());
  REQUIRE(latest->size() == 2);  // not the confirmation run's principal
  CHECK(entry_of(*latest, "red").run_id() == "r3");
  CHECK(entry_of(*latest, "red").status() == v1::INCORRECT_NUMERICAL);
  CHECK(entry_of(*latest, "red").passed_runs() == 2);
  CHECK_FALSE(entry_of(*latest, "red").designated());
  CHECK(entry_of(*latest, "blue").run_id() == "b1");
  // Today's view, as --best shows it: the fastest PASSED run.
  CHECK(entry_of(*archive->Leaderboard("gemm", "official", "best"), "red").run_id() == "r2");

  // Designating an older run makes it count; designating again replaces it; clearing returns
  // the principal to its latest run.
  CHECK(*archive->SetDesignatedRun("red", "gemm", "official", "r1") == "");
  CHECK(entry_of(*archive->Leaderboard("gemm", "official", "latest"), "red").run_id() == "r1");
  CHECK(entry_of(*archive->Leaderboard("gemm", "official", "latest"), "red").designated());
  CHECK(archive->GetRun("r1", false)->designated());
  CHECK_FALSE(archive->GetRun("r2", false)->designated());
  CHECK(*archive->SetDesignatedRun("red", "gemm", "official", "r2") == "r1");
  CHECK(entry_of(*archive->Leaderboard("gemm", "official", "latest"), "red").run_id() == "r2");
  CHECK(*archive->ClearDesignatedRun("red", "gemm", "official") == "r2");
  CHECK(entry_of(*archive->Leaderboard("gemm", "official", "latest"), "red").run_id() == "r3");
  CHECK(*archive->ClearDesignatedRun("red", "gemm", "official") == "");
  // The confirmation run keeps the run it confirms.
  CHECK(archive->GetRun("c1", false)->confirms() == "r2");
}

TEST_CASE("runs list by principal, and a blob belongs to the principals whose runs hold it") {
  TempDir tmp;
  auto archive = OpenArchive(tmp.path());
  AddFinishedRun(*archive, "r1", "red", 1.0, true, 1000);
  AddFinishedRun(*archive, "b1", "blue", 1.0, true, 2000);
  RunFilter filter;
  filter.principal = "red";
  auto red = archive->ListRuns(filter);
  REQUIRE(red.ok());
  REQUIRE(red->runs_size() == 1);
  CHECK(red->runs(0).run_id() == "r1");
  CHECK(red->runs(0).principal() == "red");

  const std::string red_source = Sha256Hex("extern \"C\" int run() { return 0; }  // r1");
  CHECK(*archive->ArtifactBelongsTo(red_source, "red"));
  CHECK_FALSE(*archive->ArtifactBelongsTo(red_source, "blue"));
  const std::string shared = Sha256Hex("#pragma once\n");  // in both runs
  CHECK(*archive->ArtifactBelongsTo(shared, "blue"));
}

TEST_CASE("an archive of schema 1 upgrades with its runs kept and left unranked") {
  TempDir tmp;
  {
    auto migrations = archive::HarnessMigrations();
    REQUIRE(migrations.ok());
    migrations->resize(1);  // 0001_init.sql only
    auto conn =
        archive::Connection::Open(tmp.db(), SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
    REQUIRE(conn.ok());
    REQUIRE(*archive::ApplyMigrations(**conn, *migrations) == 1);
    archive_test::ExecSql(
        tmp.db(),
        "INSERT INTO runs (run_id, definition, solution_name, solution_hash, author, principal, "
        "state, status, reason, mode, backend, created_ms, mean_latency_ms, solution_json, "
        "updated_ms) VALUES ('old', 'gemm', 's', 'h', 'a', 'local', 5, 1, '', 'official', "
        "'host', 10, 1.5, '{}', 10)");
  }
  auto archive = OpenArchive(tmp.path());
  CHECK(archive->SchemaVersion() >= 2);
  auto run = archive->GetRun("old", false);
  REQUIRE(run.ok());
  CHECK(run->principal() == "local");
  CHECK_FALSE(run->registered_workloads());
  CHECK(archive->Leaderboard("gemm", "official", "latest")->empty());
  CHECK(QueryInt(tmp.db(), "SELECT count(*) FROM runs") == 1);
}

}  // namespace
}  // namespace kiln
