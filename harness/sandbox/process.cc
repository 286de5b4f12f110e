#include "harness/sandbox/process.h"

#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "harness/sandbox/child_exec.h"
#include "harness/sandbox/output_capture.h"
#include "harness/sandbox/program_path.h"
#include "harness/sandbox/seccomp_filter.h"

extern "C" char** environ;

namespace kiln {

namespace {

using internal::ChildFailure;
using internal::ExecPlan;

double NowSeconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// Owns one fd of the parent while Start is assembling the child.
class Fd {
 public:
  Fd() = default;
  explicit Fd(int fd) : fd_(fd) {}
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd() { Reset(); }
  int get() const { return fd_; }
  int Release() { return std::exchange(fd_, -1); }
  void Reset(int fd = -1) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = fd;
  }

 private:
  int fd_ = -1;
};

absl::Status Errno(absl::string_view what, int error) {
  return absl::InternalError(absl::StrCat(what, ": ", std::strerror(error)));
}

absl::Status FailureStatus(const ChildFailure& failure, const ProcessOptions& opts,
                           const std::string& program) {
  const std::string reason = std::strerror(failure.error);
  switch (failure.step) {
    case ChildFailure::kExec: {
      std::string msg = absl::StrCat("cannot execute '", program, "': ", reason);
      if (failure.error == ENOENT || failure.error == ENOTDIR) return absl::NotFoundError(msg);
      if (failure.error == EACCES) return absl::PermissionDeniedError(msg);
      return absl::InternalError(msg);
    }
    case ChildFailure::kChdir:
      return absl::NotFoundError(absl::StrCat("cannot enter working directory '", opts.cwd,
                                              "' for '", program, "': ", reason));
    case ChildFailure::kCgroup:
      return absl::InternalError(
          absl::StrCat("cannot move '", program, "' into its sandbox cgroup: ", reason));
    case ChildFailure::kRlimit:
      return absl::InternalError(
          absl::StrCat("cannot set resource limits for '", program, "': ", reason));
    default:
      return absl::InternalError(
          absl::StrCat("cannot set up the child for '", program, "': ", reason));
  }
}

void AddLimit(ExecPlan& plan, int resource, int64_t value) {
  if (value > 0) plan.limits.push_back({resource, static_cast<rlim_t>(value)});
}

// Reads the error pipe until EOF (exec succeeded) or one ChildFailure arrived.
bool ReadChildFailure(int fd, ChildFailure* failure) {
  size_t got = 0;
  auto* bytes = reinterpret_cast<char*>(failure);
  while (got < sizeof *failure) {
    ssize_t n = ::read(fd, bytes + got, sizeof *failure - got);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    got += static_cast<size_t>(n);
  }
  return got == sizeof *failure;
}

// False when the child was not ours to reap (SIGCHLD ignored, or reaped elsewhere).
bool ReapBlocking(pid_t pid, int* status) {
  for (;;) {
    if (::waitpid(pid, status, 0) == pid) return true;
    if (errno != EINTR) return false;
  }
}

// Kills and reaps a child that is still running, and closes its output.
void Terminate(pid_t pid, bool* reaped, int* out_fd) {
  if (pid > 0 && !*reaped) {
    ::kill(-pid, SIGKILL);
    int status = 0;
    ReapBlocking(pid, &status);
    *reaped = true;
  }
  if (*out_fd >= 0) ::close(*out_fd);
  *out_fd = -1;
}

int PidfdOpen(pid_t pid) {
#ifdef SYS_pidfd_open
  return static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
#else
  return -1;
#endif
}

// How long one poll may sleep: until the deadline, but never long enough to miss a cancel by
// more than a few milliseconds, nor an exit when there is no pidfd to wake us.
int PollTimeoutMs(int pidfd, bool watching_cancel, double remaining_s) {
  constexpr int kSliceMs = 5;
  int ms = remaining_s < 0 ? -1 : static_cast<int>(std::min(remaining_s * 1000 + 1, 1e9));
  if (watching_cancel || pidfd < 0) ms = ms < 0 ? kSliceMs : std::min(ms, kSliceMs);
  return ms;
}

// Sleeps until output arrives, the child exits (pidfd) or `timeout_ms` passes; reads output.
// Closes *out_fd at EOF.
void PollOnce(int* out_fd, int pidfd, int timeout_ms, OutputCapture& capture) {
  struct pollfd fds[2];
  nfds_t n = 0;
  if (*out_fd >= 0) fds[n++] = {*out_fd, POLLIN, 0};
  if (pidfd >= 0) fds[n++] = {pidfd, POLLIN, 0};
  if (::poll(fds, n, timeout_ms) <= 0) return;
  if (*out_fd >= 0 && (fds[0].revents & (POLLIN | POLLHUP | POLLERR)) != 0 &&
      !capture.ReadOnce(*out_fd)) {
    ::close(*out_fd);
    *out_fd = -1;
  }
}


// Rewrites `plan` to run its program inside bwrap under `policy`: argv, environment, the
// seccomp program on an extra child fd (a fresh memfd: bwrap reads it from the shared offset),
// the job cgroup and the rlimits that stand in for what the cgroup cannot do.
absl::Status ApplySandbox(const SandboxPolicy& policy, ExecPlan& plan, Fd* seccomp_fd,
                          std::unique_ptr<JobCgroup>* cgroup) {
  const int seccomp_number = 3 + static_cast<int>(plan.child_fds.size());
  if (policy.seccomp_program != nullptr && !policy.seccomp_program->empty()) {
    absl::StatusOr<int> fd = SeccompProgramFd(*policy.seccomp_program);
    if (!fd.ok()) return fd.status();
    seccomp_fd->Reset(*fd);
    plan.child_fds.push_back(*fd);
  }
  std::vector<std::string> command = plan.argv_storage;
  command[0] = std::filesystem::absolute(plan.program).string();
  plan.argv_storage = BwrapArgv(policy, command, plan.cwd, seccomp_number);
  plan.program = policy.bwrap;
  plan.env_storage = SandboxEnvironment(
      plan.env_storage.empty() ? ParentEnvironment() : plan.env_storage, policy.writable_dir);
  bool memory_in_cgroup = false;
  if (policy.cgroups != nullptr && policy.cgroups->available()) {
    absl::StatusOr<std::unique_ptr<JobCgroup>> job =
        policy.cgroups->CreateJob(policy.max_memory_bytes, policy.max_processes);
    if (!job.ok()) return job.status();
    *cgroup = *std::move(job);
    plan.cgroup_procs_fds = (*cgroup)->procs_fds();
    memory_in_cgroup = true;
  }
  if (!memory_in_cgroup && policy.address_space_limit_ok) {
    AddLimit(plan, RLIMIT_AS, policy.max_memory_bytes);
  }
  AddLimit(plan, RLIMIT_NPROC, policy.max_processes);
  AddLimit(plan, RLIMIT_NOFILE, policy.max_open_files);
  return absl::OkStatus();
}

}  // namespace

