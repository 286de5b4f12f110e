#include "harness/worker/helper_threads.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>
#include <thread>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "harness/verify/integrity_policy.h"
#include "harness/worker/failure.h"

namespace kiln {
namespace {

int64_t ClockNs(clockid_t clock) {
  timespec ts{};
  clock_gettime(clock, &ts);
  return int64_t{ts.tv_sec} * 1000000000 + ts.tv_nsec;
}

// The CPU time of every thread but the caller, as bounds. The process clock cannot be read at
// the same instant as the calling thread's: an interrupt or a hypervisor exit between the two
// reads is charged to the caller, and a one-sided reading then shows it as other threads' time
// (up to 0.06 ms was seen on an idle 2-core VM, and 0.1 ms on a loaded one rejected an honest
// single-threaded solution). Reading the caller's clock before and after the process clock
// brackets the caller's time at that instant: others lie in [process - after, process - before].
// The narrowest of a few tries is kept, so the bracket is normally a few microseconds wide.
struct OthersSample {
  int64_t low_ns;   // process - caller's clock after
  int64_t high_ns;  // process - caller's clock before
};

OthersSample SampleOthers() {
  OthersSample best{0, 0};
  int64_t best_width = -1;
  for (int i = 0; i < 4; ++i) {
    const int64_t before = ClockNs(CLOCK_THREAD_CPUTIME_ID);
    const int64_t process = ClockNs(CLOCK_PROCESS_CPUTIME_ID);
    const int64_t after = ClockNs(CLOCK_THREAD_CPUTIME_ID);
    if (best_width < 0 || after - before < best_width) {
      best = {process - after, process - before};
      best_width = after - before;
    }
    if (best_width <= 2000) break;
  }
  return best;
}

// Up to `cap` bytes of a /proc file, read with plain syscalls (these are read after every call,
// and stdio's buffers cost more than the read); -1 when it cannot be opened.
ssize_t ReadProcFile(const char* path, char* buffer, size_t cap) {
  const int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return -1;
  size_t used = 0;
  while (used < cap) {
    const ssize_t n = read(fd, buffer + used, cap - used);
    if (n <= 0) break;
    used += static_cast<size_t>(n);
  }
  close(fd);
  return static_cast<ssize_t>(used);
}

// Whether a /proc .../stat line says its thread is running or runnable: the state follows the
// last ')' ("tid (comm) S ...", and comm may contain one).
bool StatSaysRunning(const char* line, ssize_t n) {
  const std::string_view text(line, static_cast<size_t>(n));
  const size_t paren = text.rfind(')');
  return paren != std::string_view::npos && paren + 2 < text.size() && text[paren + 2] == 'R';
}

}  // namespace

HelperThreads::HelperThreads(double allowance_ms)
    : allowance_ms_(allowance_ms),
      other_cores_(std::max(1, static_cast<int>(std::thread::hardware_concurrency())) - 1),
      timers_at_start_(ArmedCpuTimers()) {}

HelperThreads::~HelperThreads() { CloseTaskFiles(); }

void HelperThreads::CloseTaskFiles() {
  for (int fd : task_fds_) close(fd);
  task_fds_.clear();
  task_count_ = -1;
}

void HelperThreads::OpenTaskFiles(int count) {
  CloseTaskFiles();
  task_count_ = count;
  const long self = syscall(SYS_gettid);
  DIR* dir = opendir("/proc/self/task");
  if (dir == nullptr) return;
  while (dirent* entry = readdir(dir)) {
    if (entry->d_name[0] == '.' || std::atol(entry->d_name) == self) continue;
    char path[sizeof("/proc/self/task//stat") + sizeof(entry->d_name)];
    std::snprintf(path, sizeof(path), "/proc/self/task/%s/stat", entry->d_name);
    const int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd >= 0) task_fds_.push_back(fd);  // else it exited meanwhile
  }
  closedir(dir);
}

bool HelperThreads::OthersRunning() {
  const int count = CountThreads();
  if (count != task_count_) OpenTaskFiles(count);
  for (int attempt = 0; attempt < 2; ++attempt) {
    bool stale = false;
    for (int fd : task_fds_) {
      char line[512];
      const ssize_t n = pread(fd, line, sizeof(line), 0);
      if (n <= 0) {  // its thread exited (ESRCH), or the descriptor is no longer the file
        stale = true;
        break;
      }
      if (StatSaysRunning(line, n)) return true;
    }
    if (!stale) return false;
    OpenTaskFiles(count);
  }
  return false;
}

