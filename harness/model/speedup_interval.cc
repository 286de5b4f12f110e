#include "harness/model/speedup_interval.h"

#include <algorithm>
#include <cmath>

namespace kiln {

namespace {

bool Positive(double v) { return std::isfinite(v) && v > 0; }

}  // namespace

Interval LatencyInterval(const v1::TimingResult& timing, double latency_ms) {
  Interval out{latency_ms, latency_ms, latency_ms};
  if (!Positive(latency_ms)) return out;
  double low = timing.ci95_low_ms();
  const double high = timing.ci95_high_ms();
  if (!Positive(high) || !std::isfinite(low) || low > high) return out;
  if (Positive(timing.min_ms())) low = std::max(low, timing.min_ms());
  if (!Positive(low)) return out;
  out.low = std::min(low, latency_ms);
  out.high = std::max(high, latency_ms);
  return out;
}

Interval SpeedupInterval(const Interval& baseline, const Interval& candidate) {
  Interval out;
  if (!Positive(baseline.value) || !Positive(candidate.value)) return out;
  out.value = baseline.value / candidate.value;
  out.low = Positive(candidate.high) && Positive(baseline.low) ? baseline.low / candidate.high
                                                               : out.value;
  out.high = Positive(candidate.low) && Positive(baseline.high) ? baseline.high / candidate.low
                                                                : out.value;
  out.low = std::min(out.low, out.value);
  out.high = std::max(out.high, out.value);
  return out;
}

bool CrossesOne(const Interval& speedup) { return speedup.low < 1.0 && speedup.high > 1.0; }

bool WithinNoise(const Interval& speedup, double floor) {
  if (!Positive(speedup.value) || !ValidNoiseFloor(floor)) return false;
  return speedup.low <= 1.0 + floor && speedup.high * (1.0 + floor) >= 1.0;
}

bool ValidNoiseFloor(double floor) { return std::isfinite(floor) && floor >= 0 && floor < 1; }

RunScore ScoreRun(const v1::Run& run) {
  RunScore out;
  for (const v1::Trace& trace : run.traces()) {
    ++out.workloads;
    if (trace.evaluation().status() != v1::PASSED) continue;
    ++out.passed;
    const v1::Performance& perf = trace.evaluation().performance();
    if (!Positive(perf.latency_ms()) || !Positive(perf.reference_latency_ms())) {
      ++out.missing_reference;
      continue;
    }
    const Interval s =
        SpeedupInterval(LatencyInterval(trace.kiln().reference_timing(), perf.reference_latency_ms()),
                        LatencyInterval(trace.kiln().timing(), perf.latency_ms()));
    out.score.low += s.low;
    out.score.value += s.value;
    out.score.high += s.high;
  }
  if (out.workloads > 0) {
    out.score.low /= out.workloads;
    out.score.value /= out.workloads;
    out.score.high /= out.workloads;
  }
  return out;
}

}  // namespace kiln
