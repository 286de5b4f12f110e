#include "harness/worker/evaluation.h"

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
#include "harness/worker/failure.h"
#include "harness/worker/helper_threads.h"
#include "harness/worker/open_device.h"
#include "harness/worker/peak_bandwidth.h"
#include "harness/worker/solution_library.h"
#include "harness/worker/tensor_set.h"
#include "harness/worker/timed_work.h"

namespace kiln {
namespace {

uint64_t SplitMix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

// The seed of the new values a recheck writes into a trial's inputs.
uint64_t PerturbSeed(uint64_t trial_seed) { return SplitMix64(trial_seed ^ 0x5045525455524221ull); }

// CPU time other threads may use per call window regardless of the call: the CUDA runtime and
// CUPTI run threads of their own; the host backend runs none.
double HelperAllowanceMs(const std::string& backend) { return backend == "host" ? 0.05 : 2.0; }

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
  absl::Status DeterminismCall(int trial);
  // request.gate_trials: the harness judges the trial's checked outputs before it is timed.
  absl::Status Gate(int trial);
  // integrity.work_after_return: the current outputs must not change while kiln waits.
  // Rejects when an output differs from `at_return` (its checksums as the call returned) once
  // `window` has passed since `returned`.
  absl::Status CheckNoDeferredWrites(int trial, const std::vector<uint64_t>& at_return,
                                     Clock::time_point returned, std::chrono::milliseconds window);
  // The outputs of a timed call against the checked call's.
  absl::Status CheckTimedOutputs();
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
  absl::Status CheckCall(const std::string& what, bool after_timer = false);
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
  } costs_;
};

// Forwards to the worker's device, adding up how long its flushes and timed calls took.
class CostedDevice : public TimedDevice {
 public:
  CostedDevice(TimedDevice& inner, double* flush_s, double* timed_s, double* span_ms, int* calls)
      : inner_(inner), flush_s_(flush_s), timed_s_(timed_s), span_ms_(span_ms), calls_(calls) {}
  absl::Status Flush(int64_t bytes) override {
    const auto t0 = Clock::now();
    absl::Status s = inner_.Flush(bytes);
    *flush_s_ += std::chrono::duration<double>(Clock::now() - t0).count();
    return s;
  }
  absl::StatusOr<double> TimeCall(const std::function<absl::Status()>& call,
                                  bool* throttled) override {
    const auto t0 = Clock::now();
    absl::StatusOr<double> ms = inner_.TimeCall(call, throttled);
    *timed_s_ += std::chrono::duration<double>(Clock::now() - t0).count();
    if (ms.ok()) *span_ms_ += *ms;
    ++*calls_;
    return ms;
  }
  std::string TimerName() const override { return inner_.TimerName(); }
  int64_t DefaultFlushBytes() const override { return inner_.DefaultFlushBytes(); }
  std::string DeviceName() const override { return inner_.DeviceName(); }
  void StartInputSet() override { inner_.StartInputSet(); }

 private:
  TimedDevice& inner_;
  double* flush_s_;
  double* timed_s_;
  double* span_ms_;
  int* calls_;
};

std::string Evaluation::CostReport() const {
  const Costs& c = costs_;
  std::string out = absl::StrFormat("inputs %.1f ms, outputs written %.1f ms", c.inputs * 1e3,
                                    c.write * 1e3);
  if (request_.gate_trials()) {
    absl::StrAppendFormat(&out, ", judged at the gates %.1f ms", c.gate * 1e3);
  }
  if (c.timed_calls > 0) {
    absl::StrAppendFormat(&out,
                          "; %d timed calls: flush %.1f ms, timer around the calls %.1f ms (the "
                          "calls' own spans %.1f ms), before each call %.1f ms, checks after "
                          "each call %.1f ms",
                          c.timed_calls, c.flush * 1e3, c.timed * 1e3, c.span_ms, c.before * 1e3,
                          c.after * 1e3);
  }
  absl::StrAppendFormat(&out,
                        "; after every call: device sync %.1f ms, input checksums %.1f ms, other "
                        "threads' CPU %.1f ms, timed outputs' checksums %.1f ms",
                        c.sync * 1e3, c.input_sums * 1e3, c.window * 1e3, c.output_sums * 1e3);
  return out;
}

