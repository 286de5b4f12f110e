#include "harness/compile/opencl_toolchain.h"

#include <catch2/catch.hpp>
#include <cstdlib>
#include <memory>

#include "harness/common/files.h"
#include "harness/compile/compiler.h"
#include "tests/unit/level_zero/level_zero_test_support.h"

namespace kiln {
namespace {

using testing::VectorAddSolution;

std::string IncludeDir() { return std::string(KILN_SOURCE_DIR) + "/harness/include"; }

// A compiler with only the OpenCL toolchain over a fresh cache, or null (with a visible notice)
// where clang, llvm-spirv, spirv-val or the Level Zero headers are missing.
struct OpenClCompiler {
  OpenClCompiler() {
    absl::StatusOr<std::string> dir = MakeTempDir("", "kiln-opencl-test");
    REQUIRE(dir.ok());
    cache = *dir;
    *definition = testing::VectorAddDefinition();
    absl::StatusOr<std::unique_ptr<Toolchain>> opencl = MakeOpenClToolchain(
        IncludeDir(),
        [def = definition](const std::string& name) -> absl::StatusOr<v1::Definition> {
          if (name != "vector_add") return absl::NotFoundError("not registered");
          return *def;
        });
    if (!opencl.ok()) {
      WARN("SKIPPED: " << opencl.status().ToString());
      return;
    }
    std::vector<std::unique_ptr<Toolchain>> toolchains;
    toolchains.push_back(*std::move(opencl));
    compiler = std::make_unique<Compiler>(cache, std::move(toolchains));
  }
  ~OpenClCompiler() { (void)RemoveTree(cache); }
  CompileOutput Compile(const v1::Solution& s) {
    absl::StatusOr<CompileOutput> out = compiler->Compile(s, "level_zero");
    INFO(out.status().ToString());
    REQUIRE(out.ok());
    return *std::move(out);
  }
  std::string cache;
  // What the archive holds under "vector_add"; a test may re-register it.
  std::shared_ptr<v1::Definition> definition = std::make_shared<v1::Definition>();
  std::unique_ptr<Compiler> compiler;
};

TEST_CASE(
    "an OpenCL solution compiles to a validated SPIR-V launcher library, then hits the cache") {
  OpenClCompiler c;
  if (c.compiler == nullptr) return;
  CompileOutput out = c.Compile(VectorAddSolution());
  INFO(out.log);
  REQUIRE(out.ok);
  CHECK(out.symbol == "vector_add");
  CHECK_FALSE(out.cache_hit);
  absl::StatusOr<ElfSymbols> symbols = ReadElfDynamicSymbols(out.artifact_path);
  REQUIRE(symbols.ok());
  CHECK(std::find(symbols->defined.begin(), symbols->defined.end(), "vector_add") !=
        symbols->defined.end());
  // The launcher calls Level Zero through the loader the worker has opened.
  CHECK(std::find(symbols->undefined.begin(), symbols->undefined.end(),
                  "zeCommandListAppendLaunchKernel") != symbols->undefined.end());
  CompileOutput again = c.Compile(VectorAddSolution());
  CHECK(again.ok);
  CHECK(again.cache_hit);
}

TEST_CASE("a definition re-registered with another signature does not reuse the cached build") {
  OpenClCompiler c;
  if (c.compiler == nullptr) return;
  REQUIRE(c.Compile(VectorAddSolution()).ok);
  REQUIRE(c.Compile(VectorAddSolution()).cache_hit);
  // Same names, dtypes and ranks, inputs in the other order: the launch plan binds by position.
  REQUIRE(c.definition->inputs_size() >= 2);
  c.definition->mutable_inputs()->SwapElements(0, 1);
  CompileOutput rebuilt = c.Compile(VectorAddSolution());
  INFO(rebuilt.log);
  CHECK_FALSE(rebuilt.cache_hit);
}

TEST_CASE("OpenCL compile errors keep the author's file and line") {
  OpenClCompiler c;
  if (c.compiler == nullptr) return;
  CompileOutput out = c.Compile(VectorAddSolution(
      "__kernel void vector_add(__global float* x) {\n  x[0] = not_declared;\n}\n"));
  CHECK_FALSE(out.ok);
  CHECK(out.log.find("kernel.cl:2:10: error") != std::string::npos);
}

TEST_CASE(
    "a launch description that does not fit the definition is a compile error naming the field") {
  OpenClCompiler c;
  if (c.compiler == nullptr) return;
  CompileOutput out = c.Compile(VectorAddSolution(
      testing::kVectorAddKernel, R"json({"args": [{"input": "q"}], "global": ["n"]})json"));
  CHECK_FALSE(out.ok);
  CHECK(out.log.find("launch.json: args[0].input: 'q'") != std::string::npos);
  v1::Solution wrong_entry = VectorAddSolution();
  wrong_entry.mutable_spec()->set_entry_point("launch.json::vector_add");
  out = c.Compile(wrong_entry);
  CHECK_FALSE(out.ok);
  CHECK(out.log.find("not an OpenCL C file") != std::string::npos);
}

TEST_CASE("a solution for an unregistered definition fails without being cached") {
  OpenClCompiler c;
  if (c.compiler == nullptr) return;
  v1::Solution s = VectorAddSolution();
  s.set_definition("unknown_definition");
  CompileOutput out = c.Compile(s);
  CHECK_FALSE(out.ok);
  CHECK(out.log.find("unknown_definition") != std::string::npos);
  CHECK_FALSE(c.Compile(s).cache_hit);
}

TEST_CASE("missing OpenCL tools are named without empty names") {
  // No program can be found on an empty PATH; $KILN_OPENCL_CLANG unset adds no empty name.
  const char* path = std::getenv("PATH");
  const std::string saved = path != nullptr ? path : "";
  const char* clang = std::getenv("KILN_OPENCL_CLANG");
  const std::string saved_clang = clang != nullptr ? clang : "";
  ::unsetenv("KILN_OPENCL_CLANG");
  ::setenv("PATH", "/nonexistent", 1);
  absl::StatusOr<OpenClTools> tools = FindOpenClTools();
  ::setenv("PATH", saved.c_str(), 1);
  if (!saved_clang.empty()) ::setenv("KILN_OPENCL_CLANG", saved_clang.c_str(), 1);
  REQUIRE_FALSE(tools.ok());
  const std::string message(tools.status().message());
  CHECK_THAT(message, Catch::Contains("needs clang-14 or clang, llvm-spirv-14 or llvm-spirv"));
  CHECK(message.find("  or") == std::string::npos);
  CHECK(message.find(", ,") == std::string::npos);
}

}  // namespace
}  // namespace kiln
