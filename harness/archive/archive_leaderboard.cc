// Archive: reads that serve several principals on one node (leaderboards, artifact ownership).
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "harness/archive/archive.h"
#include "harness/archive/archive_impl.h"
#include "harness/archive/status_macros.h"

namespace kiln {

namespace {

using archive::Connection;
using archive::Statement;

// ?1 definition, ?2 mode, ?3 PASSED. Runs with no timed workload (mean 0) are not ranked.
constexpr char kLeaderboardSql[] =
    "SELECT principal, run_id, solution_name, mean_latency_ms, mean_speedup, created_ms, n "
    "FROM (SELECT principal, run_id, solution_name, mean_latency_ms, mean_speedup, created_ms, "
    "count(*) OVER (PARTITION BY principal) AS n, row_number() OVER (PARTITION BY principal "
    "ORDER BY mean_latency_ms, created_ms, run_id) AS place FROM runs WHERE definition = ?1 "
    "AND mode = ?2 AND status = ?3 AND registered_workloads = 1 AND mean_latency_ms > 0) "
    "WHERE place = 1 ORDER BY mean_latency_ms, created_ms, run_id";

}  // namespace

absl::StatusOr<std::vector<v1::LeaderboardEntry>> Archive::Leaderboard(
    const std::string& definition, const std::string& mode) {
  std::vector<v1::LeaderboardEntry> entries;
  ARCHIVE_RETURN_IF_ERROR(impl_->Read(
      absl::StrCat("ranking runs of '", definition, "'"), [&](Connection& conn) -> absl::Status {
        ARCHIVE_ASSIGN_OR_RETURN(Statement s, conn.Prepare(kLeaderboardSql));
        s.BindText(1, definition);
        s.BindText(2, mode);
        s.BindInt(3, v1::PASSED);
        for (;;) {
          ARCHIVE_ASSIGN_OR_RETURN(bool row, s.Step());
          if (!row) return absl::OkStatus();
          v1::LeaderboardEntry& e = entries.emplace_back();
          e.set_principal(s.ColumnText(0));
          e.set_run_id(s.ColumnText(1));
          e.set_solution_name(s.ColumnText(2));
          e.set_mean_latency_ms(s.ColumnDouble(3));
          e.set_mean_speedup(s.ColumnDouble(4));
          e.set_created_unix_ms(s.ColumnInt(5));
          e.set_passed_runs(static_cast<int32_t>(s.ColumnInt(6)));
        }
      }));
  return entries;
}

absl::StatusOr<bool> Archive::ArtifactBelongsTo(const std::string& sha256,
                                                const std::string& principal) {
  bool found = false;
  ARCHIVE_RETURN_IF_ERROR(impl_->Read(
      absl::StrCat("reading owners of artifact ", sha256), [&](Connection& conn) -> absl::Status {
        ARCHIVE_ASSIGN_OR_RETURN(Statement s,
                                 conn.Prepare("SELECT 1 FROM artifacts AS a JOIN runs AS r ON "
                                              "r.run_id = a.run_id WHERE a.sha256 = ?1 AND "
                                              "r.principal = ?2 LIMIT 1"));
        s.BindText(1, sha256);
        s.BindText(2, principal);
        ARCHIVE_ASSIGN_OR_RETURN(found, s.Step());
        return absl::OkStatus();
      }));
  return found;
}

}  // namespace kiln
