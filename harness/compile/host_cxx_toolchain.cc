// The host C++ toolchain: solutions with language "cpp", built by the system C++ compiler into
// a shared object that the host backend loads.
#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <mutex>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "harness/compile/compiler_invocation.h"
#include "harness/compile/source_tree.h"
#include "harness/compile/toolchain.h"
#include "harness/sandbox/process.h"
#include "harness/sandbox/program_path.h"

namespace kiln {

namespace {

constexpr double kDefaultTimeoutS = 120;

// $KILN_CXX, else $CXX, else g++; may carry words ("ccache g++", "g++-12 -fno-plt").
std::vector<std::string> CompilerCommand() {
  const char* chosen = std::getenv("KILN_CXX");
  if (chosen == nullptr || *chosen == '\0') chosen = std::getenv("CXX");
  if (chosen == nullptr || *chosen == '\0') chosen = "g++";
  std::vector<std::string> words = absl::StrSplit(chosen, ' ', absl::SkipWhitespace());
  if (words.empty()) words = {"g++"};
  if (absl::StatusOr<std::string> path = FindProgram(words[0]); path.ok()) words[0] = *path;
  return words;
}

class HostCxxToolchain final : public Toolchain {
 public:
  HostCxxToolchain(std::string include_dir, double timeout_s)
      : command_(CompilerCommand()), include_dir_(std::move(include_dir)), timeout_s_(timeout_s) {}

  std::string Name() const override {
    return std::filesystem::path(command_[0]).filename().string();
  }

  std::string Version() const override {
    std::call_once(version_once_, [this] { version_ = QueryVersion(); });
    return version_;
  }

  bool Handles(const std::string& language) const override { return language == "cpp"; }

  std::vector<std::string> Flags() const override {
    std::vector<std::string> flags(command_.begin() + 1, command_.end());
    for (const char* flag :
         {"-O3", "-march=native", "-shared", "-fPIC", "-std=c++17", "-fvisibility=default"}) {
      flags.emplace_back(flag);
    }
    flags.push_back("-I" + include_dir_);
    flags.push_back("-isystem");
    flags.push_back(TvmFfiCompatIncludeDir(include_dir_));
    return flags;
  }

  absl::StatusOr<CompileOutput> Compile(const v1::Solution& solution, const std::string& work_dir,
                                        const std::string& output_path,
                                        const std::atomic<bool>* cancel) override;

 private:
  std::string QueryVersion() const {
    ProcessOptions opts;
    opts.argv = {command_[0], "--version"};
    opts.env = CompilerEnvironment({});
    opts.merge_stderr = false;
    opts.timeout_s = 30;
    absl::StatusOr<ProcessResult> r = RunProcess(opts);
    if (!r.ok()) return absl::StrCat("unknown (", r.status().message(), ")");
    if (r->exit_code != 0) return absl::StrCat("unknown (", r->Describe(), ")");
    std::string first_line = r->output.substr(0, r->output.find('\n'));
    return first_line.empty() ? "unknown" : first_line;
  }

  std::vector<std::string> command_;  // the program (resolved in PATH) and its own words
  std::string include_dir_;
  double timeout_s_;
  mutable std::once_flag version_once_;
  mutable std::string version_;
};

absl::StatusOr<CompileOutput> HostCxxToolchain::Compile(const v1::Solution& solution,
                                                        const std::string& work_dir,
                                                        const std::string& output_path,
                                                        const std::atomic<bool>* cancel) {
  const std::string& language = solution.spec().language();
  if (!Handles(language)) {
    return absl::InvalidArgumentError(
        absl::StrCat("spec.language: '", language, "' is not handled by ", Name()));
  }
  const std::string src_dir = work_dir + "/src";
  if (absl::Status s = WriteSources(solution, src_dir); !s.ok()) return s;
  std::vector<std::string> units = TranslationUnits(solution, {".cc", ".cpp", ".cxx", ".c"});
  if (units.empty()) {
    CompileOutput out;
    out.log = "no C++ translation unit among the sources (expected .cc, .cpp, .cxx or .c files)\n";
    return out;
  }
  CompilerInvocation invocation;
  invocation.argv = {command_[0]};
  for (std::string& flag : Flags()) invocation.argv.push_back(std::move(flag));
  invocation.argv.push_back("-fdiagnostics-color=never");
  invocation.env = CompilerEnvironment({});
  invocation.src_dir = src_dir;  // diagnostics then name "main.cc:12:5"
  invocation.timeout_s = timeout_s_;
  invocation.sandbox = sandbox();
  invocation.work_dir = work_dir;
  invocation.readonly_paths = {include_dir_};
  return RunCompiler(std::move(invocation), units, output_path, cancel);
}

}  // namespace

std::unique_ptr<Toolchain> MakeHostCxxToolchain(const std::string& include_dir) {
  return MakeHostCxxToolchain(include_dir, kDefaultTimeoutS);
}

std::unique_ptr<Toolchain> MakeHostCxxToolchain(const std::string& include_dir, double timeout_s) {
  return std::make_unique<HostCxxToolchain>(include_dir, timeout_s);
}

}  // namespace kiln
