#include "harness/compile/python_toolchain.h"

#include <algorithm>
#include <filesystem>
#include <map>
#include <mutex>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "harness/common/files.h"
#include "harness/common/sha256.h"
#include "harness/compile/compiler_invocation.h"
#include "harness/compile/source_tree.h"
#include "harness/sandbox/process.h"

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

class PythonToolchain final : public Toolchain {
 public:
  PythonToolchain(PythonInterpreterFn interpreter, DefinitionLookup definitions, double timeout_s,
                  PythonExtensionBuild extensions)
      : interpreter_(std::move(interpreter)),
        definitions_(std::move(definitions)),
        timeout_s_(timeout_s),
        extensions_(std::move(extensions)) {}

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

  PythonInterpreterFn interpreter_;
  DefinitionLookup definitions_;
  double timeout_s_;
  PythonExtensionBuild extensions_;
};

absl::StatusOr<CompileOutput> PythonToolchain::Compile(const v1::Solution& solution,
                                                       const std::string& work_dir,
                                                       const std::string& output_path,
                                                       const std::atomic<bool>* cancel) {
  absl::StatusOr<PythonInterpreter> python = interpreter_();
  if (!python.ok()) return python.status();
  const std::string package = absl::StrCat(output_path, "/", kPackage);
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

  ProcessOptions opts;
  opts.argv = {python->python, "-B", python->runner, "--check", "--solution",
               std::filesystem::absolute(output_path).string(), "--entry",
               solution.spec().entry_point()};
  const bool dps = DestinationPassing(solution);
  if (absl::StatusOr<int> arity = Arity(solution); arity.ok()) {
    opts.argv.push_back("--arity");
    opts.argv.push_back(absl::StrCat(*arity));
    opts.argv.push_back("--arity-note");
    opts.argv.push_back(dps ? "inputs then outputs: destination_passing_style is true"
                            : "the inputs: destination_passing_style is false");
  }
  for (const std::string& path : python->sys_path) {
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
    std::vector<std::string> readable = python->readable_paths;
    readable.push_back(std::filesystem::path(python->runner).parent_path().string());
    readable.insert(readable.end(), extension_readable.begin(), extension_readable.end());
    opts.sandbox = sandbox()->Policy(work_dir, std::move(readable), {}, /*gpu=*/false,
                                     kMaxCheckMemoryBytes);
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
                                               PythonExtensionBuild extensions) {
  return std::make_unique<PythonToolchain>(std::move(interpreter), std::move(definitions),
                                           timeout_s, std::move(extensions));
}

}  // namespace kiln
