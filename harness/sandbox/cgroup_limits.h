// Memory and process-count limits of one sandboxed child and all its descendants, through a
// cgroup of its own. cgroup v2 where the host delegates a subtree with the memory and pids
// controllers to kiln (systemd Delegate=yes, or a container's own cgroup namespace); else the
// memory and pids hierarchies of cgroup v1 where they are writable; else none, and the sandbox
// falls back on rlimits (see Sandbox).
//
//   CgroupHost host = CgroupHost::Detect();      // once, at start
//   absl::StatusOr<std::unique_ptr<JobCgroup>> job = host.CreateJob(1 << 30, 512);
//   ... the child writes "0" to each of (*job)->procs_fds() before exec ...
//   (*job)->LimitHit();   // "memory limit of 1024 MiB reached" after an OOM kill
#ifndef KILN_HARNESS_SANDBOX_CGROUP_LIMITS_H_
#define KILN_HARNESS_SANDBOX_CGROUP_LIMITS_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace kiln {

// One job's cgroup(s). Destruction kills whatever is still in them and removes them.
class JobCgroup {
 public:
  JobCgroup(std::vector<std::string> dirs, bool v2, int64_t memory_bytes, int64_t max_pids);
  JobCgroup(const JobCgroup&) = delete;
  JobCgroup& operator=(const JobCgroup&) = delete;
  ~JobCgroup();

  // Open (O_WRONLY, O_CLOEXEC) cgroup.procs files: writing "0" to each moves the writer in.
  const std::vector<int>& procs_fds() const { return procs_fds_; }
  // Which limit the job ran into ("memory limit of 512 MiB reached (OOM kill)", "process limit
  // of 64 reached"), or "" when none.
  std::string LimitHit() const;
  // SIGKILL to every process in the cgroup(s).
  void KillAll() const;

 private:
  std::vector<std::string> dirs_;
  bool v2_;
  int64_t memory_bytes_;
  int64_t max_pids_;
  std::vector<int> procs_fds_;
};

class CgroupHost {
 public:
  // Looks at /proc/self/mountinfo and /proc/self/cgroup. For v2 with the controllers available
  // but not yet enabled below kiln's cgroup, moves this process into a leaf "kiln-harness"
  // (the no-internal-processes rule) and enables them. Never fails: an unusable host is
  // available() == false with the reason in Describe().
  static CgroupHost Detect();

  bool available() const { return !v2_dir_.empty() || !v1_dirs_.empty(); }
  // "cgroup v2 at DIR (memory, pids)", "cgroup v1 memory at DIR, pids at DIR", or
  // "none: <why>".
  std::string Describe() const;
  // A fresh cgroup with memory.max (bytes, 0: none) and pids.max (0: none).
  absl::StatusOr<std::unique_ptr<JobCgroup>> CreateJob(int64_t memory_bytes,
                                                        int64_t max_pids) const;

 private:
  std::string v2_dir_;                // parent of the job cgroups (v2)
  std::vector<std::string> v1_dirs_;  // parents in the memory and pids hierarchies (v1)
  std::string why_not_;
};

}  // namespace kiln

#endif  // KILN_HARNESS_SANDBOX_CGROUP_LIMITS_H_
