// Archive: reads that serve several principals on one node (leaderboards, artifact ownership).
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "harness/archive/archive.h"
#include "harness/archive/archive_impl.h"
#include "sqlite/status_macros.h"

namespace kiln {

namespace {

using archive::Connection;
using archive::Statement;

// The runs a leaderboard may rank: finished (?4), on the registered workloads, not a
// confirmation run nor the harness's own check. ?1 definition, ?2 mode; `t` the table's alias.
std::string Rankable(const std::string& t) {
  return absl::StrCat(t, "definition = ?1 AND ", t, "mode = ?2 AND ", t, "state = ?4 AND ", t,
                      "registered_workloads = 1 AND ", t, "confirms = '' AND ", t,
                      "principal != 'kiln'");
}

// Rule best: ?3 PASSED. Runs with no timed workload (mean 0) are not ranked.
std::string BestSql() {
  return absl::StrCat(
      "SELECT principal, run_id, solution_name, mean_latency_ms, mean_speedup, created_ms, n, "
      "status, 0 FROM (SELECT *, count(*) OVER (PARTITION BY principal) AS n, row_number() OVER "
      "(PARTITION BY principal ORDER BY mean_latency_ms, created_ms, run_id) AS place FROM runs "
      "WHERE ",
      Rankable(""),
      " AND status = ?3 AND mean_latency_ms > 0) WHERE place = 1 "
      "ORDER BY mean_latency_ms, created_ms, run_id");
}

// Rule latest: the designated run where there is one (and it may still be ranked), else the
// newest rankable run; n counts the principal's rankable runs that PASSED.
std::string LatestSql() {
  return absl::StrCat(
      "SELECT principal, run_id, solution_name, mean_latency_ms, mean_speedup, created_ms, n, "
      "status, designated FROM (SELECT r.*, (d.run_id IS NOT NULL) AS designated, "
      "sum(r.status = ?3) OVER (PARTITION BY r.principal) AS n, row_number() OVER (PARTITION BY "
      "r.principal ORDER BY (d.run_id IS NOT NULL) DESC, r.created_ms DESC, r.run_id DESC) AS "
      "place FROM runs AS r LEFT JOIN designated_runs AS d ON d.run_id = r.run_id AND "
      "d.principal = r.principal AND d.definition = r.definition AND d.mode = r.mode WHERE ",
      Rankable("r."),
      ") WHERE place = 1 ORDER BY mean_latency_ms, created_ms, run_id");
}

}  // namespace

absl::StatusOr<std::vector<v1::LeaderboardEntry>> Archive::Leaderboard(
    const std::string& definition, const std::string& mode, const std::string& rule) {
  if (rule != "best" && rule != "latest") {
    return absl::InvalidArgumentError(
        absl::StrCat("rule: '", rule, "' is not one of latest, best"));
  }
  std::vector<v1::LeaderboardEntry> entries;
  ARCHIVE_RETURN_IF_ERROR(impl_->Read(
      absl::StrCat("ranking runs of '", definition, "'"), [&](Connection& conn) -> absl::Status {
        ARCHIVE_ASSIGN_OR_RETURN(Statement s,
                                 conn.Prepare(rule == "best" ? BestSql() : LatestSql()));
        s.BindText(1, definition);
        s.BindText(2, mode);
        s.BindInt(3, v1::PASSED);
        s.BindInt(4, v1::RUN_DONE);
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
          e.set_status(static_cast<v1::EvaluationStatus>(s.ColumnInt(7)));
          e.set_designated(s.ColumnInt(8) != 0);
        }
      }));
  return entries;
}

namespace {

absl::StatusOr<std::string> DesignatedRunOf(Connection& conn, const std::string& principal,
                                            const std::string& definition,
                                            const std::string& mode) {
  ARCHIVE_ASSIGN_OR_RETURN(
      Statement s, conn.Prepare("SELECT run_id FROM designated_runs WHERE principal = ?1 AND "
                                "definition = ?2 AND mode = ?3"));
  s.BindText(1, principal);
  s.BindText(2, definition);
  s.BindText(3, mode);
  ARCHIVE_ASSIGN_OR_RETURN(bool found, s.Step());
  return found ? s.ColumnText(0) : std::string();
}

}  // namespace

absl::StatusOr<std::string> Archive::SetDesignatedRun(const std::string& principal,
                                                      const std::string& definition,
                                                      const std::string& mode,
                                                      const std::string& run_id) {
  std::string previous;
  ARCHIVE_RETURN_IF_ERROR(impl_->Write(
      absl::StrCat("designating run '", run_id, "'"), [&](Connection& conn) -> absl::Status {
        ARCHIVE_ASSIGN_OR_RETURN(previous, DesignatedRunOf(conn, principal, definition, mode));
        ARCHIVE_ASSIGN_OR_RETURN(
            Statement s,
            conn.Prepare("INSERT INTO designated_runs (principal, definition, mode, run_id, "
                         "designated_ms) VALUES (?1, ?2, ?3, ?4, ?5) ON CONFLICT (principal, "
                         "definition, mode) DO UPDATE SET run_id = excluded.run_id, "
                         "designated_ms = excluded.designated_ms"));
        s.BindText(1, principal);
        s.BindText(2, definition);
        s.BindText(3, mode);
        s.BindText(4, run_id);
        s.BindInt(5, archive::NowUnixMs());
        return s.Run();
      }));
  return previous;
}

absl::StatusOr<std::string> Archive::ClearDesignatedRun(const std::string& principal,
                                                        const std::string& definition,
                                                        const std::string& mode) {
  std::string previous;
  ARCHIVE_RETURN_IF_ERROR(impl_->Write(
      absl::StrCat("clearing the designated run of '", principal, "' on '", definition, "'"),
      [&](Connection& conn) -> absl::Status {
        ARCHIVE_ASSIGN_OR_RETURN(previous, DesignatedRunOf(conn, principal, definition, mode));
        ARCHIVE_ASSIGN_OR_RETURN(
            Statement s, conn.Prepare("DELETE FROM designated_runs WHERE principal = ?1 AND "
                                      "definition = ?2 AND mode = ?3"));
        s.BindText(1, principal);
        s.BindText(2, definition);
        s.BindText(3, mode);
        return s.Run();
      }));
  return previous;
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
