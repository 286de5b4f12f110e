// When the robust timing mode has seen enough samples: nvbench's "stdrel" stopping criterion.
//
// Every kept sample updates the relative standard deviation of all samples so far (the noise)
// and records it in a window of the last 512 noise values. Once more than min_time_ms of
// measured time has accumulated, the criterion is met when the noise is below max_noise, or
// when it has stopped changing: every 16th sample, once the window holds more than 64 values,
// their standard deviation around the current noise is below 5% of it (an inherently noisy
// kernel converges to its own noise level instead of running to the time cap).
//
//   NoiseCriterion c(/*max_noise=*/0.005, /*min_time_ms=*/500);
//   while (!c.IsFinished()) c.AddSample(TimeOnce());
#ifndef KILN_HARNESS_TIMING_NOISE_CRITERION_H_
#define KILN_HARNESS_TIMING_NOISE_CRITERION_H_

#include <cstddef>
#include <cstdint>
#include <vector>

namespace kiln {

class NoiseCriterion {
 public:
  NoiseCriterion(double max_noise, double min_time_ms);

  void AddSample(double ms);
  [[nodiscard]] bool IsFinished();

  // Relative standard deviation (n - 1) of the samples so far; 0 before two samples.
  double noise() const { return last_noise_; }
  double total_ms() const { return total_ms_; }
  int64_t samples() const { return count_; }
  // Whether the last IsFinished() was met through convergence rather than low noise.
  bool converged() const { return converged_; }

 private:
  bool NoiseHasConverged() const;

  double max_noise_;
  double min_time_ms_;
  int64_t count_ = 0;
  double total_ms_ = 0;
  double mean_ = 0, m2_ = 0;   // Welford running mean and sum of squared deviations
  std::vector<double> noise_;  // ring buffer of the last kWindow noise values
  size_t noise_next_ = 0;
  double last_noise_ = 0;
  bool converged_ = false;
};

}  // namespace kiln

#endif  // KILN_HARNESS_TIMING_NOISE_CRITERION_H_
