// Summary statistics of timing samples.
#ifndef KILN_HARNESS_TIMING_STATISTICS_H_
#define KILN_HARNESS_TIMING_STATISTICS_H_

#include <vector>

namespace kiln {

struct SampleStats {
  long count = 0;
  double min = 0, q1 = 0, median = 0, q3 = 0, max = 0;
  double mean = 0, stdev = 0;  // sample standard deviation (n - 1)
  double ci95_low = 0, ci95_high = 0;  // 95% confidence interval of the mean (t-distribution)
};

// Quantiles by linear interpolation between closest ranks (numpy's default, torch.median's
// lower-median aside). `samples` need not be sorted. Empty input gives all zeros.
SampleStats Summarize(std::vector<double> samples);
// Median with the middle-average convention for an even count (Python's statistics.median).
double Median(std::vector<double> samples);

}  // namespace kiln

#endif  // KILN_HARNESS_TIMING_STATISTICS_H_
