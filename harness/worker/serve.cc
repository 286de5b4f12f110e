#include "harness/worker/serve.h"

#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <string_view>

#include "absl/strings/str_cat.h"
#include "harness/worker/utf8.h"
#include "harness/worker/worker_client.h"

namespace kiln {

NextRequest ReadNextWorkerRequest(int request_fd, v1::WorkerRequest* request) {
  char first;
  ssize_t n;
  do {
    n = ::read(request_fd, &first, 1);
  } while (n < 0 && errno == EINTR);
  if (n == 0) return NextRequest::kEnd;
  if (n < 0) {
    std::fprintf(stderr, "kiln-worker: cannot read fd %d: %s\n", request_fd, std::strerror(errno));
    return NextRequest::kMalformed;
  }
  if (!ReadFramedAfter(request_fd, first, request)) {
    std::fprintf(stderr, "kiln-worker: a malformed WorkerRequest on fd %d\n", request_fd);
    return NextRequest::kMalformed;
  }
  return NextRequest::kRequest;
}

int ServeWorkerRequest(const v1::WorkerRequest& request, int request_fd, int event_fd,
                       const ExternalEntry* external,
                       const std::function<std::string()>& explain, bool* passed) {
  std::fprintf(stderr, "kiln-worker: %s role, %s backend, %s\n", request.role().c_str(),
               request.backend().c_str(),
               external != nullptr
                   ? "solution supplied in-process"
                   : ("library " + request.artifact_path() + ", symbol " + request.symbol()).c_str());
  const auto started = std::chrono::steady_clock::now();
  auto since = [started] {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started)
        .count();
  };
  auto send_status = [event_fd, &since](std::string_view stage, int trial) {
    std::fprintf(stderr, "kiln-worker: %.*s, trial %d (+%.1f ms)\n",
                 static_cast<int>(stage.size()), stage.data(), trial, since());
    v1::WorkerEvent event;
    event.mutable_status()->set_stage(std::string(stage));
    event.mutable_status()->set_trial(trial);
    WriteFramed(event_fd, event);
  };
  // request.gate_trials: a trial's checked outputs (and then its recheck's) go to the harness,
  // whose answer comes on the request pipe before the worker goes on.
  TrialGate gate = [request_fd, event_fd, &since](const v1::TrialOutputs& outputs,
                                                  bool recheck) -> absl::StatusOr<bool> {
    v1::WorkerEvent event;
    *(recheck ? event.mutable_recheck() : event.mutable_checked()) = outputs;
    const char* what = recheck ? "recheck" : "checked";
    if (!WriteFramed(event_fd, event)) {
      return absl::InternalError(absl::StrCat("cannot send the ", what, " outputs to the harness"));
    }
    v1::WorkerGate answer;
    if (!ReadFramed(request_fd, &answer, 1u << 10)) {
      return absl::InternalError(absl::StrCat("no answer from the harness at the ", what,
                                              " gate of trial ", outputs.trial()));
    }
    std::fprintf(stderr, "kiln-worker: trial %d%s judged: %s (+%.1f ms)\n", outputs.trial(),
                 recheck ? " recheck" : "", answer.go() ? "go on" : "incorrect, stop", since());
    return answer.go();
  };
  v1::WorkerResult result = Evaluate(request, send_status, external, gate);
  std::fprintf(stderr, "kiln-worker: result after %.1f ms\n", since());
  if (passed != nullptr) *passed = result.status() == v1::PASSED;
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
