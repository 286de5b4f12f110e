// One worker of a workload's evaluation: what it runs (kiln-worker over a compiled library, or
// kiln's Python runner over a definition's reference or a Python/Triton solution's package), in
// which sandbox, with which request; and the result it sent.
//
//   RoleRun cand = RunRole(node, job, SolutionRequest(base), Candidate(job), "candidate",
//                          /*measure=*/true, on_stage, cancel);
#ifndef KILN_SERVER_EVALUATION_ROLE_RUN_H_
#define KILN_SERVER_EVALUATION_ROLE_RUN_H_

#include <atomic>
#include <functional>
#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "harness/compile/toolchain.h"
#include "harness/worker/worker_client.h"
#include "kiln/v1/types.pb.h"
#include "kiln/v1/worker.pb.h"
#include "server/evaluation/workload_evaluation.h"
#include "server/node_context.h"

namespace kiln {

// One worker run (one role) of the workload.
struct RoleRun {
  absl::Status started;     // RunWorker's error: the worker could not be started
  v1::WorkerResult result;  // valid when started is OK
  std::string dir;          // canonical job folder of the role
  std::string log;          // the worker's output, tail
};

// What a worker runs: kiln-worker over a compiled library (or over none, for the bandwidth
// probe); the Python runner over the definition's `reference` (as `baseline`: reference |
// torch_eager | torch_compile), or over a Python/Triton solution's checked package.
struct RoleProgram {
  const CompileOutput* build = nullptr;  // the .so, or the Python solution's package
  std::string baseline;                    // the Python reference, as this baseline
  const v1::Solution* python_solution = nullptr;  // set: `build` is its package
  std::string label;  // tells apart the folders of workers of one role ("sol1", "torch_compile")
  std::string backend;  // the backend its requests name (PrepareRoleWorker pins a cuda worker)
  // A worker started before it is needed (server/evaluation/spare_workers.h): "python", a
  // candidate's Python runner (torch and triton imported), whose solution is copied into its
  // folder when it is taken; "reference", the Python reference runner (`baseline` "reference",
  // torch imported), whose definition comes with its first request.
  std::string spare;
  bool python() const {
    return python_solution != nullptr || !baseline.empty() || spare == "python";
  }
};

RoleProgram Compiled(const CompileOutput* library);
// The definition's Python reference, as `baseline` (reference | torch_eager | torch_compile).
RoleProgram Python(const std::string& baseline);
// A solution as compiled: a library, or a Python/Triton package. `label` names its folder.
RoleProgram Built(const v1::Solution* solution, const CompileOutput* build,
                  const std::string& label = "");
// The job's candidate.
RoleProgram Candidate(const WorkloadJob& job);
// What computes the job's reference: the Python reference, or the native reference's build.
RoleProgram ReferenceProgram(const WorkloadJob& job);
// kiln-worker with no solution (the bandwidth probe).
RoleProgram WorkerOnly();

struct RoleWorker;
// Changes a role's launch before its worker starts (a profile runs the worker under ncu); an
// error is RoleRun.started.
using LaunchAdjustment = std::function<absl::Status(RoleWorker& worker)>;

// Runs `program` as `role` (reference | candidate | baseline | bandwidth) for the job's workload
// in a folder of its own under job.job_dir, sandboxed on the job's device. Never fails as a
// function: RoleRun.started says why a worker could not run.
RoleRun RunRole(const NodeContext& node, const WorkloadJob& job, v1::WorkerRequest request,
                const RoleProgram& program, const std::string& role, bool measure,
                const StageFn& on_stage, const std::atomic<bool>* cancel,
                const LaunchAdjustment& adjust = nullptr);

// A role's worker before it starts: how it is launched (sandbox, program, log beside its
// folder) and its canonical folder, the only one it may write.
struct RoleWorker {
  WorkerLaunch launch;
  std::string dir;
  bool device_zero = false;  // it sees only its own GPU, as device 0
};

// Makes `folder` and the launch of `program` (program.backend set) in it, on the job's device.
absl::StatusOr<RoleWorker> PrepareRoleWorker(const NodeContext& node, const WorkloadJob& job,
                                             const RoleProgram& program,
                                             const std::string& folder);

// `request` as `worker` is sent it for `role`: measured or not, its outputs in `output_dir`.
v1::WorkerRequest RoleRequest(v1::WorkerRequest request, const RoleWorker& worker,
                              const RoleProgram& program, const std::string& role, bool measure,
                              const std::string& output_dir);

// One request to a running worker: its result, the outputs' folder `dir` and what the worker
// logged while serving it. `last` as WorkerSession::Call.
// A gated request (gate_trials) has its trials' checked outputs judged by `on_checked`.
RoleRun CallRole(WorkerSession& session, const v1::WorkerRequest& request,
                 const std::string& dir, const std::string& log_path, bool last,
                 const StageFn& on_stage, const std::atomic<bool>* cancel,
                 const WorkerSession::GateFn& on_checked = nullptr);

// The last `max_bytes` of the log at `path` from byte `from` on.
std::string ReadLogTail(const std::string& path, size_t max_bytes, int64_t from);

// What a solution's worker is sent: `base` without the reference's source (a solution has no
// use for it but to call it).
v1::WorkerRequest SolutionRequest(const v1::WorkerRequest& base);

// The first line of `text`, at most 500 characters.
std::string FirstLine(const std::string& text);

// Where the job's device slot is (a default placement for a backend that has none).
DevicePlacement PlacementOf(const WorkloadJob& job);

// The flush a host-backend timing of this job uses when --host-flush-mb overrides the mode's
// default (twice the last-level cache, or kernelbench's fixed 256 MiB); 0 otherwise.
int64_t HostFlushOverride(const NodeContext& node, const WorkloadJob& job);

}  // namespace kiln

#endif  // KILN_SERVER_EVALUATION_ROLE_RUN_H_
