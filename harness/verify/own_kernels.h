// integrity.no_own_kernel: whether a Python/Triton candidate launched a kernel of its own in the
// timed calls, or handed all the work to torch (and the libraries under it). The timed calls'
// kernels come from the CUPTI timer (TimingResult.kernels); the solution's own kernels are the
// ones its sources define: Triton functions under a jit decorator and CUDA __global__ functions,
// in source files or in the strings of .py files (load_inline's cuda_sources). Pure functions of
// names and text: testable without a GPU.
#ifndef KILN_HARNESS_VERIFY_OWN_KERNELS_H_
#define KILN_HARNESS_VERIFY_OWN_KERNELS_H_

#include <optional>
#include <set>
#include <string>
#include <vector>

#include "kiln/v1/types.pb.h"

namespace kiln::integrity {

struct SourceKernels {
  std::set<std::string> kernels;     // function names, unqualified ("relu_kernel")
  std::set<std::string> namespaces;  // namespace names the sources declare
};

// The kernels a solution's sources define.
SourceKernels KernelsOfSources(const v1::Solution& solution);

// The function a profiler's kernel name denotes: demangled, without the return type, template
// arguments and parameters; namespaces kept, anonymous ones dropped.
// "_Z11relu_kernelPKfPfi" -> "relu_kernel";
// "void at::native::vectorized_elementwise_kernel<4, F, A>(int, F, A)" ->
// "at::native::vectorized_elementwise_kernel".
std::string KernelFunctionName(const std::string& profiler_name);

// Whether a launched kernel (profiler name) is one `own` defines: its function name is one of
// the sources' kernels, inside namespaces the sources declare (a Triton kernel's name may carry
// an older Triton's specialization suffix, "add_kernel_0d1d2de").
bool IsOwnKernel(const std::string& profiler_name, const SourceKernels& own);

// When none of `launched` is the solution's own: the finding, for the reason or the warning
// ("the timed calls launched 2 kernels, none of them the solution's own ..."). nullopt when one
// is. `launched` empty (a call with no kernel at all) is a finding too.
std::optional<std::string> NoOwnKernel(const std::vector<std::string>& launched,
                                       const SourceKernels& own);

struct OwnKernelFinding {
  std::string reason;         // "integrity.no_own_kernel: ..."
  bool warning_only = false;  // the definition allows torch (kiln:allow-library:torch)
};

// integrity.no_own_kernel for a PASSED candidate: judged for Python/Triton solutions of
// definitions that require a kernel of their own (RequiresOwnKernel), from the kernels the
// CUPTI timer saw (under another timer they are unknown: nullopt). nullopt when it holds.
std::optional<OwnKernelFinding> JudgeOwnKernel(const v1::Definition& def,
                                               const v1::Solution& solution,
                                               const v1::TimingResult& timing);

// When the definition requires a kernel of the solution's own and the solution is Python or
// Triton, but the timing recorded no kernels (the host backend's timer, CUDA events without
// CUPTI): the trace's warning that the own-kernel checks were not made, saying why. A check
// that did not run must say so rather than pass silently.
std::optional<std::string> OwnKernelCheckNotMade(const v1::Definition& def,
                                                 const v1::Solution& solution,
                                                 const v1::TimingResult& timing);

}  // namespace kiln::integrity

#endif  // KILN_HARNESS_VERIFY_OWN_KERNELS_H_
