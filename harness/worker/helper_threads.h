// Work a solution leaves to other host threads of the worker (integrity.work_after_return).
//
// The timer measures the calling thread from the call to its return (and, on a GPU, until the
// device is idle). Work a solution hands to another host thread escapes that window when it runs
// after the return, or before the call (during the untimed cache flush, say). The worker's CPU
// clocks see it either way: the CPU time of all threads but the calling one, over a window that
// covers one call, cannot exceed what those threads could have spent inside the call (other
// cores x call time) plus a small allowance for the runtime's own threads. Threads that exited count too
// (the process clock keeps their time). Honest thread pools pass as long as their threads block
// when idle (the worker asks OpenMP for passive waiting).
//
//   HelperThreads helpers;
//   helpers.StartWindow();
//   ... call, time it as call_ms ...
//   absl::Status s = helpers.CheckWindow(call_ms, "timed call 3 of trial 0");
#ifndef KILN_HARNESS_WORKER_HELPER_THREADS_H_
#define KILN_HARNESS_WORKER_HELPER_THREADS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"

namespace kiln {

class HelperThreads {
 public:
  // `allowance_ms`: CPU time other threads may use per window regardless of the call (the CUDA
  // runtime's and CUPTI's threads do a little work of their own).
  // Construct before the solution is loaded: the CPU-time timers armed then are the
  // environment's (see ArmedCpuTimers).
  explicit HelperThreads(double allowance_ms);
  ~HelperThreads();
  HelperThreads(const HelperThreads&) = delete;
  HelperThreads& operator=(const HelperThreads&) = delete;

  void StartWindow();
  // StartWindow once the CPU time of threads the worker itself ran (input generation) has been
  // accounted.
  void StartAfterOwnThreads();
  // Waits (up to a few ms) for the other threads to block, then REJECTED
  // "integrity.work_after_return: ..." when they used more CPU since StartWindow than `call_ms`
  // on every other core plus the allowance, or when a CPU-time timer was armed since
  // construction. Otherwise the next window has started.
  absl::Status CheckWindow(double call_ms, const std::string& what);

  // Threads of this process now (/proc/self/task).
  static int CountThreads();
  // The CPU-time limits and timers armed in this process ("RLIMIT_CPU, ITIMER_PROF, ..."), ""
  // when none. Any of them makes Linux read the process CPU clock from a lagging counter.
  static std::string ArmedCpuTimers();
  // ArmedCpuTimers() at construction: the environment's.
  const std::string& timers_at_start() const { return timers_at_start_; }

 private:
  // True when some thread other than the caller is running or runnable. Reads each thread's
  // /proc/self/task/TID/stat through a file kept open between calls (a pread is about a third
  // of an open, read and close: it runs after every call, over dozens of threads in a Python
  // worker); the files are opened anew when the thread count changes or one cannot be read
  // (its thread exited, or the descriptor was closed under it).
  bool OthersRunning();
  void OpenTaskFiles(int count);
  void CloseTaskFiles();

  std::vector<int> task_fds_;
  int task_count_ = -1;  // the thread count task_fds_ was opened for
  double allowance_ms_;
  int other_cores_;  // cores besides the caller's
  std::string timers_at_start_;
  int64_t others_high_ns_ = 0;  // upper bound of the other threads' CPU time at StartWindow
  int threads_at_start_ = 1;
};

}  // namespace kiln

#endif  // KILN_HARNESS_WORKER_HELPER_THREADS_H_
