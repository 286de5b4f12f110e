// The part of starting a process that runs in the forked child, between fork and exec. Kiln's
// servers are multithreaded, so the child may only make async-signal-safe calls: everything it
// needs (argv, envp, fds, limits) is laid out in an ExecPlan before fork, and the child only
// reads it. Used by Process::Start; not a public interface.
#ifndef KILN_HARNESS_SANDBOX_CHILD_EXEC_H_
#define KILN_HARNESS_SANDBOX_CHILD_EXEC_H_

#include <sys/resource.h>
#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

namespace kiln::internal {

// What the child writes to the error pipe when a step fails; the pipe closes on a successful
// exec (it is O_CLOEXEC), so the parent reads either EOF or exactly one of these.
struct ChildFailure {
  enum Step : int32_t { kFds = 1, kSetpgid, kRlimit, kChdir, kExec, kCgroup };
  int32_t step = 0;
  int32_t error = 0;  // errno
};

struct ExecPlan {
  std::string program;  // resolved path
  std::vector<std::string> argv_storage;
  std::vector<std::string> env_storage;
  std::vector<char*> argv;  // null-terminated, points into argv_storage
  std::vector<char*> envp;  // null-terminated; into env_storage or the parent's environ
  std::string cwd;          // empty: inherit
  pid_t parent_pid = 0;

  int stdin_fd = -1;           // becomes fd 0
  int stdout_fd = -1;          // becomes fd 1
  int stderr_fd = -1;          // becomes fd 2; -1: inherit the parent's
  int error_fd = -1;           // write end of the error pipe (O_CLOEXEC)
  std::vector<int> child_fds;  // child_fds[i] becomes fd 3 + i
  std::vector<int> scratch;    // child_fds.size() + 4 slots for the child's own bookkeeping
  std::vector<int> cgroup_procs_fds;  // cgroup.procs files the child joins (writes "0" to)

  struct Limit {
    int resource = 0;
    rlim_t value = 0;
  };
  std::vector<Limit> limits;
};

// Fills argv/envp/scratch from the storage fields; call once the storage is final.
void FinalizePlan(ExecPlan& plan);

// Forks and, in the child, sets up a new process group, the parent-death signal, fds, rlimits,
// cwd and default signal dispositions, then execs; a failing step is reported as a ChildFailure
// on plan.error_fd. Returns the child's pid, or -1 with errno set when fork fails.
//
// PR_SET_PDEATHSIG fires when the *thread* that forked exits, not the process; the caller's
// thread may be a pool thread that a server retires at any time. So every fork happens on one
// spawner thread that lives as long as the process, and children die only with the harness.
pid_t ForkExec(ExecPlan& plan);

}  // namespace kiln::internal

#endif  // KILN_HARNESS_SANDBOX_CHILD_EXEC_H_
