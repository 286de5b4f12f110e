#include "harness/sandbox/sandbox.h"

#include <unistd.h>

#include <algorithm>
#include <iterator>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "harness/common/files.h"
#include "harness/sandbox/process.h"
#include "harness/sandbox/program_path.h"
#include "harness/sandbox/seccomp_filter.h"

namespace kiln {

namespace {

constexpr double kProbeTimeoutS = 30;

std::string FindBwrap() {
  const std::string beside = ExecutableDir() + "/bwrap";
  if (::access(beside.c_str(), X_OK) == 0) return beside;
  absl::StatusOr<std::string> found = FindProgram("bwrap");
  return found.ok() ? *found : "";
}

// Runs `true` under the same argv and filter real children get.
void ProbeBwrap(SandboxProbe& probe) {
  absl::StatusOr<std::string> scratch = MakeTempDir("", "kiln-sandbox-probe");
  if (!scratch.ok()) {
    probe.bwrap_detail = std::string(scratch.status().message());
    return;
  }
  auto policy = std::make_shared<SandboxPolicy>();
  policy->bwrap = probe.bwrap;
  policy->writable_dir = *scratch;
  policy->seccomp_program = probe.seccomp_program;
  ProcessOptions opts;
  opts.argv = {"true"};
  opts.timeout_s = kProbeTimeoutS;
  opts.sandbox = policy;
  absl::StatusOr<ProcessResult> run = RunProcess(opts);
  (void)RemoveTree(*scratch);
  if (!run.ok()) {
    probe.bwrap_detail = std::string(run.status().message());
  } else if (run->exit_code != 0 || run->term_signal != 0) {
    std::string output = run->output.substr(0, run->output.find('\n'));
    probe.bwrap_detail = absl::StrCat("bwrap ", run->Describe(), output.empty() ? "" : ": ", output);
  } else {
    probe.bwrap_works = true;
  }
}

}  // namespace

SandboxProbe ProbeSandbox() {
  SandboxProbe probe;
  absl::StatusOr<std::string> program = BuildSeccompProgram();
  if (program.ok()) {
    probe.seccomp_program = std::make_shared<const std::string>(*std::move(program));
  } else {
    probe.seccomp_detail = std::string(program.status().message());
  }
  absl::StatusOr<std::string> worker = BuildSeccompProgram(
      /*inet_sockets=*/false, {std::begin(kWorkerChannelFds), std::end(kWorkerChannelFds)});
  if (worker.ok()) {
    probe.worker_seccomp_program = std::make_shared<const std::string>(*std::move(worker));
  } else if (probe.seccomp_detail.empty()) {
    probe.seccomp_detail = std::string(worker.status().message());
  }
  absl::StatusOr<std::string> profiler = BuildSeccompProgram(/*inet_sockets=*/true);
  if (profiler.ok()) {
    probe.profiler_seccomp_program = std::make_shared<const std::string>(*std::move(profiler));
  }
  probe.cgroups = std::make_shared<const CgroupHost>(CgroupHost::Detect());
  probe.bwrap = FindBwrap();
  if (probe.bwrap.empty()) {
    probe.bwrap_detail = "bwrap not found (apt-get install bubblewrap)";
  } else {
    ProbeBwrap(probe);
  }
  return probe;
}

absl::StatusOr<std::shared_ptr<const Sandbox>> Sandbox::Create(const std::string& mode,
                                                               bool loopback_only,
                                                               const SandboxProbe& probe) {
  if (mode != "auto" && mode != "bwrap" && mode != "none") {
    return absl::InvalidArgumentError(
        absl::StrCat("--sandbox: '", mode, "' is not one of auto, bwrap, none"));
  }
  const bool usable = probe.bwrap_works && probe.seccomp_program != nullptr &&
                      probe.worker_seccomp_program != nullptr;
  const std::string why_not =
      !probe.bwrap_works ? probe.bwrap_detail : absl::StrCat("seccomp: ", probe.seccomp_detail);
  auto sandbox = std::shared_ptr<Sandbox>(new Sandbox());
  sandbox->probe_ = probe;
  if (mode == "none" || (mode == "auto" && !usable && loopback_only)) {
    sandbox->description_ =
        absl::StrCat("sandbox: NONE (", mode == "none" ? "--sandbox none" : why_not,
                     "): compilers and candidates run unconfined, with rlimits and wall-clock "
                     "limits only");
    return std::shared_ptr<const Sandbox>(std::move(sandbox));
  }
  if (!usable) {
    return absl::FailedPreconditionError(absl::StrCat(
        "sandbox unusable (", why_not, "); ",
        mode == "auto" ? "refusing to serve a non-loopback address without it (--sandbox none "
                         "to run unconfined anyway)"
                       : "--sandbox bwrap needs it"));
  }
  sandbox->enabled_ = true;
  const CgroupHost& cgroups = *probe.cgroups;
  sandbox->description_ = absl::StrCat(
      "sandbox: bwrap (", probe.bwrap, "), seccomp, ",
      cgroups.available() ? cgroups.Describe()
                          : absl::StrCat("NO cgroup limits (", cgroups.Describe(),
                                         "): memory bounded by RLIMIT_AS for CPU children only "
                                         "(none for GPU workers), processes by RLIMIT_NPROC "
                                         "(which does not apply to root)"));
  return std::shared_ptr<const Sandbox>(std::move(sandbox));
}

std::shared_ptr<const SandboxPolicy> Sandbox::Policy(const std::string& writable_dir,
                                                     std::vector<std::string> readonly_paths,
                                                     std::vector<std::string> devices, bool gpu,
                                                     int64_t max_memory_bytes) const {
  if (!enabled_) return nullptr;
  auto policy = std::make_shared<SandboxPolicy>();
  policy->bwrap = probe_.bwrap;
  policy->seccomp_program = probe_.seccomp_program;
  policy->cgroups = probe_.cgroups;
  policy->writable_dir = writable_dir;
  policy->readonly_paths = std::move(readonly_paths);
  policy->devices = std::move(devices);
  policy->address_space_limit_ok = !gpu;
  policy->max_memory_bytes = max_memory_bytes;
  return policy;
}

std::shared_ptr<const SandboxPolicy> Sandbox::WorkerPolicy(
    const std::string& writable_dir, std::vector<std::string> readonly_paths,
    std::vector<std::string> devices, bool gpu, int64_t max_memory_bytes) const {
  std::shared_ptr<const SandboxPolicy> base =
      Policy(writable_dir, std::move(readonly_paths), std::move(devices), gpu, max_memory_bytes);
  if (base == nullptr) return nullptr;
  auto policy = std::make_shared<SandboxPolicy>(*base);
  policy->seccomp_program = probe_.worker_seccomp_program;
  return policy;
}

int64_t DefaultWorkerMemoryBytes() {
  const int64_t ram = int64_t{::sysconf(_SC_PHYS_PAGES)} * ::sysconf(_SC_PAGE_SIZE);
  return std::min<int64_t>(ram / 2, int64_t{16} << 30);
}

std::shared_ptr<const SandboxPolicy> Sandbox::ProfilerPolicy(
    const SandboxPolicy& policy, const std::vector<std::string>& profiler_dirs) const {
  if (!enabled_) return nullptr;
  auto profiled = std::make_shared<SandboxPolicy>(policy);
  for (const std::string& dir : profiler_dirs) profiled->readonly_paths.push_back(dir);
  // ncu keeps its lock and its files for the profiled process in /tmp, whatever TMPDIR says.
  if (!policy.writable_dir.empty()) {
    const std::string tmp = policy.writable_dir + "/tmp";
    if (MakeDirs(tmp).ok()) profiled->tmp_dir = tmp;
  }
  profiled->seccomp_program = probe_.profiler_seccomp_program != nullptr
                                  ? probe_.profiler_seccomp_program
                                  : probe_.seccomp_program;
  return profiled;
}

}  // namespace kiln
