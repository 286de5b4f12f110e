#include "harness/compile/compiler.h"

#include <dlfcn.h>
#include <sys/stat.h>

#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <thread>

#include "absl/strings/match.h"
#include "harness/compile/toolchain.h"
#include "kiln/abi.h"
#include "tests/unit/compile/compile_test_support.h"

namespace kiln {
namespace {

using testing::GoodSolution;
using testing::MakeSolution;
using testing::ScratchDir;

const char* kIncludeDir = KILN_SOURCE_DIR "/harness/include";

Compiler MakeCompiler(const std::string& cache_dir) {
  std::vector<std::unique_ptr<Toolchain>> toolchains;
  toolchains.push_back(MakeHostCxxToolchain(kIncludeDir));
  return Compiler(cache_dir, std::move(toolchains));
}

bool Exists(const std::string& path) { return std::filesystem::exists(path); }

TEST_CASE("a good cpp solution compiles into a library exporting its entry point") {
  ScratchDir dir;
  Compiler compiler = MakeCompiler(dir.path());
  absl::StatusOr<CompileOutput> out = compiler.Compile(GoodSolution(), "host");
  REQUIRE(out.ok());
  INFO(out->log);
  REQUIRE(out->ok);
  CHECK_FALSE(out->cache_hit);
  CHECK(out->symbol == "run");
  CHECK(out->cache_key.size() == 64);
  CHECK(out->artifact_path == dir.path() + "/" + out->cache_key + "/lib.so");
  CHECK(Exists(out->artifact_path));
  CHECK(Exists(dir.path() + "/" + out->cache_key + "/compile.log"));
  CHECK(Exists(dir.path() + "/" + out->cache_key + "/ok"));

  absl::StatusOr<ElfSymbols> symbols = ReadElfDynamicSymbols(out->artifact_path);
  REQUIRE(symbols.ok());
  CHECK(std::find(symbols->defined.begin(), symbols->defined.end(), "run") !=
        symbols->defined.end());

  // The library loads and the entry point behaves as written.
  void* handle = ::dlopen(out->artifact_path.c_str(), RTLD_NOW | RTLD_LOCAL);
  REQUIRE(handle != nullptr);
  auto entry = reinterpret_cast<kiln_entry>(::dlsym(handle, "run"));
  REQUIRE(entry != nullptr);
  kiln_context ctx = {KILN_ABI_VERSION, KILN_BACKEND_HOST, nullptr, nullptr, nullptr};
  CHECK(entry(nullptr, 2, &ctx) == 0);
  CHECK(entry(nullptr, 3, &ctx) == 1);
  ::dlclose(handle);

  // The build folder is gone; only the published entry remains.
  CHECK(std::filesystem::is_empty(dir.path() + "/staging"));
}

TEST_CASE("a syntax error is a failed compile whose log names file and line") {
  ScratchDir dir;
  Compiler compiler = MakeCompiler(dir.path());
  v1::Solution bad = MakeSolution({{"kernel.cc",
                                    "#include <kiln/abi.h>\n"
                                    "extern \"C\" int run(const kiln_tensor* a, int32_t n,\n"
                                    "                     const kiln_context* c) {\n"
                                    "  return 0 +;\n"
                                    "}\n"}},
                                  "kernel.cc::run");
  absl::StatusOr<CompileOutput> out = compiler.Compile(bad, "host");
  REQUIRE(out.ok());
  INFO(out->log);
  CHECK_FALSE(out->ok);
  CHECK(absl::StrContains(out->log, "kernel.cc:4:"));
  CHECK(out->artifact_path.empty());
  CHECK_FALSE(Exists(dir.path() + "/" + out->cache_key + "/lib.so"));

  // Failures are cached too, with their log.
  absl::StatusOr<CompileOutput> again = compiler.Compile(bad, "host");
  REQUIRE(again.ok());
  CHECK(again->cache_hit);
  CHECK_FALSE(again->ok);
  CHECK(again->log == out->log);
}

TEST_CASE("an entry point without extern \"C\" fails naming the entry point") {
  ScratchDir dir;
  Compiler compiler = MakeCompiler(dir.path());
  v1::Solution solution = MakeSolution(
      {{"main.cc",
        "#include <kiln/abi.h>\n"
        "int run(const kiln_tensor* a, int32_t n, const kiln_context* c) { return 0; }\n"}});
  absl::StatusOr<CompileOutput> out = compiler.Compile(solution, "host");
  REQUIRE(out.ok());
  INFO(out->log);
  CHECK_FALSE(out->ok);
  CHECK(absl::StrContains(out->log, "entry point 'run' is not exported"));
  CHECK(absl::StrContains(out->log, "extern \"C\""));
  CHECK(absl::StrContains(out->log, "run(kiln_tensor const*, int, kiln_context const*)"));
  CHECK(out->artifact_path.empty());
}

TEST_CASE("the second compile of the same solution is a cache hit") {
  ScratchDir dir;
  Compiler compiler = MakeCompiler(dir.path());
  absl::StatusOr<CompileOutput> first = compiler.Compile(GoodSolution(), "host");
  REQUIRE(first.ok());
  REQUIRE(first->ok);
  absl::StatusOr<CompileOutput> second = compiler.Compile(GoodSolution(), "host");
  REQUIRE(second.ok());
  CHECK(second->ok);
  CHECK(second->cache_hit);
  CHECK(second->artifact_path == first->artifact_path);
  CHECK(second->cache_key == first->cache_key);
  CHECK(second->symbol == "run");
  CHECK(second->log == first->log);

  // A second Compiler over the same folder (a restarted harness) finds it as well.
  Compiler restarted = MakeCompiler(dir.path());
  absl::StatusOr<CompileOutput> third = restarted.Compile(GoodSolution(), "host");
  REQUIRE(third.ok());
  CHECK(third->cache_hit);
  CHECK(third->artifact_path == first->artifact_path);
}

TEST_CASE("the cache key changes with a byte of source, the target and the entry point") {
  ScratchDir dir;
  Compiler compiler = MakeCompiler(dir.path());
  absl::StatusOr<CompileOutput> base = compiler.Compile(GoodSolution(), "host");
  REQUIRE(base.ok());

  v1::Solution changed = GoodSolution();
  std::string content = changed.sources(0).content();
  content.back() = ' ';  // the final newline becomes a space
  changed.mutable_sources(0)->set_content(content);
  absl::StatusOr<CompileOutput> other = compiler.Compile(changed, "host");
  REQUIRE(other.ok());
  CHECK_FALSE(other->cache_hit);
  CHECK(other->cache_key != base->cache_key);
  CHECK(other->artifact_path != base->artifact_path);

  absl::StatusOr<CompileOutput> other_target = compiler.Compile(GoodSolution(), "other-cpu");
  REQUIRE(other_target.ok());
  CHECK(other_target->cache_key != base->cache_key);

  v1::Solution other_entry = GoodSolution();
  other_entry.mutable_spec()->set_entry_point("main.cc::other_name");
  absl::StatusOr<CompileOutput> renamed = compiler.Compile(other_entry, "host");
  REQUIRE(renamed.ok());
  CHECK(renamed->cache_key != base->cache_key);
  CHECK_FALSE(renamed->ok);  // nothing called other_name is exported

  // Source order does not matter: the key sorts by path.
  v1::Solution reordered = GoodSolution();
  reordered.mutable_sources()->SwapElements(0, 1);
  absl::StatusOr<CompileOutput> same = compiler.Compile(reordered, "host");
  REQUIRE(same.ok());
  CHECK(same->cache_hit);
  CHECK(same->cache_key == base->cache_key);
}

TEST_CASE("the cache key changes with the contents of kiln's own headers") {
  // A kiln upgrade that changes abi.h (or a TVM-FFI compatibility header) must not reuse a
  // library built against the old one, even over the same cache folder and include path.
  ScratchDir dir;
  const std::string headers = dir.path() + "/include";
  std::filesystem::copy(kIncludeDir, headers, std::filesystem::copy_options::recursive);
  const std::string cache = dir.path() + "/cache";
  auto compile = [&] {
    std::vector<std::unique_ptr<Toolchain>> toolchains;
    toolchains.push_back(MakeHostCxxToolchain(headers));
    Compiler compiler(cache, std::move(toolchains), headers);
    return compiler.Compile(GoodSolution(), "host");
  };
  absl::StatusOr<CompileOutput> base = compile();
  REQUIRE(base.ok());
  REQUIRE(base->ok);
  absl::StatusOr<CompileOutput> again = compile();  // same headers: the cached library
  REQUIRE(again.ok());
  CHECK(again->cache_hit);
  CHECK(again->cache_key == base->cache_key);

  std::ofstream(headers + "/kiln/abi.h", std::ios::app) << "\n// a later kiln\n";
  absl::StatusOr<CompileOutput> upgraded = compile();
  REQUIRE(upgraded.ok());
  CHECK(upgraded->ok);
  CHECK_FALSE(upgraded->cache_hit);
  CHECK(upgraded->cache_key != base->cache_key);

  // A header added anywhere under the folder counts as well.
  std::ofstream(headers + "/kiln/extra.h") << "#pragma once\n";
  absl::StatusOr<CompileOutput> added = compile();
  REQUIRE(added.ok());
  CHECK_FALSE(added->cache_hit);
  CHECK(added->cache_key != upgraded->cache_key);
}

TEST_CASE("concurrent compiles of one solution all succeed with the same library") {
  ScratchDir dir;
  Compiler compiler = MakeCompiler(dir.path());
  constexpr int kThreads = 4;
  std::vector<absl::StatusOr<CompileOutput>> outs(kThreads);
  std::vector<std::thread> threads;
  for (int i = 0; i < kThreads; ++i) {
    threads.emplace_back([&, i] { outs[i] = compiler.Compile(GoodSolution(), "host"); });
  }
  for (auto& t : threads) t.join();
  for (const auto& out : outs) {
    REQUIRE(out.ok());
    CHECK(out->ok);
    CHECK(out->artifact_path == outs[0]->artifact_path);
  }
  CHECK(Exists(outs[0]->artifact_path));
  CHECK(std::filesystem::is_empty(dir.path() + "/staging"));
}

TEST_CASE("a compiler timeout fails the compile but is not cached") {
  ScratchDir dir;
  // A "compiler" that answers --version and then hangs: the timeout, not the source, decides.
  const std::string fake = dir.path() + "/slow-cxx";
  {
    std::ofstream script(fake);
    script << "#!/bin/sh\ncase \"$1\" in --version) echo 'slow-cxx 1.0'; exit 0;; esac\n"
              "exec sleep 60\n";
  }
  std::filesystem::permissions(fake, std::filesystem::perms::owner_all);
  ::setenv("KILN_CXX", fake.c_str(), 1);
  std::vector<std::unique_ptr<Toolchain>> toolchains;
  toolchains.push_back(MakeHostCxxToolchain(kIncludeDir, /*timeout_s=*/0.5));
  ::unsetenv("KILN_CXX");
  Compiler compiler(dir.path(), std::move(toolchains));
  v1::Solution slow = MakeSolution({{"main.cc", "extern \"C\" int run() { return 0; }\n"}});
  absl::StatusOr<CompileOutput> out = compiler.Compile(slow, "host");
  REQUIRE(out.ok());
  INFO(out->log);
  CHECK_FALSE(out->ok);
  CHECK_FALSE(out->deterministic);
  CHECK(absl::StrContains(out->log, "timed out after"));
  CHECK_FALSE(Exists(dir.path() + "/" + out->cache_key));
  absl::StatusOr<CompileOutput> again = compiler.Compile(slow, "host");
  REQUIRE(again.ok());
  CHECK_FALSE(again->cache_hit);
}

TEST_CASE("an unsupported language is INVALID_ARGUMENT naming spec.language") {
  ScratchDir dir;
  Compiler compiler = MakeCompiler(dir.path());
  v1::Solution solution = GoodSolution();
  solution.mutable_spec()->set_language("rust");
  absl::StatusOr<CompileOutput> out = compiler.Compile(solution, "host");
  REQUIRE_FALSE(out.ok());
  CHECK(out.status().code() == absl::StatusCode::kInvalidArgument);
  CHECK(out.status().message() ==
        "spec.language: 'rust' is not supported by this node (supported: cpp)");
}

TEST_CASE("malformed entry points are INVALID_ARGUMENT naming spec.entry_point") {
  ScratchDir dir;
  Compiler compiler = MakeCompiler(dir.path());
  for (const char* ep : {"run", "::run", "main.cc::", "main.cc::9lives", "other.cc::run"}) {
    INFO(ep);
    v1::Solution solution = GoodSolution();
    solution.mutable_spec()->set_entry_point(ep);
    absl::StatusOr<CompileOutput> out = compiler.Compile(solution, "host");
    REQUIRE_FALSE(out.ok());
    CHECK(out.status().code() == absl::StatusCode::kInvalidArgument);
    CHECK(absl::StartsWith(out.status().message(), "spec.entry_point: "));
  }
}

TEST_CASE("a source path escaping the build folder is rejected before anything is written") {
  ScratchDir dir;
  Compiler compiler = MakeCompiler(dir.path());
  v1::Solution solution = GoodSolution();
  solution.add_sources()->set_path("../escape.h");
  absl::StatusOr<CompileOutput> out = compiler.Compile(solution, "host");
  REQUIRE_FALSE(out.ok());
  CHECK(out.status().code() == absl::StatusCode::kInvalidArgument);
  CHECK(absl::StartsWith(out.status().message(), "sources[2].path: "));
  CHECK_FALSE(Exists(dir.path() + "/escape.h"));
}

TEST_CASE("a cancelled compile is an error and leaves nothing in the cache") {
  ScratchDir dir;
  Compiler compiler = MakeCompiler(dir.path());
  std::atomic<bool> cancel{true};
  absl::StatusOr<CompileOutput> out = compiler.Compile(GoodSolution(), "host", &cancel);
  REQUIRE_FALSE(out.ok());
  CHECK(out.status().code() == absl::StatusCode::kCancelled);
  absl::StatusOr<CompileOutput> later = compiler.Compile(GoodSolution(), "host");
  REQUIRE(later.ok());
  CHECK_FALSE(later->cache_hit);
  CHECK(later->ok);
}

TEST_CASE("the toolchain reports its name, version and flags") {
  ScratchDir dir;
  Compiler compiler = MakeCompiler(dir.path());
  auto toolchains = compiler.Toolchains();
  REQUIRE(toolchains.size() == 1);
  CHECK_FALSE(toolchains[0].first.empty());
  CHECK_FALSE(absl::StartsWith(toolchains[0].second, "unknown"));
  std::unique_ptr<Toolchain> cxx = MakeHostCxxToolchain(kIncludeDir);
  std::vector<std::string> flags = cxx->Flags();
  CHECK(std::find(flags.begin(), flags.end(), std::string("-I") + kIncludeDir) != flags.end());
  CHECK(std::find(flags.begin(), flags.end(), "-shared") != flags.end());
  CHECK(cxx->Handles("cpp"));
  CHECK_FALSE(cxx->Handles("cuda"));
}

TEST_CASE("a solution without a translation unit fails with an explanation") {
  ScratchDir dir;
  Compiler compiler = MakeCompiler(dir.path());
  v1::Solution solution = MakeSolution({{"main.h", "int x;\n"}}, "main.h::run");
  absl::StatusOr<CompileOutput> out = compiler.Compile(solution, "host");
  REQUIRE(out.ok());
  CHECK_FALSE(out->ok);
  CHECK(absl::StrContains(out->log, "no C++ translation unit"));
}

}  // namespace
}  // namespace kiln
