// The three timing protocols of kiln (DESIGN §5), independent of the device: a TimedDevice
// supplies the cache flush and the timer, a TimedCall the work.
//
//   official:    per trial: fresh inputs, `warmup` calls, then `iterations` calls each preceded
//                by a flush + synchronize; sample = span of the call; per-trial median; latency =
//                mean of the trial medians. Defaults 3 trials, 10 warmup, 50 iterations, 2x L2/LLC.
//                As flashinfer-bench, every warmup call is preceded by a flush too.
//   kernelbench: 3 warmup, 100 calls, 256 MiB flush, sync around each; latency = mean (+ stdev).
//                As KernelBench, warmup calls are not flushed.
//   robust:      cold cache each sample, >= min_samples samples, stop once relative stdev <
//                target after >= 0.5 s of measured time or when the noise stops improving, hard
//                cap max_seconds; samples the device flags as throttled are dropped; full
//                distribution reported. (The criterion is nvbench's; see noise_criterion.h.)
//                The cap bounds both wall time and summed sample time; `iterations` > 0 also
//                caps the samples taken.
//
// Call order, per call: before_call, [Flush], call, after_call; a timed call's after_call may
// leave checks queued on the device, and finish_checks completes them after the next call's
// Flush (which leaves the device idle) and after a trial's last timed call. Per trial:
// StartInputSet and prepare_trial(t) first. Official and kernelbench keep throttled samples (and say so in TimingResult.note);
// robust drops them and counts them in samples_dropped. TimingResult.iterations is the number of
// timed calls per trial (robust: all samples taken, dropped ones included).
#ifndef KILN_HARNESS_TIMING_PROTOCOL_H_
#define KILN_HARNESS_TIMING_PROTOCOL_H_

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "kiln/v1/types.pb.h"
#include "kiln/v1/worker.pb.h"

namespace kiln {

class TimedDevice {
 public:
  virtual ~TimedDevice() = default;
  // Evicts the caches the protocol must start cold (writes zeros to a buffer of `bytes`) and
  // waits until the device is idle.
  virtual absl::Status Flush(int64_t bytes) = 0;
  // Runs `call` once and returns its duration in milliseconds as this device's timer sees it.
  // *throttled is set when the device reports the sample was taken under clock throttling.
  virtual absl::StatusOr<double> TimeCall(const std::function<absl::Status()>& call,
                                          bool* throttled) = 0;
  virtual std::string TimerName() const = 0;  // "host", "cupti", "events"
  // 2x the last-level cache (host) or 2x L2 (GPU): the official flush size.
  virtual int64_t DefaultFlushBytes() const = 0;
  virtual std::string DeviceName() const = 0;
  // The calls timed from now on run on a new input set (a trial's fresh inputs): a timer that
  // compares the work of timed calls (CUPTI: the same kernels, copies and fills) compares them
  // only with calls on the same inputs. Called before every prepare_trial.
  virtual void StartInputSet() {}

  // Deferred samples. A timer that reads its samples more cheaply in one batch (CUPTI: one
  // flush of the activity buffers after a trial's timed calls, as flashinfer-bench flushes once
  // after its timed loop, instead of one flush per call between the calls) says so here. The
  // fixed-count protocols then time each call of a trial with TimeCallDeferred, which runs the
  // call and waits for the device exactly as TimeCall does but returns no sample, and read the
  // trial's samples in call order with TakeDeferredSamples. Robust mode, which decides after
  // every sample whether to stop, always uses TimeCall.
  virtual bool DefersSamples() const { return false; }
  virtual absl::Status TimeCallDeferred(const std::function<absl::Status()>& call,
                                        bool* throttled) {
    (void)call;
    (void)throttled;
    return absl::UnimplementedError("this timer does not defer samples");
  }
  virtual absl::StatusOr<std::vector<double>> TakeDeferredSamples() {
    return absl::UnimplementedError("this timer does not defer samples");
  }
};

struct TimedCall {
  std::function<absl::Status(int trial)> prepare_trial;  // fresh inputs for this trial
  // Untimed (poison outputs, ...). `flushed`: a Flush follows before the call, and it waits for
  // the device, so work this queues on the device need not be waited for here.
  std::function<absl::Status(bool flushed)> before_call;
  std::function<absl::Status()> call;  // timed
  // Untimed (integrity checks, ...). `timed`: the call was a timed sample, so the device's
  // TimeCall has waited for the device; false after a warmup call.
  std::function<absl::Status(bool timed)> after_call;
  // Untimed, optional: what after_call of a timed call left queued on the device (checksums
  // still being computed there), completed once the device is idle: after the Flush before the
  // next timed call, and after a trial's last timed call (before its samples are taken). The
  // checks of call i then run on the device back to back with call i + 1's flush, one wait for
  // both, so the timed calls are spaced as closely as the official loop spaces them.
  std::function<absl::Status()> finish_checks;
  // Untimed, optional: after the timed calls of trial `trial` and once their samples are known
  // (with a device that defers samples, after TakeDeferredSamples): the checks that need what
  // the timer saw of every call.
  std::function<absl::Status(int trial)> after_samples;
};

// The defaults of a mode ("official" | "kernelbench" | "robust"; "" gives official, the default
// mode); unknown mode is an error. flush_bytes 0 means "the device's default" for official and
// robust (and 256 MiB for kernelbench).
absl::StatusOr<v1::TimingConfig> DefaultTimingConfig(const std::string& mode);

// The config a workload of `def` is timed with in `mode`: the mode's defaults, with the
// definition's timed-call counts (Definition.timing_overrides, from `kiln defs set`) in official
// mode, the flashinfer-bench protocol whose counts the contest set per definition. kernelbench
// keeps KernelBench's fixed protocol and robust its stopping rule: their numbers stay comparable
// across definitions.
absl::StatusOr<v1::TimingConfig> TimingConfigFor(const std::string& mode,
                                                 const v1::Definition& def);

// Runs the protocol. Any error from the callbacks or the device aborts and is returned
// unchanged. A config out of range (trials < 1, ...) is INVALID_ARGUMENT naming the field; a
// robust run whose every sample was throttled is UNAVAILABLE.
absl::StatusOr<v1::TimingResult> RunTimingProtocol(const v1::TimingConfig& config,
                                                   TimedDevice& device, const TimedCall& work);

}  // namespace kiln

#endif  // KILN_HARNESS_TIMING_PROTOCOL_H_
