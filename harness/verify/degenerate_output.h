// Degenerate definitions (integrity.degenerate_definition): a definition whose reference outputs
// are so small or so flat that an output of all zeros, or of one constant, passes its tolerances
// lets a solution that computes nothing pass. Not a fault of the solution: kiln flags the
// definition and shows the flag on every run of it.
#ifndef KILN_HARNESS_VERIFY_DEGENERATE_OUTPUT_H_
#define KILN_HARNESS_VERIFY_DEGENERATE_OUTPUT_H_

#include <cstdint>
#include <string>

#include "harness/verify/comparator.h"
#include "kiln/v1/types.pb.h"

namespace kiln {

// "all-zero" or "constant 0.125" when such an output passes against `expected` (numel elements
// of a float dtype) at `tol`; "" when neither does or the dtype is not a float type. `threads`
// as CompareTensors.
std::string TrivialOutputThatPasses(v1::DType dtype, const void* expected, int64_t numel,
                                    const Tolerances& tol, int threads = 1);

}  // namespace kiln

#endif  // KILN_HARNESS_VERIFY_DEGENERATE_OUTPUT_H_
