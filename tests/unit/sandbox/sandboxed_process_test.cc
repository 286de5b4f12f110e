// Children run inside the real sandbox: what they cannot see, write, reach or exhaust. These need
// a working bubblewrap (user namespaces); where the probe fails they are skipped with a notice.
#include <dirent.h>
#include <signal.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <fstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "harness/common/files.h"
#include "harness/sandbox/process.h"
#include "harness/sandbox/sandbox.h"

namespace kiln {
namespace {

const SandboxProbe& Probe() {
  static const SandboxProbe* probe = new SandboxProbe(ProbeSandbox());
  return *probe;
}

// False (with a visible notice) when this machine cannot run bwrap sandboxes.
bool SandboxWorks() {
  if (Probe().bwrap_works && Probe().seccomp_program != nullptr) return true;
  WARN("SKIPPED: bubblewrap sandbox unusable here: " << Probe().bwrap_detail
                                                      << Probe().seccomp_detail);
  return false;
}

struct Scratch {
  Scratch() : path(*MakeTempDir("", "kiln-sandbox-test")) {}
  ~Scratch() { (void)RemoveTree(path); }
  std::string path;
};

ProcessResult RunSandboxed(const std::string& script, const std::string& job_dir,
                           double timeout_s = 60, int64_t memory = 0, int64_t processes = 1024,
                           std::vector<std::string> readonly = {}) {
  auto policy = std::make_shared<SandboxPolicy>();
  policy->bwrap = Probe().bwrap;
  policy->seccomp_program = Probe().seccomp_program;
  policy->cgroups = Probe().cgroups;
  policy->writable_dir = job_dir;
  policy->readonly_paths = std::move(readonly);
  policy->max_memory_bytes = memory;
  policy->max_processes = processes;
  ProcessOptions opts;
  opts.argv = {"bash", "-c", script};
  opts.cwd = job_dir;
  opts.timeout_s = timeout_s;
  opts.sandbox = policy;
  absl::StatusOr<ProcessResult> result = RunProcess(opts);
  REQUIRE(result.ok());
  return *result;
}

// Whether some process on this host has `token` in its command line.
bool ProcessWithArgRunning(const std::string& token) {
  DIR* proc = ::opendir("/proc");
  bool found = false;
  while (struct dirent* entry = ::readdir(proc)) {
    std::ifstream in(std::string("/proc/") + entry->d_name + "/cmdline");
    std::string cmdline((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (cmdline.find(token) != std::string::npos && std::to_string(::getpid()) != entry->d_name) {
      found = true;
    }
  }
  ::closedir(proc);
  return found;
}

TEST_CASE("a sandboxed child runs and writes only into its own folder") {
  if (!SandboxWorks()) return;
  Scratch job;
  ProcessResult r = RunSandboxed(
      "echo inside > result.txt && id -u && (echo x > /usr/kiln-escape || echo usr-ro) && "
      "(echo x > /kiln-escape || echo root-ro)",
      job.path);
  INFO(r.output);
  CHECK(r.exit_code == 0);
  CHECK(*ReadFile(job.path + "/result.txt") == "inside\n");
  CHECK(r.output.find("usr-ro") != std::string::npos);
  CHECK(r.output.find("root-ro") != std::string::npos);
  CHECK_FALSE(PathExists("/usr/kiln-escape"));
}

TEST_CASE("a sandboxed child cannot see files outside the bound set") {
  if (!SandboxWorks()) return;
  Scratch job, secret_dir, shared;
  REQUIRE(WriteFile(secret_dir.path + "/tokens", "team-a ops deadbeef\n").ok());
  REQUIRE(WriteFile(shared.path + "/visible", "ok\n").ok());
  ProcessResult r = RunSandboxed(
      "cat " + secret_dir.path + "/tokens || echo no-secret; ls /root || echo no-home; "
      "test -e /etc/shadow || echo no-shadow; cat " + shared.path + "/visible; "
      "(echo x > " + shared.path + "/visible) 2>/dev/null || echo shared-ro",
      job.path, 60, 0, 1024, {shared.path});
  INFO(r.output);
  CHECK(r.output.find("deadbeef") == std::string::npos);
  CHECK(r.output.find("no-secret") != std::string::npos);
  CHECK(r.output.find("no-home") != std::string::npos);
  CHECK(r.output.find("no-shadow") != std::string::npos);
  CHECK(r.output.find("ok\n") != std::string::npos);
  CHECK(r.output.find("shared-ro") != std::string::npos);
}

TEST_CASE("a sandboxed child cannot open a TCP socket nor use blocked system calls") {
  if (!SandboxWorks()) return;
  Scratch job;
  ProcessResult r = RunSandboxed(
      "(echo hi > /dev/tcp/127.0.0.1/22) 2>&1 | head -1; unshare -U true 2>&1 || echo no-unshare",
      job.path);
  INFO(r.output);
  CHECK(r.output.find("Address family not supported") != std::string::npos);
  CHECK(r.output.find("no-unshare") != std::string::npos);
}

TEST_CASE("a signal that ends a sandboxed child is reported as the signal") {
  if (!SandboxWorks()) return;
  Scratch job;
  ProcessResult r = RunSandboxed("kill -SEGV $$", job.path);
  CHECK(r.term_signal == SIGSEGV);
  CHECK(r.Describe().find("SIGSEGV") != std::string::npos);
}

TEST_CASE("the wall-clock limit kills the sandboxed child with its whole tree") {
  if (!SandboxWorks()) return;
  Scratch job;
  const std::string token = "4242.17";  // a sleep length no one else uses
  ProcessResult r =
      RunSandboxed("sleep " + token + " & (sleep " + token + " &) ; sleep " + token, job.path, 1);
  CHECK(r.timed_out);
  bool gone = false;
  for (int i = 0; i < 200 && !(gone = !ProcessWithArgRunning(token)); ++i) ::usleep(20000);
  CHECK(gone);
}

TEST_CASE("a fork loop in the sandbox is bounded by the process limit") {
  if (!SandboxWorks()) return;
  if (!Probe().cgroups->available() && ::getuid() == 0) {
    WARN("SKIPPED: no cgroup here and RLIMIT_NPROC does not bind root: "
         << Probe().cgroups->Describe());
    return;
  }
  Scratch job;
  ProcessResult r = RunSandboxed(
      // dash gives up on a failed fork at once (bash retries for a long while).
      "sh -c 'i=0; while [ $i -lt 200 ]; do sleep 30 >/dev/null & i=$((i+1)); done' 2>&1",
      job.path, 20, 0, 48);
  INFO(r.output << r.Describe());
  CHECK_FALSE(r.timed_out);
  CHECK(r.output.find("fork") != std::string::npos);
  if (Probe().cgroups->available()) CHECK(r.limit_hit.find("process limit of 48") == 0);
}

TEST_CASE("memory exhaustion in the sandbox ends in a clear error") {
  if (!SandboxWorks()) return;
  Scratch job;
  // tail keeps the whole (newline-free) last line in memory.
  ProcessResult r =
      RunSandboxed("head -c 2000000000 /dev/zero | tail -n 1 | wc -c", job.path, 60, 64 << 20);
  INFO(r.output << r.Describe());
  CHECK_FALSE(r.timed_out);
  const bool oom_killed = r.limit_hit.find("memory limit of 64 MiB") == 0;
  const bool allocation_failed = r.output.find("memory exhausted") != std::string::npos;
  CHECK((oom_killed || allocation_failed));
}

}  // namespace
}  // namespace kiln
