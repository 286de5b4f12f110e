#include "harness/sandbox/child_exec.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <condition_variable>
#include <mutex>
#include <thread>

extern char** environ;

namespace kiln::internal {

namespace {

[[noreturn]] void Fail(const ExecPlan& plan, ChildFailure::Step step) {
  ChildFailure failure;
  failure.step = step;
  failure.error = errno;
  // Nothing useful can be done if this write fails; the parent then sees a plain exit 127.
  [[maybe_unused]] ssize_t n = ::write(plan.error_fd, &failure, sizeof failure);
  ::_exit(127);
}

// Caught signals are reset by exec anyway; ignored ones (servers ignore SIGPIPE) are not, and
// a blocked mask is inherited. The child starts with every signal at its default, unblocked.
void ResetSignals() {
  struct sigaction dfl = {};
  dfl.sa_handler = SIG_DFL;
  for (int sig = 1; sig < NSIG; ++sig) {
    if (sig == SIGKILL || sig == SIGSTOP) continue;
    ::sigaction(sig, &dfl, nullptr);  // EINVAL for signals libc reserves: harmless
  }
  sigset_t none;
  ::sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);
}

// Closes every fd >= `first` except `keep`.
void CloseFrom(int first, int keep) {
  bool done = true;
  if (keep > first && ::close_range(first, keep - 1, 0) != 0) done = false;
  if (done && ::close_range(keep + 1, ~0U, 0) != 0) done = false;
  if (done) return;
  // Kernels before 5.9 have no close_range: walk the fd table up to the limit.
  struct rlimit nofile;
  rlim_t max = 1 << 20;
  if (::getrlimit(RLIMIT_NOFILE, &nofile) == 0 && nofile.rlim_cur != RLIM_INFINITY &&
      nofile.rlim_cur < max) {
    max = nofile.rlim_cur;
  }
  for (rlim_t fd = first; fd < max; ++fd) {
    if (static_cast<int>(fd) != keep) ::close(static_cast<int>(fd));
  }
}

// Lays out fds 0, 1, 2 and 3 + i. Every source is first duplicated above the target range so
// that no dup2 overwrites a source still needed (a pipe fd may well be 3 or 4 already).
void ArrangeFds(ExecPlan& plan) {
  const int n = static_cast<int>(plan.child_fds.size());
  const int base = 3 + n;
  int* moved = plan.scratch.data();  // [0..n): child fds, n: stdin, n+1: stdout, n+2: stderr
  auto lift = [&](int fd) {
    if (fd < 0) return -1;
    int copy = ::fcntl(fd, F_DUPFD_CLOEXEC, base);
    if (copy < 0) Fail(plan, ChildFailure::kFds);
    return copy;
  };
  for (int i = 0; i < n; ++i) moved[i] = lift(plan.child_fds[i]);
  moved[n] = lift(plan.stdin_fd);
  moved[n + 1] = lift(plan.stdout_fd);
  moved[n + 2] = lift(plan.stderr_fd);
  plan.error_fd = lift(plan.error_fd);

  if (moved[n] >= 0 && ::dup2(moved[n], 0) < 0) Fail(plan, ChildFailure::kFds);
  if (moved[n + 1] >= 0 && ::dup2(moved[n + 1], 1) < 0) Fail(plan, ChildFailure::kFds);
  if (moved[n + 2] >= 0 && ::dup2(moved[n + 2], 2) < 0) Fail(plan, ChildFailure::kFds);
  for (int i = 0; i < n; ++i) {
    if (::dup2(moved[i], 3 + i) < 0) Fail(plan, ChildFailure::kFds);
  }
  CloseFrom(base, plan.error_fd);
}

void ApplyLimits(const ExecPlan& plan) {
  struct rlimit zero = {0, 0};
  ::setrlimit(RLIMIT_CORE, &zero);  // never dump a candidate's memory to disk
  for (const ExecPlan::Limit& limit : plan.limits) {
    struct rlimit current;
    if (::getrlimit(limit.resource, &current) != 0) Fail(plan, ChildFailure::kRlimit);
    rlim_t value = limit.value;
    if (current.rlim_max != RLIM_INFINITY && value > current.rlim_max) value = current.rlim_max;
    struct rlimit wanted = {value, value};
    // RLIMIT_CPU: SIGXCPU at the soft limit, SIGKILL one second later.
    if (limit.resource == RLIMIT_CPU &&
        (current.rlim_max == RLIM_INFINITY || value < current.rlim_max)) {
      wanted.rlim_max = value + 1;
    }
    if (::setrlimit(limit.resource, &wanted) != 0) Fail(plan, ChildFailure::kRlimit);
  }
}

}  // namespace

