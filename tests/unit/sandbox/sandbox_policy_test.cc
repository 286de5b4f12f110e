// The sandbox's pieces that need no working bwrap: the argv, the environment filter, the
// seccomp program, the mode decision.
#include "harness/sandbox/sandbox_policy.h"

#include <catch2/catch.hpp>
#include <cerrno>
#include <cstdlib>
#include <fcntl.h>
#include <iterator>
#include <sys/syscall.h>
#include <algorithm>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <string>
#include <vector>

#include "harness/common/files.h"
#include "harness/sandbox/sandbox.h"
#include "harness/sandbox/seccomp_filter.h"

namespace kiln {
namespace {

bool HasSequence(const std::vector<std::string>& argv, const std::vector<std::string>& seq) {
  for (size_t i = 0; i + seq.size() <= argv.size(); ++i) {
    if (std::equal(seq.begin(), seq.end(), argv.begin() + static_cast<long>(i))) return true;
  }
  return false;
}

bool Has(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

TEST_CASE("a read-only path that is a symlink binds its real folder and recreates the link") {
  char tmpl[] = "/tmp/kiln-policy-XXXXXX";
  REQUIRE(::mkdtemp(tmpl) != nullptr);
  const std::string dir = tmpl;
  const std::string real = dir + "/cuda-13.0";
  const std::string link = dir + "/cuda";
  REQUIRE(::mkdir(real.c_str(), 0755) == 0);
  REQUIRE(::symlink(real.c_str(), link.c_str()) == 0);
  SandboxPolicy policy;
  policy.bwrap = "/usr/bin/bwrap";
  policy.readonly_paths = {link, real, real + "/../cuda-13.0/"};
  std::vector<std::string> argv = BwrapArgv(policy, {"/usr/bin/true"}, "", -1);
  CHECK(HasSequence(argv, {"--ro-bind", real, real}));
  CHECK(HasSequence(argv, {"--symlink", real, link}));
  CHECK(std::count(argv.begin(), argv.end(), real) == 3);  // bound once, linked once
  CHECK_FALSE(HasSequence(argv, {"--ro-bind", link, link}));
  ::unlink(link.c_str());
  ::rmdir(real.c_str());
  ::rmdir(dir.c_str());
}

TEST_CASE("the bwrap argv unshares every namespace, drops capabilities and binds only the job") {
  SandboxPolicy policy;
  policy.bwrap = "/usr/bin/bwrap";
  policy.readonly_paths = {"/usr/include", "/nonexistent/kiln/path"};
  policy.writable_dir = "/tmp";
  policy.devices = {"/dev/null"};
  policy.seccomp_program = std::make_shared<const std::string>("12345678");
  std::vector<std::string> argv = BwrapArgv(policy, {"/usr/bin/true", "x"}, "/tmp", 5);

  CHECK(argv.front() == "/usr/bin/bwrap");
  for (const char* flag : {"--unshare-user", "--unshare-pid", "--unshare-net", "--unshare-ipc",
                           "--unshare-uts", "--die-with-parent", "--new-session"}) {
    CHECK(Has(argv, flag));
  }
  CHECK(HasSequence(argv, {"--cap-drop", "ALL"}));
  CHECK(HasSequence(argv, {"--tmpfs", "/"}));
  CHECK(HasSequence(argv, {"--ro-bind", "/usr", "/usr"}));
  // Already visible under /usr: a second bind would be redundant (and fails on a symlink).
  CHECK_FALSE(Has(argv, "/usr/include"));
  CHECK_FALSE(Has(argv, "/nonexistent/kiln/path"));  // absent paths are left out
  CHECK(HasSequence(argv, {"--bind", "/tmp", "/tmp"}));
  CHECK(HasSequence(argv, {"--dev-bind", "/dev/null", "/dev/null"}));
  CHECK(HasSequence(argv, {"--ro-bind", "/sys", "/sys"}));
  CHECK(HasSequence(argv, {"--chdir", "/tmp"}));
  CHECK(HasSequence(argv, {"--seccomp", "5"}));
  CHECK(HasSequence(argv, {"--", "/usr/bin/true", "x"}));
  CHECK(argv.back() == "x");
  // Nothing of the host's root is bound wholesale.
  CHECK_FALSE(HasSequence(argv, {"--ro-bind", "/", "/"}));
  CHECK_FALSE(HasSequence(argv, {"--ro-bind", "/etc", "/etc"}));
}

TEST_CASE("a job folder in a RAM-backed scratch folder under /dev has read-only folders above it") {
  SandboxPolicy policy;
  policy.bwrap = "/usr/bin/bwrap";
  policy.writable_dir = "/dev/shm/kiln-jobs-0123/jobs/run1/cand";
  std::vector<std::string> argv = BwrapArgv(policy, {"/usr/bin/true"}, policy.writable_dir, 5);
  auto at = [&](std::vector<std::string> seq) {
    for (size_t i = 0; i + seq.size() <= argv.size(); ++i) {
      if (std::equal(seq.begin(), seq.end(), argv.begin() + static_cast<std::ptrdiff_t>(i))) {
        return static_cast<int>(i);
      }
    }
    return -1;
  };
  const int dev = at({"--dev", "/dev"});
  const int tmpfs = at({"--tmpfs", "/dev/shm/kiln-jobs-0123"});
  const int bind = at({"--bind", policy.writable_dir, policy.writable_dir});
  const int ro = at({"--remount-ro", "/dev/shm/kiln-jobs-0123"});
  REQUIRE(dev >= 0);
  REQUIRE(tmpfs >= 0);
  REQUIRE(bind >= 0);
  REQUIRE(ro >= 0);
  CHECK(dev < tmpfs);
  CHECK(tmpfs < bind);
  CHECK(bind < ro);
  CHECK(PrivateDevParent("/tmp/kiln/jobs/run1/cand").empty());
  CHECK(PrivateDevParent("/dev/shm/kiln-jobs-0123").empty());
  CHECK(PrivateDevParent("/dev/shm/kiln-jobs-0123/../x/y").empty());
}

TEST_CASE("without a seccomp program the argv has no --seccomp") {
  SandboxPolicy policy;
  policy.bwrap = "bwrap";
  std::vector<std::string> argv = BwrapArgv(policy, {"/usr/bin/true"}, "", 3);
  CHECK_FALSE(Has(argv, "--seccomp"));
  CHECK_FALSE(Has(argv, "--chdir"));
}

TEST_CASE("the sandbox environment drops secrets and points HOME into the job folder") {
  std::vector<std::string> env = SandboxEnvironment(
      {"PATH=/usr/bin", "KILN_TOKEN=secret", "AWS_SECRET_ACCESS_KEY=x", "HOME=/root",
       "CUDA_VISIBLE_DEVICES=0", "LC_ALL=C", "TMPDIR=/elsewhere"},
      "/jobs/r1");
  CHECK(Has(env, "PATH=/usr/bin"));
  CHECK(Has(env, "CUDA_VISIBLE_DEVICES=0"));
  CHECK(Has(env, "LC_ALL=C"));
  CHECK(Has(env, "HOME=/jobs/r1"));
  CHECK(Has(env, "TMPDIR=/jobs/r1"));
  CHECK_FALSE(Has(env, "KILN_TOKEN=secret"));
  CHECK_FALSE(Has(env, "AWS_SECRET_ACCESS_KEY=x"));
  CHECK_FALSE(Has(env, "HOME=/root"));
  CHECK_FALSE(Has(env, "TMPDIR=/elsewhere"));
  // A TMPDIR inside the job folder (nvcc's) is kept.
  CHECK(Has(SandboxEnvironment({"TMPDIR=/jobs/r1/nvcc-tmp"}, "/jobs/r1"),
            "TMPDIR=/jobs/r1/nvcc-tmp"));
}

TEST_CASE("GPU device nodes are only those of the assigned device that exist") {
  for (const std::string& node : GpuDeviceNodes("cuda", 3)) {
    CHECK((node == "/dev/nvidia3" || node == "/dev/nvidiactl" || node == "/dev/nvidia-uvm" ||
           node == "/dev/nvidia-uvm-tools"));
  }
  CHECK(GpuDeviceNodes("host", 0).empty());
}

TEST_CASE("the seccomp filter builds into a BPF program and names what it blocks") {
  absl::StatusOr<std::string> program = BuildSeccompProgram();
  REQUIRE(program.ok());
  CHECK(!program->empty());
  CHECK(program->size() % 8 == 0);  // struct sock_filter is 8 bytes
  std::vector<std::string> blocked = BlockedSyscallNames();
  for (const char* name : {"ptrace", "process_vm_readv", "mount", "keyctl", "bpf",
                           "perf_event_open", "kexec_load", "reboot", "unshare"}) {
    CHECK(Has(blocked, name));
  }
  absl::StatusOr<int> fd = SeccompProgramFd(*program);
  REQUIRE(fd.ok());
  CHECK(*fd >= 0);
  ::close(*fd);
}

TEST_CASE("the sandbox mode refuses remote service without a working sandbox") {
  SandboxProbe broken;
  broken.bwrap_detail = "bwrap not found";
  broken.cgroups = std::make_shared<const CgroupHost>();

  auto bad = Sandbox::Create("sometimes", true, broken);
  CHECK(bad.status().code() == absl::StatusCode::kInvalidArgument);
  CHECK(std::string(bad.status().message()).find("--sandbox") != std::string::npos);

  auto remote = Sandbox::Create("auto", /*loopback_only=*/false, broken);
  CHECK(remote.status().code() == absl::StatusCode::kFailedPrecondition);
  CHECK(std::string(remote.status().message()).find("bwrap not found") != std::string::npos);

  auto required = Sandbox::Create("bwrap", true, broken);
  CHECK(required.status().code() == absl::StatusCode::kFailedPrecondition);

  auto local = Sandbox::Create("auto", /*loopback_only=*/true, broken);
  REQUIRE(local.ok());
  CHECK_FALSE((*local)->enabled());
  CHECK((*local)->Describe().find("NONE") != std::string::npos);
  CHECK((*local)->Policy("/tmp", {}, {}, false, 0) == nullptr);

  auto none = Sandbox::Create("none", false, broken);
  REQUIRE(none.ok());
  CHECK_FALSE((*none)->enabled());
  CHECK((*none)->Describe().find("--sandbox none") != std::string::npos);
}

}  // namespace
}  // namespace kiln

namespace kiln {
namespace {

// socket(family, SOCK_STREAM) in a child that installed `program` first: 0 when it was
// created, else the errno it failed with (255 when the filter could not be installed).
int SocketErrnoUnder(const std::string& program, int family) {
  pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    sock_fprog fprog{};
    fprog.len = static_cast<unsigned short>(program.size() / sizeof(sock_filter));
    fprog.filter = reinterpret_cast<sock_filter*>(const_cast<char*>(program.data()));
    if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 ||
        ::prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &fprog) != 0) {
      ::_exit(255);
    }
    const int fd = ::socket(family, SOCK_STREAM, 0);
    ::_exit(fd >= 0 ? 0 : errno);
  }
  int status = 0;
  REQUIRE(::waitpid(pid, &status, 0) == pid);
  REQUIRE(WIFEXITED(status));
  return WEXITSTATUS(status);
}

