// The flashinfer-bench correctness rule. An element fails iff |x - y| > atol AND
// |x - y| / (|y| + 1e-8) > rtol; a tensor passes iff the share of passing elements is at least
// required_matched_ratio. Any NaN or Inf in the candidate where the reference is finite fails the
// tensor outright (non-finite reference values must be matched exactly).
#ifndef KILN_HARNESS_VERIFY_COMPARATOR_H_
#define KILN_HARNESS_VERIFY_COMPARATOR_H_

#include <cstdint>
#include <string>

#include "harness/model/definition_settings.h"
#include "kiln/v1/types.pb.h"

namespace kiln {

struct Tolerances {
  double atol = kDefaultAtol;
  double rtol = kDefaultRtol;
  double required_matched_ratio = kDefaultRequiredMatchedRatio;
};

// Tolerances of a definition: its kiln `tolerance` extension where set, else the defaults.
// (A run's definition carries the operator's settings in that extension: definition_settings.h.)
Tolerances TolerancesFor(const v1::Definition& def);
// The same as the message a trace records them in (TraceDetail.tolerance).
v1::Tolerance ToleranceProto(const v1::Definition& def);

struct Comparison {
  bool passed = false;
  int64_t elements = 0;
  int64_t mismatched = 0;
  int64_t non_finite = 0;     // NaN/Inf in the candidate where the reference is finite
  double max_abs_error = 0;   // over finite pairs
  double max_rel_error = 0;
  int64_t worst_index = -1;   // element with the largest abs error
  double worst_got = 0, worst_expected = 0;
  std::string summary;        // one line for logs: "12/4096 elements off, max abs 0.5 at [3] ..."
};

// Compares two buffers of `numel` elements of `dtype` (host memory). `threads` > 1 splits a
// large comparison into chunks compared in parallel (0: the machine's hardware threads, at most
// 16); the result is the same as a serial comparison's, worst element included (the first of
// equal errors). The worker compares serially: threads of its own would blur its accounting
// of the solution's host threads.
Comparison CompareTensors(v1::DType dtype, const void* got, const void* expected, int64_t numel,
                          const Tolerances& tol, int threads = 1);

}  // namespace kiln

#endif  // KILN_HARNESS_VERIFY_COMPARATOR_H_
