// Writes of run rows and their traces, on a connection already inside a write transaction.
// The Archive methods compose these into one transaction per state change.
#ifndef KILN_HARNESS_ARCHIVE_RUN_ROWS_H_
#define KILN_HARNESS_ARCHIVE_RUN_ROWS_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "kiln/v1/types.pb.h"
#include "sqlite/sqlite_connection.h"

namespace kiln::archive {

// Where a run stands, as stored.
struct RunProgress {
  v1::RunState state = v1::RUN_STATE_UNSPECIFIED;
  int64_t updated_ms = 0;  // when it entered `state`
};

// NOT_FOUND "run '<id>' not found" when there is no such run.
absl::StatusOr<RunProgress> LoadRunProgress(Connection& conn, const std::string& run_id);

// A new run row with its sources (artifacts of kind "source"), any traces it already carries
// (stored at their positions) and its compile log when set. ALREADY_EXISTS names a taken id.
// Unset fields default: state QUEUED, created now, definition/name/author from the solution.
absl::Status InsertRun(Connection& conn, const v1::Run& run, int64_t now_ms);

// Inserts or replaces the trace at (run_id, workload_index).
absl::Status StoreTrace(Connection& conn, const std::string& run_id, int workload_index,
                        const v1::Trace& trace);

// Recomputes workload_count, mean_latency_ms and mean_speedup from the run's trace rows.
absl::Status UpdateRunAggregates(Connection& conn, const std::string& run_id);

// Fills the seconds column of `stage` with `seconds` unless something already set it (an
// explicit report such as RecordCompile wins over wall time measured between state changes).
absl::Status FillStageSeconds(Connection& conn, const std::string& run_id, v1::RunState stage,
                              double seconds);

// Stores the compile log as the run's "compiler_log" artifact and notes the cache hit.
absl::Status StoreCompileLog(Connection& conn, const std::string& run_id, const std::string& log,
                             bool cache_hit);

}  // namespace kiln::archive

#endif  // KILN_HARNESS_ARCHIVE_RUN_ROWS_H_
