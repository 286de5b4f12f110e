// kiln's Python paths on KernelBench-style files against a real kiln-harness on the host backend
// with the CPU torch the build found: load_inline and load served by kiln with torch's meaning,
// the interpreter named when it has no torch, and a Python solution's errors in its own terms.
//
// Tagged [kernelbench]: ctest runs these with kernelbench_test.cc as their own entry.
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tests/integration/harness_instance.h"
#include "tests/integration/kernelbench_common.h"

using namespace kiln::testing;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

size_t Count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

// The run's compile log, as `kiln runs show --json` gives it.
std::string CompileLog(const HarnessInstance& harness, const Completed& submitted) {
  const json run = json::parse(submitted.out, nullptr, false);
  REQUIRE(run.is_object());
  Completed shown = harness.Kiln({"runs", "show", run.value("run_id", std::string()), "--json"});
  INFO(shown.Describe());
  const json doc = json::parse(shown.out, nullptr, false);
  REQUIRE(doc.is_object());
  return doc.value("compile_log", std::string());
}

// What torch's own load_inline raises for `call` (Python), from the interpreter kiln uses.
std::string TorchError(const std::string& call) {
  Completed c = Run({KILN_TEST_PYTHON, "-c",
                     "import sys\nfrom torch.utils.cpp_extension import load_inline\n"
                     "try:\n    " + call + "\nexcept TypeError as e:\n    print(e)\n"
                     "    sys.exit(0)\nsys.exit(1)\n"});
  INFO(c.Describe());
  REQUIRE(c.exit_code == 0);
  std::string line = c.out.substr(0, c.out.find('\n'));
  REQUIRE_FALSE(line.empty());
  return line;
}

}  // namespace

TEST_CASE("load_inline and load take torch's arguments with torch's meaning; outputs are plain "
          "tensors",
          "[kernelbench]") {
  SKIP_WITHOUT_TORCH();
  ScratchDir dir;
  HarnessInstance harness(dir / "data",
                          {"--python", KILN_TEST_PYTHON, "--worker-timeout-s", "300"});
  Completed imported = harness.Kiln({"defs", "import", DataPath("kernelbench_small"), "--format",
                                     "kernelbench", "--level", "1", "--definition",
                                     "kernelbench_l1_19_ReLU", "--python", KILN_TEST_PYTHON},
                                    600);
  INFO(imported.Describe());
  REQUIRE(imported.exit_code == 0);
  auto submit = [&](const std::string& file) {
    Completed c = harness.Kiln({"submit", "--definition", "kernelbench_l1_19_ReLU", "--solution",
                                DataPath("kernelbench_candidates/" + file), "--json"},
                               600);
    INFO(file << ": " << c.Describe());
    return c;
  };
  {
    // KernelBench's prompt call (verbose=True, extra_cflags=[""], extra_ldflags=[""]) with a
    // functions dict, a flag given twice, -std=c++20 and two flags in one string: the module
    // checks its docstring and the source its flags (#error), so PASSED means each arrived.
    Completed c = submit("relu_inline_flags.py");
    INFO(c.Describe());
    CHECK(Status(c) == "PASSED");
    // verbose=True: the build's commands are in the compile log.
    CHECK_THAT(CompileLog(harness, c), Catch::Contains("-std=c++20") && Catch::Contains("-O2"));
  }
  {
    // cpp_extension.load of a source the module writes next to itself at import: built by the
    // compile stage, loaded by the worker (which writes it again, into its own copy).
    Completed c = submit("relu_cpp_load.py");
    INFO(c.Describe());
    CHECK(Status(c) == "PASSED");
    CHECK_THAT(CompileLog(harness, c), Catch::Contains("kiln: load('relu_cpp_load') built in"));
  }
  {
    // A syntax error: the compiler's first error and the line that called load_inline, after
    // one compile of main.cpp (torch's full header is not tried: it cannot cure a syntax error).
    Completed c = submit("relu_cpp_syntax_error.py");
    INFO(c.Describe());
    CHECK(Status(c) == "COMPILE_ERROR");
    CHECK_THAT(Reason(c), Catch::StartsWith("relu_cpp_syntax_error.py:18: error: "
                                            "load_inline('relu_cpp_syntax'): main.cpp:") &&
                              Catch::Contains(": error: expected"));
    const std::string log = CompileLog(harness, c);
    CHECK(Count(log, "-c main.cpp") == 1);
    CHECK_THAT(log, Catch::Contains("not compiled again with torch's <torch/extension.h>"));
  }
  {
    // An argument torch's load_inline does not take: torch's own TypeError, and the line.
    const std::string torch_error =
        TorchError("load_inline(name='x', cpp_sources='', extra_cuda_flags=['-O3'])");
    Completed c = submit("relu_cpp_bad_keyword.py");
    INFO(c.Describe());
    CHECK(Status(c) == "COMPILE_ERROR");
    CHECK_THAT(Reason(c), Catch::StartsWith("relu_cpp_bad_keyword.py:11: error: ") &&
                              Catch::EndsWith("TypeError: " + torch_error));
  }
  {
    // CUDA sources on a node whose torch has no CUDA: refused before anything is compiled, at the
    // line that called load_inline (the file PASSES on a GPU node).
    Completed cuda = Run({KILN_TEST_PYTHON, "-c", "import torch; print(torch.version.cuda)"});
    if (cuda.out.rfind("None", 0) == 0) {
      Completed c = submit("relu_cuda_inline_flags.py");
      INFO(c.Describe());
      CHECK(Status(c) == "COMPILE_ERROR");
      CHECK_THAT(Reason(c), Catch::StartsWith("relu_cuda_inline_flags.py:30: error: "
                                              "load_inline('relu_cuda_inline_flags'): this node"));
    }
  }
  {
    // A tuple holding a tensor subclass that computes when kiln first reads it.
    Completed c = submit("relu_lazy_subclass.py");
    INFO(c.Describe());
    CHECK(Status(c) == "REJECTED");
    CHECK_THAT(Reason(c), Catch::StartsWith("integrity.output_not_plain_tensor: output 'output' "
                                            "is a kiln_solution.relu_lazy_subclass.LazyReLU, "
                                            "not a torch.Tensor"));
  }
}