std::vector<std::string> ParentEnvironment() {
  std::vector<std::string> env;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) env.emplace_back(*e);
  return env;
}

std::string ProcessResult::Describe() const {
  std::string what = DescribeEnd();
  if (!limit_hit.empty()) absl::StrAppend(&what, "; ", limit_hit);
  return what;
}

std::string ProcessResult::DescribeEnd() const {
  if (cancelled) return "cancelled";
  if (timed_out) return absl::StrFormat("timed out after %.1f s", wall_s);
  if (term_signal != 0) {
    const char* abbrev = ::sigabbrev_np(term_signal);
    const char* descr = ::sigdescr_np(term_signal);
    if (abbrev == nullptr) return absl::StrCat("killed by signal ", term_signal);
    return absl::StrCat("killed by SIG", abbrev, " (", descr ? descr : "unknown signal", ")");
  }
  return absl::StrCat("exit code ", exit_code);
}

absl::StatusOr<Process> Process::Start(const ProcessOptions& opts) {
  if (opts.argv.empty() || opts.argv[0].empty()) {
    return absl::InvalidArgumentError("ProcessOptions.argv: no program given");
  }
  absl::StatusOr<std::string> program = FindProgram(opts.argv[0], opts.env);
  if (!program.ok()) return program.status();

  ExecPlan plan;
  plan.program = *program;
  plan.argv_storage = opts.argv;
  plan.env_storage = opts.env;
  plan.cwd = opts.cwd;
  plan.child_fds = opts.child_fds;
  plan.parent_pid = ::getpid();
  AddLimit(plan, RLIMIT_AS, opts.max_address_space);
  AddLimit(plan, RLIMIT_CPU, opts.max_cpu_seconds);
  AddLimit(plan, RLIMIT_FSIZE, opts.max_file_bytes);
  Fd seccomp_fd;
  std::unique_ptr<JobCgroup> cgroup;
  if (opts.sandbox != nullptr) {
    if (absl::Status s = ApplySandbox(*opts.sandbox, plan, &seccomp_fd, &cgroup); !s.ok()) {
      return s;
    }
  }

  Fd null_in(::open("/dev/null", O_RDONLY | O_CLOEXEC));
  if (null_in.get() < 0) return Errno("cannot open /dev/null", errno);
  Fd out_read, out_write;
  if (opts.stdout_path.empty()) {
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) != 0) return Errno("cannot create the output pipe", errno);
    out_read.Reset(fds[0]);
    out_write.Reset(fds[1]);
  } else {
    out_write.Reset(
        ::open(opts.stdout_path.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644));
    if (out_write.get() < 0) {
      const int error = errno;
      return Errno(absl::StrCat("cannot open ", opts.stdout_path), error);
    }
  }
  int err_fds[2];
  if (::pipe2(err_fds, O_CLOEXEC) != 0) return Errno("cannot create the error pipe", errno);
  Fd err_read(err_fds[0]), err_write(err_fds[1]);

  plan.stdin_fd = null_in.get();
  plan.stdout_fd = out_write.get();
  plan.stderr_fd = opts.merge_stderr ? out_write.get() : -1;
  plan.error_fd = err_write.get();
  internal::FinalizePlan(plan);

  const double start_s = NowSeconds();
  pid_t pid = internal::ForkExec(plan);
  if (pid < 0) {
    const int error = errno;
    return Errno(absl::StrCat("cannot fork for '", plan.program, "'"), error);
  }
  // Also set here, so that Kill() reaches the group even if it runs before the child's own
  // setpgid; one of the two calls fails harmlessly.
  ::setpgid(pid, pid);
  null_in.Reset();
  out_write.Reset();
  err_write.Reset();
  seccomp_fd.Reset();

  ChildFailure failure;
  if (ReadChildFailure(err_read.get(), &failure)) {
    int status = 0;
    ReapBlocking(pid, &status);
    return FailureStatus(failure, opts, plan.program);
  }

  Process process;
  process.pid_ = pid;
  process.out_fd_ = out_read.Release();
  process.opts_ = opts;
  process.start_s_ = start_s;
  process.cgroup_ = std::move(cgroup);
  return process;
}

