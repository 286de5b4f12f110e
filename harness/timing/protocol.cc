#include "harness/timing/protocol.h"

#include <chrono>
#include <cmath>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "harness/timing/noise_criterion.h"
#include "harness/timing/statistics.h"

namespace kiln {
namespace {

constexpr int64_t kKernelBenchFlushBytes = int64_t{256} << 20;
// nvbench's min-time: the noise criterion is consulted only after this much measured time.
constexpr double kRobustMinTimeMs = 500;

// Everything one protocol run needs; flush_bytes is already resolved to a byte count.
struct Run {
  const v1::TimingConfig& config;
  TimedDevice& device;
  const TimedCall& work;
  int64_t flush_bytes;
};

absl::Status BeforeCall(const Run& run, bool flushed) {
  return run.work.before_call ? run.work.before_call(flushed) : absl::OkStatus();
}

absl::Status CheckSample(const Run& run, double ms) {
  if (std::isfinite(ms) && ms >= 0) return absl::OkStatus();
  return absl::InternalError(
      absl::StrCat("timer '", run.device.TimerName(), "' returned an invalid sample: ", ms, " ms"));
}

// An untimed call. flashinfer-bench flushes before warmup calls too (bench_gpu_time_with_cupti
// and do_bench both zero the buffer before every dry run); KernelBench's warmup does not.
absl::Status WarmupCall(const Run& run, bool flush) {
  if (absl::Status s = BeforeCall(run, flush); !s.ok()) return s;
  if (flush) {
    if (absl::Status s = run.device.Flush(run.flush_bytes); !s.ok()) return s;
  }
  if (absl::Status s = run.work.call(); !s.ok()) return s;
  return run.work.after_call ? run.work.after_call(/*timed=*/false) : absl::OkStatus();
}

absl::Status FinishChecks(const Run& run) {
  return run.work.finish_checks ? run.work.finish_checks() : absl::OkStatus();
}

// One sample: before_call, flush (which leaves the device idle), the previous timed call's
// queued checks, the timed call, after_call. `ms` null: the device defers the sample
// (TimeCallDeferred).
absl::Status TimedSample(const Run& run, double* ms, bool* throttled) {
  if (absl::Status s = BeforeCall(run, /*flushed=*/true); !s.ok()) return s;
  if (absl::Status s = run.device.Flush(run.flush_bytes); !s.ok()) return s;
  if (absl::Status s = FinishChecks(run); !s.ok()) return s;
  *throttled = false;
  if (ms == nullptr) {
    if (absl::Status s = run.device.TimeCallDeferred(run.work.call, throttled); !s.ok()) return s;
  } else {
    absl::StatusOr<double> sample = run.device.TimeCall(run.work.call, throttled);
    if (!sample.ok()) return sample.status();
    if (absl::Status s = CheckSample(run, *sample); !s.ok()) return s;
    *ms = *sample;
  }
  return run.work.after_call ? run.work.after_call(/*timed=*/true) : absl::OkStatus();
}

absl::Status AfterSamples(const Run& run, int trial) {
  return run.work.after_samples ? run.work.after_samples(trial) : absl::OkStatus();
}

absl::Status PrepareTrial(const Run& run, int trial) {
  run.device.StartInputSet();
  return run.work.prepare_trial ? run.work.prepare_trial(trial) : absl::OkStatus();
}

// official and kernelbench: fixed trials x (warmup + iterations). Every sample is kept.
absl::Status RunFixed(const Run& run, bool flush_warmup, v1::TimingResult* result,
                      std::vector<double>* samples, int64_t* throttled) {
  for (int trial = 0; trial < run.config.trials(); ++trial) {
    if (absl::Status s = PrepareTrial(run, trial); !s.ok()) return s;
    for (int i = 0; i < run.config.warmup(); ++i) {
      if (absl::Status s = WarmupCall(run, flush_warmup); !s.ok()) return s;
    }
    // A device that defers its samples is read once per trial, after the timed calls.
    const bool deferred = run.device.DefersSamples();
    std::vector<double> trial_samples;
    trial_samples.reserve(run.config.iterations());
    for (int i = 0; i < run.config.iterations(); ++i) {
      double ms = 0;
      bool is_throttled = false;
      if (absl::Status s = TimedSample(run, deferred ? nullptr : &ms, &is_throttled); !s.ok()) {
        return s;
      }
      *throttled += is_throttled ? 1 : 0;
      if (!deferred) trial_samples.push_back(ms);
    }
    if (absl::Status s = FinishChecks(run); !s.ok()) return s;
    if (deferred) {
      absl::StatusOr<std::vector<double>> taken = run.device.TakeDeferredSamples();
      if (!taken.ok()) return taken.status();
      if (static_cast<int>(taken->size()) != run.config.iterations()) {
        return absl::InternalError(absl::StrCat("timer '", run.device.TimerName(), "' returned ",
                                                taken->size(), " deferred samples for ",
                                                run.config.iterations(), " timed calls"));
      }
      for (double ms : *taken) {
        if (absl::Status s = CheckSample(run, ms); !s.ok()) return s;
      }
      trial_samples = *std::move(taken);
    }
    if (absl::Status s = AfterSamples(run, trial); !s.ok()) return s;
    result->add_trial_medians_ms(Median(trial_samples));
    samples->insert(samples->end(), trial_samples.begin(), trial_samples.end());
  }
  return absl::OkStatus();
}

struct RobustOutcome {
  int64_t taken = 0, dropped = 0;
  std::string stop_reason;
};

// robust: one trial, cold samples until the noise criterion or the cap; throttled samples are
// dropped. The cap applies to wall time and, so that it also bounds a device whose samples run
// long, to the summed sample time.
absl::Status RunRobust(const Run& run, std::vector<double>* kept, RobustOutcome* out) {
  if (absl::Status s = PrepareTrial(run, 0); !s.ok()) return s;
  for (int i = 0; i < run.config.warmup(); ++i) {
    if (absl::Status s = WarmupCall(run, /*flush=*/true); !s.ok()) return s;
  }
  NoiseCriterion criterion(run.config.target_rel_stdev(), kRobustMinTimeMs);
  const double cap_ms = run.config.max_seconds() * 1000;
  const auto start = std::chrono::steady_clock::now();
  double measured_ms = 0;  // every sample taken, throttled ones included
  for (;;) {
    const double wall_ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    if (wall_ms >= cap_ms || measured_ms >= cap_ms) {
      out->stop_reason = absl::StrFormat("stopped at the %gs cap", run.config.max_seconds());
      break;
    }
    if (run.config.iterations() > 0 && out->taken >= run.config.iterations()) {
      out->stop_reason = absl::StrCat("stopped at ", run.config.iterations(), " samples");
      break;
    }
    double ms = 0;
    bool throttled = false;
    if (absl::Status s = TimedSample(run, &ms, &throttled); !s.ok()) return s;
    ++out->taken;
    measured_ms += ms;
    if (throttled) {
      ++out->dropped;
      continue;
    }
    kept->push_back(ms);
    criterion.AddSample(ms);
    if (static_cast<int64_t>(kept->size()) >= run.config.min_samples() && criterion.IsFinished()) {
      out->stop_reason = criterion.converged() ? "stopped when the noise converged"
                                               : "stopped below the target noise";
      break;
    }
  }
  absl::StrAppendFormat(&out->stop_reason, " (relative stdev %.3g%%)", criterion.noise() * 100);
  if (absl::Status s = FinishChecks(run); !s.ok()) return s;
  return AfterSamples(run, 0);
}

void FillStatistics(const std::vector<double>& samples, v1::TimingResult* r) {
  r->mutable_samples_ms()->Assign(samples.begin(), samples.end());
  const SampleStats s = Summarize(samples);
  r->set_sample_count(s.count);
  r->set_median_ms(s.median);
  r->set_mean_ms(s.mean);
  r->set_stdev_ms(s.stdev);
  r->set_min_ms(s.min);
  r->set_max_ms(s.max);
  r->set_q1_ms(s.q1);
  r->set_q3_ms(s.q3);
  r->set_ci95_low_ms(s.ci95_low);
  r->set_ci95_high_ms(s.ci95_high);
}

absl::Status Validate(const v1::TimingConfig& c, const TimedCall& work) {
  const auto bad = [](absl::string_view field, absl::string_view need) {
    return absl::InvalidArgumentError(absl::StrCat("timing.", field, " must be ", need));
  };
  if (!work.call) return absl::InvalidArgumentError("timing: no call to time");
  if (c.warmup() < 0) return bad("warmup", ">= 0");
  if (c.flush_bytes() < 0) return bad("flush_bytes", ">= 0 (0: the mode's default)");
  if (c.mode() == "robust") {
    if (c.min_samples() < 1) return bad("min_samples", ">= 1");
    if (!(c.target_rel_stdev() > 0)) return bad("target_rel_stdev", "> 0");
    if (!(c.max_seconds() > 0)) return bad("max_seconds", "> 0");
    if (c.iterations() < 0) return bad("iterations", ">= 0 (0: no limit)");
    return absl::OkStatus();
  }
  if (c.trials() < 1) return bad("trials", ">= 1");
  if (c.iterations() < 1) return bad("iterations", ">= 1");
  return absl::OkStatus();
}

int64_t ResolveFlushBytes(const v1::TimingConfig& c, const TimedDevice& device) {
  if (c.flush_bytes() > 0) return c.flush_bytes();
  return c.mode() == "kernelbench" ? kKernelBenchFlushBytes : device.DefaultFlushBytes();
}

absl::Status RobustMode(const Run& run, v1::TimingResult* result) {
  std::vector<double> samples;
  RobustOutcome outcome;
  if (absl::Status s = RunRobust(run, &samples, &outcome); !s.ok()) return s;
  if (samples.empty()) {
    return absl::UnavailableError(absl::StrCat("robust timing: all ", outcome.taken,
                                               " samples were taken under clock throttling"));
  }
  result->set_trials(1);
  result->set_iterations(static_cast<int32_t>(outcome.taken));
  result->set_samples_dropped(outcome.dropped);
  result->add_trial_medians_ms(Median(samples));
  FillStatistics(samples, result);
  result->set_latency_ms(result->median_ms());
  if (outcome.dropped > 0) {
    absl::StrAppend(&outcome.stop_reason, "; dropped ", outcome.dropped, " throttled samples");
  }
  result->set_note(outcome.stop_reason);
  return absl::OkStatus();
}

// official: latency = mean of the per-trial medians; kernelbench: mean of all samples.
absl::Status FixedMode(const Run& run, v1::TimingResult* result) {
  const std::string& mode = run.config.mode();
  std::vector<double> samples;
  int64_t throttled = 0;
  if (absl::Status s =
          RunFixed(run, /*flush_warmup=*/mode == "official", result, &samples, &throttled);
      !s.ok()) {
    return s;
  }
  result->set_trials(run.config.trials());
  result->set_iterations(run.config.iterations());
  FillStatistics(samples, result);
  if (mode == "official") {
    double sum = 0;
    for (double m : result->trial_medians_ms()) sum += m;
    result->set_latency_ms(sum / result->trial_medians_ms_size());
  } else {
    result->set_latency_ms(result->mean_ms());
  }
  if (throttled > 0) {
    result->set_note(absl::StrCat(throttled, " of ", samples.size(),
                                  " samples were taken under clock throttling (kept, as ", mode,
                                  " does)"));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<v1::TimingConfig> DefaultTimingConfig(const std::string& mode) {
  v1::TimingConfig c;
  if (mode == "official" || mode.empty()) {  // official is the default mode
    c.set_mode("official");
    c.set_trials(3);
    c.set_warmup(10);
    c.set_iterations(50);
    c.set_flush_bytes(0);
  } else if (mode == "kernelbench") {
    c.set_mode("kernelbench");
    c.set_trials(1);
    c.set_warmup(3);
    c.set_iterations(100);
    c.set_flush_bytes(kKernelBenchFlushBytes);
  } else if (mode == "robust") {
    c.set_mode("robust");
    c.set_trials(1);
    c.set_warmup(10);
    c.set_iterations(0);
    c.set_min_samples(10);
    c.set_target_rel_stdev(0.005);
    c.set_max_seconds(15);
    c.set_flush_bytes(0);
  } else {
    return absl::InvalidArgumentError(absl::StrCat("unknown timing mode '", mode,
                                                   "' (expected official, kernelbench or robust)"));
  }
  return c;
}

absl::StatusOr<v1::TimingConfig> TimingConfigFor(const std::string& mode,
                                                 const v1::Definition& def) {
  absl::StatusOr<v1::TimingConfig> config = DefaultTimingConfig(mode);
  if (!config.ok() || config->mode() != "official") return config;
  const v1::TimingOverrides& o = def.timing_overrides();
  if (o.has_warmup()) config->set_warmup(o.warmup());
  if (o.has_iterations()) config->set_iterations(o.iterations());
  if (o.has_trials()) config->set_trials(o.trials());
  return config;
}

absl::StatusOr<v1::TimingResult> RunTimingProtocol(const v1::TimingConfig& config,
                                                   TimedDevice& device, const TimedCall& work) {
  const std::string& mode = config.mode();
  if (mode != "official" && mode != "kernelbench" && mode != "robust") {
    return absl::InvalidArgumentError(absl::StrCat("unknown timing mode '", mode,
                                                   "' (expected official, kernelbench or robust)"));
  }
  if (absl::Status s = Validate(config, work); !s.ok()) return s;
  const Run run{config, device, work, ResolveFlushBytes(config, device)};
  v1::TimingResult result;
  result.set_mode(mode);
  result.set_timer(device.TimerName());
  result.set_device(device.DeviceName());
  result.set_flush_bytes(run.flush_bytes);
  result.set_warmup(config.warmup());
  absl::Status s = mode == "robust" ? RobustMode(run, &result) : FixedMode(run, &result);
  if (!s.ok()) return s;
  return result;
}

}  // namespace kiln
