// kiln-worker: evaluates one (role, workload) for kiln-harness. Reads one framed WorkerRequest
// from fd 3, writes framed WorkerEvents (status changes, then one WorkerResult) to fd 4, and
// exits 0 once the result is sent; a crash of the solution ends the process and the harness
// reads the signal. stdout and stderr (the solution's prints included) go to the worker log.
// No signal handlers are installed: a crash must stay visible as a crash.
#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <string>
#include <string_view>

#include "harness/worker/evaluation.h"
#include "harness/worker/utf8.h"
#include "harness/worker/worker_client.h"

namespace {

constexpr int kRequestFd = 3;
constexpr int kEventFd = 4;

bool FdIsOpen(int fd) { return fcntl(fd, F_GETFD) != -1; }

[[noreturn]] void Exit(int code) {
  std::fflush(nullptr);
  // _exit: the solution's static destructors and atexit handlers do not run after the result
  // has been sent.
  _exit(code);
}

void SendStatus(std::string_view stage, int trial) {
  std::fprintf(stderr, "kiln-worker: %.*s, trial %d\n", static_cast<int>(stage.size()),
               stage.data(), trial);
  kiln::v1::WorkerEvent event;
  event.mutable_status()->set_stage(std::string(stage));
  event.mutable_status()->set_trial(trial);
  kiln::WriteFramed(kEventFd, event);
}

}  // namespace

int main() {
  if (!FdIsOpen(kRequestFd) || !FdIsOpen(kEventFd)) {
    std::fprintf(stderr,
                 "usage: kiln-worker is started by kiln-harness, which passes a WorkerRequest "
                 "on fd 3 and reads WorkerEvents from fd 4\n");
    return 2;
  }
  // Line-buffered so the log keeps the solution's last lines when it crashes.
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  kiln::v1::WorkerRequest request;
  if (!kiln::ReadFramed(kRequestFd, &request)) {
    std::fprintf(stderr, "kiln-worker: cannot read a WorkerRequest from fd 3\n");
    Exit(2);
  }
  close(kRequestFd);
  std::fprintf(stderr, "kiln-worker: %s role, %s backend, library %s, symbol %s\n",
               request.role().c_str(), request.backend().c_str(), request.library_path().c_str(),
               request.symbol().c_str());

  kiln::v1::WorkerResult result = kiln::Evaluate(request, SendStatus);
  if (!result.error().empty()) {
    result.set_error(kiln::SanitizeUtf8(result.error()));
    std::fprintf(stderr, "kiln-worker: %s: %s\n",
                 kiln::v1::EvaluationStatus_Name(result.status()).c_str(), result.error().c_str());
  }
  kiln::v1::WorkerEvent event;
  *event.mutable_result() = std::move(result);
  if (!kiln::WriteFramed(kEventFd, event)) {
    std::fprintf(stderr, "kiln-worker: cannot send the result on fd 4\n");
    Exit(3);
  }
  Exit(0);
}
