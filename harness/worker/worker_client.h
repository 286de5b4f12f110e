// The harness side of kiln-worker: starts a worker process for one (role, workload), sends the
// request over a pipe, relays its status events, and turns every way a worker can end into a
// WorkerResult: clean result; crash (signal, non-zero exit, broken pipe) -> RUNTIME_ERROR with
// the signal and the tail of the worker's log; wall-clock limit -> TIMEOUT; cancel -> CANCELLED.
#ifndef KILN_HARNESS_WORKER_WORKER_CLIENT_H_
#define KILN_HARNESS_WORKER_WORKER_CLIENT_H_

#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/statusor.h"
#include "harness/sandbox/sandbox_policy.h"
#include "kiln/v1/worker.pb.h"

namespace kiln {

struct WorkerLaunch {
  std::string worker_path;      // kiln-worker executable (or python3 for the reference runner)
  std::vector<std::string> worker_args;  // after worker_path
  std::string job_dir;          // private folder of this job; the worker's cwd
  std::string log_path;         // worker stdout+stderr (candidate prints land here)
  double timeout_s = 300;       // whole worker, start to result
  int64_t max_address_space = 0;
  // The worker is killed (RUNTIME_ERROR) once its log grows past this: a candidate printing in a
  // loop would otherwise fill the node's disk until the time limit. 0: no limit.
  int64_t max_log_bytes = int64_t{64} << 20;
  // The sandbox the worker runs in (null: unconfined). Its writable folder is job_dir.
  std::shared_ptr<const SandboxPolicy> sandbox;
  // "K=V" set over the harness's environment (CUDA_VISIBLE_DEVICES of a worker pinned to one
  // GPU); a sandbox still passes on only the variables it keeps. Empty: the environment as is.
  std::vector<std::string> env_overrides;
};

// `base` ("K=V" entries) with every variable of `overrides` replaced or added.
std::vector<std::string> OverrideEnvironment(const std::vector<std::string>& base,
                                             const std::vector<std::string>& overrides);

// Framing of the pipe protocol: 4-byte little-endian length + serialized message.
// Appends `msg` framed to `out`; false (nothing appended) when it cannot be serialized.
bool AppendFramed(const google::protobuf::MessageLite& msg, std::string* out);
bool WriteFramed(int fd, const google::protobuf::MessageLite& msg);
// Reads one frame; false at EOF or on a malformed frame (length > max_bytes).
bool ReadFramed(int fd, google::protobuf::MessageLite* msg, uint32_t max_bytes = 64u << 20);
// The same, when the frame's first byte has been read already.
bool ReadFramedAfter(int fd, char first, google::protobuf::MessageLite* msg,
                     uint32_t max_bytes = 64u << 20);

class PipeFd;
class Process;
struct ProcessResult;

// One worker process serving requests one after the other: a candidate's every workload, or
// a trusted reference kept warm across runs. Each request has launch.timeout_s, and the same
// judgement of how a worker ends as RunWorker's. The worker takes another request only after a
// PASSED result whose claims hold; any other ending ends the process and the session
// (open() is false): the next request needs a new session.
//
//   auto session = WorkerSession::Start(launch);
//   v1::WorkerResult r0 = (*session)->Call(request0, on_status, cancel, /*last=*/false);
//   if ((*session)->open()) r1 = (*session)->Call(request1, on_status, cancel, /*last=*/true);
class WorkerSession {
 public:
  // Starts the worker (it then waits for its first request). Error: it could not be started.
  static absl::StatusOr<std::unique_ptr<WorkerSession>> Start(const WorkerLaunch& launch);
  // Ends the worker: no more requests; an idle worker exits, one that does not within 1 s is
  // killed with its process group.
  ~WorkerSession();
  WorkerSession(const WorkerSession&) = delete;
  WorkerSession& operator=(const WorkerSession&) = delete;

  // Judges one trial's checked outputs (`recheck` false) or its recheck's (true) of a gated
  // request (WorkerRequest.gate_trials), on this thread while the worker waits: true lets the
  // worker go on (time the trial, or make the next trial's inputs), false stops it.
  using GateFn = std::function<bool(const v1::TrialOutputs& outputs, bool recheck)>;

