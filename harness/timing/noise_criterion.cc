#include "harness/timing/noise_criterion.h"

#include <cmath>

namespace kiln {
namespace {

constexpr size_t kWindow = 512;
constexpr size_t kMinWindow = 64;
constexpr int64_t kCheckEvery = 16;
constexpr double kConvergedRelStdev = 0.05;

}  // namespace

NoiseCriterion::NoiseCriterion(double max_noise, double min_time_ms)
    : max_noise_(max_noise), min_time_ms_(min_time_ms) {
  noise_.reserve(kWindow);
}

void NoiseCriterion::AddSample(double ms) {
  ++count_;
  total_ms_ += ms;
  const double delta = ms - mean_;
  mean_ += delta / static_cast<double>(count_);
  m2_ += delta * (ms - mean_);
  if (count_ < 2 || mean_ == 0) return;  // nvbench records only finite noise values
  const double rel = std::sqrt(m2_ / static_cast<double>(count_ - 1)) / mean_;
  if (!std::isfinite(rel)) return;
  if (noise_.size() < kWindow) {
    noise_.push_back(rel);
  } else {
    noise_[noise_next_] = rel;
  }
  noise_next_ = (noise_next_ + 1) % kWindow;
  last_noise_ = rel;
}

bool NoiseCriterion::IsFinished() {
  converged_ = false;
  if (total_ms_ <= min_time_ms_ || noise_.empty()) return false;
  if (last_noise_ < max_noise_) return true;
  converged_ = NoiseHasConverged();
  return converged_;
}

bool NoiseCriterion::NoiseHasConverged() const {
  if (noise_.size() <= kMinWindow || count_ % kCheckEvery != 0) return false;
  const double current = last_noise_;
  double sq = 0;
  for (double n : noise_) sq += (n - current) * (n - current);
  const double stdev = std::sqrt(sq / static_cast<double>(noise_.size() - 1));
  return stdev / current < kConvergedRelStdev;
}

}  // namespace kiln
