// kiln-worker: evaluates one (role, workload) for kiln-harness. Reads one framed WorkerRequest
// from fd 3, writes framed WorkerEvents (status changes, then one WorkerResult) to fd 4, and
// exits 0 once the result is sent; a crash of the solution ends the process and the harness
// reads the signal. stdout and stderr (the solution's prints included) go to the worker log.
// No signal handlers are installed: a crash must stay visible as a crash.
#include <fcntl.h>
#include <unistd.h>

#include <cstdio>

#include "harness/worker/serve.h"

namespace {

bool FdIsOpen(int fd) { return fcntl(fd, F_GETFD) != -1; }

[[noreturn]] void Exit(int code) {
  std::fflush(nullptr);
  // _exit: the solution's static destructors and atexit handlers do not run after the result
  // has been sent.
  _exit(code);
}

}  // namespace

int main() {
  if (!FdIsOpen(kiln::kWorkerRequestFd) || !FdIsOpen(kiln::kWorkerEventFd)) {
    std::fprintf(stderr,
                 "usage: kiln-worker is started by kiln-harness, which passes a WorkerRequest "
                 "on fd 3 and reads WorkerEvents from fd 4\n");
    return 2;
  }
  // Line-buffered so the log keeps the solution's last lines when it crashes.
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  kiln::v1::WorkerRequest request;
  if (!kiln::ReadWorkerRequest(kiln::kWorkerRequestFd, &request)) Exit(2);
  Exit(kiln::ServeWorkerRequest(request, kiln::kWorkerEventFd, nullptr));
}