  // Sends `request`, relays its status events (on this thread) and returns its result.
  // `last`: no request follows; the worker's exit is awaited and a PASSED result needs a clean
  // one, exactly as RunWorker. Otherwise a PASSED result is checked (CheckResultClaims) and the
  // worker stays, waiting for the next request, with no time limit running.
  // A gated request needs `on_checked`; a worker that reports checked or recheck outputs of a
  // request that is not gated, out of order (a trial's recheck before its checked outputs) or
  // after being stopped has sent a malformed message.
  v1::WorkerResult Call(const v1::WorkerRequest& request,
                        const std::function<void(const v1::WorkerStatus&)>& on_status,
                        const std::atomic<bool>* cancel, bool last,
                        const GateFn& on_checked = nullptr);
  // Whether the worker can take another request.
  bool open() const { return open_; }
  // Whether its process still runs.
  bool alive() const { return !done_.load(); }
  int pid() const;

 private:
  struct CallState;
  explicit WorkerSession(WorkerLaunch launch);
  void WatchLog(CallState& st);
  void ReadEvents(CallState& st);
  void ParseFrames(CallState& st);
  v1::WorkerResult Interpret(const v1::WorkerRequest& request, const ProcessResult& process,
                             CallState& st);

  const WorkerLaunch launch_;
  std::unique_ptr<PipeFd> request_fd_;
  std::unique_ptr<PipeFd> event_fd_;
  std::unique_ptr<Process> process_;
  std::unique_ptr<ProcessResult> exit_;  // valid once done_
  std::thread waiter_;                   // Process::Wait, for the worker's whole life
  std::atomic<bool> kill_{false};
  std::atomic<bool> done_{false};
  std::string buffer_;  // event bytes not yet parsed
  bool open_ = true;
};

// Runs one worker for one request, to completion (a WorkerSession of one request). A Status
// error means the worker could not be started at all.
absl::StatusOr<v1::WorkerResult> RunWorker(
    const WorkerLaunch& launch, const v1::WorkerRequest& request,
    const std::function<void(const v1::WorkerStatus&)>& on_status,
    const std::atomic<bool>* cancel);

// The file the worker writes output `name` of trial `trial` to: t<trial>_<name>.bin for the
// checked call, r<trial>_<name>.bin for the recheck.
std::string WorkerOutputFile(int trial, const std::string& name, bool recheck = false);
// Where the worker writes it: <output_dir>/WorkerOutputFile ("." when output_dir is empty), raw
// little-endian bytes, row-major.
std::string WorkerOutputPath(const std::string& output_dir, int trial, const std::string& name,
                             bool recheck = false);
// The file of output `name` that the harness leaves in a gated candidate's folder once a pass is
// judged (its file of that pass, renamed: reuse_<name>.bin), for the worker to write the next
// pass over in place (TensorSet::WriteOutputs): on a tmpfs, making new pages costs more than
// writing them. It holds the candidate's own earlier output, nothing else.
std::string WorkerReuseFile(const std::string& name);
std::string WorkerReusePath(const std::string& output_dir, const std::string& name);
// The file of one pass that the harness leaves in a warm reference worker's folder from the
// worker's previous run (its file of that pass, renamed: kept_t<trial>_<name>.bin or
// kept_r<trial>_<name>.bin), for the worker to write the same pass of its next run over in place.
// It holds the trusted reference's own earlier output; the pass's file exists under its own name
// only once it is wholly written (WriteFileOver), so an earlier run's values are never read as
// this run's.
std::string WorkerKeptFile(int trial, const std::string& name, bool recheck = false);
std::string WorkerKeptPath(const std::string& output_dir, int trial, const std::string& name,
                           bool recheck = false);

// What the harness saw at the gates of a gated request (WorkerRequest.gate_trials): the checked
// outputs reported and the rechecks', each in trial order, and whether it stopped the worker at
// the last gate.
struct GateRecord {
  std::vector<v1::TrialOutputs> reported;
  std::vector<v1::TrialOutputs> rechecks;
  bool stopped = false;
};

// The claims of a result that says PASSED, checked against the request: one TrialOutputs per
// trial in order (one per trial seed when verifying only), each with exactly the definition's
// outputs at WorkerOutputPath, and a TimingResult when measuring. A gated request's trials and
// rechecks are exactly those reported at its gates, and one stopped at a gate has no timing. A PASSED result
// that fails them was not written by an honest worker; RunWorker reports it as REJECTED with
// this reason.
absl::Status CheckResultClaims(const v1::WorkerRequest& request, const v1::WorkerResult& result,
                               const GateRecord& gates = {});

}  // namespace kiln

#endif  // KILN_HARNESS_WORKER_WORKER_CLIENT_H_
