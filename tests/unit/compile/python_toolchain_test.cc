// The Python toolchain's compile stage: the package layout, byte-compilation errors with
// file:line, missing modules named, the entry function and its arity checked, and the cache.
// The check imports only what a solution imports, so these run with any python3.
#include "harness/compile/python_toolchain.h"

#include <catch2/catch.hpp>
#include <filesystem>

#include "absl/strings/match.h"
#include "harness/compile/compiler.h"
#include "harness/sandbox/program_path.h"
#include "tests/unit/compile/compile_test_support.h"

namespace kiln {
namespace {

using testing::MakeSolution;
using testing::ScratchDir;

const char* kRunner = KILN_BINARY_DIR "/share/kiln/python/kiln_python_runner.py";

// vector-add-like: two inputs, one output.
v1::Definition TwoInOneOut() {
  v1::Definition def;
  def.set_name("test_definition");
  def.add_inputs()->set_name("a");
  def.add_inputs()->set_name("b");
  def.add_outputs()->set_name("c");
  return def;
}

Compiler MakeCompiler(const std::string& cache_dir, int* probes = nullptr, int spares = 0) {
  std::vector<std::unique_ptr<Toolchain>> toolchains;
  toolchains.push_back(MakePythonToolchain(
      [probes]() -> absl::StatusOr<PythonInterpreter> {
        if (probes != nullptr) ++*probes;
        absl::StatusOr<std::string> python = FindProgram("python3");
        if (!python.ok()) return python.status();
        return PythonInterpreter{*python, kRunner, "test python", {}, {}};
      },
      [](const std::string& name) -> absl::StatusOr<v1::Definition> {
        if (name != "test_definition") return absl::NotFoundError(name);
        return TwoInOneOut();
      },
      kDefaultPythonCheckTimeoutS, {}, spares));
  return Compiler(cache_dir, std::move(toolchains));
}

v1::Solution Python(std::vector<std::pair<std::string, std::string>> sources,
                    const std::string& entry = "kernel.py::run", bool dps = true,
                    const std::string& language = "python") {
  v1::Solution s = MakeSolution(std::move(sources), entry, language);
  s.mutable_spec()->set_destination_passing_style(dps);
  return s;
}

CompileOutput CompileOk(Compiler& compiler, const v1::Solution& s) {
  absl::StatusOr<CompileOutput> out = compiler.Compile(s, "host");
  REQUIRE(out.ok());
  INFO(out->log);
  return *out;
}

TEST_CASE("a python package with a relative import is checked and laid out as kiln_solution") {
  ScratchDir dir;
  Compiler compiler = MakeCompiler(dir.path());
  v1::Solution s = Python({{"kernel.py", "from .helpers import add\n\ndef run(a, b, c):\n"
                                         "    add(a, b, c)\n"},
                           {"helpers.py", "def add(a, b, c):\n    pass\n"}});
  CompileOutput out = CompileOk(compiler, s);
  INFO(out.log);
  REQUIRE(out.ok);
  CHECK(out.symbol == "run");
  CHECK(absl::EndsWith(out.artifact_path, "/pkg"));
  CHECK(std::filesystem::is_regular_file(out.artifact_path + "/kiln_solution/kernel.py"));
  CHECK(std::filesystem::is_regular_file(out.artifact_path + "/kiln_solution/helpers.py"));
  CHECK(std::filesystem::is_regular_file(out.artifact_path + "/kiln_solution/__init__.py"));
  CHECK_THAT(out.log, Catch::Contains("kernel.py::run: imported"));

  CompileOutput again = CompileOk(compiler, s);
  CHECK(again.ok);
  CHECK(again.cache_hit);
  CHECK(again.artifact_path == out.artifact_path);
}

TEST_CASE("a syntax error is a compile error naming the file and line") {
  ScratchDir dir;
  Compiler compiler = MakeCompiler(dir.path());
  CompileOutput out = CompileOk(
      compiler, Python({{"kernel.py", "def run(a, b, c):\n    pass\n"},
                        {"sub/broken.py", "x = 1\ndef f(:\n    return x\n"}}));
  CHECK_FALSE(out.ok);
  CHECK_THAT(out.log, Catch::StartsWith("sub/broken.py:2:"));
  CHECK_THAT(out.log, Catch::Contains("SyntaxError"));
  CHECK(out.artifact_path.empty());
}

TEST_CASE("an import the node lacks is a compile error naming the module") {
  ScratchDir dir;
  Compiler compiler = MakeCompiler(dir.path());
  CompileOutput out = CompileOk(
      compiler, Python({{"kernel.py", "import os\nimport kiln_no_such_module_xyz\n\n"
                                      "def run(a, b, c):\n    pass\n"}}));
  CHECK_FALSE(out.ok);
  CHECK_THAT(out.log, Catch::Contains("kernel.py:2: error: cannot import module 'kiln_no_such_module_xyz'"));

  // A relative import of a source the solution does not have names that source.
  CompileOutput missing = CompileOk(
      compiler, Python({{"kernel.py", "from . import helpers\n\ndef run(a, b, c):\n    pass\n"}}));
  CHECK_FALSE(missing.ok);
  CHECK_THAT(missing.log, Catch::Contains("helpers"));
}

TEST_CASE("a missing entry function or one that cannot take kiln's arguments is a compile error") {
  ScratchDir dir;
  Compiler compiler = MakeCompiler(dir.path());
  CompileOutput absent =
      CompileOk(compiler, Python({{"kernel.py", "def main(a, b, c):\n    pass\n"}}));
  CHECK_FALSE(absent.ok);
  CHECK_THAT(absent.log, Catch::Contains("kernel.py: error: no function 'run' is defined in kernel.py"));

  // Destination-passing: inputs then outputs, three arguments.
  CompileOutput short_dps =
      CompileOk(compiler, Python({{"kernel.py", "def run(a, b):\n    return a\n"}}));
  CHECK_FALSE(short_dps.ok);
  CHECK_THAT(short_dps.log, Catch::Contains("cannot take the 3 positional arguments"));

  // The same function value-returning takes the two inputs: fine.
  CompileOutput value = CompileOk(
      compiler, Python({{"kernel.py", "def run(a, b):\n    return a\n"}}, "kernel.py::run", false));
  INFO(value.log);
  CHECK(value.ok);
}

TEST_CASE("an exception raised while importing names the solution's line") {
  ScratchDir dir;
  Compiler compiler = MakeCompiler(dir.path());
  CompileOutput out = CompileOk(
      compiler, Python({{"kernel.py", "X = 1\nraise RuntimeError('boom at import')\n"
                                      "def run(a, b, c):\n    pass\n"}}));
  CHECK_FALSE(out.ok);
  CHECK_THAT(out.log, Catch::StartsWith("kernel.py:2: error: importing the solution failed: "
                                        "RuntimeError: boom at import"));
}

TEST_CASE("the calling convention and the definition's arity are part of the cache key") {
  ScratchDir dir;
  Compiler compiler = MakeCompiler(dir.path());
  const char* source = "def run(*args):\n    return args[0]\n";
  CompileOutput dps = CompileOk(compiler, Python({{"kernel.py", source}}));
  CompileOutput value =
      CompileOk(compiler, Python({{"kernel.py", source}}, "kernel.py::run", false));
  REQUIRE(dps.ok);
  REQUIRE(value.ok);
  CHECK(dps.cache_key != value.cache_key);
  CHECK_FALSE(value.cache_hit);
}

// Folders of checks started ahead of need under the cache's staging/.
int SpareFolders(const std::string& cache_dir) {
  int n = 0;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(cache_dir + "/staging", ec)) {
    n += entry.path().filename().string().rfind("check-spare", 0) == 0;
  }
  return n;
}

TEST_CASE("checks started ahead of need judge as a fresh check does, and serve one check each") {
  ScratchDir fresh_dir, spare_dir;
  Compiler fresh = MakeCompiler(fresh_dir.path());
  const std::string cache = spare_dir.path() + "/cache";
  {
    Compiler spared = MakeCompiler(cache, nullptr, /*spares=*/1);
    constexpr char kNote[] = "kiln: the check's interpreter was started ahead of need";
    // The first check finds none (it starts one for the next).
    CompileOutput first =
        CompileOk(spared, Python({{"kernel.py", "def run(a, b, c):\n    pass\n"}}));
    CHECK(first.ok);
    CHECK_THAT(first.log, !Catch::Contains(kNote));
    CHECK(SpareFolders(cache) == 1);
    // The next ones take it: the same verdicts and logs as a fresh check, the package in place.
    std::vector<v1::Solution> cases = {
        Python({{"kernel.py", "from .helpers import add\n\ndef run(a, b, c):\n"
                              "    add(a, b, c)\n"},
                {"helpers.py", "def add(a, b, c):\n    pass\n"}}),
        Python({{"kernel.py", "def run(a, b, c):\n    pass\n"},
                {"sub/broken.py", "x = 1\ndef f(:\n    return x\n"}}),
        Python({{"kernel.py", "def run(a, b):\n    return a\n"}}),
        Python({{"kernel.py", "def run(a, b):\n    return a\n"}}, "kernel.py::run", false),
        Python({{"kernel.py", "X = 1\nraise RuntimeError('boom at import')\n"
                              "def run(a, b, c):\n    pass\n"}}),
    };
    for (const v1::Solution& s : cases) {
      CompileOutput want = CompileOk(fresh, s);
      CompileOutput got = CompileOk(spared, s);
      INFO("fresh:\n" << want.log << "\nstarted ahead:\n" << got.log);
      CHECK(got.ok == want.ok);
      CHECK_THAT(got.log, Catch::Contains(kNote));
      // The log is the fresh check's, then the note.
      CHECK(got.log.substr(0, want.log.size()) == want.log);
      CHECK(got.symbol == want.symbol);
      if (got.ok) {
        CHECK(std::filesystem::is_regular_file(got.artifact_path + "/kiln_solution/kernel.py"));
        CHECK(std::filesystem::is_regular_file(got.artifact_path + "/kiln_solution/__init__.py"));
      } else {
        CHECK(got.artifact_path.empty());
      }
      // One kept for the next check, none left behind.
      CHECK(SpareFolders(cache) == 1);
    }
  }
  // The compiler's end ends the spare and removes its folder.
  CHECK(SpareFolders(cache) == 0);
}

TEST_CASE("a node whose Python cannot run solutions refuses to compile them, naming why") {
  ScratchDir dir;
  std::vector<std::unique_ptr<Toolchain>> toolchains;
  toolchains.push_back(MakePythonToolchain(
      []() -> absl::StatusOr<PythonInterpreter> {
        return absl::FailedPreconditionError("python3 cannot import torch");
      },
      nullptr));
  Compiler compiler(dir.path(), std::move(toolchains));
  absl::StatusOr<CompileOutput> out =
      compiler.Compile(Python({{"kernel.py", "def run(a, b, c):\n    pass\n"}}), "host");
  REQUIRE_FALSE(out.ok());
  CHECK_THAT(std::string(out.status().message()), Catch::Contains("cannot import torch"));
}

}  // namespace
}  // namespace kiln
