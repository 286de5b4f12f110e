#include <elf.h>

#include <catch2/catch.hpp>
#include <cstddef>
#include <cstring>
#include <fstream>

#include "harness/compile/compiler.h"
#include "harness/compile/toolchain.h"
#include "tests/unit/compile/compile_test_support.h"

namespace kiln {
namespace {

using testing::ScratchDir;

// One library built once for the ELF tests.
std::string BuildLibrary(const ScratchDir& dir) {
  std::vector<std::unique_ptr<Toolchain>> toolchains;
  toolchains.push_back(MakeHostCxxToolchain(KILN_SOURCE_DIR "/harness/include"));
  Compiler compiler(dir.path(), std::move(toolchains));
  v1::Solution solution = testing::MakeSolution(
      {{"main.cc",
        "#include <kiln/abi.h>\n#include <cmath>\n"
        "extern \"C\" int run(const kiln_tensor*, int32_t n, const kiln_context*) {\n"
        "  return static_cast<int>(std::sqrt(static_cast<double>(n)));\n}\n"
        "extern \"C\" int exported_counter = 0;\n"
        "static int hidden_helper() { return 1; }\n"
        "extern \"C\" __attribute__((visibility(\"hidden\"))) int hidden_fn() {\n"
        "  return hidden_helper();\n}\n"}});
  absl::StatusOr<CompileOutput> out = compiler.Compile(solution, "host");
  REQUIRE(out.ok());
  INFO(out->log);
  REQUIRE(out->ok);
  return out->artifact_path;
}

bool Has(const std::vector<std::string>& names, const std::string& name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

void WriteBytes(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}

TEST_CASE("the ELF reader lists exported and needed dynamic symbols of a built library") {
  ScratchDir dir;
  const std::string library = BuildLibrary(dir);
  absl::StatusOr<ElfSymbols> symbols = ReadElfDynamicSymbols(library);
  REQUIRE(symbols.ok());
  CHECK(Has(symbols->defined, "run"));
  CHECK(Has(symbols->defined, "exported_counter"));
  CHECK_FALSE(Has(symbols->defined, "hidden_fn"));
  CHECK_FALSE(Has(symbols->defined, "hidden_helper"));
  CHECK(Has(symbols->undefined, "sqrt"));
  CHECK_FALSE(Has(symbols->undefined, "run"));
}

TEST_CASE("the ELF reader rejects garbage, truncated and corrupted files") {
  ScratchDir dir;
  const std::string library = BuildLibrary(dir);
  std::string bytes;
  {
    std::ifstream in(library, std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(in), {});
  }
  REQUIRE(bytes.size() > 4096);
  const std::string path = dir.path() + "/broken.so";

  SECTION("garbage") {
    WriteBytes(path, std::string(10000, 'g'));
    CHECK(ReadElfDynamicSymbols(path).status().code() == absl::StatusCode::kInvalidArgument);
  }
  SECTION("empty") {
    WriteBytes(path, "");
    CHECK(ReadElfDynamicSymbols(path).status().code() == absl::StatusCode::kInvalidArgument);
  }
  SECTION("truncated: the section headers sit at the end of the file") {
    for (size_t keep : {size_t{16}, size_t{64}, bytes.size() / 2, bytes.size() - 1}) {
      WriteBytes(path, bytes.substr(0, keep));
      absl::StatusOr<ElfSymbols> symbols = ReadElfDynamicSymbols(path);
      CHECK(symbols.status().code() == absl::StatusCode::kInvalidArgument);
    }
  }
  SECTION("a section header offset pointing past the end") {
    std::string corrupt = bytes;
    uint64_t huge = ~uint64_t{0} - 8;
    std::memcpy(&corrupt[offsetof(Elf64_Ehdr, e_shoff)], &huge, sizeof huge);
    WriteBytes(path, corrupt);
    CHECK(ReadElfDynamicSymbols(path).status().code() == absl::StatusCode::kInvalidArgument);
  }
  SECTION("random byte flips never crash the reader") {
    uint64_t state = 12345;
    for (int round = 0; round < 200; ++round) {
      std::string corrupt = bytes;
      for (int flip = 0; flip < 8; ++flip) {
        state = state * 6364136223846793005ULL + 1442695040888963407ULL;
        corrupt[(state >> 16) % corrupt.size()] ^= static_cast<char>(1 + (state >> 8) % 255);
      }
      WriteBytes(path, corrupt);
      (void)ReadElfDynamicSymbols(path);  // any answer but a crash
    }
    CHECK(ReadElfDynamicSymbols(library).ok());
  }
  SECTION("a missing file is NOT_FOUND") {
    CHECK(ReadElfDynamicSymbols(dir.path() + "/nope.so").status().code() ==
          absl::StatusCode::kNotFound);
  }
}

}  // namespace
}  // namespace kiln
