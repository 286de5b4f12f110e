// The integrity checks of a worker evaluation around the solution's calls: work after return
// (unjoined streams and threads, deferred writes), the timed outputs against the checked call's,
// the recheck on perturbed inputs, and the checks after every call.
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

namespace kiln::worker_evaluation {

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

absl::Status Evaluation::CheckTimedOutputs(const std::vector<uint64_t>* sums, int call) {
  if (!checks_ || inplace_ || nondeterministic_) return absl::OkStatus();
  const auto t0 = Clock::now();
  absl::StatusOr<std::string> differs = std::string();
  if (sums == nullptr) {
    differs = DifferingOutput(false);
  } else {
    for (int o = 0; o < tensors_->num_outputs(); ++o) {
      if ((*sums)[o] == checked_sums_[o]) continue;
      differs = tensors_->output_spec(o).name();
      break;
    }
  }
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
        absl::StrCat("output '", *differs, "' of timed call ", call, " of trial ",
                     current_trial_, " differs from the checked call's on the same inputs, "
                     "though the call wrote every element: its results are not a function of "
                     "its inputs (a data race, a read of uninitialised memory, or work that "
                     "changes with the call count); the definition requires bitwise-identical "
                     "results")));
  }
  return Rejected(integrity::Reason(
      integrity::kStaleOutput,
      absl::StrCat("output '", *differs, "' of timed call ", call, " of trial ",
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
  s = WriteTrialOutputs(trial, &record, /*recheck=*/true);
  if (!s.ok()) return s;
  *result_.add_rechecks() = std::move(record);
  return Gate(trial, result_.rechecks(result_.rechecks_size() - 1), /*recheck=*/true);
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

absl::Status Evaluation::CheckUnjoinedDeferredWork(int trial, int warmup) {
  constexpr double kSlackMs = 0.1;  // as CheckUnjoinedTimedWork's
  if (!checks_ || !device_->DefersSamples()) return absl::OkStatus();
  const std::vector<double> unjoined = device_->DeferredUnjoinedMs();
  for (size_t k = 0; k < unjoined.size(); ++k) {
    if (unjoined[k] <= kSlackMs) continue;
    return Rejected(integrity::Reason(
        integrity::kWorkAfterReturn,
        absl::StrCat("GPU work of timed call ", warmup + 1 + static_cast<int>(k), " of trial ",
                     trial, " ran ", absl::SixDigits(unjoined[k]),
                     " ms after ctx->stream was idle: work on another stream was not joined to "
                     "ctx->stream (record an event there and make ctx->stream wait for it)")));
  }
  return absl::OkStatus();
}

absl::Status Evaluation::CheckReturnAndDevice(const std::string& what, bool after_timer) {
  if (last_return_ != 0) {
    if (external_ != nullptr) {
      return ExternalFailure(last_return_, absl::StrCat("the solution's call (", what, ")"));
    }
    return absl::InternalError(absl::StrCat("entry point returned ", last_return_));
  }
  absl::Status s = after_timer ? device_->CheckAfterTimedCall() : device_->Synchronize();
  if (s.ok()) return s;
  // Which call failed, kept with the status's code and payloads.
  absl::Status named(s.code(), absl::StrCat(s.message(), " (", what, ")"));
  s.ForEachPayload([&named](absl::string_view url, const absl::Cord& payload) {
    named.SetPayload(url, payload);
  });
  return named;
}

absl::Status Evaluation::CheckCall(const std::string& what, bool after_timer,
                                   std::vector<uint64_t>* output_sums, bool collect) {
  const auto t0 = Clock::now();
  absl::Status s = CheckReturnAndDevice(what, after_timer);
  if (!s.ok()) return s;
  // Up to the device's idle point: on a GPU the call returns before its work ends.
  const auto t1 = Clock::now();
  const double call_ms = std::chrono::duration<double, std::milli>(t1 - call_start_).count();
  // A value-returning candidate's outputs, copied into place before they are checksummed.
  if (collect) {
    s = Collect(what);
    if (!s.ok()) return s;
  }
  s = tensors_->CheckInputsUnchanged(input_checksums_, output_sums);
  const auto t2 = Clock::now();
  costs_.sync += std::chrono::duration<double>(t1 - t0).count();
  costs_.input_sums += std::chrono::duration<double>(t2 - t1).count();
  if (!s.ok() || !checks_) return s;
  s = helpers_.CheckWindow(call_ms, what);
  costs_.window += std::chrono::duration<double>(Clock::now() - t2).count();
  return s;
}

absl::Status Evaluation::CheckWarmupCall() {
  const std::string what =
      absl::StrCat("timed call ", calls_in_trial_, " of trial ", current_trial_);
  absl::Status s = CheckCall(what);
  if (s.ok()) s = CheckUnjoinedTimedWork(what);
  if (s.ok() && collect_timed_) s = Collect(what);
  if (s.ok()) s = CheckTimedOutputs(nullptr, calls_in_trial_);
  return s;
}

absl::Status Evaluation::StartTimedChecks() {
  pending_ = PendingChecks();
  PendingChecks p;
  p.call = calls_in_trial_;
  p.what = absl::StrCat("timed call ", calls_in_trial_, " of trial ", current_trial_);
  // The timer waited for the device: what is left is a launch that failed without running.
  const auto t0 = Clock::now();
  absl::Status s = CheckReturnAndDevice(p.what, /*after_timer=*/true);
  if (!s.ok()) return s;
  const auto t1 = Clock::now();
  const double call_ms = std::chrono::duration<double, std::milli>(t1 - call_start_).count();
  // A value-returning candidate's outputs of this call, copied into place (queued on the
  // stream) before their checksums are queued behind them.
  if (collect_timed_) {
    s = Collect(p.what);
    if (!s.ok()) return s;
  }
  p.with_outputs = checks_ && !inplace_ && !nondeterministic_;
  s = tensors_->QueueInputCheck(p.with_outputs);
  const auto t2 = Clock::now();
  costs_.sync += std::chrono::duration<double>(t1 - t0).count();
  costs_.input_sums += std::chrono::duration<double>(t2 - t1).count();
  if (!s.ok()) return s;
  // The other threads' CPU time while the device computes the checksums.
  if (checks_) {
    p.window = helpers_.CheckWindow(call_ms, p.what);
    costs_.window += std::chrono::duration<double>(Clock::now() - t2).count();
  }
  p.active = true;
  pending_ = std::move(p);
  return absl::OkStatus();
}

absl::Status Evaluation::FinishTimedChecks() {
  if (!pending_.active) return absl::OkStatus();
  PendingChecks p = std::move(pending_);
  pending_ = PendingChecks();
  const auto t0 = Clock::now();
  std::vector<uint64_t> output_sums;
  absl::Status s =
      tensors_->FinishInputCheck(input_checksums_, p.with_outputs ? &output_sums : nullptr);
  costs_.input_sums += std::chrono::duration<double>(Clock::now() - t0).count();
  if (!s.ok()) return s;
  if (!p.window.ok()) return p.window;
  s = CheckUnjoinedTimedWork(p.what);
  if (s.ok()) s = CheckTimedOutputs(p.with_outputs ? &output_sums : nullptr, p.call);
  return s;
}

}  // namespace kiln::worker_evaluation
