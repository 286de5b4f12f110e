#include "harness/archive/run_rows.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "harness/archive/artifact_rows.h"
#include "harness/archive/solution_json.h"
#include "sqlite/status_macros.h"

namespace kiln::archive {

namespace {

constexpr const char kCompileLogName[] = "compile.log";

const std::string& FirstNonEmpty(const std::string& a, const std::string& b) {
  return a.empty() ? b : a;
}

absl::Status CheckRunIdFree(Connection& conn, const std::string& run_id) {
  ARCHIVE_ASSIGN_OR_RETURN(Statement select, conn.Prepare("SELECT 1 FROM runs WHERE run_id = ?1"));
  select.BindText(1, run_id);
  ARCHIVE_ASSIGN_OR_RETURN(bool taken, select.Step());
  if (taken) return absl::AlreadyExistsError(absl::StrCat("run '", run_id, "' already exists"));
  return absl::OkStatus();
}

absl::Status InsertRunRow(Connection& conn, const v1::Run& run, int64_t now_ms) {
  ARCHIVE_ASSIGN_OR_RETURN(std::string solution_json, SolutionToStoredJson(run.solution()));
  ARCHIVE_ASSIGN_OR_RETURN(
      Statement s,
      conn.Prepare(
          "INSERT INTO runs (run_id, definition, solution_name, solution_hash, author, "
          "principal, state, status, reason, mode, backend, created_ms, finished_ms, queued_s, "
          "compile_s, verify_s, timing_s, compile_cache_hit, solution_json, updated_ms, "
          "registered_workloads, device_index, device_name, device_pci_bus_id, baselines, "
          "confirms, kind) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, "
          "?15, ?16, ?17, ?18, ?19, ?20, ?21, ?22, ?23, ?24, ?25, ?26, ?27)"));
  s.BindText(1, run.run_id());
  s.BindText(2, FirstNonEmpty(run.definition(), run.solution().definition()));
  s.BindText(3, FirstNonEmpty(run.solution_name(), run.solution().name()));
  s.BindText(4, run.solution_hash());
  s.BindText(5, FirstNonEmpty(run.author(), run.solution().author()));
  s.BindText(6, run.principal());
  s.BindInt(7, run.state() == v1::RUN_STATE_UNSPECIFIED ? v1::RUN_QUEUED : run.state());
  s.BindInt(8, run.status());
  s.BindText(9, run.reason());
  s.BindText(10, run.mode());
  s.BindText(11, run.backend());
  s.BindInt(12, run.created_unix_ms() != 0 ? run.created_unix_ms() : now_ms);
  s.BindInt(13, run.finished_unix_ms());
  s.BindDouble(14, run.queued_s());
  s.BindDouble(15, run.compile_s());
  s.BindDouble(16, run.verify_s());
  s.BindDouble(17, run.timing_s());
  s.BindInt(18, run.compile_cache_hit() ? 1 : 0);
  s.BindText(19, solution_json);
  s.BindInt(20, now_ms);
  s.BindInt(21, run.registered_workloads() ? 1 : 0);
  s.BindInt(22, run.device_index());
  s.BindText(23, run.device_name());
  s.BindText(24, run.device_pci_bus_id());
  s.BindText(25, absl::StrJoin(run.baselines(), "\n"));
  s.BindText(26, run.confirms());
  s.BindText(27, run.kind().empty() ? "evaluation" : run.kind());
  return s.Run();
}

const char* StageColumn(v1::RunState stage) {
  switch (stage) {
    case v1::RUN_QUEUED:
      return "queued_s";
    case v1::RUN_COMPILING:
      return "compile_s";
    case v1::RUN_VERIFYING:
      return "verify_s";
    case v1::RUN_TIMING:
      return "timing_s";
    default:
      return nullptr;
  }
}

}  // namespace

absl::StatusOr<RunProgress> LoadRunProgress(Connection& conn, const std::string& run_id) {
  ARCHIVE_ASSIGN_OR_RETURN(Statement select,
                           conn.Prepare("SELECT state, updated_ms FROM runs WHERE run_id = ?1"));
  select.BindText(1, run_id);
  ARCHIVE_ASSIGN_OR_RETURN(bool found, select.Step());
  if (!found) return absl::NotFoundError(absl::StrCat("run '", run_id, "' not found"));
  RunProgress progress;
  progress.state = static_cast<v1::RunState>(select.ColumnInt(0));
  progress.updated_ms = select.ColumnInt(1);
  return progress;
}

absl::Status InsertRun(Connection& conn, const v1::Run& run, int64_t now_ms) {
  if (run.run_id().empty()) return absl::InvalidArgumentError("run_id is empty");
  ARCHIVE_RETURN_IF_ERROR(CheckRunIdFree(conn, run.run_id()));
  ARCHIVE_RETURN_IF_ERROR(InsertRunRow(conn, run, now_ms));
  for (const v1::SourceFile& source : run.solution().sources()) {
    ARCHIVE_RETURN_IF_ERROR(
        StoreArtifact(conn, run.run_id(), "source", source.path(), source.content()).status());
  }
  for (int i = 0; i < run.traces_size(); ++i) {
    ARCHIVE_RETURN_IF_ERROR(StoreTrace(conn, run.run_id(), i, run.traces(i)));
  }
  if (run.traces_size() > 0) ARCHIVE_RETURN_IF_ERROR(UpdateRunAggregates(conn, run.run_id()));
  if (!run.compile_log().empty()) {
    ARCHIVE_RETURN_IF_ERROR(
        StoreCompileLog(conn, run.run_id(), run.compile_log(), run.compile_cache_hit()));
  }
  return absl::OkStatus();
}

absl::Status StoreTrace(Connection& conn, const std::string& run_id, int workload_index,
                        const v1::Trace& trace) {
  if (workload_index < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("workload_index must not be negative, got ", workload_index));
  }
  ARCHIVE_ASSIGN_OR_RETURN(
      Statement s,
      conn.Prepare("INSERT OR REPLACE INTO traces (run_id, workload_index, workload_uuid, "
                   "status, latency_ms, speedup, trace_pb) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)"));
  s.BindText(1, run_id);
  s.BindInt(2, workload_index);
  s.BindText(3, trace.workload().uuid());
  s.BindInt(4, trace.evaluation().status());
  // Means cover traces that were timed; a speedup is only meaningful with a reference time.
  const bool timed = trace.evaluation().has_performance();
  const v1::Performance& perf = trace.evaluation().performance();
  if (timed) s.BindDouble(5, perf.latency_ms());
  if (timed && perf.speedup_factor() > 0) s.BindDouble(6, perf.speedup_factor());
  s.BindBlob(7, trace.SerializeAsString());
  return s.Run();
}

