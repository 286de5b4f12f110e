#include "client/rejection_advice.h"

#include <map>

#include "harness/verify/integrity_policy.h"

namespace kiln::cli {

std::string RejectionAdvice(const std::string& reason) {
  static const std::map<std::string, std::string> kAdvice = {
      {integrity::kUnwrittenOutput,
       "Write every element of every output on every call: kiln fills outputs with NaN/0xA5 "
       "before each call and the element named was left untouched."},
      {integrity::kInputMutation,
       "Treat inputs as read-only: copy an input to scratch memory you allocate before changing "
       "it (kiln checksums inputs around every call)."},
      {integrity::kStaleOutput,
       "Compute the outputs on every call: the timed calls must produce exactly what the first "
       "call produced on the same inputs, so do not skip work, cache results or branch on a call "
       "counter."},
      {integrity::kOutputCaching,
       "Do not cache results by pointer, call count or a fingerprint of a few input elements: "
       "kiln changes a few values in the same input buffers and your outputs did not follow."},
      {integrity::kWorkAfterReturn,
       "Finish all work before the entry point returns: join or block every host thread you "
       "start and enqueue all device work on ctx->stream (in Python, torch's current stream), "
       "or make ctx->stream wait for your own stream's work with an event."},
      {integrity::kFasterThanMemory,
       "The reported latency is below what moving the workload's bytes at this device's peak "
       "bandwidth takes, so the timed calls cannot have done the work: compute the result inside "
       "the call instead of replaying or deferring it."},
      {integrity::kDegenerateDefinition,
       "Not a fault of the solution: zeros or a constant pass this definition's tolerances, so "
       "ask the definition's owner to tighten atol/rtol or use inputs with larger outputs."},
      {integrity::kForbiddenSymbol,
       "Remove the named call (vendor libraries, dlopen/dlsym, kiln internals, mprotect/ptrace) "
       "or ask for a definition that allows it with a kiln:allow-library:<name> tag."},
      {integrity::kNondeterministic,
       "Make the kernel deterministic (no float atomics or races whose order changes the result, "
       "no reads of memory nothing wrote, such as __shared__ memory of another block) or ask for "
       "the definition to carry the kiln:nondeterministic tag."},
      {integrity::kOutputFile,
       "Do not touch kiln's files: the worker writes the outputs itself, inside the job folder."},
      {integrity::kNoOwnKernel,
       "Launch a kernel of your own (a Triton @triton.jit function or a CUDA __global__ function "
       "of your sources) for the work: this definition does not accept a solution that only "
       "calls torch, unless it carries the kiln:allow-library:torch tag."},
      {integrity::kExceptionFallback,
       "Let your own path fail loudly: remove the try/except that falls back to torch or the "
       "reference, and fix the error it caught (named in the reason)."},
      {integrity::kInheritsReference,
       "Write ModelNew's forward yourself: do not inherit from, copy or hold the problem's Model."},
      {integrity::kRunnerTampered,
       "Do not replace torch functions or kiln runner methods (monkey-patching): compute the "
       "outputs with your own code."},
      {integrity::kOutputAliasesInput,
       "Return tensors you allocated: not an input, a view of one, or kiln's output buffers."},
      {integrity::kOutputNotPlainTensor,
       "Return plain torch.Tensor objects computed inside the call: no Tensor subclass, "
       "__torch_function__ / __torch_dispatch__ wrapper or look-alike, whose work would run "
       "when kiln reads the output, after the timed window."},
      {integrity::kOwnKernelShare,
       "Do the work in your own kernels: the reason shows how little of the GPU time they took "
       "beside torch's and the libraries' kernels; move the heavy part (the GEMM, the "
       "reduction) into your Triton or CUDA kernel, or ask for a lower "
       "--min-own-kernel-share."},
  };
  auto it = kAdvice.find(integrity::CheckOfReason(reason));
  return it == kAdvice.end() ? "" : it->second;
}

}  // namespace kiln::cli