void Process::RestartClock() { start_s_ = NowSeconds(); }

bool WriteAllToPipe(int fd, const char* data, size_t size) {
  sigset_t pipe_set, old_set, pending;
  sigemptyset(&pipe_set);
  sigaddset(&pipe_set, SIGPIPE);
  pthread_sigmask(SIG_BLOCK, &pipe_set, &old_set);
  sigpending(&pending);
  bool was_pending = sigismember(&pending, SIGPIPE) == 1;
  bool ok = true;
  while (size > 0) {
    ssize_t n = ::write(fd, data, size);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      ok = false;
      if (errno == EPIPE && !was_pending) {
        timespec zero{};
        sigtimedwait(&pipe_set, nullptr, &zero);  // consume our own SIGPIPE
      }
      break;
    }
    data += n;
    size -= static_cast<size_t>(n);
  }
  pthread_sigmask(SIG_SETMASK, &old_set, nullptr);
  return ok;
}

Process::Process(Process&& other) noexcept { *this = std::move(other); }

Process& Process::operator=(Process&& other) noexcept {
  if (this == &other) return *this;
  Terminate(pid_, &reaped_, &out_fd_);
  pid_ = std::exchange(other.pid_, -1);
  out_fd_ = std::exchange(other.out_fd_, -1);
  opts_ = std::move(other.opts_);
  start_s_ = other.start_s_;
  reaped_ = std::exchange(other.reaped_, true);
  cgroup_ = std::move(other.cgroup_);
  return *this;
}