absl::Status UpdateRunAggregates(Connection& conn, const std::string& run_id) {
  ARCHIVE_ASSIGN_OR_RETURN(
      Statement update,
      conn.Prepare(
          "UPDATE runs SET "
          "workload_count = (SELECT count(*) FROM traces WHERE run_id = ?1), "
          "mean_latency_ms = coalesce((SELECT avg(latency_ms) FROM traces WHERE run_id = ?1), "
          "0), "
          "mean_speedup = coalesce((SELECT avg(speedup) FROM traces WHERE run_id = ?1), 0) "
          "WHERE run_id = ?1"));
  update.BindText(1, run_id);
  return update.Run();
}

absl::Status FillStageSeconds(Connection& conn, const std::string& run_id, v1::RunState stage,
                              double seconds) {
  const char* column = StageColumn(stage);
  if (column == nullptr) return absl::OkStatus();
  ARCHIVE_ASSIGN_OR_RETURN(
      Statement update, conn.Prepare(absl::StrCat("UPDATE runs SET ", column,
                                                  " = ?2 WHERE run_id = ?1 AND ", column, " = 0")));
  update.BindText(1, run_id);
  update.BindDouble(2, seconds);
  return update.Run();
}

absl::Status StoreCompileLog(Connection& conn, const std::string& run_id, const std::string& log,
                             bool cache_hit) {
  ARCHIVE_ASSIGN_OR_RETURN(std::string sha,
                           StoreArtifact(conn, run_id, "compiler_log", kCompileLogName, log));
  ARCHIVE_ASSIGN_OR_RETURN(
      Statement update,
      conn.Prepare(
          "UPDATE runs SET compile_log_sha = ?2, compile_cache_hit = ?3 WHERE run_id = ?1"));
  update.BindText(1, run_id);
  update.BindText(2, sha);
  update.BindInt(3, cache_hit ? 1 : 0);
  return update.Run();
}

}  // namespace kiln::archive
