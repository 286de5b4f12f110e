// The nvcc toolchain: arch flags, finding nvcc, and (where nvcc is installed, tag [nvcc]) real
// builds of the CUDA test solutions, which need no GPU.
#include "harness/compile/nvcc_toolchain.h"

#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "harness/compile/compiler.h"
#include "tests/unit/compile/compile_test_support.h"
#include "tests/unit/cuda/compile/nvcc_compiler.h"
#include "tests/unit/cuda/cuda_test_support.h"

namespace kiln {
namespace {

using testing::CudaSolution;
using testing::KilnIncludeDir;
using testing::NvccCompiler;
using testing::ScratchDir;
using testing::TestKernelSolution;

constexpr const char* kEntryPoints[] = {
    "add",  "staged_add",         "sub",           "write_null", "spin",
    "noop", "private_stream_add", "changing_work", "mutate_b",   "bad_launch",
    "flip_last_byte_of_b", "mutate_b_later"};

const KernelResources* FindKernel(const std::vector<KernelResources>& kernels,
                                  const std::string& prefix) {
  for (const KernelResources& k : kernels) {
    if (k.demangled.rfind(prefix, 0) == 0) return &k;
  }
  return nullptr;
}

TEST_CASE("an arch list becomes -gencode flags, machine code and PTX") {
  absl::StatusOr<std::vector<std::string>> flags = NvccGencodeFlags(DefaultNvccArchList());
  REQUIRE(flags.ok());
  CHECK(*flags == std::vector<std::string>{"-gencode", "arch=compute_90a,code=sm_90a", "-gencode",
                                           "arch=compute_90,code=compute_90"});
  absl::StatusOr<std::vector<std::string>> bad = NvccGencodeFlags({"sm_90a", "hopper"});
  CHECK(bad.status().code() == absl::StatusCode::kInvalidArgument);
  CHECK_THAT(std::string(bad.status().message()), Catch::StartsWith("arch_list[1]: 'hopper'"));
  CHECK(NvccGencodeFlags({}).status().code() == absl::StatusCode::kInvalidArgument);
}

TEST_CASE("nvcc compiles several targets in parallel, one thread each") {
  absl::StatusOr<std::vector<std::string>> two = NvccGencodeFlags(DefaultNvccArchList());
  REQUIRE(two.ok());
  CHECK(NvccThreadFlags(*two) == std::vector<std::string>{"--threads", "2"});
  absl::StatusOr<std::vector<std::string>> three =
      NvccGencodeFlags({"sm_80", "sm_90a", "compute_80"});
  REQUIRE(three.ok());
  CHECK(NvccThreadFlags(*three) == std::vector<std::string>{"--threads", "3"});
  absl::StatusOr<std::vector<std::string>> one = NvccGencodeFlags({"sm_90a"});
  REQUIRE(one.ok());
  CHECK(NvccThreadFlags(*one).empty());
}

TEST_CASE("the arch list follows the compute capabilities of the GPUs found") {
  CHECK(NvccArchListFor({}) == DefaultNvccArchList());
  CHECK(NvccArchListFor({90, 90}) == std::vector<std::string>{"sm_90a", "compute_90"});
  CHECK(NvccArchListFor({90, 80}) == std::vector<std::string>{"sm_80", "sm_90a", "compute_80"});
  CHECK(NvccArchListFor({100}) == std::vector<std::string>{"sm_100a", "compute_100"});
}

TEST_CASE("KILN_NVCC naming no executable is reported, not ignored") {
  ::setenv("KILN_NVCC", "/nonexistent/bin/nvcc", 1);
  absl::StatusOr<std::string> nvcc = FindNvcc();
  ::unsetenv("KILN_NVCC");
  CHECK(nvcc.status().code() == absl::StatusCode::kNotFound);
  CHECK_THAT(std::string(nvcc.status().message()), Catch::Contains("/nonexistent/bin/nvcc"));
}

TEST_CASE("the nvcc toolchain builds language cuda with the documented flags", "[nvcc]") {
  absl::StatusOr<std::unique_ptr<Toolchain>> nvcc = MakeNvccToolchain(KilnIncludeDir());
  REQUIRE(nvcc.ok());
  CHECK((*nvcc)->Name() == "nvcc");
  CHECK((*nvcc)->Handles("cuda"));
  CHECK_FALSE((*nvcc)->Handles("cpp"));
  std::string version = (*nvcc)->Version();
  INFO(version);
  CHECK_THAT(version, Catch::StartsWith("Build cuda_"));
  std::vector<std::string> flags = (*nvcc)->Flags();
  std::string joined;
  for (const std::string& flag : flags) joined += flag + " ";
  CHECK_THAT(joined, Catch::Contains("-O3 -shared -Xcompiler -fPIC -std=c++17 -I"));
  CHECK_THAT(joined, Catch::Contains("-Xptxas -v --expt-relaxed-constexpr -gencode "
                                     "arch=compute_90a,code=sm_90a -gencode "
                                     "arch=compute_90,code=compute_90 -cudart shared"));
}

TEST_CASE("the CUDA test solutions compile and export every entry point", "[nvcc]") {
  ScratchDir dir;
  Compiler compiler = NvccCompiler(dir.path() + "/cache");
  absl::StatusOr<CompileOutput> out = compiler.Compile(TestKernelSolution("add"), "sm_90a");
  REQUIRE(out.ok());
  INFO(out->log);
  REQUIRE(out->ok);
  absl::StatusOr<ElfSymbols> symbols = ReadElfDynamicSymbols(out->artifact_path);
  REQUIRE(symbols.ok());
  for (const char* entry : kEntryPoints) {
    INFO(entry);
    CHECK(std::find(symbols->defined.begin(), symbols->defined.end(), entry) !=
          symbols->defined.end());
  }
  // -cudart shared: the runtime is a dependency, not a private copy inside the solution.
  CHECK(std::find(symbols->undefined.begin(), symbols->undefined.end(),
                  "__cudaRegisterFatBinary") != symbols->undefined.end());
}

TEST_CASE("registers and shared memory of each kernel come back with the build", "[nvcc]") {
  ScratchDir dir;
  Compiler compiler = NvccCompiler(dir.path() + "/cache");
  absl::StatusOr<CompileOutput> out = compiler.Compile(TestKernelSolution("add"), "sm_90a");
  REQUIRE(out.ok());
  INFO(out->log);
  REQUIRE(out->ok);
  const std::vector<KernelResources>& kernels = out->kernel_resources;
  INFO(RenderKernelResources(kernels));
  const KernelResources* add = FindKernel(kernels, "add_kernel(");
  REQUIRE(add != nullptr);
  CHECK(add->arch == "sm_90a");
  CHECK(add->registers > 0);
  CHECK(add->shared_bytes == 0);
  const KernelResources* staged = FindKernel(kernels, "staged_add_kernel(");
  REQUIRE(staged != nullptr);
  CHECK(staged->shared_bytes == 256 * sizeof(float));
  // A cached build carries the same log, hence the same resources.
  absl::StatusOr<CompileOutput> again = compiler.Compile(TestKernelSolution("add"), "sm_90a");
  REQUIRE(again.ok());
  CHECK(again->cache_hit);
  CHECK(again->kernel_resources.size() == kernels.size());
}

TEST_CASE("a CUDA compile error keeps nvcc's file and line", "[nvcc]") {
  ScratchDir dir;
  Compiler compiler = NvccCompiler(dir.path() + "/cache");
  v1::Solution broken =
      CudaSolution({{"broken.cu", "#include <kiln/abi.h>\n__global__ void k() { int x = ; }\n"}},
                   "broken.cu::run");
  absl::StatusOr<CompileOutput> out = compiler.Compile(broken, "sm_90a");
  REQUIRE(out.ok());
  CHECK_FALSE(out->ok);
  CHECK_THAT(out->log, Catch::Contains("broken.cu(2)"));
}

TEST_CASE("a solution without a CUDA translation unit is a compile error", "[nvcc]") {
  ScratchDir dir;
  Compiler compiler = NvccCompiler(dir.path() + "/cache");
  absl::StatusOr<CompileOutput> out =
      compiler.Compile(CudaSolution({{"only.cuh", "#pragma once\n"}}, "only.cuh::run"), "sm_90a");
  REQUIRE(out.ok());
  CHECK_FALSE(out->ok);
  CHECK_THAT(out->log, Catch::Contains("no CUDA translation unit"));
}

}  // namespace
}  // namespace kiln