Process::~Process() { Terminate(pid_, &reaped_, &out_fd_); }

void Process::Kill() {
  if (pid_ > 0 && !reaped_) ::kill(-pid_, SIGKILL);
  if (cgroup_ != nullptr) cgroup_->KillAll();
}

ProcessResult Process::Wait(const std::atomic<bool>* cancel) {
  ProcessResult result;
  if (pid_ <= 0 || reaped_) return result;
  const int pidfd = PidfdOpen(pid_);
  const double deadline = opts_.timeout_s > 0 ? start_s_ + opts_.timeout_s : 0;
  OutputCapture capture(opts_.max_captured_bytes);
  bool killed = false;
  for (;;) {
    // WNOWAIT: the exited leader stays a zombie, so its pid (= the group id) cannot be reused
    // before the group is killed below.
    siginfo_t info = {};
    int rc = ::waitid(P_PID, static_cast<id_t>(pid_), &info, WEXITED | WNOHANG | WNOWAIT);
    if ((rc == 0 && info.si_pid == pid_) || (rc < 0 && errno == ECHILD)) break;
    const double now = NowSeconds();
    if (!killed && deadline > 0 && now >= deadline) {
      result.timed_out = killed = true;
      Kill();
    }
    if (!killed && cancel != nullptr && cancel->load()) {
      result.cancelled = killed = true;
      Kill();
    }
    const double remaining_s = killed || deadline <= 0 ? -1 : deadline - now;
    PollOnce(&out_fd_, pidfd, PollTimeoutMs(pidfd, cancel != nullptr && !killed, remaining_s),
             capture);
  }
  // Whatever the program left running in its group (daemons, stragglers) goes with it.
  Kill();
  int status = 0;
  const bool have_status = ReapBlocking(pid_, &status);
  reaped_ = true;
  result.wall_s = NowSeconds() - start_s_;
  if (pidfd >= 0) ::close(pidfd);
  if (out_fd_ >= 0) {
    capture.Drain(out_fd_);
    ::close(out_fd_);
    out_fd_ = -1;
  }
  result.output = capture.Finish();
  if (have_status && WIFEXITED(status)) result.exit_code = WEXITSTATUS(status);
  if (have_status && WIFSIGNALED(status)) result.term_signal = WTERMSIG(status);
  // bwrap passes on its child's end as an exit code: 128 + the signal that killed it.
  if (opts_.sandbox != nullptr && result.exit_code > 128 && result.exit_code < 128 + NSIG) {
    result.term_signal = result.exit_code - 128;
    result.exit_code = -1;
  }
  if (cgroup_ != nullptr) {
    cgroup_->KillAll();
    result.limit_hit = cgroup_->LimitHit();
    cgroup_.reset();
  }
  return result;
}

absl::StatusOr<ProcessResult> RunProcess(const ProcessOptions& opts,
                                         const std::atomic<bool>* cancel) {
  absl::StatusOr<Process> process = Process::Start(opts);
  if (!process.ok()) return process.status();
  return process->Wait(cancel);
}

}  // namespace kiln
