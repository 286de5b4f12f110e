#include "harness/compile/compiler_invocation.h"

#include <algorithm>
#include <cmath>
#include <filesystem>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "harness/sandbox/process.h"
#include "harness/sandbox/program_path.h"

extern char** environ;

namespace kiln {

namespace {
constexpr int64_t kMaxLogBytes = 1 << 20;
constexpr int64_t kMaxOutputFileBytes = int64_t{1} << 30;
constexpr int64_t kMaxCompilerMemoryBytes = int64_t{4} << 30;

// A compiler outside the system prefix (a separately installed toolkit, a $CXX elsewhere) is seen
// with its install prefix.
std::vector<std::string> ReadablePaths(const CompilerInvocation& invocation) {
  std::vector<std::string> paths = invocation.readonly_paths;
  absl::StatusOr<std::string> program = FindProgram(invocation.argv[0], invocation.env);
  if (program.ok()) {
    std::error_code ec;
    std::filesystem::path real = std::filesystem::canonical(*program, ec);
    if (!ec) paths.push_back(real.parent_path().parent_path().string());
  }
  return paths;
}
}  // namespace

std::vector<std::string> TranslationUnits(const v1::Solution& solution,
                                          std::initializer_list<const char*> extensions) {
  std::vector<std::string> units;
  for (const v1::SourceFile& source : solution.sources()) {
    for (const char* ext : extensions) {
      if (absl::EndsWith(source.path(), ext)) {
        units.push_back(source.path());
        break;
      }
    }
  }
  std::sort(units.begin(), units.end());
  return units;
}

std::vector<std::string> CompilerEnvironment(std::initializer_list<const char*> dropped_prefixes) {
  std::vector<std::string> env;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    absl::string_view kv(*e);
    bool drop = absl::StartsWith(kv, "LC_") || absl::StartsWith(kv, "LANG=") ||
                absl::StartsWith(kv, "LANGUAGE=") || absl::StartsWith(kv, "GCC_COLORS=");
    for (const char* prefix : dropped_prefixes) drop = drop || absl::StartsWith(kv, prefix);
    if (!drop) env.emplace_back(kv);
  }
  env.push_back("LC_ALL=C");
  return env;
}

absl::StatusOr<CompileOutput> RunCompiler(CompilerInvocation invocation,
                                          const std::vector<std::string>& units,
                                          const std::string& output_path,
                                          const std::atomic<bool>* cancel) {
  ProcessOptions opts;
  if (invocation.sandbox != nullptr) {
    opts.sandbox = invocation.sandbox->Policy(invocation.work_dir, ReadablePaths(invocation), {},
                                              /*gpu=*/false, kMaxCompilerMemoryBytes);
  }
  opts.argv = std::move(invocation.argv);
  opts.argv.push_back("-o");
  opts.argv.push_back(std::filesystem::absolute(output_path).string());
  opts.argv.insert(opts.argv.end(), units.begin(), units.end());
  opts.env = std::move(invocation.env);
  opts.cwd = std::move(invocation.src_dir);
  opts.timeout_s = invocation.timeout_s;
  // Per process (a compiler driver's children each get it); the wall-clock limit bounds the run.
  opts.max_cpu_seconds = static_cast<int64_t>(std::ceil(invocation.timeout_s)) + 1;
  opts.max_file_bytes = kMaxOutputFileBytes;
  opts.max_captured_bytes = kMaxLogBytes;
  absl::StatusOr<ProcessResult> run = RunProcess(opts, cancel);
  if (!run.ok()) return run.status();
  return CompileOutcome(*std::move(run), output_path, "compiler");
}

absl::StatusOr<CompileOutput> CompileOutcome(ProcessResult run, const std::string& output_path,
                                             const std::string& what) {
  if (run.cancelled) return absl::CancelledError("compilation cancelled");
  CompileOutput out;
  out.log = std::move(run.output);
  out.seconds = run.wall_s;
  if (run.timed_out || run.term_signal != 0) {
    out.deterministic = false;
    absl::StrAppend(&out.log, "[kiln] ", what, " ", run.Describe(), "\n");
    return out;
  }
  out.ok = run.exit_code == 0;
  if (out.ok) out.artifact_path = output_path;
  return out;
}

}  // namespace kiln
