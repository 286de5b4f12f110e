// The vendor-library policy: calls into cuBLAS, cuBLASLt or cuDNN are refused unless the
// definition allows the library; the refusal names the symbol.
#include "harness/compile/vendor_library_policy.h"

#include <catch2/catch.hpp>
#include <memory>
#include <string>
#include <vector>

#include "harness/compile/compiler.h"
#include "harness/compile/nvcc_toolchain.h"
#include "tests/unit/compile/compile_test_support.h"
#include "tests/unit/cuda/compile/nvcc_compiler.h"
#include "tests/unit/cuda/cuda_test_support.h"

namespace kiln {
namespace {

using testing::CudaSolution;
using testing::ScratchDir;

ElfSymbols Undefined(std::vector<std::string> names) {
  ElfSymbols symbols;
  symbols.undefined = std::move(names);
  return symbols;
}

TEST_CASE("a cuBLAS call the definition does not allow is refused, naming the symbol") {
  absl::Status s = CheckVendorLibraries(
      Undefined({"cudaMalloc", "cudnnCreate", "cublasGemmEx", "memcpy"}), "gemm", {});
  CHECK(s.code() == absl::StatusCode::kFailedPrecondition);
  CHECK(s.message() ==
        "solution uses cublasGemmEx from cuBLAS, which definition 'gemm' does "
        "not allow");
}

TEST_CASE("each vendor library needs its own allowance") {
  ElfSymbols symbols = Undefined({"cublasGemmEx", "cublasLtMatmul", "cudnnCreate"});
  absl::Status s = CheckVendorLibraries(symbols, "gemm", {"cuBLAS"});
  CHECK(s.message() ==
        "solution uses cublasLtMatmul from cuBLASLt, which definition 'gemm' does not allow");
  s = CheckVendorLibraries(symbols, "gemm", {"cublas", "cublaslt"});
  CHECK(s.message() ==
        "solution uses cudnnCreate from cuDNN, which definition 'gemm' does not allow");
  CHECK(CheckVendorLibraries(symbols, "gemm", {"cublas", "cublasLt", "cudnn"}).ok());
}

TEST_CASE("the CUDA runtime and the C library are not vendor libraries") {
  CHECK(CheckVendorLibraries(Undefined({"cudaMalloc", "__cudaRegisterFatBinary", "memcpy"}), "gemm",
                             {})
            .ok());
  CHECK(VendorLibraryOfSymbol("cudaMalloc") == nullptr);
  REQUIRE(VendorLibraryOfSymbol("cublasLtMatmul") != nullptr);
  CHECK(VendorLibraryOfSymbol("cublasLtMatmul")->display_name == "cuBLASLt");
  CHECK(VendorLibraryOfSymbol("cublasSgemm_v2")->display_name == "cuBLAS");
}

constexpr char kCublasSolution[] = R"cu(
#include <kiln/abi.h>
#include <cublas_v2.h>
extern "C" int run(const kiln_tensor* t, int32_t nargs, const kiln_context* ctx) {
  float one = 1.0f, zero = 0.0f;
  cublasHandle_t handle = (cublasHandle_t)ctx->context;  /* never run: only linked */
  return (int)cublasGemmEx(handle, CUBLAS_OP_N, CUBLAS_OP_N, 4, 4, 4, &one, t[0].data, CUDA_R_32F,
                           4, t[1].data, CUDA_R_32F, 4, &zero, t[2].data, CUDA_R_32F, 4,
                           CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
}
)cu";

TEST_CASE("a compiled solution calling cuBLAS is refused unless allowed", "[nvcc]") {
  ScratchDir dir;
  Compiler compiler = testing::NvccCompiler(dir.path() + "/cache");

  v1::Solution solution = CudaSolution({{"gemm.cu", kCublasSolution}}, "gemm.cu::run");
  absl::StatusOr<CompileOutput> unlinked = compiler.Compile(solution, "sm_90a");
  REQUIRE(unlinked.ok());
  INFO(unlinked->log);
  REQUIRE(unlinked->ok);
  CHECK_THAT(unlinked->log, Catch::Contains("name 'cublas' in spec.dependencies"));
  absl::Status refused = CheckVendorLibraries(unlinked->artifact_path, "gemm", {});
  CHECK(refused.message() ==
        "solution uses cublasGemmEx from cuBLAS, which definition 'gemm' does not allow");

  solution.mutable_spec()->add_dependencies("cublas");
  absl::StatusOr<CompileOutput> linked = compiler.Compile(solution, "sm_90a");
  REQUIRE(linked.ok());
  INFO(linked->log);
  REQUIRE(linked->ok);
  CHECK_THAT(linked->log, !Catch::Contains("spec.dependencies"));
  CHECK(CheckVendorLibraries(linked->artifact_path, "gemm", {"cublas"}).ok());
  CHECK_FALSE(CheckVendorLibraries(linked->artifact_path, "gemm", {}).ok());
}

}  // namespace
}  // namespace kiln