// Runs `op` in a child under `program` with pipes on fds 3 and 4 (a worker's channels): its
// errno, 0 on success.
int ErrnoUnder(const std::string& program, int (*op)()) {
  pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    int p[2], q[2];
    if (::pipe(p) != 0 || ::pipe(q) != 0 || ::dup2(p[0], 3) != 3 || ::dup2(q[1], 4) != 4) {
      ::_exit(254);
    }
    sock_fprog fprog{};
    fprog.len = static_cast<unsigned short>(program.size() / sizeof(sock_filter));
    fprog.filter = reinterpret_cast<sock_filter*>(const_cast<char*>(program.data()));
    if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 ||
        ::prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &fprog) != 0) {
      ::_exit(255);
    }
    ::_exit(op() == 0 ? 0 : errno);
  }
  int status = 0;
  REQUIRE(::waitpid(pid, &status, 0) == pid);
  REQUIRE(WIFEXITED(status));
  return WEXITSTATUS(status);
}

TEST_CASE("a worker's filter keeps its pipes to the harness: no close, dup2 or dup3 onto them") {
  absl::StatusOr<std::string> plain = BuildSeccompProgram();
  absl::StatusOr<std::string> worker =
      BuildSeccompProgram(false, {std::begin(kWorkerChannelFds), std::end(kWorkerChannelFds)});
  REQUIRE(plain.ok());
  REQUIRE(worker.ok());
  // What a candidate that interposes on the result pipe does: a pipe of its own over fd 4.
  auto dup2_over_4 = [] {
    int p[2];
    return ::pipe(p) != 0 ? -1 : (::dup2(p[1], 4) == 4 ? 0 : -1);
  };
  auto dup3_over_3 = [] {
    int p[2];
    return ::pipe(p) != 0 ? -1 : (::dup3(p[0], 3, O_CLOEXEC) == 3 ? 0 : -1);
  };
  auto close_4 = [] { return ::close(4); };
  auto close_range_all = [] { return static_cast<int>(::syscall(SYS_close_range, 3, ~0U, 0)); };
  auto dup2_over_5 = [] {
    int p[2];
    return ::pipe(p) != 0 ? -1 : (::dup2(p[1], 5) == 5 ? 0 : -1);
  };
  auto close_range_above = [] { return static_cast<int>(::syscall(SYS_close_range, 5, ~0U, 0)); };
  CHECK(ErrnoUnder(*worker, dup2_over_4) == EPERM);
  CHECK(ErrnoUnder(*worker, dup3_over_3) == EPERM);
  CHECK(ErrnoUnder(*worker, close_4) == EPERM);
  CHECK(ErrnoUnder(*worker, close_range_all) == EPERM);
  // Other descriptors are the program's own.
  CHECK(ErrnoUnder(*worker, dup2_over_5) == 0);
  CHECK(ErrnoUnder(*worker, close_range_above) == 0);
  // Compilers and the rest keep the plain filter, which leaves fds 3 and 4 alone.
  CHECK(ErrnoUnder(*plain, dup2_over_4) == 0);
  CHECK(ErrnoUnder(*plain, close_4) == 0);
}

