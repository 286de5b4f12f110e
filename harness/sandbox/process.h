// Child processes kiln starts (compilers, workers): own process group, wall-clock limit that
// kills the whole group, rlimits, captured output, cancellation.
#ifndef KILN_HARNESS_SANDBOX_PROCESS_H_
#define KILN_HARNESS_SANDBOX_PROCESS_H_

#include <sys/types.h>

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "harness/sandbox/sandbox_policy.h"

namespace kiln {

struct ProcessOptions {
  std::vector<std::string> argv;          // argv[0] is the program path
  std::vector<std::string> env;           // "K=V"; empty: inherit the parent's environment
  std::string cwd;                        // empty: inherit
  std::string stdout_path;                // empty: captured into ProcessResult::output
  bool merge_stderr = true;               // stderr goes where stdout goes
  double timeout_s = 0;                   // 0: none. On expiry SIGKILL to the process group.
  int64_t max_address_space = 0;          // RLIMIT_AS bytes, 0: unlimited
  int64_t max_cpu_seconds = 0;            // RLIMIT_CPU, 0: unlimited
  int64_t max_file_bytes = 0;             // RLIMIT_FSIZE, 0: unlimited
  int64_t max_captured_bytes = 1 << 20;   // captured output beyond this is dropped (noted)
  // Extra pipe fds for the child: the child gets `child_fds[i]` dup'ed to fd 3 + i.
  std::vector<int> child_fds;
  // Runs the program inside bubblewrap under this policy (null: unconfined). The wall-clock
  // limit still kills everything: killing bwrap's group kills the sandbox's pid namespace.
  std::shared_ptr<const SandboxPolicy> sandbox;
};

struct ProcessResult {
  int exit_code = -1;      // valid when !signaled
  int term_signal = 0;     // signal that ended it, 0 if it exited
  bool timed_out = false;  // killed by the wall-clock limit
  bool cancelled = false;  // killed because *cancel became true
  double wall_s = 0;
  std::string output;      // captured stdout (+stderr), truncated to max_captured_bytes
  std::string limit_hit;   // sandbox cgroup limit it ran into ("memory limit of ..."), or ""
  // "exit code 1" | "killed by SIGSEGV (Segmentation fault)" | "timed out after 5.0 s", then
  // "; memory limit of 512 MiB reached (OOM kill)" when a limit was hit.
  std::string Describe() const;

 private:
  std::string DescribeEnd() const;
};

// A started child. Destruction kills the process group if it is still running.
class Process {
 public:
  // Starts the program. Errors: the program could not be executed (names it).
  static absl::StatusOr<Process> Start(const ProcessOptions& opts);
  Process(Process&&) noexcept;
  Process& operator=(Process&&) noexcept;
  Process(const Process&) = delete;
  Process& operator=(const Process&) = delete;
  ~Process();

  pid_t pid() const { return pid_; }
  // Waits for exit while reading captured output, enforcing the timeout and polling `cancel`
  // (may be null) every few milliseconds.
  // Whatever the program leaves running in its process group when it exits is killed as well.
  // Call once; later calls return a default ProcessResult.
  ProcessResult Wait(const std::atomic<bool>* cancel = nullptr);
  // SIGKILL to the whole process group.
  void Kill();
  // The wall-clock limit (and ProcessResult::wall_s) count from now: a process started ahead
  // of need is limited from when it is given its work, not from its start.
  void RestartClock();

 private:
  Process() = default;
  pid_t pid_ = -1;
  int out_fd_ = -1;  // read end of captured output, -1 when redirected to a file
  ProcessOptions opts_;
  double start_s_ = 0;
  bool reaped_ = false;
  std::unique_ptr<JobCgroup> cgroup_;  // the sandbox's cgroup, when it has one
};

// This process's environment as "NAME=value" strings (what a child gets when
// ProcessOptions.env is empty).
std::vector<std::string> ParentEnvironment();

// Writes all of `data` to a blocking fd (a child's pipe) with SIGPIPE held back on this thread,
// so that a child that has gone is a false return (EPIPE) rather than the death of the writer.
bool WriteAllToPipe(int fd, const char* data, size_t size);

// Start + Wait.
absl::StatusOr<ProcessResult> RunProcess(const ProcessOptions& opts,
                                         const std::atomic<bool>* cancel = nullptr);

}  // namespace kiln

#endif  // KILN_HARNESS_SANDBOX_PROCESS_H_
