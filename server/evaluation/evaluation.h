// One run's pipeline: created (archived QUEUED) at admission, compiled on the compile pool,
// evaluated workload by workload on a device slot, finished with an overall verdict. Every state
// change is committed to the archive before the client hears of it.
//
// The stages are called in order, each from one thread at a time (the scheduler hands the run
// from the compile pool to the device slot): Create, Compile, [RunOnDevice], Finish. Only the
// cancel flag is touched concurrently (by the Evaluate call).
#ifndef KILN_SERVER_EVALUATION_EVALUATION_H_
#define KILN_SERVER_EVALUATION_EVALUATION_H_

#include <atomic>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "harness/compile/toolchain.h"
#include "kiln/v1/harness.pb.h"
#include "server/evaluation/admission.h"
#include "server/evaluation/scheduled_run.h"
#include "server/evaluation/stage_clock.h"
#include "server/event_sink.h"
#include "server/node_context.h"

namespace kiln {

struct WorkloadJob;

// Vendor libraries (cublas, cublaslt, cudnn) a definition lets solutions call: its tags of the
// form "kiln:allow-library:cublas". Without one, a solution calling them is REJECTED.
std::vector<std::string> AllowedVendorLibraries(const v1::Definition& def);

class Evaluation : public ScheduledRun {
 public:
  // `sink` receives every event of the run and is released by Finish.
  Evaluation(const NodeContext& node, std::string run_id, AdmittedRun admitted,
             std::shared_ptr<std::atomic<bool>> cancel, EventSink* sink, absl::Time admitted_at);
  Evaluation(const Evaluation&) = delete;
  Evaluation& operator=(const Evaluation&) = delete;

  // Archives the run (QUEUED) and sends the first event. On error nothing was archived and the
  // sink was not used: the caller still owns the call.
  absl::Status Create();
  // Compiles the candidate and the native reference. Failures become traces.
  void Compile() override;
  // True after a successful Compile: the workloads still have to run.
  bool NeedsDevice() const override { return needs_device_; }
  // Evaluates every workload on device slot `device_slot` of the run's backend. The run record
  // names the slot's device (index, name, PCI bus id) and archives it before the first workload.
  void RunOnDevice(int device_slot) override;
  // The overall verdict, FinishRun and the final event. Always the last call.
  void Finish() override;
  double GpuWorkSeconds() const override;

  const std::string& run_id() const { return run_.run_id(); }
  const std::string& backend() const override { return admitted_.backend->name; }
  bool cancelled() const { return cancel_->load(); }

 private:
  std::optional<CompileOutput> CompileCandidate();
  bool CompileReference();
  // Builds every "solution:NAME" baseline (cache hits after the first run). A failure is the
  // baseline's note, never the run's verdict.
  void CompileSolutionBaselines();
  // A profile run: the solution (and the targets asked for beside it) under Nsight Compute on
  // the run's device slot, once its workload PASSED; fills run_.profile and archives each
  // report as artifact profile/TARGET.ncu-rep.
  void ProfileOnDevice(int device_slot, const std::string& run_dir);
  // The bytes of output files the run's workers hold at most for the judge (every workload
  // still to run: every trial's checked and recheck outputs of the reference and each baseline,
  // two passes of the candidate's); `per_worker`: by the reference's worker alone, the most one
  // worker holds.
  int64_t OutputFileBytes(int64_t* per_worker) const;
  // Workload `i`'s job on device slot `device_slot`, its workers' folders under `job_dir`.
  WorkloadJob JobFor(int i, int device_slot, const std::string& job_dir) const;
  void OnWorkerStage(v1::RunState stage);
  // Archives `state` when it changed and `message` as the run's progress line, and announces
  // both; `role` is Progress.role (empty: the run as a whole).
  void EnterState(v1::RunState state, int workload_index, const std::string& message,
                  const std::string& role = "");
  void SendProgress(v1::RunState stage, int workload_index, const std::string& message,
                    const v1::Trace* trace, const std::string& role = "");
  void RecordTrace(int index, v1::Evaluation evaluation, v1::TraceDetail detail);
  // A trace with `status` for every workload that has none yet.
  void FailRemaining(v1::EvaluationStatus status, const std::string& reason,
                     const std::string& log);
  void DecideVerdict();
  // Keeps a definition's integrity.degenerate_definition flag (for `kiln defs list`).
  void RememberIntegrityWarnings(const v1::TraceDetail& detail);
  // Moves the raw timing samples of workload `i` (candidate, reference, baselines) out of
  // `detail` into the run's "samples" artifacts.
  void ArchiveSamples(int i, v1::TraceDetail& detail);
  v1::EvaluateEvent FinalEvent();
  std::string WorkloadLabel(int index) const;
  // Logs a failed archive write; the run goes on (the client still gets its verdict).
  void Archived(const absl::Status& status, const char* what) const;

  const NodeContext& node_;
  AdmittedRun admitted_;
  std::shared_ptr<std::atomic<bool>> cancel_;
  EventSink* sink_;
  absl::Time admitted_at_;
  v1::Run run_;  // what is archived: identity, state, verdict, stage seconds
  v1::RunState state_ = v1::RUN_QUEUED;
  std::vector<std::optional<v1::Trace>> traces_;
  std::optional<CompileOutput> candidate_;
  std::optional<CompileOutput> reference_;
  std::map<std::string, CompileOutput> baseline_builds_;
  std::map<std::string, std::string> baseline_build_errors_;
  bool needs_device_ = false;
  int device_index_ = 0;  // the device slot of RunOnDevice
  bool on_device_ = false;  // RunOnDevice was called
  int current_workload_ = 0;
  const char* current_role_ = "";  // whose work on current_workload_ runs (kRoleReference, ...)
  int announced_workload_ = -1;  // the workload of the last stage event
  const char* announced_role_ = nullptr;  // and its role
  v1::RunState announced_stage_ = v1::RUN_STATE_UNSPECIFIED;  // and its stage
  StageClock clock_;
};

}  // namespace kiln

#endif  // KILN_SERVER_EVALUATION_EVALUATION_H_
