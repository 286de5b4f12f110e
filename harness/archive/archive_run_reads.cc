// Archive: run reads, on pooled read-only connections (never blocked by the writer).
#include <string>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "harness/archive/archive.h"
#include "harness/archive/archive_impl.h"
#include "harness/archive/artifact_rows.h"
#include "harness/archive/page_token.h"
#include "harness/archive/solution_json.h"
#include "sqlite/status_macros.h"

namespace kiln {

namespace {

using archive::Connection;
using archive::Statement;

constexpr int kDefaultLimit = 50;
constexpr int kMaxLimit = 1000;

// The run row into `run`; returns the compile log's sha256 ("" when none).
absl::StatusOr<std::string> ReadRunRow(Connection& conn, const std::string& run_id, v1::Run& run) {
  ARCHIVE_ASSIGN_OR_RETURN(
      Statement s,
      conn.Prepare("SELECT definition, solution_name, solution_hash, author, principal, state, "
                   "status, reason, mode, backend, created_ms, finished_ms, queued_s, "
                   "compile_s, verify_s, timing_s, compile_log_sha, compile_cache_hit, "
                   "solution_json, registered_workloads, device_index, device_name, "
                   "device_pci_bus_id, baselines, confirms, EXISTS (SELECT 1 FROM designated_runs AS d "
                   "WHERE d.run_id = runs.run_id AND d.principal = runs.principal AND "
                   "d.definition = runs.definition AND d.mode = runs.mode), kind, profile_pb "
                   "FROM runs WHERE run_id = ?1"));
  s.BindText(1, run_id);
  ARCHIVE_ASSIGN_OR_RETURN(bool found, s.Step());
  if (!found) return absl::NotFoundError(absl::StrCat("run '", run_id, "' not found"));
  run.set_run_id(run_id);
  run.set_definition(s.ColumnText(0));
  run.set_solution_name(s.ColumnText(1));
  run.set_solution_hash(s.ColumnText(2));
  run.set_author(s.ColumnText(3));
  run.set_principal(s.ColumnText(4));
  run.set_state(static_cast<v1::RunState>(s.ColumnInt(5)));
  run.set_status(static_cast<v1::EvaluationStatus>(s.ColumnInt(6)));
  run.set_reason(s.ColumnText(7));
  run.set_mode(s.ColumnText(8));
  run.set_backend(s.ColumnText(9));
  run.set_created_unix_ms(s.ColumnInt(10));
  run.set_finished_unix_ms(s.ColumnInt(11));
  run.set_queued_s(s.ColumnDouble(12));
  run.set_compile_s(s.ColumnDouble(13));
  run.set_verify_s(s.ColumnDouble(14));
  run.set_timing_s(s.ColumnDouble(15));
  std::string compile_log_sha = s.ColumnText(16);
  run.set_compile_cache_hit(s.ColumnInt(17) != 0);
  run.set_registered_workloads(s.ColumnInt(19) != 0);
  run.set_device_index(static_cast<int32_t>(s.ColumnInt(20)));
  run.set_device_name(s.ColumnText(21));
  run.set_device_pci_bus_id(s.ColumnText(22));
  for (absl::string_view baseline : absl::StrSplit(s.ColumnText(23), '\n', absl::SkipEmpty())) {
    run.add_baselines(std::string(baseline));
  }
  run.set_confirms(s.ColumnText(24));
  run.set_designated(s.ColumnInt(25) != 0);
  run.set_kind(s.ColumnText(26));
  if (std::string_view profile = s.ColumnBlob(27); !profile.empty()) {
    if (!run.mutable_profile()->ParseFromArray(profile.data(), static_cast<int>(profile.size()))) {
      return absl::DataLossError(absl::StrCat("the profile of run '", run_id, "' is corrupt"));
    }
  }
  ARCHIVE_ASSIGN_OR_RETURN(*run.mutable_solution(),
                           archive::SolutionFromStoredJson(s.ColumnText(18)));
  return compile_log_sha;
}

absl::Status ReadTraces(Connection& conn, v1::Run& run) {
  ARCHIVE_ASSIGN_OR_RETURN(Statement s, conn.Prepare("SELECT workload_index, trace_pb FROM traces "
                                                     "WHERE run_id = ?1 ORDER BY workload_index"));
  s.BindText(1, run.run_id());
  for (;;) {
    ARCHIVE_ASSIGN_OR_RETURN(bool row, s.Step());
    if (!row) return absl::OkStatus();
    std::string_view bytes = s.ColumnBlob(1);
    if (!run.add_traces()->ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) {
      return absl::DataLossError(
          absl::StrCat("trace ", s.ColumnInt(0), " of run '", run.run_id(), "' is corrupt"));
    }
  }
}

absl::Status ReadArtifactRefs(Connection& conn, v1::Run& run) {
  ARCHIVE_ASSIGN_OR_RETURN(
      Statement s, conn.Prepare("SELECT a.kind, a.name, a.sha256, b.size FROM artifacts AS a "
                                "JOIN blobs AS b ON b.sha256 = a.sha256 "
                                "WHERE a.run_id = ?1 ORDER BY a.rowid"));
  s.BindText(1, run.run_id());
  for (;;) {
    ARCHIVE_ASSIGN_OR_RETURN(bool row, s.Step());
    if (!row) return absl::OkStatus();
    v1::ArtifactRef* ref = run.add_artifacts();
    ref->set_kind(s.ColumnText(0));
    ref->set_name(s.ColumnText(1));
    ref->set_sha256(s.ColumnText(2));
    ref->set_size(s.ColumnInt(3));
  }
}

// Fills each source's content from the run's "source" artifact of the same path.
absl::Status FillSources(Connection& conn, v1::Run& run) {
  for (v1::SourceFile& source : *run.mutable_solution()->mutable_sources()) {
    const v1::ArtifactRef* found = nullptr;
    for (const v1::ArtifactRef& ref : run.artifacts()) {
      if (ref.kind() == "source" && ref.name() == source.path()) found = &ref;
    }
    if (found == nullptr) {
      return absl::DataLossError(absl::StrCat("source '", source.path(), "' of run '", run.run_id(),
                                              "' is missing from the archive"));
    }
    ARCHIVE_ASSIGN_OR_RETURN(*source.mutable_content(), archive::LoadBlob(conn, found->sha256()));
  }
  return absl::OkStatus();
}

void ReadSummary(const Statement& s, v1::RunSummary& summary) {
  summary.set_run_id(s.ColumnText(0));
  summary.set_definition(s.ColumnText(1));
  summary.set_solution_name(s.ColumnText(2));
  summary.set_state(static_cast<v1::RunState>(s.ColumnInt(3)));
  summary.set_status(static_cast<v1::EvaluationStatus>(s.ColumnInt(4)));
  summary.set_mode(s.ColumnText(5));
  summary.set_created_unix_ms(s.ColumnInt(6));
  summary.set_mean_latency_ms(s.ColumnDouble(7));
  summary.set_mean_speedup(s.ColumnDouble(8));
  summary.set_workload_count(static_cast<int32_t>(s.ColumnInt(9)));
  summary.set_author(s.ColumnText(10));
  summary.set_principal(s.ColumnText(11));
  summary.set_kind(s.ColumnText(12));
}

// Parameters: ?1 definition, ?2 status, ?3/?4 the cursor (created_ms, run_id), ?5 limit,
// ?6 principal, ?7 the principal left out. The
// row-value comparison lets SQLite seek into the (…, created_ms DESC, run_id DESC) indexes.
std::string ListRunsSql(const RunFilter& filter, bool has_cursor) {
  std::string sql =
      "SELECT run_id, definition, solution_name, state, status, mode, created_ms, "
      "mean_latency_ms, mean_speedup, workload_count, author, principal, kind FROM runs WHERE 1";
  if (!filter.definition.empty()) absl::StrAppend(&sql, " AND definition = ?1");
  if (filter.status != v1::STATUS_UNSPECIFIED) absl::StrAppend(&sql, " AND status = ?2");
  if (!filter.principal.empty()) absl::StrAppend(&sql, " AND principal = ?6");
  if (!filter.exclude_principal.empty()) absl::StrAppend(&sql, " AND principal != ?7");
  if (!filter.kind.empty()) absl::StrAppend(&sql, " AND kind = ?8");
  if (has_cursor) absl::StrAppend(&sql, " AND (created_ms, run_id) < (?3, ?4)");
  absl::StrAppend(&sql, " ORDER BY created_ms DESC, run_id DESC LIMIT ?5");
  return sql;
}

}  // namespace

absl::StatusOr<v1::Run> Archive::GetRun(const std::string& run_id, bool include_sources) {
  v1::Run run;
  ARCHIVE_RETURN_IF_ERROR(impl_->Read(
      absl::StrCat("reading run '", run_id, "'"), [&](Connection& conn) -> absl::Status {
        ARCHIVE_ASSIGN_OR_RETURN(std::string compile_log_sha, ReadRunRow(conn, run_id, run));
        ARCHIVE_RETURN_IF_ERROR(ReadTraces(conn, run));
        ARCHIVE_RETURN_IF_ERROR(ReadArtifactRefs(conn, run));
        if (!compile_log_sha.empty()) {
          ARCHIVE_ASSIGN_OR_RETURN(*run.mutable_compile_log(),
                                   archive::LoadBlob(conn, compile_log_sha));
        }
        if (!include_sources) {
          run.mutable_solution()->clear_sources();
          return absl::OkStatus();
        }
        return FillSources(conn, run);
      }));
  return run;
}

absl::StatusOr<std::vector<std::pair<std::string, std::string>>> Archive::FindRunIds(
    const std::string& fragment, int limit) {
  std::vector<std::pair<std::string, std::string>> ids;
  // Hex digits only: nothing in it can act as a LIKE pattern.
  for (char c : fragment) {
    if (!absl::ascii_isxdigit(static_cast<unsigned char>(c))) return ids;
  }
  ARCHIVE_RETURN_IF_ERROR(impl_->Read(
      absl::StrCat("finding runs matching '", fragment, "'"),
      [&](Connection& conn) -> absl::Status {
        ARCHIVE_ASSIGN_OR_RETURN(
            Statement s, conn.Prepare("SELECT run_id, principal FROM runs WHERE run_id LIKE ?1 "
                                      "OR run_id LIKE ?2 ORDER BY run_id LIMIT ?3"));
        s.BindText(1, absl::StrCat(fragment, "%"));
        s.BindText(2, absl::StrCat("%", fragment));
        s.BindInt(3, limit);
        while (true) {
          ARCHIVE_ASSIGN_OR_RETURN(bool row, s.Step());
          if (!row) break;
          ids.emplace_back(s.ColumnText(0), s.ColumnText(1));
        }
        return absl::OkStatus();
      }));
  return ids;
}

absl::StatusOr<v1::ListRunsResponse> Archive::ListRuns(const RunFilter& filter) {
  const int limit = filter.limit == 0 ? kDefaultLimit : filter.limit;
  if (limit < 1 || limit > kMaxLimit) {
    return absl::InvalidArgumentError(
        absl::StrCat("limit must be between 1 and ", kMaxLimit, ", got ", filter.limit));
  }
  std::optional<archive::RunCursor> cursor;
  if (!filter.page_token.empty()) {
    ARCHIVE_ASSIGN_OR_RETURN(cursor, archive::DecodePageToken(filter.page_token));
  }
  v1::ListRunsResponse response;
  ARCHIVE_RETURN_IF_ERROR(impl_->Read("listing runs", [&](Connection& conn) -> absl::Status {
    ARCHIVE_ASSIGN_OR_RETURN(Statement s, conn.Prepare(ListRunsSql(filter, cursor.has_value())));
    s.BindText(1, filter.definition);
    s.BindInt(2, filter.status);
    if (cursor.has_value()) {
      s.BindInt(3, cursor->created_ms);
      s.BindText(4, cursor->run_id);
    }
    s.BindInt(5, limit + 1);  // one more than asked tells whether another page follows
    s.BindText(6, filter.principal);
    s.BindText(7, filter.exclude_principal);
    s.BindText(8, filter.kind);
    for (int n = 0;; ++n) {
      ARCHIVE_ASSIGN_OR_RETURN(bool row, s.Step());
      if (!row) return absl::OkStatus();
      if (n == limit) {
        const v1::RunSummary& last = response.runs(limit - 1);
        response.set_next_page_token(
            archive::EncodePageToken({last.created_unix_ms(), last.run_id()}));
        return absl::OkStatus();
      }
      ReadSummary(s, *response.add_runs());
    }
  }));
  return response;
}

absl::StatusOr<Archive::ProfileCount> Archive::CountProfilesSince(const std::string& principal,
                                                                  int64_t since_unix_ms) {
  ProfileCount out;
  ARCHIVE_RETURN_IF_ERROR(impl_->Read("counting profiles", [&](Connection& conn) -> absl::Status {
    ARCHIVE_ASSIGN_OR_RETURN(
        Statement s, conn.Prepare("SELECT count(*), coalesce(min(created_ms), 0) FROM runs "
                                  "WHERE kind = 'profile' AND principal = ?1 AND created_ms >= ?2"));
    s.BindText(1, principal);
    s.BindInt(2, since_unix_ms);
    ARCHIVE_ASSIGN_OR_RETURN(bool row, s.Step());
    if (row) {
      out.count = s.ColumnInt(0);
      out.oldest_unix_ms = s.ColumnInt(1);
    }
    return absl::OkStatus();
  }));
  return out;
}

absl::StatusOr<int64_t> Archive::CountRuns() {
  int64_t count = 0;
  ARCHIVE_RETURN_IF_ERROR(impl_->Read("counting runs", [&](Connection& conn) -> absl::Status {
    ARCHIVE_ASSIGN_OR_RETURN(count, conn.QueryInt("SELECT count(*) FROM runs"));
    return absl::OkStatus();
  }));
  return count;
}

}  // namespace kiln