absl::Status Evaluation::Setup() {
  if (request_.trial_seeds_size() == 0) {
    return absl::InvalidArgumentError("request.trial_seeds: no trial seeds");
  }
  absl::StatusOr<std::shared_ptr<Device>> device =
      WorkerDevice(request_.backend(), request_.device_index());
  if (!device.ok()) return device.status();
  device_ = *std::move(device);
  std::error_code ec;
  if (!request_.output_dir().empty() && !std::filesystem::is_directory(request_.output_dir(), ec)) {
    absl::Status s = MakeDirs(request_.output_dir());
    if (!s.ok()) return s;
  }
  context_ = device_->Context();
  if (checks_ && !helpers_.timers_at_start().empty()) {
    std::fprintf(stderr,
                 "kiln-worker: note: %s armed in the worker's environment: the process CPU "
                 "clock lags, and the accounting of other threads' CPU time "
                 "(integrity.work_after_return) can miss up to a scheduler tick per call\n",
                 helpers_.timers_at_start().c_str());
  }
  // Idle OpenMP threads block instead of spinning, so that an honest pool is not taken for work
  // after return; read by libgomp when the solution loads it.
  setenv("OMP_WAIT_POLICY", "PASSIVE", 1);
  setenv("GOMP_SPINCOUNT", "0", 1);
  if (external_ != nullptr) {
    if (external_->entry == nullptr) return absl::InvalidArgumentError("external entry is null");
    entry_ = external_->entry;
    collect_ = external_->collect;
    collect_timed_ = collect_ != nullptr && external_->collect_timed_calls;
  } else {
    absl::StatusOr<SolutionLibrary> lib =
        LoadSolution(request_.artifact_path(), request_.symbol());
    if (!lib.ok()) return lib.status();
    entry_ = lib->entry;
  }
  absl::StatusOr<std::unique_ptr<TensorSet>> tensors =
      TensorSet::Create(request_.definition(), request_.workload(), *device_);
  if (!tensors.ok()) return tensors.status();
  tensors_ = *std::move(tensors);
  helpers_.StartWindow();
  return absl::OkStatus();
}

absl::Status Evaluation::PrepareTrial(int trial) {
  Report("inputs", trial);
  current_trial_ = trial;
  calls_in_trial_ = 0;
  // Each trial's outputs live in memory allocated for it (trial 0's when the set was created).
  absl::Status s = trial > 0 ? tensors_->AllocateOutputs() : absl::OkStatus();
  const auto inputs_start = Clock::now();
  if (s.ok()) s = tensors_->GenerateInputs(TrialSeed(request_, trial), request_.blob_root());
  if (s.ok()) {
    s = FillExternalInputs(TrialSeed(request_, trial),
                           absl::StrCat("the inputs of trial ", trial));
  }
  if (!s.ok()) return s;
  absl::StatusOr<std::vector<uint64_t>> sums = tensors_->InputChecksums();
  if (!sums.ok()) return sums.status();
  input_checksums_ = *std::move(sums);
  costs_.inputs += std::chrono::duration<double>(Clock::now() - inputs_start).count();
  // Input generation runs threads of kiln's own; the accounting starts after them.
  helpers_.StartAfterOwnThreads();
  Report("verify", trial);
  s = CheckedCall(trial);
  if (s.ok()) s = DeterminismCall(trial);
  if (s.ok()) s = Gate(trial);
  return s;
}

