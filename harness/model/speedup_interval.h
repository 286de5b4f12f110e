// The noise of a speedup: the 95 % intervals of both latencies carried into the ratio, so a
// leaderboard or a report can say when "1.04x" may as well be 1x.
//
//   LatencyInterval c = LatencyInterval(trace.kiln().timing(), perf.latency_ms());
//   LatencyInterval r = LatencyInterval(trace.kiln().reference_timing(), perf.reference_latency_ms());
//   Interval s = SpeedupInterval(r, c);   // r.low / c.high .. r.high / c.low
//   if (CrossesOne(s)) ...               // the measurements do not tell faster from slower
#ifndef KILN_HARNESS_MODEL_SPEEDUP_INTERVAL_H_
#define KILN_HARNESS_MODEL_SPEEDUP_INTERVAL_H_

#include "kiln/v1/types.pb.h"

namespace kiln {

// A value and its 95 % interval (low <= value <= high; all equal when no interval is known).
struct Interval {
  double low = 0;
  double value = 0;
  double high = 0;
};

// The 95 % interval of a latency from its TimingResult: ci95_low_ms..ci95_high_ms (Student's t
// over the timed samples), never below the fastest sample, widened to contain `latency_ms` (the
// mode's statistic, which need not be the mean). A result without an interval (older traces, a
// single sample) gives [latency_ms, latency_ms].
Interval LatencyInterval(const v1::TimingResult& timing, double latency_ms);

// baseline / candidate with its interval: the slowest baseline over the fastest candidate is the
// high end, the fastest baseline over the slowest candidate the low end. Latencies must be > 0.
Interval SpeedupInterval(const Interval& baseline, const Interval& candidate);

// Whether the interval holds 1x strictly inside: the measurements cannot tell faster from slower.
bool CrossesOne(const Interval& speedup);

// The noise floor of a speedup: how far from 1x the reference timed as its own candidate lands
// between two processes (a relative difference; 0.02 = 2 %). One run's 95 % interval describes
// its own samples only and is far narrower than that (docs/report.md, "Ties"), so a speedup is
// read against both. The default is the 95th percentile (nearest rank, 24th of 25) of
// |speedup - 1| over 25 reference-against-itself runs of KernelBench Level 1 problems measured
// on an NVIDIA H200 (0.0205, rounded to 2 %); docs/gpu-measurements.md has the runs.
inline constexpr double kDefaultNoiseFloor = 0.02;

// Whether a known speedup (value > 0) is a tie with 1x: its 95 % interval, widened by `floor` on
// both sides (low / (1 + floor) .. high * (1 + floor)), holds 1x. With floor 0 an interval that
// touches 1x (exactly 1x included) is a tie.
bool WithinNoise(const Interval& speedup, double floor);

// Whether `floor` can be a noise floor: finite, >= 0 and < 1.
bool ValidNoiseFloor(double floor);

// A run's contest score with its interval: the mean over the run's traces of the speedup vs the
// reference (a trace that did not pass, or has no reference latency, counts 0 in all three).
struct RunScore {
  Interval score;
  int passed = 0;     // PASSED traces
  int workloads = 0;  // traces
  int missing_reference = 0;  // PASSED traces without a reference latency
};
RunScore ScoreRun(const v1::Run& run);

}  // namespace kiln

#endif  // KILN_HARNESS_MODEL_SPEEDUP_INTERVAL_H_
