// What one sandboxed child may see and do, and the bubblewrap command line that enforces it.
//
//   SandboxPolicy policy;
//   policy.bwrap = "/usr/bin/bwrap";
//   policy.readonly_paths = {"/opt/cuda"};
//   policy.writable_dir = job_dir;
//   std::vector<std::string> argv = BwrapArgv(policy, {"/opt/kiln/bin/kiln-worker"}, job_dir, 5);
//
// The child gets new user, mount, pid, network, IPC, UTS and (where possible) cgroup
// namespaces, no capabilities, its own session, and dies with the process that started bwrap.
// Its file system is a tmpfs root holding only: the toolchain folders (/usr and the /lib*, /bin,
// /sbin links or folders), a few files of /etc that the dynamic loader and compilers read,
// `readonly_paths`, `writable_dir` (read-write; there is no writable /tmp: TMPDIR points into
// the job's folder), /sys read-only, a fresh /proc and a minimal /dev plus `devices`. Everything else of the host (the data dir, tokens, other jobs, $HOME) is absent.
#ifndef KILN_HARNESS_SANDBOX_SANDBOX_POLICY_H_
#define KILN_HARNESS_SANDBOX_SANDBOX_POLICY_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "harness/sandbox/cgroup_limits.h"

namespace kiln {

struct SandboxPolicy {
  std::string bwrap;                         // the bwrap executable
  std::vector<std::string> readonly_paths;   // bound read-only at the same path (if they exist)
  std::string writable_dir;                  // the job's folder, bound read-write
  // A folder inside writable_dir seen as /tmp (tools that ignore TMPDIR: Nsight Compute's lock
  // and its communication files); empty: no /tmp.
  std::string tmp_dir;
  std::vector<std::string> devices;          // device nodes bound with --dev-bind
  // The seccomp BPF program (struct sock_filter[] bytes) bwrap installs before exec; empty: none.
  std::shared_ptr<const std::string> seccomp_program;
  // Memory of the whole sandbox, bytes (0: unlimited). Enforced by a cgroup where one is
  // available, else as RLIMIT_AS when `address_space_limit_ok` (never for GPU children: the
  // driver reserves far more address space than it uses).
  int64_t max_memory_bytes = 0;
  bool address_space_limit_ok = true;
  int64_t max_processes = 1024;  // RLIMIT_NPROC (and pids.max of the cgroup)
  int64_t max_open_files = 1024;  // RLIMIT_NOFILE
  // Where the job cgroup comes from; null or unavailable: rlimits only.
  std::shared_ptr<const CgroupHost> cgroups;
};

// Whether `path` exists on this host (bound paths that do not are left out of the argv).
bool PathExists(const std::string& path);

// For a writable folder below /dev (a RAM-backed scratch folder, /dev/shm/kiln-jobs-X/...), the
// folder BwrapArgv covers with a tmpfs of its own and remounts read-only (/dev/shm/kiln-jobs-X):
// the sandbox's /dev is writable, the folders between it and the job's folder must not be. ""
// for any other folder.
std::string PrivateDevParent(const std::string& writable_dir);

// The bwrap argv that runs `command` (command[0] an absolute path) under `policy` with `cwd` as
// working directory. `seccomp_fd` is the fd number the child will find the seccomp program on
// (ignored when the policy has none). Pure: reads only which host paths exist.
std::vector<std::string> BwrapArgv(const SandboxPolicy& policy,
                                   const std::vector<std::string>& command, const std::string& cwd,
                                   int seccomp_fd);

// The environment a sandboxed child gets: the variables of `env` ("K=V") a compiler or the
// CUDA runtime reads (PATH, LD_LIBRARY_PATH, locale, CUDA_*, NVIDIA_*, ...), the rest dropped so
// that no secret of the harness's environment reaches a candidate; HOME and TMPDIR point into
// `writable_dir` unless `env` sets TMPDIR inside it.
std::vector<std::string> SandboxEnvironment(const std::vector<std::string>& env,
                                            const std::string& writable_dir);

// The device nodes a worker of one device of `backend` needs, present or not: "cuda":
// /dev/nvidia<index> (`index` is the node's minor number, which is not the CUDA ordinal in
// general: see nvidia_device_map.h) and the control and UVM nodes every CUDA process opens;
// "level_zero": /dev/dri/renderD<128+index>; other backends: none. A worker given only these sees
// no other GPU.
std::vector<std::string> GpuDeviceNodePaths(const std::string& backend, int index);

// GpuDeviceNodePaths, only those present on this host.
std::vector<std::string> GpuDeviceNodes(const std::string& backend, int index);

}  // namespace kiln

#endif  // KILN_HARNESS_SANDBOX_SANDBOX_POLICY_H_