void FinalizePlan(ExecPlan& plan) {
  plan.argv.clear();
  for (std::string& arg : plan.argv_storage) plan.argv.push_back(arg.data());
  plan.argv.push_back(nullptr);
  plan.envp.clear();
  if (plan.env_storage.empty()) {
    for (char** e = environ; e != nullptr && *e != nullptr; ++e) plan.envp.push_back(*e);
  } else {
    for (std::string& kv : plan.env_storage) plan.envp.push_back(kv.data());
  }
  plan.envp.push_back(nullptr);
  plan.scratch.assign(plan.child_fds.size() + 4, -1);
}

namespace {

[[noreturn]] void ExecChild(ExecPlan& plan) {
  ResetSignals();
  if (::setpgid(0, 0) != 0) Fail(plan, ChildFailure::kSetpgid);
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (::getppid() != plan.parent_pid) ::_exit(127);  // the parent died before prctl
  for (int fd : plan.cgroup_procs_fds) {
    if (::write(fd, "0", 1) != 1) Fail(plan, ChildFailure::kCgroup);
  }
  ArrangeFds(plan);
  ApplyLimits(plan);
  if (!plan.cwd.empty() && ::chdir(plan.cwd.c_str()) != 0) Fail(plan, ChildFailure::kChdir);
  ::execve(plan.program.c_str(), plan.argv.data(), plan.envp.data());
  Fail(plan, ChildFailure::kExec);
}

// The one thread that forks (see ForkExec). Requests are handed over one at a time; a fork
// takes well under a millisecond, so serialising them costs nothing noticeable.
class Spawner {
 public:
  static Spawner& Get() {
    static Spawner* spawner = new Spawner();  // leaked: the thread must outlive static dtors
    return *spawner;
  }

  pid_t Fork(ExecPlan& plan) {
    std::unique_lock<std::mutex> lock(mu_);
    idle_.wait(lock, [&] { return request_ == nullptr; });
    Request request{&plan};
    request_ = &request;
    wake_.notify_all();
    idle_.wait(lock, [&] { return request.done; });
    errno = request.error;
    return request.pid;
  }

 private:
  struct Request {
    ExecPlan* plan;
    pid_t pid = -1;
    int error = 0;
    bool done = false;
  };

  Spawner() {
    std::thread([this] { Loop(); }).detach();
  }

  [[noreturn]] void Loop() {
    std::unique_lock<std::mutex> lock(mu_);
    for (;;) {
      wake_.wait(lock, [&] { return request_ != nullptr; });
      Request* request = request_;
      request->pid = ::fork();
      if (request->pid == 0) ExecChild(*request->plan);
      request->error = errno;
      request->done = true;
      request_ = nullptr;
      idle_.notify_all();
    }
  }

  std::mutex mu_;
  std::condition_variable wake_;  // a request is waiting
  std::condition_variable idle_;  // a request finished; the slot is free
  Request* request_ = nullptr;
};

}  // namespace

pid_t ForkExec(ExecPlan& plan) { return Spawner::Get().Fork(plan); }

}  // namespace kiln::internal
