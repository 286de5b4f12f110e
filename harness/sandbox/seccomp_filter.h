// The seccomp filter of every sandboxed child (compilers, workers): everything a compiler, the
// CUDA runtime or a kernel needs is allowed; system calls that reach other processes, the kernel's
// configuration or the network fail with EPERM (sockets of any family but AF_UNIX with
// EAFNOSUPPORT). Blocked: ptrace, process_vm_readv/writev, mount and the new mount API,
// pivot_root, chroot, unshare, setns, namespace flags to clone, clone3 (ENOSYS, so that libc
// falls back to clone, whose flags the filter can see), keyctl/add_key/request_key, bpf,
// perf_event_open, userfaultfd, io_uring, kexec, reboot, module loading, swap, clock setting,
// acct, quotactl, syslog, open_by_handle_at, iopl/ioperm, personality changes.
#ifndef KILN_HARNESS_SANDBOX_SECCOMP_FILTER_H_
#define KILN_HARNESS_SANDBOX_SECCOMP_FILTER_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace kiln {

// The filter as a BPF program (the bytes of a struct sock_filter array, as bwrap --seccomp
// reads it), for this machine's architecture.
// `inet_sockets`: AF_INET and AF_INET6 sockets are allowed too. Only for Nsight Compute's
// workers, whose profiler talks to the profiled process over loopback TCP; the sandbox's network
// namespace has nothing but its own loopback, so they reach no other host or process.
// `kept_fds`: descriptors the child may neither close nor replace (dup2/dup3 onto them,
// close_range over them fail with EPERM): a worker's pipes to the harness (fds 3 and 4), which a
// hostile candidate in the worker's process would otherwise swap for a pipe of its own and
// rewrite the results the worker reports.
absl::StatusOr<std::string> BuildSeccompProgram(bool inet_sockets = false,
                                                const std::vector<int>& kept_fds = {});

// Names of the system calls the filter refuses (for --check and the docs).
std::vector<std::string> BlockedSyscallNames();

// A sealed, read-only memfd holding `program`, positioned at 0; the caller owns it. bwrap reads
// the program from it.
absl::StatusOr<int> SeccompProgramFd(const std::string& program);

}  // namespace kiln

#endif  // KILN_HARNESS_SANDBOX_SECCOMP_FILTER_H_
