#include "harness/compile/python_toolchain.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "harness/common/files.h"
#include "harness/common/sha256.h"
#include "harness/compile/compiler_invocation.h"
#include "harness/compile/source_tree.h"
#include "harness/sandbox/process.h"
#include <nlohmann/json.hpp>

namespace kiln {

namespace {

constexpr char kPackage[] = "kiln_solution";  // as PACKAGE in kiln_runner/abi.py
constexpr int64_t kMaxPythonLogBytes = 1 << 20;
// Importing torch and triton maps a few GiB of address space.
constexpr int64_t kMaxCheckMemoryBytes = int64_t{8} << 30;

// The digest of the runner script and of every module of its package (kiln_runner/ beside it),
// by name: what the runner does to a checked package. Read once per runner path: the files do
// not change while the node runs, and every compile (cache hits included) asks for it.
absl::StatusOr<std::string> ReadRunnerDigest(const std::string& runner);

absl::StatusOr<std::string> RunnerDigest(const std::string& runner) {
  static std::mutex mu;
  static std::map<std::string, std::string>* digests = new std::map<std::string, std::string>();
  std::lock_guard<std::mutex> lock(mu);
  if (auto it = digests->find(runner); it != digests->end()) return it->second;
  absl::StatusOr<std::string> digest = ReadRunnerDigest(runner);
  if (digest.ok()) (*digests)[runner] = *digest;
  return digest;
}

absl::StatusOr<std::string> ReadRunnerDigest(const std::string& runner) {
  std::vector<std::filesystem::path> files = {runner};
  std::error_code ec;
  const std::filesystem::path package = std::filesystem::path(runner).parent_path() / "kiln_runner";
  for (const auto& entry : std::filesystem::directory_iterator(package, ec)) {
    if (entry.path().extension() == ".py") files.push_back(entry.path());
  }
  std::sort(files.begin() + 1, files.end());
  Sha256 digest;
  for (const std::filesystem::path& file : files) {
    absl::StatusOr<std::string> content = ReadFile(file.string());
    if (!content.ok()) return content.status();
    digest.AddPart(file.filename().string());
    digest.AddPart(*content);
  }
  return digest.HexDigest();
}

bool DestinationPassing(const v1::Solution& solution) {
  const v1::BuildSpec& spec = solution.spec();
  return !spec.has_destination_passing_style() || spec.destination_passing_style();
}

// A check started ahead of need: the runner's interpreter started in a folder of its own, torch
// and triton imported, waiting on its fd 3 for the one solution it checks.
struct CheckSpare {
  std::string dir;       // its folder: the sandbox's writable one, the check's working folder
  std::string launched;  // the interpreter it was started with (LaunchKey)
  std::unique_ptr<Process> process;
  int args_fd = -1;  // the write end of its fd 3
  ~CheckSpare() {
    if (args_fd >= 0) ::close(args_fd);
    process.reset();  // kills what is left of it
    if (!dir.empty()) (void)RemoveTree(dir);
  }
};

std::string LaunchKey(const PythonInterpreter& python) {
  return absl::StrCat(python.python, "|", python.runner, "|", absl::StrJoin(python.sys_path, ":"),
                      "|", absl::StrJoin(python.readable_paths, ":"));
}

class PythonToolchain final : public Toolchain {
 public:
  PythonToolchain(PythonInterpreterFn interpreter, DefinitionLookup definitions, double timeout_s,
                  PythonExtensionBuild extensions, int spares)
      : interpreter_(std::move(interpreter)),
        definitions_(std::move(definitions)),
        timeout_s_(timeout_s),
        extensions_(std::move(extensions)),
        spares_(std::max(0, spares)) {}

  std::string Name() const override { return "python"; }

  // The interpreter and, for load_inline extensions, the nvcc and arches they are built with.
  std::string Version() const override {
    absl::StatusOr<PythonInterpreter> python = interpreter_();
    if (!python.ok()) return absl::StrCat("unavailable: ", python.status().message());
    if (extensions_.nvcc.empty()) return python->version;
    return absl::StrCat(python->version, "; load_inline: ", extensions_.nvcc, " ",
                        absl::StrJoin(extensions_.gencode, " "));
  }

