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

// A worker serves its role's workloads one request at a time, on one fd that the harness closes
// after the last: kEnd when it ended cleanly between requests, kMalformed (a line on stderr) when
// a frame was cut short or does not parse.
enum class NextRequest { kRequest, kEnd, kMalformed };
NextRequest ReadNextWorkerRequest(int request_fd, v1::WorkerRequest* request);

// Evaluates `request` (with `external` as the solution when set), sending events to `event_fd`;
// the answers at its trials' gates (request.gate_trials) are read from `request_fd`.
// Returns the process exit code: 0 once the result is sent, 3 when it cannot be.
// `explain`, when set, says why an in-process solution failed (the Python exception); it is
// appended to the error of a failed result. `passed` (optional) is set when the result sent was
// PASSED: only then may the process serve another request.
int ServeWorkerRequest(const v1::WorkerRequest& request, int request_fd, int event_fd,
                       const ExternalEntry* external,
                       const std::function<std::string()>& explain = nullptr,
                       bool* passed = nullptr);

// Sends `result` as the worker's final event on `event_fd` (its error made valid UTF-8 and
// printed to the log first). The process exit code: 0 when sent, 3 when it cannot be.
int SendWorkerResult(int event_fd, v1::WorkerResult result);

}  // namespace kiln

#endif  // KILN_HARNESS_WORKER_SERVE_H_