std::string HelperThreads::ArmedCpuTimers() {
  std::string found;
  auto add = [&found](const std::string& what) { absl::StrAppend(&found, found.empty() ? "" : ", ", what); };
  rlimit limit{};
  if (getrlimit(RLIMIT_CPU, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY) add("RLIMIT_CPU");
  for (const auto& [which, name] : {std::pair{ITIMER_PROF, "ITIMER_PROF"},
                                    std::pair{ITIMER_VIRTUAL, "ITIMER_VIRTUAL"}}) {
    itimerval timer{};
    if (getitimer(which, &timer) == 0 &&
        (timer.it_value.tv_sec != 0 || timer.it_value.tv_usec != 0)) {
      add(name);
    }
  }
  // POSIX timers: CPU clocks show as negative ids (the kernel's encoding of a process or thread
  // CPU clock), or as CLOCK_PROCESS_CPUTIME_ID / CLOCK_THREAD_CPUTIME_ID.
  // Each timer is a few lines ("ID: ...", "signal: ...", "notify: ...", "ClockID: ..."); a
  // process with more timers than fit here has armed far more than kiln's checks need to see.
  static thread_local char text[16384];
  const ssize_t n = ReadProcFile("/proc/self/timers", text, sizeof(text) - 1);
  if (n > 0) {
    text[n] = '\0';
    constexpr std::string_view kClock = "ClockID: ";
    for (const char* at = std::strstr(text, kClock.data()); at != nullptr;
         at = std::strstr(at + 1, kClock.data())) {
      const long id = std::strtol(at + kClock.size(), nullptr, 10);
      if (id < 0 || id == CLOCK_PROCESS_CPUTIME_ID || id == CLOCK_THREAD_CPUTIME_ID) {
        add("a POSIX timer on a CPU clock");
        break;
      }
    }
  }
  return found;
}

int HelperThreads::CountThreads() {
  // Field 20 of /proc/self/stat (num_threads), the 18th after the ")" that ends the command
  // name: one read instead of a walk of /proc/self/task.
  char line[1024];
  const ssize_t n = ReadProcFile("/proc/self/stat", line, sizeof(line));
  if (n <= 0) return 1;
  const std::string_view text(line, static_cast<size_t>(n));
  size_t at = text.rfind(')');
  if (at == std::string_view::npos) return 1;
  for (int field = 0; field < 18 && at != std::string_view::npos; ++field) {
    at = text.find(' ', at + 1);
  }
  if (at == std::string_view::npos) return 1;
  const long count = std::strtol(line + at + 1, nullptr, 10);
  return count > 0 ? static_cast<int>(count) : 1;
}

void HelperThreads::StartAfterOwnThreads() {
  // A joined thread's CPU time reaches the process clock only when the kernel has released it,
  // which can be after the join returned: wait until the other threads' total stops moving.
  // (Bounds that overlap count as not moving: the bracket is a few microseconds wide.)
  OthersSample others = SampleOthers();
  for (int i = 0; i < 50; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
    OthersSample now = SampleOthers();
    if (now.low_ns <= others.high_ns) break;
    others = now;
  }
  StartWindow();
}

void HelperThreads::StartWindow() {
  threads_at_start_ = CountThreads();
  others_high_ns_ = SampleOthers().high_ns;
}

absl::Status HelperThreads::CheckWindow(double call_ms, const std::string& what) {
  // With a CPU-time limit or timer armed, Linux serves the process CPU clock from a counter
  // updated only at scheduler events; it lags the thread clock by up to a tick, and this window
  // would miss that much of other threads' work. One the worker did not start with was armed by
  // the solution.
  if (std::string armed = ArmedCpuTimers(); armed != timers_at_start_) {
    return Rejected(integrity::Reason(
        integrity::kWorkAfterReturn,
        absl::StrCat("the solution armed a CPU-time timer or limit (", armed, ") by ", what,
                     ": it makes the process CPU clock lag, which would hide other threads' "
                     "work; a solution must not arm one")));
  }
  // Let honest pool threads finish their barrier and block; a thread still busy after this has
  // its time counted anyway.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(5);
  // Short steps: this runs after every timed call, and on a GPU the device sits idle meanwhile
  // (100 us steps made it about 0.15 ms per call on an H100).
  while (OthersRunning() && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::microseconds(20));
  }
  // The least the other threads can have used: what reading the clocks costs the caller is
  // never counted against the solution.
  const OthersSample now = SampleOthers();
  const int64_t others_ns = std::max<int64_t>(0, now.low_ns - others_high_ns_);
  const int threads_before = threads_at_start_;
  const int threads_after = CountThreads();
  // Threads that exited during the window are not seen; any thread may have run on any other
  // core for the whole call.
  const double others_ms = static_cast<double>(others_ns) / 1e6;
  const double budget_ms = other_cores_ * std::max(call_ms, 0.0) + allowance_ms_;
  // The next window starts at this reading.
  threads_at_start_ = threads_after;
  others_high_ns_ = now.high_ns;
  if (others_ms <= budget_ms) return absl::OkStatus();
  return Rejected(integrity::Reason(
      integrity::kWorkAfterReturn,
      absl::StrFormat("other host threads used %.3f ms of CPU around %s, which itself took %.3f "
                      "ms (%d threads before, %d after): work ran outside the timed call",
                      others_ms, what, call_ms, threads_before, threads_after)));
}

}  // namespace kiln
