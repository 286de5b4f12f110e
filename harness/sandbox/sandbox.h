// The node's sandbox: decided once at start from --sandbox auto|bwrap|none and what the host
// can do, then asked for one SandboxPolicy per compile or worker.
//
//   SandboxProbe probe = ProbeSandbox();
//   auto sandbox = Sandbox::Create("auto", /*loopback_only=*/false, probe);  // error: no bwrap
//   ProcessOptions opts;
//   opts.sandbox = (*sandbox)->Policy(job_dir, {worker_dir}, GpuDeviceNodes("cuda", 0), false);
#ifndef KILN_HARNESS_SANDBOX_SANDBOX_H_
#define KILN_HARNESS_SANDBOX_SANDBOX_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "harness/sandbox/cgroup_limits.h"
#include "harness/sandbox/sandbox_policy.h"

namespace kiln {

// What this host offers for sandboxing, found by trying it.
// The descriptors a worker talks to the harness on: its requests (fd 3) and its events and
// results (fd 4), as worker/serve.h names them (kWorkerRequestFd, kWorkerEventFd); a child's
// child_fds[i] becomes fd 3 + i (process.h).
inline constexpr int kWorkerChannelFds[] = {3, 4};

struct SandboxProbe {
  std::string bwrap;          // the bwrap found ("" when none)
  bool bwrap_works = false;   // a trivial sandbox with every namespace kiln uses ran
  std::string bwrap_detail;   // its error when it did not
  std::shared_ptr<const std::string> seccomp_program;  // empty when it cannot be built
  std::string seccomp_detail;
  // The filter of workers run under Nsight Compute: the same with loopback TCP sockets allowed.
  std::shared_ptr<const std::string> profiler_seccomp_program;
  // The filter of workers: the same, and their pipes to the harness (kWorkerChannelFds) can be
  // neither closed nor replaced.
  std::shared_ptr<const std::string> worker_seccomp_program;
  std::shared_ptr<const CgroupHost> cgroups;
};

// Finds bwrap (next to this executable first: a relocatable bundle carries its own; then PATH),
// runs `bwrap ... true` with the namespaces of BwrapArgv, builds the seccomp program and detects
// cgroups (see CgroupHost::Detect).
SandboxProbe ProbeSandbox();

class Sandbox {
 public:
  // `mode`: "bwrap" needs a working bwrap and seccomp (FAILED_PRECONDITION with the probe's
  // reason); "auto" uses them when they work, else runs unconfined when `loopback_only`, else
  // FAILED_PRECONDITION (remote teams must never reach unconfined candidates); "none" is
  // unconfined. Anything else: INVALID_ARGUMENT naming --sandbox.
  static absl::StatusOr<std::shared_ptr<const Sandbox>> Create(const std::string& mode,
                                                               bool loopback_only,
                                                               const SandboxProbe& probe);

  bool enabled() const { return enabled_; }
  // Whether each worker's memory is capped (a cgroup per worker).
  bool LimitsMemory() const {
    return enabled_ && probe_.cgroups != nullptr && probe_.cgroups->available();
  }
  // One line for the start log: "sandbox: bwrap (...), seccomp, cgroup v2 at ..." or
  // "sandbox: NONE (...): candidates run unconfined". Names every degradation.
  std::string Describe() const { return description_; }

  // The policy of one child: `writable_dir` its only writable folder, `readonly_paths` what it
  // needs besides the toolchain, `devices` its GPU's nodes. `gpu` children get no RLIMIT_AS.
  // Null when the sandbox is off.
  std::shared_ptr<const SandboxPolicy> Policy(const std::string& writable_dir,
                                              std::vector<std::string> readonly_paths,
                                              std::vector<std::string> devices, bool gpu,
                                              int64_t max_memory_bytes) const;
  // Policy for a kiln-worker: the same, with the worker's seccomp filter, under which the
  // candidate in the worker's process cannot close or replace the pipes the worker reports on.
  std::shared_ptr<const SandboxPolicy> WorkerPolicy(const std::string& writable_dir,
                                                    std::vector<std::string> readonly_paths,
                                                    std::vector<std::string> devices, bool gpu,
                                                    int64_t max_memory_bytes) const;

  // `policy` (from Policy) for a worker run under Nsight Compute: `profiler_dirs` readable too,
  // writable_dir/tmp seen as /tmp, and the profiler's seccomp filter, which allows AF_INET/AF_INET6
  // sockets (ncu talks to the process it profiles over TCP; the sandbox's network namespace has
  // only its own loopback).
  // Null when the sandbox is off.
  std::shared_ptr<const SandboxPolicy> ProfilerPolicy(
      const SandboxPolicy& policy, const std::vector<std::string>& profiler_dirs) const;

 private:
  bool enabled_ = false;
  std::string description_;
  SandboxProbe probe_;
};

// The memory one sandboxed worker may use by default: half this machine's RAM, at most 16 GiB.
int64_t DefaultWorkerMemoryBytes();

}  // namespace kiln

#endif  // KILN_HARNESS_SANDBOX_SANDBOX_H_
