// The CUDA toolchain: solutions with language "cuda" (.cu, .cpp and .cc translation units) built
// by nvcc into one shared object that the CUDA backend loads:
//
//   nvcc -O3 -shared -Xcompiler -fPIC -std=c++17 -I<kiln include dir> -Xptxas -v
//        --expt-relaxed-constexpr -gencode arch=compute_90a,code=sm_90a
//        -gencode arch=compute_90,code=compute_90 -cudart shared [-lcublas ...] -o lib.so <units>
//
// -Xptxas -v puts each kernel's registers / shared memory / spills into the log, parsed into
// CompileOutput::kernel_resources. -cudart shared links the CUDA runtime dynamically
// (DT_NEEDED libcudart.so.<major>) instead of nvcc's default static copy: kiln-worker loads that
// same libcudart before it loads the solution, and the dynamic loader resolves the solution's
// dependency to the already-loaded library by its soname. Solution and worker then share one
// runtime, hence one current device, one primary context, and the stream handle the worker
// passes in kiln_context; a static copy would keep its own current device (device 0) per thread.
// Vendor libraries named in spec.dependencies ("cublas", "cublaslt", "cudnn") are linked;
// whether a definition allows them is CheckVendorLibraries' decision, not the compiler's.
// Compiling needs no GPU.
#ifndef KILN_HARNESS_COMPILE_NVCC_TOOLCHAIN_H_
#define KILN_HARNESS_COMPILE_NVCC_TOOLCHAIN_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "harness/compile/toolchain.h"

namespace kiln {

inline constexpr double kDefaultNvccTimeoutS = 300;

// {"sm_90a", "compute_90"}: Hopper machine code with its architecture-specific features (wgmma,
// TMA multicast) plus compute_90 PTX, which newer GPUs compile at load time.
std::vector<std::string> DefaultNvccArchList();

// The arch list for GPUs of the given compute capabilities (10 * major + minor: 90 for 9.0):
// machine code for each distinct one ("sm_90a" from 9.0 on, whose architecture-specific code
// runs only on that exact capability; "sm_86" before), plus PTX of the lowest. Empty input gives
// DefaultNvccArchList().
std::vector<std::string> NvccArchListFor(const std::vector<int>& compute_capabilities);

// The -gencode flags of an arch list: "sm_XX[a|f]" is machine code (arch=compute_XX[a|f],
// code=sm_XX[a|f]), "compute_XX[a|f]" embedded PTX. INVALID_ARGUMENT names a malformed entry.
absl::StatusOr<std::vector<std::string>> NvccGencodeFlags(const std::vector<std::string>& archs);
// "--threads N", one thread per target of `gencode_flags` (NvccGencodeFlags' output), when there
// is more than one: nvcc then compiles the targets in parallel instead of one after the other.
// Empty for a single target. The output is the same either way.
std::vector<std::string> NvccThreadFlags(const std::vector<std::string>& gencode_flags);

// The nvcc to run: $KILN_NVCC, else bin/nvcc under the CudaToolkitRoots(), else nvcc in PATH.
// NOT_FOUND lists the places tried.
absl::StatusOr<std::string> FindNvcc();

// The toolchain for `include_dir` (kiln/abi.h) and `arch_list` (empty: DefaultNvccArchList()),
// with the wall-clock limit of one nvcc run. NOT_FOUND without nvcc; INVALID_ARGUMENT for a bad
// arch list.
absl::StatusOr<std::unique_ptr<Toolchain>> MakeNvccToolchain(
    const std::string& include_dir, const std::vector<std::string>& arch_list = {},
    double timeout_s = kDefaultNvccTimeoutS);

}  // namespace kiln

#endif  // KILN_HARNESS_COMPILE_NVCC_TOOLCHAIN_H_
