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
#include "harness/worker/evaluation_state.h"
#include "harness/worker/failure.h"
#include "harness/worker/helper_threads.h"
#include "harness/worker/open_device.h"
#include "harness/worker/peak_bandwidth.h"
#include "harness/worker/solution_library.h"
#include "harness/worker/tensor_set.h"
#include "harness/worker/timed_work.h"

namespace kiln {
namespace worker_evaluation {

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
  bool DefersSamples() const override { return inner_.DefersSamples(); }
  absl::Status TimeCallDeferred(const std::function<absl::Status()>& call,
                                bool* throttled) override {
    const auto t0 = Clock::now();
    absl::Status s = inner_.TimeCallDeferred(call, throttled);
    *timed_s_ += std::chrono::duration<double>(Clock::now() - t0).count();
    ++*calls_;
    return s;
  }
  absl::StatusOr<std::vector<double>> TakeDeferredSamples() override {
    const auto t0 = Clock::now();
    absl::StatusOr<std::vector<double>> samples = inner_.TakeDeferredSamples();
    *timed_s_ += std::chrono::duration<double>(Clock::now() - t0).count();
    if (samples.ok()) {
      for (double ms : *samples) *span_ms_ += ms;
    }
    return samples;
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
  if (!c.call_gaps_ms.empty()) {
    // How far apart the timed calls ran on the device: the flush and kiln's checks between them.
    std::vector<double> gaps = c.call_gaps_ms;
    std::sort(gaps.begin(), gaps.end());
    absl::StrAppendFormat(&out, "; the device between timed calls: median %.3f ms, p90 %.3f ms",
                          gaps[gaps.size() / 2], gaps[gaps.size() * 9 / 10]);
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
  // The files were written from the checked call's outputs (the second call wrote its own
  // buffers).
  if (s.ok()) s = Gate(trial, result_.trials(result_.trials_size() - 1), /*recheck=*/false);
  return s;
}

absl::Status Evaluation::Gate(int trial, const v1::TrialOutputs& outputs, bool recheck) {
  if (!request_.gate_trials()) return absl::OkStatus();
  if (!gate_) return absl::InvalidArgumentError("request.gate_trials: this worker has no gate");
  const auto t0 = Clock::now();
  absl::StatusOr<bool> go = gate_(outputs, recheck);
  costs_.gate += std::chrono::duration<double>(Clock::now() - t0).count();
  if (!go.ok()) return go.status();
  if (*go) return absl::OkStatus();
  stopped_ = true;
  return absl::AbortedError(
      recheck ? absl::StrCat("the harness found the recheck outputs of trial ", trial,
                             " incorrect: stopped")
              : absl::StrCat("the harness found the outputs of trial ", trial,
                             " incorrect: not timed"));
}

absl::Status Evaluation::CheckedCall(int trial) {
  absl::Status s = tensors_->RenewOutputs();
  if (s.ok()) s = Call();
  if (s.ok()) s = CheckUnjoinedWork(absl::StrCat("the checked call of trial ", trial));
  if (s.ok()) s = CheckCall(absl::StrCat("the checked call of trial ", trial));
  if (!s.ok()) return s;
  v1::TrialOutputs record;
  s = WriteTrialOutputs(trial, &record, /*recheck=*/false);
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

absl::Status Evaluation::WriteTrialOutputs(int trial, v1::TrialOutputs* record, bool recheck) {
  const auto start = Clock::now();
  absl::Status s = tensors_->WriteOutputs(request_.output_dir(), trial, record, recheck);
  costs_.write += std::chrono::duration<double>(Clock::now() - start).count();
  // Threads of kiln's own wrote a large output: the other threads' CPU time is counted from
  // after them.
  if (s.ok() && tensors_->TakeUsedWriteThreads()) helpers_.StartAfterOwnThreads();
  return s;
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
  work.before_call = [this, warmup = config.warmup()](bool flushed) {
    if (++calls_in_trial_ == warmup + 1) Report("timing", current_trial_);
    const auto t0 = Clock::now();
    // Before a flushed call the poison is only queued: the flush waits for the device.
    absl::Status s = tensors_->RenewOutputs(/*wait=*/!flushed);
    costs_.before += std::chrono::duration<double>(Clock::now() - t0).count();
    return s;
  };
  work.call = [this] { return Call(/*timed=*/true); };
  // After a timed call the timer has waited for the device already (not after a warmup call);
  // its checks are queued and finished after the next call's flush (finish_checks).
  work.after_call = [this](bool timed) {
    const auto t0 = Clock::now();
    absl::Status s = timed ? StartTimedChecks() : CheckWarmupCall();
    costs_.after += std::chrono::duration<double>(Clock::now() - t0).count();
    return s;
  };
  work.finish_checks = [this] {
    const auto t0 = Clock::now();
    absl::Status s = FinishTimedChecks();
    costs_.after += std::chrono::duration<double>(Clock::now() - t0).count();
    return s;
  };
  work.after_samples = [this, warmup = config.warmup()](int trial) {
    const std::vector<double> gaps = device_->DeferredCallGapsMs();
    costs_.call_gaps_ms.insert(costs_.call_gaps_ms.end(), gaps.begin(), gaps.end());
    return CheckUnjoinedDeferredWork(trial, warmup);
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

}  // namespace worker_evaluation

using worker_evaluation::Evaluation;
using worker_evaluation::MeasureBandwidth;
using worker_evaluation::SplitMix64;

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