absl::Status Evaluation::Gate(int trial) {
  if (!request_.gate_trials()) return absl::OkStatus();
  if (!gate_) return absl::InvalidArgumentError("request.gate_trials: this worker has no gate");
  const auto t0 = Clock::now();
  // The trial's outputs are still those of its checked call: the second call wrote its own
  // buffers, and the files were written from the checked call's.
  absl::StatusOr<bool> go = gate_(result_.trials(result_.trials_size() - 1));
  costs_.gate += std::chrono::duration<double>(Clock::now() - t0).count();
  if (!go.ok()) return go.status();
  if (*go) return absl::OkStatus();
  stopped_ = true;
  return absl::AbortedError(absl::StrCat("the harness found the outputs of trial ", trial,
                                         " incorrect: not timed"));
}

absl::Status Evaluation::CheckedCall(int trial) {
  absl::Status s = tensors_->RenewOutputs();
  if (s.ok()) s = Call();
  if (s.ok()) s = CheckUnjoinedWork(absl::StrCat("the checked call of trial ", trial));
  if (s.ok()) s = CheckCall(absl::StrCat("the checked call of trial ", trial));
  if (!s.ok()) return s;
  v1::TrialOutputs record;
  const auto write_start = Clock::now();
  s = tensors_->WriteOutputs(request_.output_dir(), trial, &record);
  costs_.write += std::chrono::duration<double>(Clock::now() - write_start).count();
  if (!s.ok()) return s;
  *result_.add_trials() = std::move(record);
  if (!checks_ || inplace_) return absl::OkStatus();
  absl::StatusOr<std::vector<uint64_t>> sums = tensors_->OutputChecksums();
  if (!sums.ok()) return sums.status();
  checked_sums_ = *std::move(sums);
  if (!nondeterministic_) return absl::OkStatus();
  absl::StatusOr<std::vector<std::string>> bytes = tensors_->OutputBytes();
  if (!bytes.ok()) return bytes.status();
  checked_outputs_ = *std::move(bytes);
  return absl::OkStatus();
}

absl::Status Evaluation::DeterminismCall(int trial) {
  if (!checks_ || inplace_) return absl::OkStatus();
  absl::Status s = tensors_->RenewOutputs();
  if (s.ok()) s = Call();
  if (s.ok()) s = CheckCall(absl::StrCat("the second call of trial ", trial));
  if (!s.ok()) return s;
  const Clock::time_point returned = Clock::now();
  absl::StatusOr<std::vector<uint64_t>> at_return = tensors_->OutputChecksums();
  if (!at_return.ok()) return at_return.status();
  // The outputs must hold still once the call returned.
  s = CheckNoDeferredWrites(trial, *at_return, returned, kDeferredWriteWindow);
  if (!s.ok()) return s;
  absl::StatusOr<std::string> differs = DifferingOutput(nondeterministic_);
  if (!differs.ok()) return differs.status();
  if (differs->empty()) return absl::OkStatus();
  // Before calling the calls nondeterministic: did the checked call's outputs change after they
  // were checksummed (a late write that the first windows missed on a loaded machine), or do the
  // second call's outputs still change?
  absl::StatusOr<std::vector<uint64_t>> checked_now = tensors_->PreviousOutputChecksums();
  if (!checked_now.ok()) return checked_now.status();
  for (int o = 0; o < tensors_->num_outputs(); ++o) {
    if ((*checked_now)[o] == checked_sums_[o]) continue;
    return Rejected(integrity::Reason(
        integrity::kWorkAfterReturn,
        absl::StrCat("output '", tensors_->output_spec(o).name(), "' of the checked call of trial ",
                     trial, " changed after the call returned and its result was taken: the "
                     "solution writes its results after returning")));
  }
  s = CheckNoDeferredWrites(trial, *at_return, returned, kLateWriteWindow);
  if (s.ok()) s = DiagnoseUnjoinedStream(trial);
  if (!s.ok()) return s;
  return Rejected(integrity::Reason(
      integrity::kNondeterministic,
      absl::StrCat("two calls on the same inputs (trial ", trial, ") gave different values of "
                   "output '", *differs, "'",
                   nondeterministic_ ? ", beyond the definition's tolerances"
                                     : "; the definition requires bitwise-identical results")));
}

