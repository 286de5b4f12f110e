// Per-kernel resource usage as ptxas reports it under `nvcc -Xptxas -v`: registers, shared
// memory, stack frame, spills, constant memory, one record per (function, GPU architecture).
// The numbers are the optimisation evidence of a CUDA build (occupancy, spills); they are read
// from the compile log, so a cached build yields them too.
//
//   std::vector<KernelResources> kernels = ParsePtxasResources(output.log);
//   std::printf("%s", RenderKernelResources(kernels).c_str());
#ifndef KILN_HARNESS_COMPILE_KERNEL_RESOURCES_H_
#define KILN_HARNESS_COMPILE_KERNEL_RESOURCES_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"

namespace kiln {

struct KernelResources {
  std::string name;       // as ptxas printed it (mangled for C++ functions)
  std::string demangled;  // readable form; equal to `name` for extern "C" functions
  std::string arch;       // "sm_90a"
  // A __global__ kernel; false for a non-inlined __device__ function, for which ptxas reports
  // only the stack frame and spills.
  bool entry = true;
  int64_t registers = 0;  // per thread
  int64_t barriers = 0;
  int64_t shared_bytes = 0;  // static shared memory per block (dynamic shared memory is a launch
                             // parameter and never appears here)
  int64_t stack_frame_bytes = 0;
  int64_t spill_store_bytes = 0;
  int64_t spill_load_bytes = 0;
  int64_t cumulative_stack_bytes = 0;
  int64_t constant_bytes = 0;  // summed over the constant banks (cmem[N])
};

// Every function ptxas described in `log`, in the order it appeared. Lines that are not ptxas
// resource lines are ignored, so the whole nvcc output can be passed.
std::vector<KernelResources> ParsePtxasResources(absl::string_view log);

// One line per function, e.g.
// "sm_90a add(float const*, float*, int): 12 registers, 0 B shared, 0 B stack, 0 B spill
//  stores, 0 B spill loads, 364 B constant".
std::string RenderKernelResources(const std::vector<KernelResources>& kernels);

// A JSON array of objects with the fields of KernelResources (snake_case keys).
std::string KernelResourcesJson(const std::vector<KernelResources>& kernels);

}  // namespace kiln

#endif  // KILN_HARNESS_COMPILE_KERNEL_RESOURCES_H_
