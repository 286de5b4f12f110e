// CUDA solutions written against TVM-FFI (TensorView, TVMFFIEnvGetStream, TVM_FFI_ICHECK,
// TVM_FFI_DLL_EXPORT_TYPED_FUNC) build unchanged with kiln's nvcc toolchain, and the export name
// is the entry point kiln loads. Needs nvcc, no GPU (tag [nvcc]).
#include <algorithm>
#include <catch2/catch.hpp>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "harness/common/files.h"
#include "harness/compile/compiler.h"
#include "harness/compile/nvcc_toolchain.h"
#include "harness/model/json_interop.h"
#include "tests/unit/compile/compile_test_support.h"
#include "tests/unit/cuda/compile/nvcc_compiler.h"
#include "tests/unit/cuda/cuda_test_support.h"

namespace kiln {
namespace {

using testing::CudaSolution;
using testing::NvccCompiler;
using testing::ScratchDir;

v1::Solution ReadSolution(const std::string& relative_path) {
  absl::StatusOr<std::string> text = ReadFile(std::string(KILN_SOURCE_DIR) + "/" + relative_path);
  INFO(relative_path);
  REQUIRE(text.ok());
  absl::StatusOr<v1::Solution> solution = ParseSolutionJson(*text);
  INFO(solution.status().ToString());
  REQUIRE(solution.ok());
  return *solution;
}

// Builds `solution` and checks that the library exports the entry point's function.
void CheckBuildsAndExports(const v1::Solution& solution, const std::string& function) {
  ScratchDir dir;
  Compiler compiler = NvccCompiler(dir.path() + "/cache");
  absl::StatusOr<CompileOutput> out = compiler.Compile(solution, "sm_90a");
  REQUIRE(out.ok());
  INFO(out->log);
  REQUIRE(out->ok);
  CHECK(out->symbol == function);
  absl::StatusOr<ElfSymbols> symbols = ReadElfDynamicSymbols(out->artifact_path);
  REQUIRE(symbols.ok());
  const std::vector<std::string>& defined = symbols->defined;
  CHECK(std::find(defined.begin(), defined.end(), function) != defined.end());
  // The compatibility layer's own definitions stay inside the library.
  CHECK(std::find(defined.begin(), defined.end(), "TVMFFIEnvGetStream") == defined.end());
  CHECK_FALSE(out->kernel_resources.empty());
}

TEST_CASE("a TVM-FFI vector add builds with nvcc and exports its export name", "[nvcc]") {
  v1::Solution solution = ReadSolution("examples/tvm_ffi/vector_add_f32_cuda.json");
  CHECK(solution.spec().entry_point() == "vector_add.cu::run");
  CheckBuildsAndExports(solution, "run");
}

TEST_CASE("the GPU suite's TVM-FFI rmsnorm builds with nvcc and exports run", "[nvcc]") {
  CheckBuildsAndExports(ReadSolution("tests/gpu/solutions/rmsnorm_h4096_tvm_ffi/solution.json"),
                        "run");
}

TEST_CASE("an export name other than the C++ function's name is the entry point", "[nvcc]") {
  // Both headers flashinfer-bench solutions include (and the umbrella one) resolve; the export
  // sits in a namespace of its own and is declared from a lambda.
  const std::string source = R"(#include <cuda_runtime.h>
#include <dlpack/dlpack.h>
#include <tvm/ffi/tvm_ffi.h>
namespace team {
__global__ void Fill(float* out, int64_t n) {
  int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
  if (i < n) out[i] = 1.0f;
}
void FillOnes(tvm::ffi::TensorView out) {
  TVM_FFI_ICHECK_GE(out.ndim(), 1);
  auto stream = static_cast<cudaStream_t>(
      TVMFFIEnvGetStream(out.device().device_type, out.device().device_id));
  Fill<<<1, 32, 0, stream>>>(static_cast<float*>(out.data_ptr()), out.numel());
}
TVM_FFI_DLL_EXPORT_TYPED_FUNC(fill_ones, FillOnes)
TVM_FFI_DLL_EXPORT_TYPED_FUNC(fill_ones_lambda,
                              [](tvm::ffi::TensorView out) { FillOnes(out); });
}  // namespace team
)";
  CheckBuildsAndExports(CudaSolution({{"kernel.cu", source}}, "kernel.cu::fill_ones"), "fill_ones");
  CheckBuildsAndExports(CudaSolution({{"kernel.cu", source}}, "kernel.cu::fill_ones_lambda"),
                        "fill_ones_lambda");
}

TEST_CASE("naming the C++ function instead of the export name is a clear compile error", "[nvcc]") {
  v1::Solution solution = ReadSolution("examples/tvm_ffi/vector_add_f32_cuda.json");
  solution.mutable_spec()->set_entry_point("vector_add.cu::Run");
  ScratchDir dir;
  Compiler compiler = NvccCompiler(dir.path() + "/cache");
  absl::StatusOr<CompileOutput> out = compiler.Compile(solution, "sm_90a");
  REQUIRE(out.ok());
  INFO(out->log);
  CHECK_FALSE(out->ok);
  CHECK(absl::StrContains(out->log, "entry point 'Run' is not exported"));
}

}  // namespace
}  // namespace kiln