absl::Status Evaluation::DiagnoseUnjoinedStream(int trial) {
  // Two calls on the same inputs differed. A value-returning candidate whose work runs on a
  // stream it never joins to ctx->stream hands back outputs before they are written: kiln's copy
  // of them (on ctx->stream) reads whatever is there, and no output changes after the stream is
  // idle. One more call under the CUPTI timer sees the work end after the stream was idle. The
  // outputs already differ, so a smaller slack than the timed calls' check (which has no other
  // evidence) suffices: enough for host/GPU timestamp skew.
  constexpr double kSlackMs = 0.01;
  if (device_->TimerName() != "cupti") return absl::OkStatus();
  absl::Status s = tensors_->RenewOutputs();
  if (!s.ok()) return s;
  bool throttled = false;
  absl::StatusOr<double> ms = device_->TimeCall([this] { return Call(/*timed=*/true); }, &throttled);
  device_->TakeTimedWork();  // not a timed sample
  if (!ms.ok()) return absl::OkStatus();  // the calls' disagreement stays the finding
  const double unjoined = device_->LastCallUnjoinedMs();
  if (unjoined <= kSlackMs) return absl::OkStatus();
  return Rejected(integrity::Reason(
      integrity::kWorkAfterReturn,
      absl::StrCat("two calls on the same inputs (trial ", trial, ") gave different outputs, and "
                   "the call's GPU work ran ", absl::SixDigits(unjoined),
                   " ms after ctx->stream was idle: the solution computes on a stream it never "
                   "joins to ctx->stream (torch's current stream in Python), so its outputs were "
                   "read before they were written (record an event on that stream and make "
                   "ctx->stream wait for it)")));
}

