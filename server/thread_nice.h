// Lowering the CPU priority of one thread (Linux keeps a nice value per thread, and a process
// forked from it starts with that thread's).
#ifndef KILN_SERVER_THREAD_NICE_H_
#define KILN_SERVER_THREAD_NICE_H_

#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

namespace kiln {

// Adds `by` (> 0) to the calling thread's nice value, at most 19; raising it needs no privilege.
// Returns 0, or the errno of the failed call.
inline int NiceThisThread(int by) {
  const auto tid = static_cast<id_t>(::syscall(SYS_gettid));
  errno = 0;
  const int now = ::getpriority(PRIO_PROCESS, tid);
  if (now == -1 && errno != 0) return errno;
  return ::setpriority(PRIO_PROCESS, tid, std::min(19, now + by)) == 0 ? 0 : errno;
}

}  // namespace kiln

#endif  // KILN_SERVER_THREAD_NICE_H_
