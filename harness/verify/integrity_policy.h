// kiln's integrity checks (DESIGN §6): their names, quoted at the start of every REJECTED reason
// and failure reason they produce ("integrity.input_mutation: input 'x' was modified by the
// call"), and what a definition's tags relax. docs/integrity.md lists the exploit each check
// stops.
//
// Definition tags read here:
//   kiln:nondeterministic          two calls on the same inputs may differ within tolerance
//   kiln:inplace-input:<input>     the function writes into <input> (an output aliases it): that
//                                  input is not checksummed and timed outputs are not re-verified
//   kiln:dense-input:<input>       count <input> in the speed-of-light floor although some of its
//                                  axes are absent from every output (a GEMM's A and B)
//   kiln:sparse-input:<input>      never count <input> in the floor (paged caches, expert weights)
//   kiln:require-own-kernel        a Python/Triton candidate must launch a kernel of its own
//                                  (always so for KernelBench definitions)
//   kiln:allow-library:torch       ... but may hand all the work to torch: a warning, not REJECTED
#ifndef KILN_HARNESS_VERIFY_INTEGRITY_POLICY_H_
#define KILN_HARNESS_VERIFY_INTEGRITY_POLICY_H_

#include <string>
#include <vector>

#include "kiln/v1/types.pb.h"

namespace kiln::integrity {

inline constexpr char kUnwrittenOutput[] = "integrity.unwritten_output";
inline constexpr char kInputMutation[] = "integrity.input_mutation";
inline constexpr char kStaleOutput[] = "integrity.stale_output";
inline constexpr char kOutputCaching[] = "integrity.output_caching";
inline constexpr char kWorkAfterReturn[] = "integrity.work_after_return";
inline constexpr char kFasterThanMemory[] = "integrity.faster_than_memory";
inline constexpr char kDegenerateDefinition[] = "integrity.degenerate_definition";
inline constexpr char kForbiddenSymbol[] = "integrity.forbidden_symbol";
inline constexpr char kNondeterministic[] = "integrity.nondeterministic";
inline constexpr char kOutputFile[] = "integrity.output_file";
inline constexpr char kNoOwnKernel[] = "integrity.no_own_kernel";
// Python candidates' own checks are named by kiln's Python runner (guard.py and own_work.py in
// harness/worker/python/kiln_runner/), which refuses the call itself: integrity.runner_tampered,
// integrity.output_aliases_input, and for KernelBench-style classes integrity.exception_fallback
// and integrity.inherits_reference.
inline constexpr char kRunnerTampered[] = "integrity.runner_tampered";
inline constexpr char kOutputAliasesInput[] = "integrity.output_aliases_input";
inline constexpr char kExceptionFallback[] = "integrity.exception_fallback";
inline constexpr char kInheritsReference[] = "integrity.inherits_reference";
// A value-returning candidate's output that is not exactly a torch.Tensor (a subclass, a
// __torch_function__ / __torch_dispatch__ wrapper, an imitation): named by the Python runner.
inline constexpr char kOutputNotPlainTensor[] = "integrity.output_not_plain_tensor";
// The solution's own kernels did less than the definition's minimum share of the timed calls'
// GPU time (kiln defs set --min-own-kernel-share).
inline constexpr char kOwnKernelShare[] = "integrity.own_kernel_share";

// "<check>: <detail>".
std::string Reason(const char* check, const std::string& detail);
// The check a reason names ("integrity.input_mutation"), or "" when it names none.
std::string CheckOfReason(const std::string& reason);

// The archive setting that keeps a definition's integrity warning: "integrity_warning:<name>"
// (Archive::ListDefinitions reads it under the same name; PutDefinition clears it).
std::string DefinitionWarningKey(const std::string& definition);

bool AllowsNondeterminism(const v1::Definition& def);
// Whether a Python/Triton candidate must launch a kernel of its own (integrity.no_own_kernel):
// KernelBench definitions and those tagged kiln:require-own-kernel.
bool RequiresOwnKernel(const v1::Definition& def);
// Tagged kiln:allow-library:torch: a candidate that launched no kernel of its own PASSES with
// the check's warning.
bool AllowsTorchOnly(const v1::Definition& def);
// Inputs the definition declares written in place (kiln:inplace-input:<name>).
std::vector<std::string> InplaceInputs(const v1::Definition& def);
// Whether input `name` counts in the speed-of-light floor: tagged dense, or not tagged sparse
// and every axis of its shape appears in some output's shape (so each of its elements can reach
// the outputs; inputs indexed through another input, like paged caches, are left out).
bool CountsTowardFloor(const v1::Definition& def, const v1::TensorSpec& input);

}  // namespace kiln::integrity

#endif  // KILN_HARNESS_VERIFY_INTEGRITY_POLICY_H_
