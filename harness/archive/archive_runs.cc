// Archive: run writes. Each method is one write transaction, committed before it returns.
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "harness/archive/archive.h"
#include "harness/archive/archive_impl.h"
#include "harness/archive/run_rows.h"
#include "harness/model/json_interop.h"
#include "sqlite/status_macros.h"

namespace kiln {

namespace {

using archive::Connection;
using archive::RunProgress;
using archive::Statement;

double SecondsSince(int64_t since_ms, int64_t now_ms) {
  return since_ms > 0 && now_ms > since_ms ? static_cast<double>(now_ms - since_ms) / 1000.0 : 0.0;
}

// Overall status when the caller left it unset: PASSED iff every trace PASSED, else the first
// failing trace's status; unset when there are no traces.
absl::StatusOr<v1::EvaluationStatus> StatusFromTraces(Connection& conn, const std::string& run_id) {
  ARCHIVE_ASSIGN_OR_RETURN(
      Statement select,
      conn.Prepare("SELECT status FROM traces WHERE run_id = ?1 ORDER BY workload_index"));
  select.BindText(1, run_id);
  v1::EvaluationStatus overall = v1::STATUS_UNSPECIFIED;
  for (;;) {
    ARCHIVE_ASSIGN_OR_RETURN(bool row, select.Step());
    if (!row) return overall;
    auto status = static_cast<v1::EvaluationStatus>(select.ColumnInt(0));
    if (status != v1::PASSED) return status;
    overall = v1::PASSED;
  }
}

absl::Status WriteFinalRow(Connection& conn, const v1::Run& run, v1::EvaluationStatus status,
                           int64_t now_ms) {
  // Stage seconds the caller reports win over the wall time measured between state changes.
  ARCHIVE_ASSIGN_OR_RETURN(
      Statement update,
      conn.Prepare("UPDATE runs SET state = ?2, status = ?3, reason = ?4, finished_ms = ?5, "
                   "updated_ms = ?6, "
                   "queued_s = CASE WHEN ?7 > 0 THEN ?7 ELSE queued_s END, "
                   "compile_s = CASE WHEN ?8 > 0 THEN ?8 ELSE compile_s END, "
                   "verify_s = CASE WHEN ?9 > 0 THEN ?9 ELSE verify_s END, "
                   "timing_s = CASE WHEN ?10 > 0 THEN ?10 ELSE timing_s END, "
                   "profile_pb = CASE WHEN ?11 IS NOT NULL THEN ?11 ELSE profile_pb END "
                   "WHERE run_id = ?1"));
  update.BindText(1, run.run_id());
  update.BindInt(2, v1::RUN_DONE);
  update.BindInt(3, status);
  update.BindText(4, run.reason());
  update.BindInt(5, run.finished_unix_ms() != 0 ? run.finished_unix_ms() : now_ms);
  update.BindInt(6, now_ms);
  update.BindDouble(7, run.queued_s());
  update.BindDouble(8, run.compile_s());
  update.BindDouble(9, run.verify_s());
  update.BindDouble(10, run.timing_s());
  std::string profile;
  if (run.has_profile()) {
    if (!run.profile().SerializeToString(&profile)) {
      return absl::InternalError("the run's profile cannot be serialized");
    }
    update.BindBlob(11, profile);
  }
  return update.Run();
}

// Traces of an interrupted run that never got a verdict get INTERRUPTED.
absl::Status InterruptUndecidedTraces(Connection& conn, const std::string& run_id,
                                      const std::string& reason) {
  std::vector<std::pair<int, v1::Trace>> undecided;
  {
    ARCHIVE_ASSIGN_OR_RETURN(Statement select,
                             conn.Prepare("SELECT workload_index, trace_pb FROM traces "
                                          "WHERE run_id = ?1 AND status = 0"));
    select.BindText(1, run_id);
    for (;;) {
      ARCHIVE_ASSIGN_OR_RETURN(bool row, select.Step());
      if (!row) break;
      v1::Trace trace;
      std::string_view bytes = select.ColumnBlob(1);
      // An unreadable trace is still replaced by a readable INTERRUPTED one.
      (void)trace.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()));
      undecided.emplace_back(static_cast<int>(select.ColumnInt(0)), std::move(trace));
    }
  }
  for (auto& [index, trace] : undecided) {
    trace.mutable_evaluation()->set_status(v1::INTERRUPTED);
    trace.mutable_kiln()->set_reason(reason);
    ARCHIVE_RETURN_IF_ERROR(archive::StoreTrace(conn, run_id, index, trace));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<std::pair<std::string, v1::RunState>>> UnfinishedRuns(Connection& conn) {
  std::vector<std::pair<std::string, v1::RunState>> runs;
  ARCHIVE_ASSIGN_OR_RETURN(Statement select,
                           conn.Prepare("SELECT run_id, state FROM runs WHERE state <> 5"));
  for (;;) {
    ARCHIVE_ASSIGN_OR_RETURN(bool row, select.Step());
    if (!row) return runs;
    runs.emplace_back(select.ColumnText(0), static_cast<v1::RunState>(select.ColumnInt(1)));
  }
}

}  // namespace

absl::Status Archive::CreateRun(const v1::Run& run) {
  return impl_->Write(absl::StrCat("creating run '", run.run_id(), "'"), [&](Connection& conn) {
    return archive::InsertRun(conn, run, archive::NowUnixMs());
  });
}

absl::Status Archive::ImportRuns(const std::vector<v1::Run>& runs) {
  return impl_->Write(absl::StrCat("importing ", runs.size(), " runs"),
                      [&](Connection& conn) -> absl::Status {
                        const int64_t now_ms = archive::NowUnixMs();
                        for (const v1::Run& run : runs) {
                          ARCHIVE_RETURN_IF_ERROR(archive::InsertRun(conn, run, now_ms));
                        }
                        return absl::OkStatus();
                      });
}

absl::Status Archive::UpdateRunState(const std::string& run_id, v1::RunState state) {
  if (!v1::RunState_IsValid(state) || state == v1::RUN_STATE_UNSPECIFIED) {
    return absl::InvalidArgumentError(absl::StrCat("state ", state, " is not a run state"));
  }
  return impl_->Write(
      absl::StrCat("moving run '", run_id, "' to ", v1::RunState_Name(state)),
      [&](Connection& conn) -> absl::Status {
        ARCHIVE_ASSIGN_OR_RETURN(RunProgress progress, archive::LoadRunProgress(conn, run_id));
        if (progress.state == v1::RUN_DONE) {
          return absl::FailedPreconditionError(absl::StrCat("run '", run_id, "' is already done"));
        }
        const int64_t now_ms = archive::NowUnixMs();
        ARCHIVE_RETURN_IF_ERROR(archive::FillStageSeconds(
            conn, run_id, progress.state, SecondsSince(progress.updated_ms, now_ms)));
        ARCHIVE_ASSIGN_OR_RETURN(
            Statement update,
            conn.Prepare("UPDATE runs SET state = ?2, updated_ms = ?3 WHERE run_id = ?1"));
        update.BindText(1, run_id);
        update.BindInt(2, state);
        update.BindInt(3, now_ms);
        return update.Run();
      });
}

absl::Status Archive::RecordCompile(const std::string& run_id, const std::string& compile_log,
                                    bool cache_hit, double seconds) {
  return impl_->Write(
      absl::StrCat("recording the compile of run '", run_id, "'"),
      [&](Connection& conn) -> absl::Status {
        ARCHIVE_RETURN_IF_ERROR(archive::LoadRunProgress(conn, run_id).status());
        ARCHIVE_RETURN_IF_ERROR(archive::StoreCompileLog(conn, run_id, compile_log, cache_hit));
        ARCHIVE_ASSIGN_OR_RETURN(Statement update,
                                 conn.Prepare("UPDATE runs SET compile_s = ?2 WHERE run_id = ?1"));
        update.BindText(1, run_id);
        update.BindDouble(2, seconds);
        return update.Run();
      });
}

absl::Status Archive::RecordDevice(const std::string& run_id, int device_index,
                                   const std::string& device_name,
                                   const std::string& pci_bus_id) {
  return impl_->Write(
      absl::StrCat("recording the device of run '", run_id, "'"),
      [&](Connection& conn) -> absl::Status {
        ARCHIVE_ASSIGN_OR_RETURN(RunProgress progress, archive::LoadRunProgress(conn, run_id));
        if (progress.state == v1::RUN_DONE) {
          return absl::FailedPreconditionError(absl::StrCat("run '", run_id, "' is already done"));
        }
        ARCHIVE_ASSIGN_OR_RETURN(
            Statement update,
            conn.Prepare("UPDATE runs SET device_index = ?2, device_name = ?3, "
                         "device_pci_bus_id = ?4 WHERE run_id = ?1"));
        update.BindText(1, run_id);
        update.BindInt(2, device_index);
        update.BindText(3, device_name);
        update.BindText(4, pci_bus_id);
        return update.Run();
      });
}

absl::Status Archive::PutTrace(const std::string& run_id, int workload_index,
                               const v1::Trace& trace) {
  return impl_->Write(
      absl::StrCat("storing trace ", workload_index, " of run '", run_id, "'"),
      [&](Connection& conn) -> absl::Status {
        ARCHIVE_RETURN_IF_ERROR(archive::LoadRunProgress(conn, run_id).status());
        ARCHIVE_RETURN_IF_ERROR(archive::StoreTrace(conn, run_id, workload_index, trace));
        return archive::UpdateRunAggregates(conn, run_id);
      });
}

absl::Status Archive::FinishRun(const v1::Run& run) {
  const std::string& run_id = run.run_id();
  return impl_->Write(
      absl::StrCat("finishing run '", run_id, "'"), [&](Connection& conn) -> absl::Status {
        ARCHIVE_ASSIGN_OR_RETURN(RunProgress progress, archive::LoadRunProgress(conn, run_id));
        const int64_t now_ms = archive::NowUnixMs();
        if (progress.state != v1::RUN_DONE) {
          ARCHIVE_RETURN_IF_ERROR(archive::FillStageSeconds(
              conn, run_id, progress.state, SecondsSince(progress.updated_ms, now_ms)));
        }
        for (int i = 0; i < run.traces_size(); ++i) {
          ARCHIVE_RETURN_IF_ERROR(archive::StoreTrace(conn, run_id, i, run.traces(i)));
        }
        ARCHIVE_RETURN_IF_ERROR(archive::UpdateRunAggregates(conn, run_id));
        if (!run.compile_log().empty()) {
          ARCHIVE_RETURN_IF_ERROR(
              archive::StoreCompileLog(conn, run_id, run.compile_log(), run.compile_cache_hit()));
        }
        v1::EvaluationStatus status = run.status();
        if (status == v1::STATUS_UNSPECIFIED) {
          ARCHIVE_ASSIGN_OR_RETURN(status, StatusFromTraces(conn, run_id));
        }
        return WriteFinalRow(conn, run, status, now_ms);
      });
}

absl::StatusOr<int> Archive::MarkInterrupted() {
  int count = 0;
  ARCHIVE_RETURN_IF_ERROR(
      impl_->Write("marking unfinished runs interrupted", [&](Connection& conn) -> absl::Status {
        ARCHIVE_ASSIGN_OR_RETURN(auto unfinished, UnfinishedRuns(conn));
        const int64_t now_ms = archive::NowUnixMs();
        ARCHIVE_ASSIGN_OR_RETURN(
            Statement update, conn.Prepare("UPDATE runs SET state = ?2, status = ?3, reason = ?4, "
                                           "finished_ms = ?5, updated_ms = ?5 WHERE run_id = ?1"));
        for (const auto& [run_id, state] : unfinished) {
          const std::string reason =
              absl::StrCat("the harness stopped while this run was ", RunStateName(state));
          ARCHIVE_RETURN_IF_ERROR(InterruptUndecidedTraces(conn, run_id, reason));
          update.BindText(1, run_id);
          update.BindInt(2, v1::RUN_DONE);
          update.BindInt(3, v1::INTERRUPTED);
          update.BindText(4, reason);
          update.BindInt(5, now_ms);
          ARCHIVE_RETURN_IF_ERROR(update.Run());
          ARCHIVE_RETURN_IF_ERROR(update.Reset());
        }
        count = static_cast<int>(unfinished.size());
        return absl::OkStatus();
      }));
  return count;
}

}  // namespace kiln