TEST_CASE("an interpreter without torch is named with --python and one that has torch",
          "[kernelbench]") {
  SKIP_WITHOUT_TORCH();
  ScratchDir dir;
  // The build's python3 without its site packages: a python3 that cannot import torch.
  const std::string bare = dir / "python3-without-torch";
  {
    std::ofstream f(bare);
    f << "#!/bin/sh\nexec " << KILN_TEST_PYTHON << " -S \"$@\"\n";
  }
  fs::permissions(bare, fs::perms::owner_all);
  const std::string hint = "pass --python PATH naming a python3 that imports torch";

  // A --python that is no program is refused at start, naming the flag.
  Completed refused = Run({HarnessBinary(), "--listen", "127.0.0.1:0", "--data-dir",
                           dir / "refused", "--python", dir / "no-such-python3"},
                          60);
  INFO(refused.Describe());
  CHECK(refused.exit_code == 2);
  CHECK(refused.err.find("--python " + (dir / "no-such-python3") + ": ") != std::string::npos);

  // One without torch: the harness starts, and kiln node says which python3 has torch.
  {
    HarnessInstance harness(dir / "data", {"--backend", "host", "--python", bare});
    Completed node = harness.Kiln({"node"});
    INFO(node.Describe());
    CHECK(node.out.find("cannot import torch") != std::string::npos);
    CHECK(node.out.find(hint + ": ") != std::string::npos);
  }

  // kiln defs import --format kernelbench with it says the same.
  HarnessInstance harness(dir / "data2", {"--backend", "host", "--python", "none"});
  Completed imported = harness.Kiln({"defs", "import", DataPath("kernelbench_small"), "--format",
                                     "kernelbench", "--python", bare, "--dry-run"},
                                    300);
  INFO(imported.Describe());
  CHECK(imported.exit_code != 0);
  CHECK(imported.err.find(bare + " cannot import torch: " + hint) != std::string::npos);
}

TEST_CASE("a Python solution's runtime error names its file and line and where its traceback is",
          "[kernelbench]") {
  SKIP_WITHOUT_TORCH();
  ScratchDir dir;
  HarnessInstance harness(dir / "data", {"--backend", "host", "--python", KILN_TEST_PYTHON});
  const json solution = {
      {"name", "raises"},
      {"definition", "vector_add_f32"},
      {"author", "kiln"},
      {"spec",
       {{"language", "python"},
        {"target_hardware", json::array({"cpu"})},
        {"entry_point", "kernel.py::run"},
        {"dependencies", json::array()},
        {"destination_passing_style", true}}},
      {"sources",
       json::array({{{"path", "kernel.py"},
                     {"content", "import torch\n\n\ndef run(a, b, c):\n"
                                 "    raise ValueError(\"boom here\")\n"}}})}};
  const std::string path = dir / "raises.json";
  {
    std::ofstream f(path);
    f << solution.dump();
  }
  Completed r = harness.Kiln({"submit", "--definition", "vector_add_f32", "--solution", path}, 300);
  INFO(r.Describe());
  CHECK(r.exit_code == 1);
  CHECK(r.out.find("RUNTIME_ERROR") != std::string::npos);
  CHECK(r.out.find("kernel.py:5: ValueError: boom here") != std::string::npos);
  CHECK(r.out.find(" worker_log/w0") != std::string::npos);

  // An exception at import: the compile log's traceback is the solution's frames, by the
  // solution's own file names, without kiln's runner or the compile cache's paths.
  json at_import = solution;
  at_import["name"] = "raises_at_import";
  at_import["sources"][0]["content"] =
      "import torch\n\ndef helper():\n    raise RuntimeError('bad at import')\n\nhelper()\n\n"
      "def run(a, b, c):\n    c.copy_(a + b)\n";
  const std::string import_path = dir / "raises_at_import.json";
  {
    std::ofstream f(import_path);
    f << at_import.dump();
  }
  Completed c =
      harness.Kiln({"submit", "--definition", "vector_add_f32", "--solution", import_path}, 300);
  INFO(c.Describe());
  CHECK(c.out.find("COMPILE_ERROR") != std::string::npos);
  CHECK(c.out.find("kernel.py:4: error: importing the solution failed: RuntimeError: bad at "
                   "import") != std::string::npos);
  CHECK(c.out.find("File \"kernel.py\", line 6, in <module>") != std::string::npos);
  CHECK(c.out.find("kiln_python_runner.py") == std::string::npos);
  CHECK(c.out.find("kiln_runner/") == std::string::npos);
  CHECK(c.out.find("compile_cache") == std::string::npos);
}
