#include "client/import/kernelbench_import.h"

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "harness/common/files.h"
#include "harness/model/json_interop.h"
#include "harness/model/validate.h"
#include "harness/python/python_reference.h"
#include "harness/sandbox/process.h"

namespace kiln::cli {

namespace fs = std::filesystem;

namespace {

struct ScriptRun {
  std::string out;
  int status = 0;
};

// Runs argv[0] with stdout captured; stderr (the script's progress) goes to ours.
absl::StatusOr<ScriptRun> Run(const std::vector<std::string>& argv) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) {
    return absl::InternalError(absl::StrCat("pipe: ", std::strerror(errno)));
  }
  const pid_t pid = ::fork();
  if (pid < 0) return absl::InternalError(absl::StrCat("fork: ", std::strerror(errno)));
  if (pid == 0) {
    ::dup2(fds[1], STDOUT_FILENO);
    std::vector<char*> args;
    for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    ::execvp(args[0], args.data());
    const std::string why = absl::StrCat("kiln: cannot run ", argv[0], ": ", std::strerror(errno),
                                         "\n");
    (void)!::write(STDERR_FILENO, why.data(), why.size());
    ::_exit(127);
  }
  ::close(fds[1]);
  ScriptRun run;
  char buf[1 << 16];
  for (;;) {
    const ssize_t n = ::read(fds[0], buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    run.out.append(buf, static_cast<size_t>(n));
  }
  ::close(fds[0]);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  run.status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return run;
}

// One problem's record into `d`: its errors, or the parsed and validated definition and workload.
void ReadRecord(const nlohmann::json& record, DefinitionImport& d) {
  const std::string file = record.value("file", std::string());
  d.file = file;
  d.name = KernelBenchDefinitionName(record.value("level", 0), record.value("problem_id", 0),
                                     record.value("problem_name", std::string()));
  if (record.contains("error")) {
    d.errors.push_back(absl::StrCat(file, ": ", record["error"].get<std::string>()));
    return;
  }
  absl::StatusOr<v1::Definition> def = ParseDefinitionJson(record["definition"].dump());
  if (!def.ok()) {
    d.errors.push_back(absl::StrCat(file, ": ", def.status().message()));
    return;
  }
  d.definition = *std::move(def);
  d.name = d.definition.name();
  if (absl::Status s = ValidateDefinition(d.definition); !s.ok()) {
    d.errors.push_back(absl::StrCat(file, ": ", s.message()));
    return;
  }
  d.workloads_in_files = 1;
  absl::StatusOr<v1::Workload> w = ParseWorkloadJson(record["workload"].dump());
  if (!w.ok()) {
    d.errors.push_back(absl::StrCat(file, ": ", w.status().message()));
    return;
  }
  // The size limit is the harness's (kiln-harness --max-tensor-bytes), checked when it is
  // registered: KernelBench's Level 1 tensors run to several GiB, which a GPU node may allow.
  Limits limits;
  limits.max_workload_bytes = std::numeric_limits<int64_t>::max();
  if (absl::Status s = ValidateWorkload(d.definition, *w, limits); !s.ok()) {
    d.errors.push_back(absl::StrCat(file, ": ", s.message()));
    return;
  }
  d.workloads.push_back(*std::move(w));
}

}  // namespace

std::string KernelBenchDefinitionName(int level, int problem_id, const std::string& name) {
  return absl::StrCat("kernelbench_l", level, "_", problem_id, "_", name);
}

absl::StatusOr<DatasetScan> ScanKernelBench(const KernelBenchScanOptions& options) {
  std::error_code ec;
  if (!fs::is_directory(options.dir, ec)) {
    return absl::InvalidArgumentError(absl::StrCat(options.dir, ": not a folder"));
  }
  std::vector<std::string> levels_found;
  for (const auto& entry : fs::directory_iterator(options.dir, ec)) {
    const std::string name = entry.path().filename().string();
    if (entry.is_directory() && std::regex_match(name, std::regex("level[0-9]+"))) {
      levels_found.push_back(name);
    }
  }
  if (levels_found.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        options.dir, " has no KernelBench level folders (level1/, level2/, ... holding "
                     "ID_NAME.py problem files)"));
  }
  for (int level : options.levels) {
    if (!fs::is_directory(absl::StrCat(options.dir, "/level", level), ec)) {
      return absl::InvalidArgumentError(absl::StrCat("--level ", level, ": ", options.dir,
                                                     " has no folder level", level));
    }
  }
  const std::string script =
      options.script.empty()
          ? absl::StrCat(ExecutableDir(), "/../share/kiln/python/kiln_kernelbench_import.py")
          : options.script;
  if (!fs::exists(script, ec)) {
    return absl::FailedPreconditionError(
        absl::StrCat("kiln's KernelBench reader is not installed at ", script));
  }
  std::vector<std::string> argv = {options.python, "-B", script, options.dir};
  for (int level : options.levels) {
    argv.push_back("--level");
    argv.push_back(std::to_string(level));
  }
  for (const std::string& name : options.only) {
    argv.push_back("--only");
    argv.push_back(name);
  }
  absl::StatusOr<ScriptRun> run = Run(argv);
  if (!run.ok()) return run.status();
  if (run->status != 0) {
    // The usual cause: that interpreter has no torch. Say which one has.
    std::string hint;
    ProcessOptions check;
    check.argv = {options.python, "-c", "import torch"};
    check.timeout_s = 60;
    check.merge_stderr = true;
    absl::StatusOr<ProcessResult> torch = RunProcess(check);
    if (!torch.ok() || torch->timed_out || torch->term_signal != 0 || torch->exit_code != 0) {
      hint = absl::StrCat("; ", options.python, " cannot import torch: ",
                          PythonWithTorchHint(options.python));
    }
    return absl::FailedPreconditionError(absl::StrCat(
        "reading the KernelBench problems with ", options.python, " failed (exit ", run->status,
        "; its reason is above)", hint));
  }
  DatasetScan scan;
  scan.dir = options.dir;
  std::map<std::string, size_t> by_name;
  size_t start = 0;
  int line_no = 0;
  while (start < run->out.size()) {
    size_t end = run->out.find('\n', start);
    if (end == std::string::npos) end = run->out.size();
    const std::string line = run->out.substr(start, end - start);
    start = end + 1;
    ++line_no;
    if (line.empty()) continue;
    nlohmann::json record = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (!record.is_object()) {
      scan.errors.push_back(absl::StrCat("the KernelBench reader's line ", line_no,
                                         " is not a JSON object"));
      continue;
    }
    DefinitionImport d;
    ReadRecord(record, d);
    if (!options.only.empty() && options.only.count(d.name) == 0) continue;
    if (auto it = by_name.find(d.name); it != by_name.end()) {
      d.errors.push_back(absl::StrCat(d.file, ": definition '", d.name, "' is also made from ",
                                      scan.definitions[it->second].file));
    } else {
      by_name[d.name] = scan.definitions.size();
    }
    scan.definitions.push_back(std::move(d));
  }
  std::vector<std::string> unknown;
  for (const std::string& name : options.only) {
    if (by_name.count(name) == 0) unknown.push_back(name);
  }
  if (!unknown.empty()) {
    return absl::InvalidArgumentError(absl::StrCat("no KernelBench problem of ", options.dir,
                                                   " makes definition ",
                                                   absl::StrJoin(unknown, ", ")));
  }
  return scan;
}

}  // namespace kiln::cli
