// What every toolchain does the same way: pick the translation units, give the compiler a
// predictable environment, run it in the sources' folder under the compile limits, and turn the
// process's end into a CompileOutput.
#ifndef KILN_HARNESS_COMPILE_COMPILER_INVOCATION_H_
#define KILN_HARNESS_COMPILE_COMPILER_INVOCATION_H_

#include <atomic>
#include <initializer_list>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "harness/compile/toolchain.h"
#include "harness/sandbox/process.h"
#include "harness/sandbox/sandbox.h"
#include "kiln/v1/types.pb.h"

namespace kiln {

// The paths of the sources ending in one of `extensions`, sorted (the compiler's order must not
// depend on the client's).
std::vector<std::string> TranslationUnits(const v1::Solution& solution,
                                          std::initializer_list<const char*> extensions);

// This process's environment with the locale fixed to C (diagnostics in plain ASCII English)
// and without the variables starting with one of `dropped_prefixes`.
std::vector<std::string> CompilerEnvironment(std::initializer_list<const char*> dropped_prefixes);

struct CompilerInvocation {
  std::vector<std::string> argv;  // program and flags; "-o OUTPUT UNITS..." are appended
  std::vector<std::string> env;
  std::string src_dir;  // the cwd, so diagnostics name the sources as their author wrote them
  double timeout_s = 120;
  // Sandboxed (when `sandbox` is enabled): `work_dir` is the only writable folder, and besides
  // the system toolchain only `readonly_paths` and the compiler's own install prefix are seen.
  const Sandbox* sandbox = nullptr;
  std::string work_dir;
  std::vector<std::string> readonly_paths;
};

// The CompileOutput of a finished compiler process that was to write `output_path`: its output
// as the log, ok when it exited 0; a killed or timed-out one is ok=false and not deterministic,
// with `what` ("compiler") and how it ended appended to the log. CANCELLED when it was cancelled.
absl::StatusOr<CompileOutput> CompileOutcome(ProcessResult run, const std::string& output_path,
                                             const std::string& what);

// Runs the compiler for `units` into `output_path`. A killed or timed-out compiler is ok=false
// and not deterministic (not to be cached); a Status error means it could not run at all, or
// CANCELLED.
absl::StatusOr<CompileOutput> RunCompiler(CompilerInvocation invocation,
                                          const std::vector<std::string>& units,
                                          const std::string& output_path,
                                          const std::atomic<bool>* cancel);

}  // namespace kiln

#endif  // KILN_HARNESS_COMPILE_COMPILER_INVOCATION_H_
