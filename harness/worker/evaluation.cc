#include "harness/worker/evaluation.h"

#include <filesystem>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "harness/backend/device.h"
#include "harness/common/files.h"
#include "harness/timing/protocol.h"
#include "harness/worker/failure.h"
#include "harness/worker/open_device.h"
#include "harness/worker/solution_library.h"
#include "harness/worker/tensor_set.h"

namespace kiln {
namespace {

uint64_t SplitMix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

// The state of one evaluation; see Evaluate().
class Evaluation {
 public:
  Evaluation(const v1::WorkerRequest& request, const StageReporter& report)
      : request_(request), report_(report) {}

  absl::Status Setup();
  absl::Status VerifyOnly();
  absl::Status Measure();
  v1::WorkerResult& result() { return result_; }

 private:
  // Fresh inputs for trial t, then one checked call whose outputs are written and recorded.
  absl::Status PrepareTrial(int trial);
  absl::Status CheckedCall(int trial);
  // The solution call alone (the timed part); its return code is kept for CheckCall.
  absl::Status Call();
  // Return code, device errors and input integrity of the last Call.
  absl::Status CheckCall();
  void Report(std::string_view stage, int trial) {
    if (report_) report_(stage, trial);
  }

  const v1::WorkerRequest& request_;
  const StageReporter& report_;
  std::unique_ptr<Device> device_;
  std::unique_ptr<TensorSet> tensors_;
  kiln_entry entry_ = nullptr;
  kiln_context context_{};
  std::vector<uint64_t> input_checksums_;
  int last_return_ = 0;
  int calls_in_trial_ = 0;
  int current_trial_ = 0;
  v1::WorkerResult result_;
};

absl::Status Evaluation::Setup() {
  if (request_.trial_seeds_size() == 0) {
    return absl::InvalidArgumentError("request.trial_seeds: no trial seeds");
  }
  absl::StatusOr<std::unique_ptr<Device>> device =
      OpenDevice(request_.backend(), request_.device_index());
  if (!device.ok()) return device.status();
  device_ = *std::move(device);
  std::error_code ec;
  if (!request_.output_dir().empty() && !std::filesystem::is_directory(request_.output_dir(), ec)) {
    absl::Status s = MakeDirs(request_.output_dir());
    if (!s.ok()) return s;
  }
  context_ = device_->Context();
  absl::StatusOr<SolutionLibrary> lib = LoadSolution(request_.library_path(), request_.symbol());
  if (!lib.ok()) return lib.status();
  entry_ = lib->entry;
  absl::StatusOr<std::unique_ptr<TensorSet>> tensors =
      TensorSet::Create(request_.definition(), request_.workload(), *device_);
  if (!tensors.ok()) return tensors.status();
  tensors_ = *std::move(tensors);
  return absl::OkStatus();
}

absl::Status Evaluation::PrepareTrial(int trial) {
  Report("inputs", trial);
  current_trial_ = trial;
  calls_in_trial_ = 0;
  // Each trial's outputs live in memory allocated for it (trial 0's when the set was created).
  absl::Status s = trial > 0 ? tensors_->AllocateOutputs() : absl::OkStatus();
  if (s.ok()) s = tensors_->GenerateInputs(TrialSeed(request_, trial), request_.blob_root());
  if (!s.ok()) return s;
  absl::StatusOr<std::vector<uint64_t>> sums = tensors_->InputChecksums();
  if (!sums.ok()) return sums.status();
  input_checksums_ = *std::move(sums);
  Report("verify", trial);
  return CheckedCall(trial);
}

absl::Status Evaluation::CheckedCall(int trial) {
  absl::Status s = tensors_->RenewOutputs();
  if (s.ok()) s = Call();
  if (s.ok()) s = CheckCall();
  if (!s.ok()) return s;
  v1::TrialOutputs record;
  s = tensors_->WriteOutputs(request_.output_dir(), trial, &record);
  if (!s.ok()) return s;
  *result_.add_trials() = std::move(record);
  return absl::OkStatus();
}

absl::Status Evaluation::Call() {
  last_return_ = entry_(tensors_->args(), tensors_->nargs(), &context_);
  return absl::OkStatus();
}

absl::Status Evaluation::CheckCall() {
  if (last_return_ != 0) {
    return absl::InternalError(absl::StrCat("entry point returned ", last_return_));
  }
  absl::Status s = device_->Synchronize();
  if (!s.ok()) return s;
  return tensors_->CheckInputsUnchanged(input_checksums_);
}

absl::Status Evaluation::VerifyOnly() {
  for (int t = 0; t < request_.trial_seeds_size(); ++t) {
    absl::Status s = PrepareTrial(t);
    if (!s.ok()) return s;
  }
  return absl::OkStatus();
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
    absl::Status s = PrepareTrial(trial);
    if (s.ok()) Report("warmup", trial);
    return s;
  };
  work.before_call = [this, warmup = config.warmup()] {
    if (++calls_in_trial_ == warmup + 1) Report("timing", current_trial_);
    return tensors_->RenewOutputs();
  };
  work.call = [this] { return Call(); };
  work.after_call = [this] { return CheckCall(); };
  absl::StatusOr<v1::TimingResult> timing = RunTimingProtocol(config, *device_, work);
  if (!timing.ok()) return timing.status();
  if (timing->device().empty()) timing->set_device(device_->DeviceName());
  *result_.mutable_timing() = *std::move(timing);
  return absl::OkStatus();
}

}  // namespace

uint64_t TrialSeed(const v1::WorkerRequest& request, int trial) {
  int n = request.trial_seeds_size();
  if (n == 0) return SplitMix64(static_cast<uint64_t>(trial));
  if (trial < n) return request.trial_seeds(trial);
  return SplitMix64(request.trial_seeds(trial % n) ^ SplitMix64(static_cast<uint64_t>(trial)));
}

v1::WorkerResult Evaluate(const v1::WorkerRequest& request, const StageReporter& report) {
  Evaluation evaluation(request, report);
  absl::Status s = evaluation.Setup();
  if (s.ok()) s = request.measure() ? evaluation.Measure() : evaluation.VerifyOnly();
  v1::WorkerResult result = std::move(evaluation.result());
  if (s.ok()) {
    result.set_status(v1::PASSED);
  } else {
    result.set_status(FailureStatus(s));
    result.set_error(std::string(s.message()));
  }
  return result;
}

}  // namespace kiln
