// libkiln_worker_python.so: kiln's worker core for the Python runner
// (harness/worker/python/kiln_python_runner.py). The runner is a python3 process that loads this
// library with ctypes, imports torch, and passes the definition's `reference` run(), or a Python
// or Triton solution's entry point, as an in-process solution. Inputs, flush, timing (CUPTI span), statistics and the result protocol
// are the very code kiln-worker runs for candidates: there is no second timing implementation
// in Python.
//
// The C API (requests one after the other, like kiln-worker):
//   kiln_runner_read_request()    reads the next WorkerRequest from fd 3: 0 when one was read,
//                                 1 when the harness ended the requests, 2 on a malformed one
//   kiln_runner_definition_json() the request's definition (flashinfer-bench JSON)
//   kiln_runner_device_index()    the CUDA device the runner must use
//   kiln_runner_backend()         the request's backend ("cuda", "host")
//   kiln_runner_role()            the request's role ("reference", "baseline", "candidate")
//   kiln_runner_serve(entry, collect)  evaluates with the given entry (see ExternalEntry) and
//                                 sends the events on fd 4; returns the process exit code.
//                                 `collect` (may be null) runs after checked calls only.
//   kiln_runner_serve_solution(entry, collect)  the same for a candidate: `collect` (null for a
//                                 destination-passing solution) runs after every call
//   kiln_runner_last_passed()     1 when the last result sent was PASSED: only then may the
//                                 runner read another request (else it must exit)
//   kiln_runner_note_failure(msg) why the last call failed: the failed result's reason (with
//                                 the check's name first when the call returned
//                                 kExternalRejected)
//   kiln_runner_ready()           a spare (started before its solution is known) says it has
//                                 imported what it needs: a status "ready" on fd 4
//   kiln_runner_artifact_path(), kiln_runner_symbol(), kiln_runner_value_returning()
//                                 a spare's solution: its package, entry point and style
//   kiln_runner_set_fill_inputs(fill)  a KernelBench problem: `fill` makes every trial's inputs
//                                 (ExternalEntry::fill_inputs) from then on; null: kiln's own
//   kiln_runner_weight_seed()     the seed a KernelBench model's parameters are drawn under: one
//                                 per request, the same in every worker of the run (it derives
//                                 from the run's secret trial seeds)
//   kiln_runner_fail(message)     sends a RUNTIME_ERROR result naming why the runner cannot run
//                                 (torch missing, the reference does not define run(), ...)
#include <cstdint>
#include <cstdio>
#include <string>
#include <utility>

#include "harness/model/json_interop.h"
#include "harness/worker/evaluation.h"
#include "harness/worker/serve.h"
#include "harness/worker/worker_client.h"

namespace {

kiln::v1::WorkerRequest& Request() {
  static auto* request = new kiln::v1::WorkerRequest();
  return *request;
}

std::string& DefinitionJson() {
  static auto* json = new std::string();
  return *json;
}

bool request_read = false;
kiln::kiln_fill_inputs fill_inputs = nullptr;
bool last_passed = false;

std::string& FailureNote() {
  static auto* note = new std::string();
  return *note;
}

// The note, once: a failure is explained where it is turned into a status.
std::string TakeFailureNote() {
  std::string note = std::move(FailureNote());
  FailureNote().clear();
  return note;
}

int Serve(kiln_entry entry, kiln_entry collect, bool collect_timed_calls) {
  if (!request_read) return 2;
  kiln::ExternalEntry external;
  external.entry = entry;
  external.collect = collect;
  external.fill_inputs = fill_inputs;
  external.collect_timed_calls = collect_timed_calls;
  external.explain = TakeFailureNote;
  last_passed = false;
  const int code = kiln::ServeWorkerRequest(Request(), kiln::kWorkerRequestFd,
                                            kiln::kWorkerEventFd, &external,
                                            TakeFailureNote, &last_passed);
  std::fflush(nullptr);
  return code;
}

}  // namespace

extern "C" {

__attribute__((visibility("default"))) int kiln_runner_read_request() {
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  Request().Clear();
  request_read = false;
  switch (kiln::ReadNextWorkerRequest(kiln::kWorkerRequestFd, &Request())) {
    case kiln::NextRequest::kEnd:
      return 1;
    case kiln::NextRequest::kMalformed:
      return 2;
    case kiln::NextRequest::kRequest:
      break;
  }
  DefinitionJson() = kiln::DefinitionToJson(Request().definition(), false);
  request_read = true;
  return 0;
}

__attribute__((visibility("default"))) int kiln_runner_ready() {
  kiln::v1::WorkerEvent event;
  event.mutable_status()->set_stage("ready");
  return kiln::WriteFramed(kiln::kWorkerEventFd, event) ? 0 : 3;
}

__attribute__((visibility("default"))) const char* kiln_runner_artifact_path() {
  return Request().artifact_path().c_str();
}

__attribute__((visibility("default"))) const char* kiln_runner_symbol() {
  return Request().symbol().c_str();
}

__attribute__((visibility("default"))) int kiln_runner_value_returning() {
  return Request().value_returning() ? 1 : 0;
}

__attribute__((visibility("default"))) void kiln_runner_set_fill_inputs(
    kiln::kiln_fill_inputs fill) {
  fill_inputs = fill;
}

__attribute__((visibility("default"))) uint64_t kiln_runner_weight_seed() {
  // Not a trial's input seed itself: parameters and inputs are drawn from different streams.
  uint64_t z = kiln::TrialSeed(Request(), 0) ^ 0x4b45524e454c4245ull;  // "KERNELBE"
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

__attribute__((visibility("default"))) int kiln_runner_last_passed() { return last_passed ? 1 : 0; }

__attribute__((visibility("default"))) const char* kiln_runner_definition_json() {
  return DefinitionJson().c_str();
}

__attribute__((visibility("default"))) int kiln_runner_device_index() {
  return Request().device_index();
}

__attribute__((visibility("default"))) const char* kiln_runner_backend() {
  return Request().backend().c_str();
}

__attribute__((visibility("default"))) const char* kiln_runner_role() {
  return Request().role().c_str();
}

__attribute__((visibility("default"))) int kiln_runner_serve(kiln_entry entry, kiln_entry collect) {
  return Serve(entry, collect, /*collect_timed_calls=*/false);
}

__attribute__((visibility("default"))) int kiln_runner_serve_solution(kiln_entry entry,
                                                                       kiln_entry collect) {
  return Serve(entry, collect, /*collect_timed_calls=*/true);
}

// Why the last call of the solution failed (the runner's exception, one line); appended to the
// error of a failed result.
__attribute__((visibility("default"))) void kiln_runner_note_failure(const char* message) {
  FailureNote() = message != nullptr ? message : "";
}

__attribute__((visibility("default"))) int kiln_runner_fail(const char* message) {
  kiln::v1::WorkerResult result;
  result.set_status(kiln::v1::RUNTIME_ERROR);
  result.set_error(message != nullptr ? message : "reference runner failed");
  return kiln::SendWorkerResult(kiln::kWorkerEventFd, std::move(result));
}

}  // extern "C"