  bool Handles(const std::string& language) const override { return IsPythonLanguage(language); }

  std::vector<std::string> Flags() const override { return {"--check"}; }

  // The calling convention and the number of arguments it takes are checked against the
  // definition: a definition re-registered with other inputs must not reuse the check. The
  // runner's digest too (the script and every module of its package): it builds load_inline's
  // extensions into the package under keys of its own, which a package checked by another
  // version of it may not have.
  std::string CacheSalt(const v1::Solution& solution) const override {
    absl::StatusOr<int> arity = Arity(solution);
    std::string runner = "?";
    if (absl::StatusOr<PythonInterpreter> python = interpreter_(); python.ok()) {
      absl::StatusOr<std::string> digest = RunnerDigest(python->runner);
      if (digest.ok()) runner = *digest;
    }
    return absl::StrCat(DestinationPassing(solution) ? "dps" : "value", "|",
                        arity.ok() ? absl::StrCat(*arity) : "?", "|runner ", runner);
  }

  const char* ArtifactName() const override { return kPythonPackageArtifact; }
  bool ExportsEntrySymbol() const override { return false; }

  absl::StatusOr<CompileOutput> Compile(const v1::Solution& solution, const std::string& work_dir,
                                        const std::string& output_path,
                                        const std::atomic<bool>* cancel) override;

 private:
  // Inputs (and outputs, for destination-passing style) of the solution's definition.
  absl::StatusOr<int> Arity(const v1::Solution& solution) const {
    if (!definitions_ || solution.definition().empty()) {
      return absl::NotFoundError("no definition to check against");
    }
    absl::StatusOr<v1::Definition> def = definitions_(solution.definition());
    if (!def.ok()) return def.status();
    return def->inputs_size() + (DestinationPassing(solution) ? def->outputs_size() : 0);
  }

  // The check's process, but for what names the solution: the runner in --check mode, its
  // environment, limits and sandbox, working in `work_dir`.
  ProcessOptions CheckOptions(const PythonInterpreter& python, const std::string& work_dir) const;
  // What names the solution to the check, by the runner's option names ("entry", "arity",
  // "arity_note"; "solution", the package's folder, is added where it lies): options on a fresh
  // check's command line, a JSON object on a spare's fd 3.
  std::vector<std::pair<std::string, std::string>> SolutionArguments(
      const v1::Solution& solution) const;
  // A spare started with `python`, or null; discards spares of another interpreter.
  std::unique_ptr<CheckSpare> TakeSpare(const PythonInterpreter& python);
  // Starts spares in folders under `staging_root` until spares_ are kept or starting.
  void FillSpares(const PythonInterpreter& python, const std::string& staging_root);
  // The check by `spare` of the package `arguments` name: the arguments sent on its fd 3, then
  // its exit awaited; nullopt when the spare had ended before taking them.
  std::optional<ProcessResult> CheckWithSpare(
      CheckSpare& spare, const std::vector<std::pair<std::string, std::string>>& arguments,
      const std::atomic<bool>* cancel);

