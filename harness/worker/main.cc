// kiln-worker: evaluates one role (candidate, reference, ...) of a run for kiln-harness, one
// workload per request. Reads framed WorkerRequests from fd 3 one after the other and answers
// each with framed WorkerEvents on fd 4 (status changes, then one WorkerResult). It exits 0 when
// fd 3 ends, and right after a result that is not PASSED (whatever the solution left running
// must not meet the next workload's buffers); a crash of the solution ends the process and the
// harness reads the signal. stdout and stderr (the solution's prints included) go to the worker
// log. No signal handlers are installed: a crash must stay visible as a crash.
//
// KILN_WORKER_DEVICE=<backend>:<index> in the environment opens that device before the first
// request (the harness starts a candidate's worker while the references still run, so the
// context is ready when the first request comes); nothing of the solution is loaded before a
// request names it.
#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "harness/worker/open_device.h"
#include "harness/worker/serve.h"

namespace {

bool FdIsOpen(int fd) { return fcntl(fd, F_GETFD) != -1; }

void OpenDeviceEarly() {
  const char* value = std::getenv("KILN_WORKER_DEVICE");
  if (value == nullptr) return;
  const std::string spec = value;
  ::unsetenv("KILN_WORKER_DEVICE");
  const size_t colon = spec.rfind(':');
  int index = -1;
  if (colon != std::string::npos && colon + 1 < spec.size()) {
    char* end = nullptr;
    const long parsed = std::strtol(spec.c_str() + colon + 1, &end, 10);
    if (end != nullptr && *end == '\0' && parsed >= 0 && parsed < 1024) {
      index = static_cast<int>(parsed);
    }
  }
  if (index < 0) {
    std::fprintf(stderr, "kiln-worker: ignoring KILN_WORKER_DEVICE='%s' (expected backend:index)\n",
                 spec.c_str());
    return;
  }
  // A failure is reported again, and answered, by the first request that needs the device.
  auto device = kiln::WorkerDevice(spec.substr(0, colon), index);
  std::fprintf(stderr, "kiln-worker: %s opened before the first request%s%s\n", spec.c_str(),
               device.ok() ? "" : ": ",
               device.ok() ? "" : std::string(device.status().message()).c_str());
}

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
  OpenDeviceEarly();
  for (int served = 0;; ++served) {
    kiln::v1::WorkerRequest request;
    switch (kiln::ReadNextWorkerRequest(kiln::kWorkerRequestFd, &request)) {
      case kiln::NextRequest::kEnd:
        Exit(served > 0 ? 0 : 2);
      case kiln::NextRequest::kMalformed:
        Exit(2);
      case kiln::NextRequest::kRequest:
        break;
    }
    bool passed = false;
    const int code = kiln::ServeWorkerRequest(request, kiln::kWorkerRequestFd,
                                              kiln::kWorkerEventFd, nullptr, nullptr,
                                              &passed);
    if (code != 0 || !passed) Exit(code);
  }
}
