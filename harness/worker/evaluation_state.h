// The state of one worker evaluation (Evaluate() in evaluation.h) and what its parts share:
// evaluation.cc runs the trials and the timing protocol, evaluation_checks.cc the integrity
// checks around the calls. Internal to the worker.
#ifndef KILN_HARNESS_WORKER_EVALUATION_STATE_H_
#define KILN_HARNESS_WORKER_EVALUATION_STATE_H_

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "harness/backend/device.h"
#include "harness/common/files.h"
#include "harness/timing/protocol.h"
#include "harness/verify/comparator.h"
#include "harness/verify/integrity.h"
#include "harness/verify/integrity_policy.h"
#include "harness/worker/evaluation.h"
#include "harness/worker/failure.h"
#include "harness/worker/helper_threads.h"
#include "harness/worker/open_device.h"
#include "harness/worker/peak_bandwidth.h"
#include "harness/worker/solution_library.h"
#include "harness/worker/tensor_set.h"
#include "harness/worker/timed_work.h"

namespace kiln::worker_evaluation {

inline uint64_t SplitMix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

// The seed of the new values a recheck writes into a trial's inputs.
inline uint64_t PerturbSeed(uint64_t trial_seed) { return SplitMix64(trial_seed ^ 0x5045525455524221ull); }

// CPU time other threads may use per call window regardless of the call: the CUDA runtime and
// CUPTI run threads of their own; the host backend runs none.
inline double HelperAllowanceMs(const std::string& backend) { return backend == "host" ? 0.05 : 2.0; }

using Clock = std::chrono::steady_clock;

// How long the outputs of each trial's second call are watched for writes after it returned.
constexpr std::chrono::milliseconds kDeferredWriteWindow(10);
// How long they are watched before two calls that disagree are called nondeterministic: on a
// loaded machine a detached thread's late write can land after the first window, and it is work
// after the return, not nondeterminism. Only a rejection waits this long.
constexpr std::chrono::milliseconds kLateWriteWindow(200);

// The state of one evaluation; see Evaluate().
//
// Per trial: fresh inputs; the checked call (outputs written); a second call on the same inputs
// that must agree (integrity.nondeterministic); when measuring, the timing protocol, with the
// outputs of every timed call checksummed against the checked call's (integrity.stale_output);
// then the recheck: the same input buffers with new values at sparse positions, one more checked
// call whose outputs the harness verifies (integrity.output_caching). Around every call the CPU
// time of other host threads is accounted (integrity.work_after_return).
class Evaluation {
 public:
  Evaluation(const v1::WorkerRequest& request, const StageReporter& report,
             const ExternalEntry* external, const TrialGate& gate)
      : request_(request),
        external_(external),
        report_(report),
        gate_(gate),
        // The reference and baselines are kiln's own code, not candidates: no integrity checks.
        // Nor a profile's worker: the run's evaluation checked the same solution, and the
        // profiler's threads in the process would count as the solution's work after return.
        checks_(!request.disable_call_checks() && !request.profile_call() &&
                request.role() != "reference" && request.role() != "baseline"),
        nondeterministic_(integrity::AllowsNondeterminism(request.definition())),
        inplace_(!integrity::InplaceInputs(request.definition()).empty()),
        helpers_(HelperAllowanceMs(request.backend())) {}

  absl::Status Setup();
  absl::Status VerifyOnly();
  absl::Status Measure();
  // request.profile_call: trial 0 verified, a warm-up call, the flush, then one call between
  // StartProfiler and StopProfiler.
  absl::Status ProfileCall();
  v1::WorkerResult& result() { return result_; }
  // Where the request's wall time went, for the worker log: "inputs 12.1 ms, outputs written
  // 40.2 ms, ..." (kiln's own work between and around the solution's calls).
  std::string CostReport() const;
  // After a candidate failed: its buffers stay allocated until the process exits. A solution
  // caught leaving work to a detached thread may still be writing them; freeing them here would
  // turn the verdict into a crash of the worker before it is sent.
  void KeepCandidateBuffers() {
    if (checks_) (void)tensors_.release();
  }
  // Whether the harness stopped the request at a trial's gate (request.gate_trials).
  bool stopped() const { return stopped_; }

