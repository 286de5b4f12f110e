#include "harness/timing/statistics.h"

#include <algorithm>
#include <cmath>

namespace kiln {
namespace {

// Two-sided 95% critical values of Student's t for 1..30 degrees of freedom.
constexpr double kT95[30] = {12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
                             2.201,  2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086,
                             2.080,  2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042};

// Beyond the table, t is close to linear in 1/df between these points, reaching the normal
// 1.96 as df grows without bound.
struct TPoint {
  double df, t;
};
constexpr TPoint kTTail[] = {{30, 2.042}, {40, 2.021}, {60, 2.000}, {120, 1.980}};

double T95(long df) {
  if (df <= 30) return kT95[df - 1];
  const double inv = 1.0 / static_cast<double>(df);
  for (size_t i = 0; i + 1 < std::size(kTTail); ++i) {
    const TPoint a = kTTail[i], b = kTTail[i + 1];
    if (df <= b.df) {
      const double f = (1.0 / a.df - inv) / (1.0 / a.df - 1.0 / b.df);
      return a.t + f * (b.t - a.t);
    }
  }
  const TPoint last = kTTail[std::size(kTTail) - 1];
  return 1.96 + (last.t - 1.96) * (inv * last.df);  // -> 1.96 as 1/df -> 0
}

// numpy's default ("linear") quantile of sorted values.
double Quantile(const std::vector<double>& sorted, double p) {
  const double pos = p * static_cast<double>(sorted.size() - 1);
  const size_t lo = static_cast<size_t>(std::floor(pos));
  const size_t hi = static_cast<size_t>(std::ceil(pos));
  return sorted[lo] + (sorted[hi] - sorted[lo]) * (pos - static_cast<double>(lo));
}

}  // namespace

SampleStats Summarize(std::vector<double> samples) {
  SampleStats s;
  if (samples.empty()) return s;
  std::sort(samples.begin(), samples.end());
  s.count = static_cast<long>(samples.size());
  s.min = samples.front();
  s.max = samples.back();
  s.q1 = Quantile(samples, 0.25);
  s.median = Quantile(samples, 0.5);
  s.q3 = Quantile(samples, 0.75);
  double sum = 0;
  for (double v : samples) sum += v;
  s.mean = sum / static_cast<double>(s.count);
  if (s.count > 1) {
    double sq = 0;
    for (double v : samples) sq += (v - s.mean) * (v - s.mean);
    s.stdev = std::sqrt(sq / static_cast<double>(s.count - 1));
  }
  const double half_width =
      s.count > 1 ? T95(s.count - 1) * s.stdev / std::sqrt(static_cast<double>(s.count)) : 0.0;
  s.ci95_low = s.mean - half_width;
  s.ci95_high = s.mean + half_width;
  return s;
}

double Median(std::vector<double> samples) {
  if (samples.empty()) return 0;
  const size_t mid = samples.size() / 2;
  std::nth_element(samples.begin(), samples.begin() + mid, samples.end());
  const double upper = samples[mid];
  if (samples.size() % 2 == 1) return upper;
  const double lower = *std::max_element(samples.begin(), samples.begin() + mid);
  return (lower + upper) / 2;
}

}  // namespace kiln
