// The Python toolchain: solutions with language "python" or "triton" (flashinfer-bench's), run by
// the node's python3 in kiln's Python runner (harness/worker/python/kiln_python_runner.py).
//
// "Compiling" lays the sources out as a package (<artifact>/kiln_solution/<path>, with an
// __init__.py where the solution has none, so relative imports work) and runs the runner's
// --check in the compile sandbox with the node's interpreter: every .py is byte-compiled (a
// syntax error is a COMPILE_ERROR naming file:line), the entry module is imported (a module the
// node lacks is named), and the entry function must exist and take the arguments kiln passes
// (inputs then outputs for destination-passing style, inputs alone otherwise). The artifact is
// the package folder, cached like a library.
//
//   auto python = MakePythonToolchain(interpreter_fn, definitions);
//   Compiler compiler(cache_dir, {std::move(python), ...});
#ifndef KILN_HARNESS_COMPILE_PYTHON_TOOLCHAIN_H_
#define KILN_HARNESS_COMPILE_PYTHON_TOOLCHAIN_H_

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "harness/compile/opencl_toolchain.h"  // DefinitionLookup
#include "harness/compile/toolchain.h"

namespace kiln {

inline constexpr double kDefaultPythonCheckTimeoutS = 120;
inline constexpr char kPythonPackageArtifact[] = "pkg";

// The interpreter that checks and runs Python solutions.
struct PythonInterpreter {
  std::string python;   // absolute, not resolved (a virtual environment's python3 is a link)
  std::string runner;   // kiln_python_runner.py
  std::string version;  // "python3.11, torch 2.11.0+cu130, triton 3.6.0": part of the cache key
  std::vector<std::string> sys_path;        // passed to the runner (--sys-path)
  std::vector<std::string> readable_paths;  // what its sandbox must be able to read
};

// Returns the node's interpreter, waiting for its probe when needed; FAILED_PRECONDITION saying
// why the node cannot run Python solutions.
using PythonInterpreterFn = std::function<absl::StatusOr<PythonInterpreter>()>;

// How the check builds a solution's torch.utils.cpp_extension.load_inline extensions (kiln's
// runner serves load_inline; docs/kernelbench.md): nvcc and the -gencode flags of this node's
// GPUs, as the CUDA toolchain compiles. Empty nvcc: load_inline with CUDA sources cannot build.
struct PythonExtensionBuild {
  std::string nvcc;                   // absolute
  std::vector<std::string> gencode;   // NvccGencodeFlags of the node's arch list
};

// `spares`: checks kept started ahead of need (0: none). A check costs an interpreter start and
// the imports every solution makes (`import torch`: 2.9-4.2 s on a GPU node) before it reads the
// solution; a spare is that process started early, in a folder of its own under the compile
// cache's staging/ (the sandbox's writable folder), torch and triton imported, waiting on its
// fd 3 for the one solution it checks. It has no solution when it starts; the solution's package
// is written into its folder, checked there as by a fresh process, and moved to the build's
// output; a spare serves one check, and the next is started at once. One whose interpreter is
// no longer the node's is discarded.
std::unique_ptr<Toolchain> MakePythonToolchain(PythonInterpreterFn interpreter,
                                               DefinitionLookup definitions,
                                               double timeout_s = kDefaultPythonCheckTimeoutS,
                                               PythonExtensionBuild extensions = {},
                                               int spares = 0);

// Whether `language` is one the Python runner runs ("python", "triton").
bool IsPythonLanguage(const std::string& language);

}  // namespace kiln

#endif  // KILN_HARNESS_COMPILE_PYTHON_TOOLCHAIN_H_
