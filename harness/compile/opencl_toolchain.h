// The OpenCL toolchain: solutions with language "opencl" for the Level Zero backend. The entry
// file (spec.entry_point "kernels.cl::vector_add") is the one OpenCL C translation unit (other
// sources may be #included); launch.json describes the launch (launch_description.h).
//
//   clang -cl-std=CL2.0 -target spir64 -emit-llvm -c -O2 -o kernel.bc kernels.cl
//   llvm-spirv -o kernel.spv kernel.bc
//   spirv-val kernel.spv
//   ocloc compile -spirv_input -file kernel.spv -device $KILN_OCLOC_DEVICE   (when both exist)
//   c++ -O2 -shared -fPIC -std=c++17 -o lib.so launcher.cc
//
// launcher.cc is generated: the SPIR-V as bytes, the launch plan bound to the definition, and an
// extern "C" entry point named after the entry function that hands both to kiln_launch::ZeLauncher
// (ze_launcher.h). So the result is an ordinary kiln solution library, loaded like any other.
// Diagnostics keep the author's file:line. Compiling needs no GPU and no Level Zero driver, only
// the Level Zero headers.
#ifndef KILN_HARNESS_COMPILE_OPENCL_TOOLCHAIN_H_
#define KILN_HARNESS_COMPILE_OPENCL_TOOLCHAIN_H_

#include <functional>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "harness/compile/toolchain.h"
#include "kiln/v1/types.pb.h"

namespace kiln {

inline constexpr double kDefaultOpenClTimeoutS = 120;

// The definition a solution names (Solution.definition), as registered on the node. The launch
// plan is bound to it, so a definition re-registered with a different signature must not reuse
// an old build: the launcher checks every argument's dtype and rank before each launch.
using DefinitionLookup = std::function<absl::StatusOr<v1::Definition>(const std::string& name)>;

struct OpenClTools {
  std::string clang;
  std::string llvm_spirv;
  std::string spirv_val;
  std::string ocloc;  // "" when absent
  std::string cxx;
  std::string level_zero_include_dir;  // the folder holding level_zero/ze_api.h
};

// Finds the tools: $KILN_OPENCL_CLANG or clang-14 or clang; llvm-spirv-14 or llvm-spirv (the
// version pairs with clang's); spirv-val; ocloc (optional); $KILN_CXX, $CXX or g++. NOT_FOUND
// lists what is missing.
absl::StatusOr<OpenClTools> FindOpenClTools();

absl::StatusOr<std::unique_ptr<Toolchain>> MakeOpenClToolchain(
    const std::string& include_dir, DefinitionLookup definitions,
    double timeout_s = kDefaultOpenClTimeoutS);

}  // namespace kiln

#endif  // KILN_HARNESS_COMPILE_OPENCL_TOOLCHAIN_H_
