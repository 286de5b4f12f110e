#include "harness/sandbox/seccomp_filter.h"

#include <fcntl.h>
#include <sched.h>
#include <seccomp.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <memory>
#include <vector>

#include "absl/strings/str_cat.h"

namespace kiln {

namespace {

// Refused with EPERM, whatever their arguments. Names unknown on this architecture are skipped.
constexpr const char* kBlocked[] = {
    "ptrace",          "process_vm_readv",  "process_vm_writev", "mount",
    "umount",          "umount2",           "pivot_root",        "chroot",
    "move_mount",      "open_tree",         "fsopen",            "fsconfig",
    "fsmount",         "fspick",            "mount_setattr",     "unshare",
    "setns",           "keyctl",            "add_key",           "request_key",
    "bpf",             "perf_event_open",   "userfaultfd",       "io_uring_setup",
    "io_uring_enter",  "io_uring_register", "kexec_load",        "kexec_file_load",
    "reboot",          "init_module",       "finit_module",      "delete_module",
    "swapon",          "swapoff",           "settimeofday",      "clock_settime",
    "clock_adjtime",   "adjtimex",          "acct",              "quotactl",
    "syslog",          "open_by_handle_at", "name_to_handle_at", "iopl",
    "ioperm",          "personality",       "lookup_dcookie",    "fanotify_init",
    "vhangup",         "nfsservctl",        "uselib",            "sethostname",
    "setdomainname",
};

constexpr uint64_t kNamespaceFlags[] = {CLONE_NEWUSER, CLONE_NEWNS,  CLONE_NEWPID, CLONE_NEWNET,
                                        CLONE_NEWIPC,  CLONE_NEWUTS, CLONE_NEWCGROUP};

struct FilterDeleter {
  void operator()(void* ctx) const { seccomp_release(ctx); }
};
using Filter = std::unique_ptr<void, FilterDeleter>;

absl::Status Check(int rc, const std::string& what) {
  if (rc == 0) return absl::OkStatus();
  return absl::InternalError(absl::StrCat("seccomp: ", what, ": ", std::strerror(-rc)));
}

// dup2/dup3 onto, close, and close_range over each of `fds`: EPERM.
absl::Status KeepFds(scmp_filter_ctx ctx, const std::vector<int>& fds) {
  const uint32_t eperm = SCMP_ACT_ERRNO(EPERM);
  for (int fd : fds) {
    const auto value = static_cast<scmp_datum_t>(fd);
    struct Rule {
      const char* name;
      std::vector<scmp_arg_cmp> args;
    };
    const Rule rules[] = {
        {"dup2", {SCMP_A1(SCMP_CMP_EQ, value)}},
        {"dup3", {SCMP_A1(SCMP_CMP_EQ, value)}},
        {"close", {SCMP_A0(SCMP_CMP_EQ, value)}},
        // close_range(first, last, flags) covers fd when first <= fd <= last.
        {"close_range", {SCMP_A0(SCMP_CMP_LE, value), SCMP_A1(SCMP_CMP_GE, value)}},
    };
    for (const Rule& rule : rules) {
      const int nr = seccomp_syscall_resolve_name(rule.name);
      if (nr == __NR_SCMP_ERROR) continue;  // not on this architecture (dup2 on arm64)
      absl::Status s =
          Check(seccomp_rule_add_array(ctx, eperm, nr, static_cast<unsigned>(rule.args.size()),
                                       rule.args.data()),
                rule.name);
      if (!s.ok()) return s;
    }
  }
  return absl::OkStatus();
}

absl::Status AddRules(scmp_filter_ctx ctx, bool inet_sockets) {
  const uint32_t eperm = SCMP_ACT_ERRNO(EPERM);
  for (const char* name : kBlocked) {
    int nr = seccomp_syscall_resolve_name(name);
    if (nr == __NR_SCMP_ERROR) continue;
    if (absl::Status s = Check(seccomp_rule_add(ctx, eperm, nr, 0), name); !s.ok()) return s;
  }
  // clone3 passes its flags in memory the filter cannot read: ENOSYS makes libc use clone.
  int clone3 = seccomp_syscall_resolve_name("clone3");
  if (clone3 != __NR_SCMP_ERROR) {
    if (absl::Status s = Check(seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOSYS), clone3, 0), "clone3");
        !s.ok()) {
      return s;
    }
  }
  for (uint64_t flag : kNamespaceFlags) {
    absl::Status s = Check(seccomp_rule_add(ctx, eperm, SCMP_SYS(clone), 1,
                                            SCMP_A0(SCMP_CMP_MASKED_EQ, flag, flag)),
                           "clone");
    if (!s.ok()) return s;
  }
  const uint32_t no_family = SCMP_ACT_ERRNO(EAFNOSUPPORT);
  for (int call : {SCMP_SYS(socket), SCMP_SYS(socketpair)}) {
    if (!inet_sockets) {
      absl::Status s = Check(
          seccomp_rule_add(ctx, no_family, call, 1, SCMP_A0(SCMP_CMP_NE, AF_UNIX)), "socket");
      if (!s.ok()) return s;
      continue;
    }
    // Exactly AF_UNIX (1), AF_INET (2) and AF_INET6 (10) pass: one rule per refused value or
    // range (libseccomp ORs the rules of one call; comparisons on one argument cannot be ANDed).
    std::vector<scmp_arg_cmp> refused = {SCMP_A0(SCMP_CMP_EQ, 0), SCMP_A0(SCMP_CMP_GT, AF_INET6)};
    for (int family = AF_INET + 1; family < AF_INET6; ++family) {
      refused.push_back(SCMP_A0(SCMP_CMP_EQ, static_cast<scmp_datum_t>(family)));
    }
    for (const scmp_arg_cmp& cmp : refused) {
      absl::Status s = Check(seccomp_rule_add(ctx, no_family, call, 1, cmp), "socket");
      if (!s.ok()) return s;
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::string> BuildSeccompProgram(bool inet_sockets,
                                                const std::vector<int>& kept_fds) {
  Filter ctx(seccomp_init(SCMP_ACT_ALLOW));
  if (ctx == nullptr) return absl::InternalError("seccomp: cannot create a filter");
  if (absl::Status s = AddRules(ctx.get(), inet_sockets); !s.ok()) return s;
  if (absl::Status s = KeepFds(ctx.get(), kept_fds); !s.ok()) return s;
  int fd = ::memfd_create("kiln-seccomp-export", MFD_CLOEXEC);
  if (fd < 0) return absl::InternalError(absl::StrCat("memfd_create: ", std::strerror(errno)));
  std::string program;
  absl::Status status = Check(seccomp_export_bpf(ctx.get(), fd), "export");
  if (status.ok() && ::lseek(fd, 0, SEEK_SET) == 0) {
    char buf[4096];
    ssize_t n;
    while ((n = ::read(fd, buf, sizeof buf)) > 0) program.append(buf, static_cast<size_t>(n));
  }
  ::close(fd);
  if (!status.ok()) return status;
  if (program.empty()) return absl::InternalError("seccomp: the exported program is empty");
  return program;
}

std::vector<std::string> BlockedSyscallNames() {
  std::vector<std::string> names(std::begin(kBlocked), std::end(kBlocked));
  names.push_back("clone3");
  return names;
}

absl::StatusOr<int> SeccompProgramFd(const std::string& program) {
  int fd = ::memfd_create("kiln-seccomp", MFD_CLOEXEC | MFD_ALLOW_SEALING);
  if (fd < 0) return absl::InternalError(absl::StrCat("memfd_create: ", std::strerror(errno)));
  size_t done = 0;
  while (done < program.size()) {
    ssize_t n = ::write(fd, program.data() + done, program.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      ::close(fd);
      return absl::InternalError("cannot write the seccomp program");
    }
    done += static_cast<size_t>(n);
  }
  ::fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL);
  ::lseek(fd, 0, SEEK_SET);
  return fd;
}

}  // namespace kiln