  PythonInterpreterFn interpreter_;
  DefinitionLookup definitions_;
  double timeout_s_;
  PythonExtensionBuild extensions_;
  const int spares_;  // checks kept started ahead of need (0: none)
  std::mutex spares_mu_;
  std::vector<std::unique_ptr<CheckSpare>> kept_;  // under spares_mu_
  int starting_ = 0;                               // under spares_mu_
};

ProcessOptions PythonToolchain::CheckOptions(const PythonInterpreter& python,
                                            const std::string& work_dir) const {
  ProcessOptions opts;
  opts.argv = {python.python, "-B", python.runner, "--check"};
  for (const std::string& path : python.sys_path) {
    opts.argv.push_back("--sys-path");
    opts.argv.push_back(path);
  }
  opts.env = CompilerEnvironment({"PYTHON"});
  std::vector<std::string> extension_readable;
  if (!extensions_.nvcc.empty()) {
    // load_inline's extensions are built by the runner with this nvcc (and the system c++).
    opts.argv.push_back("--nvcc");
    opts.argv.push_back(extensions_.nvcc);
    // One argument with '=': a value starting with '-' and holding no space (a single flag)
    // would be taken by the runner's argument parser for an option of its own.
    opts.argv.push_back(absl::StrCat("--gencode=", absl::StrJoin(extensions_.gencode, " ")));
    std::error_code canon_ec;
    const std::filesystem::path nvcc = std::filesystem::canonical(extensions_.nvcc, canon_ec);
    if (!canon_ec) extension_readable.push_back(nvcc.parent_path().parent_path().string());
  }
  opts.cwd = work_dir;
  opts.timeout_s = timeout_s_;
  // An extension's compilers run in parallel: CPU time may exceed the wall-clock limit.
  opts.max_cpu_seconds = static_cast<int64_t>(timeout_s_) * 4 + 1;
  opts.max_captured_bytes = kMaxPythonLogBytes;
  if (sandbox() != nullptr) {
    std::vector<std::string> readable = python.readable_paths;
    readable.push_back(std::filesystem::path(python.runner).parent_path().string());
    readable.insert(readable.end(), extension_readable.begin(), extension_readable.end());
    opts.sandbox = sandbox()->Policy(work_dir, std::move(readable), {}, /*gpu=*/false,
                                     kMaxCheckMemoryBytes);
  }
  return opts;
}

std::vector<std::pair<std::string, std::string>> PythonToolchain::SolutionArguments(
    const v1::Solution& solution) const {
  std::vector<std::pair<std::string, std::string>> args = {
      {"entry", solution.spec().entry_point()}};
  if (absl::StatusOr<int> arity = Arity(solution); arity.ok()) {
    args.emplace_back("arity", absl::StrCat(*arity));
    args.emplace_back("arity_note", DestinationPassing(solution)
                                        ? "inputs then outputs: destination_passing_style is true"
                                        : "the inputs: destination_passing_style is false");
  }
  return args;
}

std::unique_ptr<CheckSpare> PythonToolchain::TakeSpare(const PythonInterpreter& python) {
  std::vector<std::unique_ptr<CheckSpare>> stale;  // ended outside the lock
  std::unique_ptr<CheckSpare> taken;
  {
    std::lock_guard<std::mutex> lock(spares_mu_);
    const std::string key = LaunchKey(python);
    for (auto& spare : kept_) {
      if (taken == nullptr && spare->launched == key) {
        taken = std::move(spare);
      } else if (spare->launched != key) {
        stale.push_back(std::move(spare));
      }
    }
    kept_.erase(std::remove(kept_.begin(), kept_.end(), nullptr), kept_.end());
  }
  return taken;
}

void PythonToolchain::FillSpares(const PythonInterpreter& python,
                                 const std::string& staging_root) {
  int to_start = 0;
  {
    std::lock_guard<std::mutex> lock(spares_mu_);
    to_start = spares_ - static_cast<int>(kept_.size()) - starting_;
    if (to_start <= 0) return;
    starting_ += to_start;
  }
  for (int i = 0; i < to_start; ++i) {
    auto spare = std::make_unique<CheckSpare>();
    spare->launched = LaunchKey(python);
    int fds[2] = {-1, -1};
    absl::StatusOr<std::string> dir = MakeTempDir(staging_root, "check-spare");
    bool started = dir.ok() && ::pipe2(fds, O_CLOEXEC) == 0;
    if (started) {
      spare->dir = *dir;
      spare->args_fd = fds[1];
      ProcessOptions opts = CheckOptions(python, spare->dir);
      opts.argv.insert(opts.argv.end(), {"--args-fd", "3"});
      opts.child_fds = {fds[0]};
      absl::StatusOr<Process> process = Process::Start(opts);
      ::close(fds[0]);
      started = process.ok();
      if (started) spare->process = std::make_unique<Process>(*std::move(process));
    } else if (dir.ok()) {
      (void)RemoveTree(*dir);
    }
    std::lock_guard<std::mutex> lock(spares_mu_);
    --starting_;
    if (started) kept_.push_back(std::move(spare));
  }
}

std::optional<ProcessResult> PythonToolchain::CheckWithSpare(
    CheckSpare& spare, const std::vector<std::pair<std::string, std::string>>& arguments,
    const std::atomic<bool>* cancel) {
  nlohmann::json args = nlohmann::json::object();
  for (const auto& [name, value] : arguments) args[name] = value;
  const std::string text = args.dump();
  // The limit counts from here, as a check started now would.
  spare.process->RestartClock();
  const bool sent = WriteAllToPipe(spare.args_fd, text.data(), text.size());
  ::close(spare.args_fd);
  spare.args_fd = -1;
  ProcessResult run = spare.process->Wait(cancel);
  // Ended before it read its solution (it never started on it): the check runs afresh.
  if (!sent) return std::nullopt;
  return run;
}

absl::StatusOr<CompileOutput> PythonToolchain::Compile(const v1::Solution& solution,
                                                       const std::string& work_dir,
                                                       const std::string& output_path,
                                                       const std::atomic<bool>* cancel) {
  absl::StatusOr<PythonInterpreter> python = interpreter_();
  if (!python.ok()) return python.status();
  // The spare works in a folder of its own beside this build's (both under the compile cache's
  // staging/), and its package is moved to `output_path` afterwards.
  const std::string staging_root = std::filesystem::path(work_dir).parent_path().string();
  std::unique_ptr<CheckSpare> spare = spares_ > 0 ? TakeSpare(*python) : nullptr;
  if (spares_ > 0) FillSpares(*python, staging_root);  // for the next check
  const std::string root = spare != nullptr ? absl::StrCat(spare->dir, "/out") : output_path;
  const std::string package = absl::StrCat(root, "/", kPackage);
  if (absl::Status s = WriteSources(solution, package); !s.ok()) return s;
  // A package of its own, so that `from . import helpers` works as in flashinfer-bench.
  std::error_code ec;
  for (auto it = std::filesystem::recursive_directory_iterator(package, ec);
       !ec && it != std::filesystem::recursive_directory_iterator(); it.increment(ec)) {
    if (!it->is_directory(ec)) continue;
    const std::string init = it->path().string() + "/__init__.py";
    if (!std::filesystem::exists(init, ec)) {
      if (absl::Status s = WriteFile(init, ""); !s.ok()) return s;
    }
  }
  if (!std::filesystem::exists(package + "/__init__.py", ec)) {
    if (absl::Status s = WriteFile(package + "/__init__.py", ""); !s.ok()) return s;
  }
  std::vector<std::pair<std::string, std::string>> arguments = SolutionArguments(solution);
  if (spare != nullptr) {
    arguments.emplace_back("solution", std::filesystem::absolute(root).string());
    std::optional<ProcessResult> run = CheckWithSpare(*spare, arguments, cancel);
    arguments.pop_back();
    // The package moves to the build's output, checked; or, when the spare had ended before
    // taking it, to be checked there afresh.
    if (::rename(root.c_str(), output_path.c_str()) != 0) {
      return absl::InternalError(absl::StrCat("cannot move the package to ", output_path, ": ",
                                              std::strerror(errno)));
    }
    if (run.has_value()) return CompileOutcome(*std::move(run), output_path, "the Python check");
  }
  arguments.emplace_back("solution", std::filesystem::absolute(output_path).string());
  ProcessOptions opts = CheckOptions(*python, work_dir);
  for (const auto& [name, value] : arguments) {
    std::string option = absl::StrCat("--", name);
    std::replace(option.begin(), option.end(), '_', '-');
    opts.argv.push_back(option);
    opts.argv.push_back(value);
  }
  absl::StatusOr<ProcessResult> run = RunProcess(opts, cancel);
  if (!run.ok()) return run.status();
  return CompileOutcome(*std::move(run), output_path, "the Python check");
}

}  // namespace

bool IsPythonLanguage(const std::string& language) {
  return language == "python" || language == "triton";
}

std::unique_ptr<Toolchain> MakePythonToolchain(PythonInterpreterFn interpreter,
                                               DefinitionLookup definitions, double timeout_s,
                                               PythonExtensionBuild extensions, int spares) {
  return std::make_unique<PythonToolchain>(std::move(interpreter), std::move(definitions),
                                           timeout_s, std::move(extensions), spares);
}

}  // namespace kiln
