// The worker's process-level loop, shared by kiln-worker (main.cc) and the Python reference runner
// (python_runner_api.cc): read one framed WorkerRequest, evaluate it, send framed WorkerEvents
// (status changes, then one WorkerResult).
#ifndef KILN_HARNESS_WORKER_SERVE_H_
#define KILN_HARNESS_WORKER_SERVE_H_

#include <functional>
#include <string>

#include "harness/worker/evaluation.h"
#include "kiln/v1/worker.pb.h"

namespace kiln {

// The fds kiln-harness gives every worker.
constexpr int kWorkerRequestFd = 3;
constexpr int kWorkerEventFd = 4;

// Reads the request from `request_fd` and closes it; false (with a line on stderr) when it cannot.
bool ReadWorkerRequest(int request_fd, v1::WorkerRequest* request);

// Evaluates `request` (with `external` as the solution when set), sending events to `event_fd`.
// Returns the process exit code: 0 once the result is sent, 3 when it cannot be.
// `explain`, when set, says why an in-process solution failed (the Python exception); it is
// appended to the error of a failed result.
int ServeWorkerRequest(const v1::WorkerRequest& request, int event_fd,
                       const ExternalEntry* external,
                       const std::function<std::string()>& explain = nullptr);

// Sends `result` as the worker's final event on `event_fd` (its error made valid UTF-8 and
// printed to the log first). The process exit code: 0 when sent, 3 when it cannot be.
int SendWorkerResult(int event_fd, v1::WorkerResult result);

}  // namespace kiln

#endif  // KILN_HARNESS_WORKER_SERVE_H_