TEST_CASE("the profiler's seccomp filter allows inet sockets and nothing else more") {
  absl::StatusOr<std::string> plain = BuildSeccompProgram();
  absl::StatusOr<std::string> profiler = BuildSeccompProgram(/*inet_sockets=*/true);
  REQUIRE(plain.ok());
  REQUIRE(profiler.ok());
  // Every child: unix sockets as before.
  CHECK(SocketErrnoUnder(*plain, AF_UNIX) == 0);
  CHECK(SocketErrnoUnder(*profiler, AF_UNIX) == 0);
  // Only the profiler's: TCP over IPv4 and IPv6 (ncu talks to the process it profiles).
  CHECK(SocketErrnoUnder(*plain, AF_INET) == EAFNOSUPPORT);
  CHECK(SocketErrnoUnder(*profiler, AF_INET) == 0);
  CHECK(SocketErrnoUnder(*profiler, AF_INET6) != EAFNOSUPPORT);
  // Neither: netlink, packet sockets and the other families, below, between and above them.
  for (int family : {AF_NETLINK, AF_PACKET, AF_AX25, AF_BLUETOOTH, AF_VSOCK, AF_ALG}) {
    INFO("family " << family);
    CHECK(SocketErrnoUnder(*plain, family) == EAFNOSUPPORT);
    CHECK(SocketErrnoUnder(*profiler, family) == EAFNOSUPPORT);
  }
  // The rest of the filter is the same: ptrace still refused.
  pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    sock_fprog fprog{};
    fprog.len = static_cast<unsigned short>(profiler->size() / sizeof(sock_filter));
    fprog.filter = reinterpret_cast<sock_filter*>(const_cast<char*>(profiler->data()));
    if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 ||
        ::prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &fprog) != 0) {
      ::_exit(255);
    }
    ::_exit(::ptrace(PTRACE_TRACEME, 0, nullptr, nullptr) == 0 ? 0 : errno);
  }
  int status = 0;
  REQUIRE(::waitpid(pid, &status, 0) == pid);
  CHECK(WEXITSTATUS(status) == EPERM);
}

}  // namespace
}  // namespace kiln