absl::Status Evaluation::CheckNoDeferredWrites(int trial, const std::vector<uint64_t>& at_return,
                                               Clock::time_point returned,
                                               std::chrono::milliseconds window) {
  std::this_thread::sleep_until(returned + window);
  absl::StatusOr<std::vector<uint64_t>> later = tensors_->OutputChecksums();
  if (!later.ok()) return later.status();
  for (int o = 0; o < tensors_->num_outputs(); ++o) {
    if (at_return[o] == (*later)[o]) continue;
    const auto after = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - returned);
    return Rejected(integrity::Reason(
        integrity::kWorkAfterReturn,
        absl::StrCat("output '", tensors_->output_spec(o).name(), "' of the second call of trial ",
                     trial, " changed within ", after.count(),
                     " ms after the call returned and the device was idle: the solution writes "
                     "its results after returning")));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::string> Evaluation::DifferingOutput(bool within_tolerance) {
  if (!within_tolerance) {
    absl::StatusOr<std::vector<uint64_t>> sums = tensors_->OutputChecksums();
    if (!sums.ok()) return sums.status();
    for (int o = 0; o < tensors_->num_outputs(); ++o) {
      if ((*sums)[o] != checked_sums_[o]) return tensors_->output_spec(o).name();
    }
    return std::string();
  }
  absl::StatusOr<std::vector<std::string>> bytes = tensors_->OutputBytes();
  if (!bytes.ok()) return bytes.status();
  const Tolerances tol = TolerancesFor(request_.definition());
  for (int o = 0; o < tensors_->num_outputs(); ++o) {
    Comparison cmp = CompareTensors(tensors_->output_spec(o).dtype(), (*bytes)[o].data(),
                                    checked_outputs_[o].data(), tensors_->output_elements(o), tol);
    if (!cmp.passed) return tensors_->output_spec(o).name();
  }
  return std::string();
}

absl::Status Evaluation::CheckTimedOutputs() {
  if (!checks_ || inplace_ || nondeterministic_) return absl::OkStatus();
  const auto t0 = Clock::now();
  absl::StatusOr<std::string> differs = DifferingOutput(false);
  costs_.output_sums += std::chrono::duration<double>(Clock::now() - t0).count();
  if (!differs.ok() || differs->empty()) return differs.status();
  // Which of two things happened: the timed call left (part of) the output unwritten, holding
  // the poison RenewOutputs put there (work skipped on the timed calls), or it wrote every
  // element with other values than the checked call on the same inputs (a kernel whose results
  // are not a function of its inputs: a data race, a read of uninitialised memory, or work that
  // changes with the call count). Both are refused; the name says which.
  absl::StatusOr<std::vector<std::string>> bytes = tensors_->OutputBytes();
  if (!bytes.ok()) return bytes.status();
  int64_t unwritten = -1;
  for (int o = 0; o < tensors_->num_outputs(); ++o) {
    if (tensors_->output_spec(o).name() != *differs) continue;
    unwritten = FirstPoisonElement(tensors_->output_spec(o).dtype(), (*bytes)[o].data(),
                                   tensors_->output_elements(o));
  }
  if (unwritten < 0) {
    return Rejected(integrity::Reason(
        integrity::kNondeterministic,
        absl::StrCat("output '", *differs, "' of timed call ", calls_in_trial_, " of trial ",
                     current_trial_, " differs from the checked call's on the same inputs, "
                     "though the call wrote every element: its results are not a function of "
                     "its inputs (a data race, a read of uninitialised memory, or work that "
                     "changes with the call count); the definition requires bitwise-identical "
                     "results")));
  }
  return Rejected(integrity::Reason(
      integrity::kStaleOutput,
      absl::StrCat("output '", *differs, "' of timed call ", calls_in_trial_, " of trial ",
                   current_trial_,
                   " differs from the checked call's on the same inputs and element [", unwritten,
                   "] (flat index) still holds kiln's poison: the timed calls did not compute "
                   "what the checked call did")));
}

absl::Status Evaluation::Recheck(int trial) {
  // Nondeterministic definitions skip the per-call checksums; the last timed call is compared
  // within tolerance instead.
  if (checks_ && !inplace_ && nondeterministic_ && calls_in_trial_ > 2) {
    absl::StatusOr<std::string> differs = DifferingOutput(true);
    if (!differs.ok()) return differs.status();
    if (!differs->empty()) {
      return Rejected(integrity::Reason(
          integrity::kStaleOutput,
          absl::StrCat("output '", *differs, "' of the last timed call of trial ", trial,
                       " is not within tolerance of the checked call's on the same inputs")));
    }
  }
  const uint64_t seed = TrialSeed(request_, trial);
  // The inputs were checked unchanged after every call; with no output aliasing an input they
  // still hold the trial's values, and only the perturbed elements are written. Inputs made by
  // the solution's process (fill_inputs) are drawn afresh instead: a few perturbed elements
  // could fall outside what the problem's own generator makes (class indices, say).
  absl::Status s =
      external_ != nullptr && external_->fill_inputs != nullptr
          ? FillExternalInputs(PerturbSeed(seed),
                               absl::StrCat("the recheck inputs of trial ", trial))
          : tensors_->PerturbInputs(seed, PerturbSeed(seed), request_.blob_root(), !inplace_);
  if (!s.ok()) return s;
  absl::StatusOr<std::vector<uint64_t>> sums = tensors_->InputChecksums();
  if (!sums.ok()) return sums.status();
  input_checksums_ = *std::move(sums);
  helpers_.StartAfterOwnThreads();
  s = tensors_->RenewOutputs();
  if (s.ok()) s = Call();
  if (s.ok()) s = CheckUnjoinedWork(absl::StrCat("the recheck of trial ", trial));
  if (s.ok()) s = CheckCall(absl::StrCat("the recheck of trial ", trial));
  if (!s.ok()) return s;
  v1::TrialOutputs record;
  const auto write_start = Clock::now();
  s = tensors_->WriteOutputs(request_.output_dir(), trial, &record, "r");
  costs_.write += std::chrono::duration<double>(Clock::now() - write_start).count();
  if (!s.ok()) return s;
  *result_.add_rechecks() = std::move(record);
  return absl::OkStatus();
}

absl::Status Evaluation::CheckUnjoinedWork(const std::string& what) {
  if (!checks_ || last_return_ != 0) return absl::OkStatus();
  absl::Status s = device_->SynchronizeStream();
  if (!s.ok()) return s;
  absl::StatusOr<std::vector<uint64_t>> at_stream_idle = tensors_->OutputChecksums();
  if (!at_stream_idle.ok()) return at_stream_idle.status();
  s = device_->Synchronize();
  if (!s.ok()) return s;
  absl::StatusOr<std::vector<uint64_t>> at_device_idle = tensors_->OutputChecksums();
  if (!at_device_idle.ok()) return at_device_idle.status();
  for (int o = 0; o < tensors_->num_outputs(); ++o) {
    if ((*at_stream_idle)[o] == (*at_device_idle)[o]) continue;
    return Rejected(integrity::Reason(
        integrity::kWorkAfterReturn,
        absl::StrCat("output '", tensors_->output_spec(o).name(), "' of ", what,
                     " was still being written after the call returned and ctx->stream was "
                     "idle: work on another stream or thread was not joined to ctx->stream")));
  }
  return absl::OkStatus();
}

absl::Status Evaluation::CheckUnjoinedTimedWork(const std::string& what) {
  // The timer saw GPU work of the call still running after ctx->stream was idle. It is inside
  // the CUPTI span (the device is synchronized before the end), but under any timer that waits
  // on the stream it would escape, and the ABI says the work ends with the stream's.
  constexpr double kSlackMs = 0.1;  // host/GPU timestamp skew and wake-up latency
  if (!checks_) return absl::OkStatus();
  double unjoined = device_->LastCallUnjoinedMs();
  if (unjoined <= kSlackMs) return absl::OkStatus();
  return Rejected(integrity::Reason(
      integrity::kWorkAfterReturn,
      absl::StrCat("GPU work of ", what, " ran ", absl::SixDigits(unjoined),
                   " ms after ctx->stream was idle: work on another stream was not joined to "
                   "ctx->stream (record an event there and make ctx->stream wait for it)")));
}

absl::Status Evaluation::Call(bool timed) {
  call_start_ = Clock::now();
  last_return_ = entry_(tensors_->args(), tensors_->nargs(), &context_);
  if (last_return_ == 0 && !timed && collect_ != nullptr) return Collect("the call");
  return absl::OkStatus();
}

absl::Status Evaluation::FillExternalInputs(uint64_t seed, const std::string& what) {
  if (external_ == nullptr || external_->fill_inputs == nullptr) return absl::OkStatus();
  const int code = external_->fill_inputs(tensors_->args(), tensors_->nargs(), &context_, seed);
  if (code == 0) return absl::OkStatus();
  return ExternalFailure(code, absl::StrCat("making ", what));
}

absl::Status Evaluation::Collect(const std::string& what) {
  const int collected = collect_(tensors_->args(), tensors_->nargs(), &context_);
  if (collected == 0) return absl::OkStatus();
  return ExternalFailure(collected, absl::StrCat("collecting the outputs of ", what));
}

absl::Status Evaluation::ExternalFailure(int code, const std::string& what) {
  std::string why = external_->explain ? external_->explain() : std::string();
  switch (code) {
    case kExternalRejected:
      // The runner's reason starts with the check's name, as every REJECTED reason does.
      return Rejected(why.empty() ? absl::StrCat(what, " was refused") : why);
    case kExternalIncorrectShape:
    case kExternalIncorrectDtype: {
      absl::Status status = absl::InvalidArgumentError(why.empty() ? what : why);
      status.SetPayload(kEvaluationStatusPayload,
                        absl::Cord(v1::EvaluationStatus_Name(
                            code == kExternalIncorrectShape ? v1::INCORRECT_SHAPE
                                                            : v1::INCORRECT_DTYPE)));
      return status;
    }
    default:
      return absl::InternalError(absl::StrCat(what, " failed (", code, ")",
                                              why.empty() ? ": the worker log has the reason"
                                                          : absl::StrCat(": ", why)));
  }
}

absl::Status Evaluation::CheckCall(const std::string& what, bool after_timer) {
  if (last_return_ != 0) {
    if (external_ != nullptr) {
      return ExternalFailure(last_return_, absl::StrCat("the solution's call (", what, ")"));
    }
    return absl::InternalError(absl::StrCat("entry point returned ", last_return_));
  }
  const auto t0 = Clock::now();
  absl::Status s = after_timer ? device_->CheckAfterTimedCall() : device_->Synchronize();
  if (!s.ok()) {
    // Which call failed, kept with the status's code and payloads.
    absl::Status named(s.code(), absl::StrCat(s.message(), " (", what, ")"));
    s.ForEachPayload([&named](absl::string_view url, const absl::Cord& payload) {
      named.SetPayload(url, payload);
    });
    return named;
  }
  // Up to the device's idle point: on a GPU the call returns before its work ends.
  const auto t1 = Clock::now();
  const double call_ms = std::chrono::duration<double, std::milli>(t1 - call_start_).count();
  s = tensors_->CheckInputsUnchanged(input_checksums_);
  const auto t2 = Clock::now();
  costs_.sync += std::chrono::duration<double>(t1 - t0).count();
  costs_.input_sums += std::chrono::duration<double>(t2 - t1).count();
  if (!s.ok() || !checks_) return s;
  s = helpers_.CheckWindow(call_ms, what);
  costs_.window += std::chrono::duration<double>(Clock::now() - t2).count();
  return s;
}

absl::Status Evaluation::VerifyOnly() {
  for (int t = 0; t < request_.trial_seeds_size(); ++t) {
    absl::Status s = PrepareTrial(t);
    if (s.ok()) s = Recheck(t);
    if (!s.ok()) return s;
  }
  return absl::OkStatus();
}

absl::Status Evaluation::ProfileCall() {
  // The profile of a solution that passed: its checked calls as in any trial (the harness
  // compares the outputs again), then the call the profiler sees.
  absl::Status s = PrepareTrial(0);
  if (!s.ok()) return s;
  // JIT compilation, lazy module loading and first-call allocations happen here, not under the
  // profiler.
  Report("warmup", 0);
  s = tensors_->RenewOutputs();
  if (s.ok()) s = Call();
  if (s.ok()) s = CheckCall("the warm-up call before the profiled call");
  if (!s.ok()) return s;
  Report("profile", 0);
  s = tensors_->RenewOutputs();
  // The caches start cold, as before every timed call (Nsight Compute flushes them again before
  // each of its replay passes).
  if (s.ok()) s = device_->Flush(device_->DefaultFlushBytes());
  if (s.ok()) s = device_->StartProfiler();
  if (!s.ok()) return s;
  s = Call(/*timed=*/true);
  // The device is idle before the profiler stops: every kernel of the call is in the range.
  absl::Status synced = device_->Synchronize();
  absl::Status stopped = device_->StopProfiler();
  if (s.ok()) s = CheckCall("the profiled call", /*after_timer=*/true);
  if (s.ok()) s = synced;
  if (s.ok()) s = stopped;
  return s;
}

absl::Status Evaluation::Measure() {
  v1::TimingConfig config = request_.timing();
  if (config.mode().empty()) {
    absl::StatusOr<v1::TimingConfig> defaults = DefaultTimingConfig("official");
    if (!defaults.ok()) return defaults.status();
    config = *std::move(defaults);
  }
  TimedCall work;
  work.prepare_trial = [this](int trial) {
    absl::Status s = trial > 0 ? Recheck(trial - 1) : absl::OkStatus();
    if (s.ok()) s = PrepareTrial(trial);
    if (s.ok()) Report("warmup", trial);
    return s;
  };
  work.before_call = [this, warmup = config.warmup()] {
    if (++calls_in_trial_ == warmup + 1) Report("timing", current_trial_);
    const auto t0 = Clock::now();
    absl::Status s = tensors_->RenewOutputs();
    costs_.before += std::chrono::duration<double>(Clock::now() - t0).count();
    return s;
  };
  work.call = [this] { return Call(/*timed=*/true); };
  // After a timed call the timer has waited for the device already (not after a warmup call).
  work.after_call = [this](bool timed) {
    const auto t0 = Clock::now();
    const std::string what =
        absl::StrCat("timed call ", calls_in_trial_, " of trial ", current_trial_);
    absl::Status s = CheckCall(what, /*after_timer=*/timed);
    if (s.ok()) s = CheckUnjoinedTimedWork(what);
    // A value-returning candidate's outputs of this call, collected now that the timer stopped.
    if (s.ok() && collect_timed_) s = Collect(what);
    if (s.ok()) s = CheckTimedOutputs();
    costs_.after += std::chrono::duration<double>(Clock::now() - t0).count();
    return s;
  };
  device_->TakeTimedWork();  // what an earlier request's failed timing left
  CostedDevice costed(*device_, &costs_.flush, &costs_.timed, &costs_.span_ms,
                      &costs_.timed_calls);
  absl::StatusOr<v1::TimingResult> timing = RunTimingProtocol(config, costed, work);
  if (!timing.ok()) return timing.status();
  if (absl::Status s = Recheck(current_trial_); !s.ok()) return s;
  if (timing->device().empty()) timing->set_device(device_->DeviceName());
  RecordTimedWork(device_->TakeTimedWork(), &*timing);
  *result_.mutable_timing() = *std::move(timing);
  return absl::OkStatus();
}

v1::WorkerResult MeasureBandwidth(const v1::WorkerRequest& request) {
  v1::WorkerResult result;
  absl::StatusOr<std::unique_ptr<Device>> device =
      OpenDevice(request.backend(), request.device_index());
  absl::StatusOr<double> gbps = device.ok() ? MeasurePeakBandwidth(**device)
                                            : absl::StatusOr<double>(device.status());
  if (gbps.ok()) {
    result.set_status(v1::PASSED);
    result.set_peak_bandwidth_gbps(*gbps);
  } else {
    result.set_status(v1::RUNTIME_ERROR);
    result.set_error(std::string(gbps.status().message()));
  }
  return result;
}

}  // namespace

