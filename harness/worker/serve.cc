#include "harness/worker/serve.h"

#include <unistd.h>

#include <cstdio>
#include <string>
#include <string_view>

#include "harness/worker/utf8.h"
#include "harness/worker/worker_client.h"

namespace kiln {

bool ReadWorkerRequest(int request_fd, v1::WorkerRequest* request) {
  const bool ok = ReadFramed(request_fd, request);
  close(request_fd);
  if (!ok) std::fprintf(stderr, "kiln-worker: cannot read a WorkerRequest from fd %d\n", request_fd);
  return ok;
}

int ServeWorkerRequest(const v1::WorkerRequest& request, int event_fd,
                       const ExternalEntry* external,
                       const std::function<std::string()>& explain) {
  std::fprintf(stderr, "kiln-worker: %s role, %s backend, %s\n", request.role().c_str(),
               request.backend().c_str(),
               external != nullptr
                   ? "solution supplied in-process"
                   : ("library " + request.library_path() + ", symbol " + request.symbol()).c_str());
  auto send_status = [event_fd](std::string_view stage, int trial) {
    std::fprintf(stderr, "kiln-worker: %.*s, trial %d\n", static_cast<int>(stage.size()),
                 stage.data(), trial);
    v1::WorkerEvent event;
    event.mutable_status()->set_stage(std::string(stage));
    event.mutable_status()->set_trial(trial);
    WriteFramed(event_fd, event);
  };
  v1::WorkerResult result = Evaluate(request, send_status, external);
  if (result.status() != v1::PASSED && explain) {
    const std::string why = explain();
    if (!why.empty()) result.set_error(result.error() + ": " + why);
  }
  return SendWorkerResult(event_fd, std::move(result));
}

int SendWorkerResult(int event_fd, v1::WorkerResult result) {
  if (!result.error().empty()) {
    result.set_error(SanitizeUtf8(result.error()));
    std::fprintf(stderr, "kiln-worker: %s: %s\n",
                 v1::EvaluationStatus_Name(result.status()).c_str(), result.error().c_str());
  }
  std::fflush(nullptr);
  v1::WorkerEvent event;
  *event.mutable_result() = std::move(result);
  if (!WriteFramed(event_fd, event)) {
    std::fprintf(stderr, "kiln-worker: cannot send the result on fd %d\n", event_fd);
    return 3;
  }
  return 0;
}

}  // namespace kiln
