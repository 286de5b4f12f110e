// The own-kernel share: how much of the timed calls' GPU time the solution's own kernels did
// (those its sources define, own_kernels.h), against everything else they launched (torch's
// kernels, vendor libraries, copies and fills), from the CUPTI records the timer already takes
// (TimingResult.gpu_work). integrity.own_kernel_share refuses a solution whose own kernels do less
// than the definition's minimum (kiln defs set --min-own-kernel-share; a default for KernelBench
// problems), so a token kernel beside torch's work does not pass for a solution of its own.
// Pure functions of protos: testable without a GPU.
//
//   v1::OwnWork own = integrity::OwnWorkOf(def, solution, trace.timing());
//   std::optional<OwnKernelFinding> finding = integrity::JudgeOwnKernelShare(def, own);
#ifndef KILN_HARNESS_VERIFY_OWN_WORK_H_
#define KILN_HARNESS_VERIFY_OWN_WORK_H_

#include <optional>
#include <string>
#include <vector>

#include "harness/verify/own_kernels.h"
#include "kiln/v1/types.pb.h"

namespace kiln::integrity {

// The split of `timing`'s GPU work between the solution's kernels and the rest, per timed call.
// Not measured (measured = false, with why) where the timer recorded no GPU work (the events
// timer, the host backend), or for a language whose kernels kiln does not attribute (cpp,
// opencl). min_share is the definition's minimum (MinOwnKernelShare).
v1::OwnWork OwnWorkOf(const v1::Definition& def, const v1::Solution& solution,
                      const v1::TimingResult& timing);

// integrity.own_kernel_share: a finding when the share was measured and is below the minimum;
// a warning only where the definition allows torch (kiln:allow-library:torch). nullopt when it
// holds or was not measured.
std::optional<OwnKernelFinding> JudgeOwnKernelShare(const v1::Definition& def,
                                                    const v1::OwnWork& own);

// "12.5 %" for the share, as the CLI, the console and reasons print it.
std::string ShareText(double share);

// One line for people: "12.5 % (0.0123 of 0.0984 ms per call; relu_kernel)", or
// "not measured: ..." ("" when the trace has no OwnWork).
std::string OwnWorkText(const v1::OwnWork& own);

// The mean share over the measured ones of `works`; nullopt when none was measured.
std::optional<double> MeanShare(const std::vector<const v1::OwnWork*>& works);

}  // namespace kiln::integrity

#endif  // KILN_HARNESS_VERIFY_OWN_WORK_H_