 private:
  // Fresh inputs for trial t, then the checked call and the determinism call.
  absl::Status PrepareTrial(int trial);
  absl::Status CheckedCall(int trial);
  // Writes the current outputs as trial `trial`'s (its checked call's, or its `recheck`'s) into
  // `record`, counting the time in costs_.write; when kiln's own threads wrote them, the
  // helper-thread window starts after them.
  absl::Status WriteTrialOutputs(int trial, v1::TrialOutputs* record, bool recheck);
  absl::Status DeterminismCall(int trial);
  // request.gate_trials: the harness judges the trial's checked outputs before it is timed, and
  // its recheck's before the next trial (`recheck`): `outputs` is what was written.
  absl::Status Gate(int trial, const v1::TrialOutputs& outputs, bool recheck);
  // integrity.work_after_return: the current outputs must not change while kiln waits.
  // Rejects when an output differs from `at_return` (its checksums as the call returned) once
  // `window` has passed since `returned`.
  absl::Status CheckNoDeferredWrites(int trial, const std::vector<uint64_t>& at_return,
                                     Clock::time_point returned, std::chrono::milliseconds window);
  // The outputs of timed call `call` of the current trial against the checked call's; `sums`:
  // their checksums, already computed, or null to compute them here.
  absl::Status CheckTimedOutputs(const std::vector<uint64_t>* sums, int call);
  // The checks after a timed call (TimedCall::after_call), in two parts so that the device
  // computes the checksums while the host accounts the other threads' CPU time, and then runs
  // them back to back with the next call's poison and flush (one wait for the device instead
  // of three between two timed calls): StartTimedChecks checks the return code and the device,
  // queues the checksums of the inputs and outputs and reads the CPU window; FinishTimedChecks
  // (TimedCall::finish_checks, once the device is idle) compares them, in the order CheckCall
  // and CheckTimedOutputs reject: input mutation, the CPU window, GPU work after ctx->stream,
  // stale or nondeterministic outputs.
  absl::Status StartTimedChecks();
  absl::Status FinishTimedChecks();
  // The checks after a warmup call of the timing protocol, all at once: CheckCall, then its
  // outputs against the checked call's.
  absl::Status CheckWarmupCall();
  // integrity.work_after_return for the timed calls of `trial` on a device that defers its
  // samples: what the timer saw of each call once the samples were read.
  absl::Status CheckUnjoinedDeferredWork(int trial, int warmup);
  absl::Status Recheck(int trial);
  // ExternalEntry::fill_inputs with `seed`, when there is one.
  absl::Status FillExternalInputs(uint64_t seed, const std::string& what);
  // The solution call alone (the timed part); its return code is kept for CheckCall. A checked
  // call of a value-returning external solution then collects its outputs (untimed).
  absl::Status Call(bool timed = false);
  // Copies a value-returning external solution's outputs of the last call into the output
  // buffers (see ExternalEntry); `what` names the call in a failure.
  absl::Status Collect(const std::string& what);
  // The status an external entry's or collector's return `code` stands for.
  absl::Status ExternalFailure(int code, const std::string& what);
  // integrity.work_after_return: outputs still changing once ctx->stream is idle (checked calls).
  absl::Status CheckUnjoinedWork(const std::string& what);
  // integrity.work_after_return for timed calls: the timer's view of GPU work that outlived
  // ctx->stream.
  absl::Status CheckUnjoinedTimedWork(const std::string& what);
  // When two calls on the same inputs differed: whether the cause is GPU work on a stream the
  // solution never joined to ctx->stream (integrity.work_after_return), seen by one more call
  // under the CUPTI timer. OK when it is not (or the timer cannot tell).
  absl::Status DiagnoseUnjoinedStream(int trial);
  // Return code, device errors and input integrity of the last Call; then the helper threads'
  // CPU time around it (`what` names the call in a rejection). `after_timer`: the call was
  // timed, and the timer has waited for the device to be idle.
  // `output_sums` (not null): the outputs' checksums are computed in the same pass as the
  // inputs' (one wait for the device instead of two) and returned there.
  // `collect`: a value-returning candidate's outputs are collected (Collect) once the device
  // is checked, before the checksums.
  absl::Status CheckCall(const std::string& what, bool after_timer = false,
                         std::vector<uint64_t>* output_sums = nullptr, bool collect = false);
  // CheckCall's first part: the call's return code, then the device's state (`after_timer`: as
  // CheckCall's), a failure naming `what`.
  absl::Status CheckReturnAndDevice(const std::string& what, bool after_timer);
  // Whether the current outputs equal the checked call's: bitwise, or within the definition's
  // tolerances when it allows nondeterminism. Names the first output that differs.
  absl::StatusOr<std::string> DifferingOutput(bool within_tolerance);
  void Report(std::string_view stage, int trial) {
    if (report_) report_(stage, trial);
  }

  const v1::WorkerRequest& request_;
  const ExternalEntry* const external_;
  const StageReporter& report_;
  const TrialGate& gate_;
  bool stopped_ = false;
  const bool checks_;
  const bool nondeterministic_;
  const bool inplace_;
  HelperThreads helpers_;
  std::shared_ptr<Device> device_;  // kept for the worker's next request (WorkerDevice)
  std::unique_ptr<TensorSet> tensors_;
  kiln_entry entry_ = nullptr;
  kiln_entry collect_ = nullptr;
  bool collect_timed_ = false;
  kiln_context context_{};
  std::vector<uint64_t> input_checksums_;
  std::vector<uint64_t> checked_sums_;         // output checksums of the trial's checked call
  std::vector<std::string> checked_outputs_;   // their bytes (nondeterministic definitions)
  Clock::time_point call_start_;
  int last_return_ = 0;
  int calls_in_trial_ = 0;
  // The timed call whose checks StartTimedChecks queued and FinishTimedChecks has not finished.
  struct PendingChecks {
    bool active = false;
    int call = 0;             // its number in the trial (calls_in_trial_ then)
    std::string what;         // "timed call N of trial T"
    bool with_outputs = false;  // the outputs' checksums were queued too
    absl::Status window;      // the CPU window's verdict, reported after the input check's
  } pending_;
  int current_trial_ = 0;
  v1::WorkerResult result_;
  // Seconds by part of the request (CostReport).
  struct Costs {
    double inputs = 0, write = 0, gate = 0, flush = 0, timed = 0, span_ms = 0, before = 0,
           after = 0;
    // The parts of the checks after every call (checked and timed): waiting for the device,
    // the input checksums, the other threads' CPU accounting, the timed outputs' checksums.
    double sync = 0, input_sums = 0, window = 0, output_sums = 0;
    int timed_calls = 0;
    // The device's time between consecutive timed calls (DeferredCallGapsMs), ms.
    std::vector<double> call_gaps_ms;
  } costs_;
};

}  // namespace kiln::worker_evaluation

#endif  // KILN_HARNESS_WORKER_EVALUATION_STATE_H_
