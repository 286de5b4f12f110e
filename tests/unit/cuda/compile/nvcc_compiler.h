// A Compiler with kiln's nvcc toolchain alone, for the [nvcc] compile tests; fails the test when
// the toolchain cannot be made.
#ifndef KILN_TESTS_UNIT_CUDA_COMPILE_NVCC_COMPILER_H_
#define KILN_TESTS_UNIT_CUDA_COMPILE_NVCC_COMPILER_H_

#include <catch2/catch.hpp>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "harness/compile/compiler.h"
#include "harness/compile/nvcc_toolchain.h"
#include "tests/unit/cuda/cuda_test_support.h"

namespace kiln::testing {

inline Compiler NvccCompiler(const std::string& cache_dir) {
  absl::StatusOr<std::unique_ptr<Toolchain>> nvcc = MakeNvccToolchain(KilnIncludeDir());
  INFO(nvcc.status().ToString());
  REQUIRE(nvcc.ok());
  std::vector<std::unique_ptr<Toolchain>> toolchains;
  toolchains.push_back(*std::move(nvcc));
  return Compiler(cache_dir, std::move(toolchains));
}

}  // namespace kiln::testing

#endif  // KILN_TESTS_UNIT_CUDA_COMPILE_NVCC_COMPILER_H_
