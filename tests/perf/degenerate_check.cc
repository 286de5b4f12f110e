// degenerate_check: the judge's degenerate-definition check (does an all-zero or a constant
// output pass the reference at its tolerances?) on one large float32 reference, kiln's
// TrivialOutputThatPasses side by side with the way it was done before 0d5eb49 (the whole
// trivial output materialized, compared at once, the finite values summed serially), in
// alternating order. The check runs once per (definition, workload, output) a harness sees, on
// the first judged trial: every problem of a KernelBench suite pays it on its first verdict.
// Prints a JSON object: each round's seconds per side, their medians and the findings (which
// must agree).
//
// Usage: degenerate_check GIB ROUNDS
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_format.h"
#include "harness/model/dtype.h"
#include "harness/verify/comparator.h"
#include "harness/verify/degenerate_output.h"

namespace {

double Now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

// The check as it was: an output-sized buffer of zeros compared whole, the finite values summed
// serially, the buffer filled with their mean and compared whole again.
std::string Before(kiln::v1::DType dtype, const void* expected, int64_t numel,
                   const kiln::Tolerances& tol) {
  std::vector<unsigned char> trivial(static_cast<size_t>(kiln::DTypeStorageBytes(dtype, numel)),
                                     0);
  if (kiln::CompareTensors(dtype, trivial.data(), expected, numel, tol, 0).passed) {
    return "all-zero";
  }
  double sum = 0;
  int64_t finite = 0;
  for (int64_t i = 0; i < numel; ++i) {
    const double v = kiln::LoadAsDouble(dtype, expected, i);
    if (std::isfinite(v)) {
      sum += v;
      ++finite;
    }
  }
  if (finite == 0) return "";
  const double mean = sum / static_cast<double>(finite);
  for (int64_t i = 0; i < numel; ++i) kiln::StoreFromDouble(dtype, trivial.data(), i, mean);
  if (kiln::CompareTensors(dtype, trivial.data(), expected, numel, tol, 0).passed) {
    return absl::StrFormat("constant %g", mean);
  }
  return "";
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: degenerate_check GIB ROUNDS\n");
    return 2;
  }
  const double gib = std::atof(argv[1]);
  const int rounds = std::atoi(argv[2]);
  const int64_t numel = static_cast<int64_t>(gib * (1 << 30) / 4);
  if (numel <= 0 || rounds <= 0) {
    std::fprintf(stderr, "degenerate_check: GIB and ROUNDS must be positive\n");
    return 2;
  }
  // A Swish-like output: values of a smooth activation of normal inputs, none trivially matched.
  std::vector<float> expected(static_cast<size_t>(numel));
  std::mt19937 rng(1);
  std::normal_distribution<float> normal;
  for (float& v : expected) {
    const float x = normal(rng);
    v = x / (1.0f + std::exp(-x));
  }
  const kiln::Tolerances tol;
  std::vector<double> before_s, kiln_s;
  std::string before_finding, kiln_finding;
  for (int r = 0; r < rounds; ++r) {
    for (int side = 0; side < 2; ++side) {
      const bool kiln_first = r % 2 == 0;
      const bool run_kiln = (side == 0) == kiln_first;
      const double t0 = Now();
      if (run_kiln) {
        kiln_finding = kiln::TrivialOutputThatPasses(kiln::v1::DTYPE_FLOAT32, expected.data(),
                                                     numel, tol, 0);
        kiln_s.push_back(Now() - t0);
      } else {
        before_finding = Before(kiln::v1::DTYPE_FLOAT32, expected.data(), numel, tol);
        before_s.push_back(Now() - t0);
      }
    }
  }
  auto list = [](const std::vector<double>& v) {
    std::string out;
    for (double x : v) out += absl::StrFormat("%s%.3f", out.empty() ? "" : ", ", x);
    return out;
  };
  std::printf(
      "{\"gib\": %.2f, \"elements\": %lld, \"rounds\": %d, \"before_s\": [%s], \"kiln_s\": [%s], "
      "\"before_median_s\": %.3f, \"kiln_median_s\": %.3f, \"ratio\": %.4f, "
      "\"before_finding\": \"%s\", \"kiln_finding\": \"%s\"}\n",
      gib, static_cast<long long>(numel), rounds, list(before_s).c_str(), list(kiln_s).c_str(),
      Median(before_s), Median(kiln_s), Median(kiln_s) / Median(before_s),
      before_finding.c_str(), kiln_finding.c_str());
  return before_finding == kiln_finding ? 0 : 1;
}