namespace kiln {
namespace {

TEST_CASE("a profiler's sandbox sees a folder of its job as /tmp, and nothing else more") {
  SandboxProbe probe;
  probe.bwrap = "/usr/bin/bwrap";
  probe.bwrap_works = true;
  probe.seccomp_program = std::make_shared<const std::string>("plain");
  probe.profiler_seccomp_program = std::make_shared<const std::string>("profiler");
  probe.worker_seccomp_program = std::make_shared<const std::string>("worker");
  probe.cgroups = std::make_shared<const CgroupHost>();
  auto sandbox = Sandbox::Create("bwrap", false, probe);
  REQUIRE(sandbox.ok());
  auto dir = MakeTempDir("", "kiln-sandbox-test");
  REQUIRE(dir.ok());
  // A compiler's policy has the plain filter; a worker's keeps its pipes to the harness.
  CHECK(*(*sandbox)->Policy(*dir, {}, {}, false, 0)->seccomp_program == "plain");
  auto worker = (*sandbox)->WorkerPolicy(*dir, {"/opt/kiln"}, {}, true, 0);
  REQUIRE(worker != nullptr);
  CHECK(*worker->seccomp_program == "worker");
  CHECK(worker->tmp_dir.empty());
  auto profiled = (*sandbox)->ProfilerPolicy(*worker, {"/opt/nsight-compute"});
  REQUIRE(profiled != nullptr);
  CHECK(*profiled->seccomp_program == "profiler");
  CHECK(profiled->tmp_dir == *dir + "/tmp");
  CHECK(profiled->writable_dir == *dir);
  CHECK(Has(profiled->readonly_paths, "/opt/kiln"));
  CHECK(Has(profiled->readonly_paths, "/opt/nsight-compute"));
  std::vector<std::string> argv = BwrapArgv(*profiled, {"/bin/true"}, *dir, 5);
  auto at = std::find(argv.begin(), argv.end(), *dir + "/tmp");
  REQUIRE(at != argv.end());
  CHECK(*(at - 1) == "--bind");
  CHECK(*(at + 1) == "/tmp");
  // Bound before everything else, which may lie under the host's /tmp: the job's folder and
  // the readable paths.
  auto job = std::find(at + 2, argv.end(), *dir);
  CHECK(job != argv.end());
  CHECK(std::find(at + 2, argv.end(), "/usr") != argv.end());
  CHECK(std::find(argv.begin(), at, "/usr") == at);
  // The worker's own argv binds no /tmp.
  std::vector<std::string> plain = BwrapArgv(*worker, {"/bin/true"}, *dir, 5);
  CHECK(std::find(plain.begin(), plain.end(), "/tmp") == plain.end());
  (void)RemoveTree(*dir);
}

}  // namespace
}  // namespace kiln