uint64_t TrialSeed(const v1::WorkerRequest& request, int trial) {
  int n = request.trial_seeds_size();
  if (n == 0) return SplitMix64(static_cast<uint64_t>(trial));
  if (trial < n) return request.trial_seeds(trial);
  return SplitMix64(request.trial_seeds(trial % n) ^ SplitMix64(static_cast<uint64_t>(trial)));
}

v1::WorkerResult Evaluate(const v1::WorkerRequest& request, const StageReporter& report,
                          const ExternalEntry* external, const TrialGate& gate) {
  if (request.measure_peak_bandwidth()) return MeasureBandwidth(request);
  Evaluation evaluation(request, report, external, gate);
  absl::Status s = evaluation.Setup();
  if (s.ok()) {
    s = request.profile_call() ? evaluation.ProfileCall()
        : request.measure()    ? evaluation.Measure()
                               : evaluation.VerifyOnly();
  }
  v1::WorkerResult result = std::move(evaluation.result());
  std::fprintf(stderr, "kiln-worker: cost: %s\n", evaluation.CostReport().c_str());
  if (s.ok() || evaluation.stopped()) {
    // Stopped at a gate: ran cleanly; the harness has the verdict.
    if (!s.ok()) std::fprintf(stderr, "kiln-worker: %s\n", std::string(s.message()).c_str());
    result.set_status(v1::PASSED);
  } else {
    result.set_status(FailureStatus(s));
    result.set_error(std::string(s.message()));
    evaluation.KeepCandidateBuffers();
  }
  return result;
}

}  // namespace kiln
